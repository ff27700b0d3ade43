"""A judge-scored sweep on the Sweep page (issue 16, item 4): each cell shows its score and the
judge's reason, live and reopened from History; a verdict the judge garbled says so."""

from __future__ import annotations

import time

from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import Plan, build_plan
from tests.web.browser import TIMEOUT_S, RecordedPage
from tests.web.conftest import Served

CELLS = "scripted/lorem?tps=2000"


def _finished(runner: SweepRunner, plan: Plan) -> str:
    assert not plan.blocking(), plan.refusals
    live = runner.start(plan)
    deadline = time.monotonic() + TIMEOUT_S
    while not live.done:
        assert time.monotonic() < deadline, "the sweep did not finish"
        time.sleep(0.05)
    return live.id


def _judged(judge: str) -> Plan:
    return build_plan(
        "Name three primes.",
        "max_tokens",
        [16, 64],
        kind="text",
        model=CELLS,
        effort="none",
        judge=judge,
        rubric="Names three prime numbers.",
    )


def _grid_text(page: RecordedPage) -> str:
    """The grid's text as written (innerText would give the badges' CSS upper case)."""
    return str(page.text_content("#cell-grid"))


def test_the_sweep_page_shows_each_cells_score(page: RecordedPage, served: Served) -> None:
    sweep_id = _finished(served.runner, _judged("scripted/guess"))
    view = served.runner.view(sweep_id)
    scores = [f"score {s['grade']['score']:.2f}" for s in view["cells"]]
    page.goto(f"{served.url}/history")
    page.click(f"#open-{sweep_id}")
    page.wait_for_selector("#cell-grid")
    page.wait_for_function(
        "() => (document.querySelector('#cell-grid')?.textContent.match(/score \\d\\.\\d\\d/g) "
        "|| []).length === 2"
    )
    text = _grid_text(page)
    for score in scores:
        assert score in text
    assert "judge: a guess" in text
    assert page.non_local() == [] and page.errors == []


def test_an_unreadable_verdict_is_shown_as_such(page: RecordedPage, served: Served) -> None:
    sweep_id = _finished(served.runner, _judged("scripted/echo?text=looks%20fine"))
    page.goto(f"{served.url}/?sweep={sweep_id}")
    page.wait_for_function(
        "() => (document.querySelector('#cell-grid')?.textContent.match(/unreadable verdict/g) "
        "|| []).length === 2"
    )
    text = _grid_text(page)
    assert "score 0" not in text  # never a silent 0
    assert page.errors == []
