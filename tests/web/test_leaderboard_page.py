"""The Leaderboard page in a real browser (spec §17): the published models and your runs on
the chart and in the tables, the board (Graded by), a filter and the scope change what is
drawn, and the comparison accordion fills for two picked results — with nothing asked of any
host but 127.0.0.1."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.record import dump_record, load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.leaderboard.published import (
    TASK_FIGURES_MARK,
    TEACHING_MARK,
    TEACHING_PROVENANCE,
)
from sweepbench.leaderboard.rows import REVISION_MARK, run_row
from sweepbench.store import Store
from sweepbench.web.leaderboard_data import comparison, filters_of, paired, scope_of
from tests.bench.test_declared import declare, numeric_task, write_jsonl
from tests.helpers import cli
from tests.leaderboard.helpers import GOLDEN, elbench_record, store_golden_run, store_record
from tests.web.browser import RecordedPage
from tests.web.conftest import Served

RUN_JUDGE = "openai/gpt-5-mini"
"""The golden record's judge: its own board."""

TRACES = """() => {
  const gd = document.querySelector('#lb-chart .js-plotly-plot');
  if (!gd || !gd.data) return null;
  return Object.fromEntries(gd.data.map(t => [t.name, t.x.length]));
}"""


def store_complete_run() -> str:
    """The golden record made complete (every item scored) under another run id, stored as an
    ELBench run: a run the board places. Its run id."""
    record = load_record(GOLDEN.read_text("utf-8"))
    cov = record.coverage
    tasks = {k: t.model_copy(update={"scored": t.selected, "failed": 0, "complete": True})
             for k, t in cov.tasks.items()}  # fmt: skip
    areas = {k: a.model_copy(update={"scored": a.selected, "failed": 0, "complete": True})
             for k, a in cov.areas.items()}  # fmt: skip
    overall = cov.overall.model_copy(update={"scored": 40, "failed": 0, "complete": True})
    coverage = cov.model_copy(update={"tasks": tasks, "areas": areas, "overall": overall})
    run_id = record.run_id[:-4] + "beef"
    update = {"coverage": coverage, "run_id": run_id, "status": "completed", "reason": None}
    record = load_record(dump_record(record.model_copy(update=update)))
    assert run_row(record).scores["overall"].complete
    with Store.open() as store:
        bench = BenchStore(store)
        bench.create_run(
            RunRow(
                id=run_id, config_hash=record.settings.hash, benchmark="elbench",
                model=record.roles["target"].model, judge=None, status=record.status,
                reason=None, created_at=record.created_at, updated_at=record.updated_at,
                items=record.coverage.overall.selected,
            )
        )  # fmt: skip
        bench.set_record(run_id, dump_record(record))
    return run_id


@pytest.fixture
def runs() -> tuple[str, str]:
    """Two runs of yours in the store the app opens (the test's SWEEPBENCH_HOME): the golden
    (incomplete) one and a complete copy."""
    return store_golden_run(), store_complete_run()


def _open(page: RecordedPage, served: Served) -> None:
    page.goto(f"{served.url}/leaderboard")
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] > 0")


def _traces(page: RecordedPage) -> dict[str, int]:
    found: dict[str, int] = page.evaluate(TRACES)
    return found


def _pick(page: RecordedPage, select: str, option: str) -> None:
    page.click(select)
    page.get_by_role("option", name=option, exact=True).click()


def _clean(page: RecordedPage) -> None:
    assert page.errors == []
    assert page.failures == []
    assert page.non_local() == []


def test_the_published_models_and_your_runs_are_shown(
    page: RecordedPage, served: Served, runs: tuple[str, str]
) -> None:
    incomplete, complete = runs
    _open(page, served)
    assert "2,481 questions in four areas" in page.inner_text("#lb-headline")
    traces = _traces(page)
    assert traces["Published"] >= 5 and "Best value" in traces
    assert "Your runs" not in traces  # the runs sit on their judge's board
    hover = page.evaluate("() => document.querySelector('#lb-chart .js-plotly-plot').data[0]")
    assert "Published" in hover["hovertext"][0] and "price $" in hover["hovertext"][0]
    layout = page.evaluate("() => document.querySelector('#lb-chart .js-plotly-plot').layout")
    assert layout["xaxis"]["type"] == "log"
    assert "DeepSeek-V4-Flash" in page.inner_text("#lb-value")
    takeaway = page.inner_text("#lb-takeaway")
    assert "Best value, cheapest first:" in takeaway
    assert "without the two region-specific sets" in takeaway

    page.get_by_role("button", name="Published results").click()
    assert "GPT-5.4" in page.locator("#lb-published").inner_text()
    page.wait_for_selector("#lb-tasks >> text=mmlu_pro")
    page.get_by_role("button", name="Your runs").click()
    runs_text = page.locator("#lb-runs").inner_text()
    assert incomplete in runs_text and complete in runs_text
    assert "incomplete" in runs_text and "computed here" in runs_text
    assert page.get_attribute("#lb-test-own", "href") == "/benchmarks"
    _clean(page)


def test_the_board_a_filter_and_the_scope_change_the_chart(
    page: RecordedPage, served: Served, runs: tuple[str, str]
) -> None:
    _, complete = runs
    _open(page, served)
    published = _traces(page)["Published"]

    _pick(page, "#lb-board", RUN_JUDGE)  # your run's board: the judged published rows leave
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Your runs'] === 1")
    assert "Published" not in _traces(page)
    assert complete in page.inner_text("#lb-value")
    assert "1 incomplete run(s) not placed" in page.inner_text("#lb-takeaway")

    page.get_by_role("switch", name="Show your runs").uncheck(force=True)
    page.wait_for_function(f"({TRACES})() && !('Your runs' in ({TRACES})())")

    _pick(page, "#lb-board", "qwen/qwen3-235b-a22b (the paper's judge)")
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] === {published}")
    # every published model with a price keeps its size undisclosed: the filter hides them all
    page.get_by_label("Include models that don't publish their size").uncheck(force=True)
    page.wait_for_function(f"({TRACES})() && !('Published' in ({TRACES})())")
    assert "The filters hid" in page.inner_text("#lb-takeaway")
    page.get_by_label("Include models that don't publish their size").check(force=True)
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] === {published}")

    page.get_by_label("Include the region-specific sets").check(force=True)
    page.wait_for_selector("#lb-headline >> text=2,939 questions")
    page.wait_for_selector("#lb-takeaway >> text=including the two region-specific sets")
    _clean(page)


def test_the_comparison_fills_for_two_picked_results(
    page: RecordedPage, served: Served, runs: tuple[str, str]
) -> None:
    incomplete, complete = runs
    _open(page, served)
    page.get_by_role("button", name="Compare results side by side").click()
    page.wait_for_selector("#lb-compare")  # the defaults: your newest run and the baselines

    box = page.locator("#lb-compare-with")
    box.click()
    for _ in range(4):
        box.press("Backspace")
    page.wait_for_selector("#lb-compare-table >> text=Pick a result")
    model = "openrouter/deepseek/deepseek-v4-flash"
    _pick(page, "#lb-compare-first", f"{model} · Your run {incomplete}")
    box.click()
    page.get_by_role("option", name=f"Your run {complete}").click()
    page.keyboard.press("Escape")
    table = page.locator("#lb-compare")
    table.wait_for()
    page.wait_for_function(
        "(ids) => ids.every(id => document.querySelector('#lb-compare').innerText.includes(id))",
        arg=[incomplete, complete],
    )
    text = table.inner_text()
    assert "arithmetic" in text and "Mean over 4 matched tasks" in text
    assert "4 of 4 tasks matched" in page.inner_text("#lb-compare-note")
    # the records come without their answers, so the paired test says why it cannot run
    assert "No paired test" in page.inner_text("#lb-paired")

    page.get_by_text("By area (0–100)").click()
    page.wait_for_selector("#lb-compare >> text=Knowledge & reasoning")
    _clean(page)


COMPARE_ROWS = """() => Array.from(document.querySelectorAll('#lb-compare tbody tr'))
  .map(tr => Array.from(tr.cells).map(td => td.innerText.trim()))"""


def _compare_rows(page: RecordedPage) -> dict[str, list[str]]:
    """The comparison table's rows by their first cell."""
    rows: list[list[str]] = page.evaluate(COMPARE_ROWS)
    return {row[0]: row[1:] for row in rows}


def _wait_for_row(page: RecordedPage, label: str, cells: list[str]) -> None:
    """Wait until the comparison shows the row ``label`` with these cells."""
    page.wait_for_function(
        f"([label, cells]) => ({COMPARE_ROWS})().some(r => r[0] === label && "
        "JSON.stringify(r.slice(1)) === JSON.stringify(cells))",
        arg=[label, cells],
    )


def test_the_comparison_by_area_shows_the_final_published_figures_and_the_marks(
    page: RecordedPage, served: Served
) -> None:
    """Your ELBench run beside the two baselines (the default picks): by area, the published
    Teaching and Overall figures are the ones in the published table (84.9 / 82.5, not the
    2026-06-08 revision's 68.3 / 74.6), the Teaching rows are marked ‡ and the notes say what
    † and ‡ mean; two published results alone compare with no ‡; task by task, the published
    task figures carry the revision's mark."""
    run_id = store_record(elbench_record({"guided": 20.0}))
    _open(page, served)
    assert TEACHING_PROVENANCE in page.inner_text("#lb-takeaway")  # your run is on the board
    page.get_by_role("button", name="Published results").click()
    published = page.locator("#lb-published").inner_text()
    assert "84.9" in published and "82.5 †" in published
    assert page.inner_text("#lb-teaching-provenance") == TEACHING_PROVENANCE

    page.get_by_role("button", name="Compare results side by side").click()
    page.wait_for_selector(f"#lb-compare >> text=run:{run_id}")
    page.get_by_text("By area (0–100)").click()
    _wait_for_row(page, "Teaching ‡", ["40.0", "84.9", "94.4"])
    rows = _compare_rows(page)
    assert rows["Overall ‡"] == ["47.5", "82.5 †", "86.3"]
    assert rows["Safety"] == ["50.0", "87.3", "88.9"]
    note = page.inner_text("#lb-compare-note")
    assert REVISION_MARK in note and TEACHING_MARK in note

    _pick(page, "#lb-compare-first", "DeepSeek-V4-Flash · published")  # the run leaves
    _wait_for_row(page, "Teaching", ["84.9", "94.4"])
    assert _compare_rows(page)["Overall"] == ["82.5 †", "86.3"]
    page.wait_for_function(
        "(mark) => !document.querySelector('#lb-compare-note').innerText.includes(mark)",
        arg=TEACHING_MARK,
    )

    page.get_by_text("Task by task (matched subset)").click()
    _wait_for_row(page, "guided", ["40.0 †", "0.0 †"])
    assert TASK_FIGURES_MARK in page.inner_text("#lb-compare-note")
    _clean(page)


def test_refresh_rereads_the_store(page: RecordedPage, served: Served) -> None:
    _open(page, served)
    page.get_by_role("button", name="Your runs").click()
    page.wait_for_selector("#lb-runs >> text=No runs of yours")
    run_id = store_complete_run()  # stored while the page is open
    page.click("#lb-refresh")
    page.wait_for_selector(f"#lb-runs >> text={run_id}")
    assert "Re-read the store: 1 of your runs" in page.inner_text("#lb-refresh-note")
    _pick(page, "#lb-board", RUN_JUDGE)  # the new run's judge is now a board
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Your runs'] === 1")
    _clean(page)


def test_the_paired_test_of_two_runs_that_answered_the_same_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two scripted runs of one declared task (right on 30% and 50% of 40 items): the paired
    test the accordion shows, and their side-by-side lines."""
    pattern = ["1", "1", "1", "2", "2", "3", "3", "3", "3", "3"]
    rows = [{"qid": f"q{i:03d}", "question": f"Question {i}: which number?",
             "answer": pattern[i % 10], "topic": ""} for i in range(40)]  # fmt: skip
    write_jsonl(tmp_path / "n.jsonl", rows)
    path = declare(tmp_path, [numeric_task("n.jsonl", id="n", area="alpha", name="N")])
    keys = []
    for model in ("scripted/lorem?text=1", "scripted/guess?text=3"):
        args = ("bench", "run", str(path), "-m", model, "--yes", "--json")
        with ThreadPoolExecutor(1) as pool:  # its own thread: Playwright holds this one's loop
            code = pool.submit(cli, monkeypatch, *args).result()
        out = capsys.readouterr()
        assert code == 0, out.err
        keys.append(f"run:{json.loads(out.out)['run_id']}")
    with Store.open() as store:
        result = paired(store, keys[0], keys[1])
        side = comparison(store, keys, by="task", scope="core")
    assert result.n == 40 and round(result.diff) == 20
    assert result.sentence().startswith(f"{keys[1]} scores 20.0 points higher on 40 shared")
    assert side.matched == 1 and side.rows()[0] == ["n", "30.0", "50.0"]


@pytest.mark.parametrize(
    ("price", "size", "undisclosed", "expected"),
    [
        (30.0, 1000.0, True, (None, None, True)),
        (2.5, 70.0, False, ("2.5", 70.0, False)),
    ],
)
def test_the_sliders_at_their_top_are_off(
    price: float, size: float, undisclosed: bool, expected: tuple[Any, ...]
) -> None:
    filters = filters_of(price, size, undisclosed)
    got = (
        None if filters.max_price is None else str(filters.max_price),
        filters.max_size_b,
        filters.include_undisclosed,
    )
    assert got == expected
    assert scope_of(True) == "paper" and scope_of(False) == "core"
