"""Reopening a sweep from History (issue 13, item 6): the page comes back with the sweep's own
kind, axis, values, held settings, samples and prompt, so it can be tweaked and run again — and
a link to a sweep that is not there gets an answer in the web's words."""

from __future__ import annotations

import time

from sweepbench.sweeps.history import load_sweep, sweep_settings
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import Plan, build_plan
from sweepbench.web.defaults import kind_defaults
from sweepbench.web.offer import offered_models
from sweepbench.web.sweep_controls import with_settings
from tests.web.browser import TIMEOUT_S, RecordedPage
from tests.web.conftest import Served

SCULPTS = ["scripted/sculpt?tps=900", "scripted/sculpt?tps=800"]
LOREM = "scripted/lorem?tps=2000"


def _finished(runner: SweepRunner, plan: Plan) -> str:
    """Run ``plan`` to the end in the app's runner; its id."""
    assert not plan.blocking(), plan.refusals
    live = runner.start(plan)
    deadline = time.monotonic() + TIMEOUT_S
    while not live.done:
        assert time.monotonic() < deadline, "the sweep did not finish"
        time.sleep(0.05)
    return live.id


def _sculpture_plan() -> Plan:
    return build_plan(
        "a lighthouse of driftwood",
        "model",
        SCULPTS,
        kind="sculpture",
        effort="medium",
        max_tokens=3000,
        prompt_version="v2",
        repeats=2,
    )


def _budget_plan() -> Plan:
    return build_plan(
        "Write a haiku about rain.",
        "max_tokens",
        [16, 64, 256],
        kind="text",
        model=LOREM,
        effort="none",
    )


def _pills(page: RecordedPage) -> list[str]:
    return [str(t) for t in page.locator("#wrap-vary-model .mantine-Pill-label").all_inner_texts()]


def _checked(page: RecordedPage, wrap: str) -> list[str]:
    return list(page.eval_on_selector_all(f"{wrap} input:checked", "es => es.map(e => e.value)"))


def _segment(page: RecordedPage, control: str) -> str:
    return str(page.eval_on_selector(f"#{control} input:checked", "e => e.value"))


def _reopen_from_history(page: RecordedPage, base: str, sweep_id: str) -> None:
    page.goto(f"{base}/history")
    page.click(f"#open-{sweep_id}")
    page.wait_for_selector("#cell-grid")
    page.wait_for_selector("#estimate:not(:empty)")


# -- the settings a stored sweep carries --------------------------------------------------------


def test_a_stored_sweep_gives_back_its_settings(served: Served) -> None:
    sweep_id = _finished(served.runner, _sculpture_plan())
    settings = sweep_settings(load_sweep(served.runner.store, sweep_id))
    assert settings.kind == "sculpture" and settings.axis == "model"
    assert settings.values == tuple(SCULPTS)
    assert settings.held == {"effort": "medium", "max_tokens": 3000, "prompt_version": "v2"}
    assert settings.repeats == 2 and settings.prompt == "a lighthouse of driftwood"
    live = sweep_settings(served.runner.view(sweep_id))  # the live view has the same fields
    assert live == settings


def test_the_controls_take_a_sweeps_settings(served: Served) -> None:
    sweep_id = _finished(served.runner, _budget_plan())
    settings = sweep_settings(load_sweep(served.runner.store, sweep_id))
    base = kind_defaults("text", offered_models(), keyless=True)
    d = with_settings(base, settings)
    assert (d.axis, d.budgets, d.held_model, d.held_effort) == (
        "max_tokens",
        (16, 64, 256),
        LOREM,
        "none",
    )
    assert d.prompt == "Write a haiku about rain." and d.models == base.models


# -- in the browser ------------------------------------------------------------------------------


def test_a_sculpture_sweep_reopens_with_its_settings(page: RecordedPage, served: Served) -> None:
    sweep_id = _finished(served.runner, _sculpture_plan())
    _reopen_from_history(page, served.url, sweep_id)
    assert _segment(page, "kind") == "sculpture"  # not the Drawing tab
    assert _segment(page, "axis") == "model"
    assert _pills(page) == SCULPTS  # not the default models
    assert page.input_value("#prompt") == "a lighthouse of driftwood"  # not empty
    assert page.input_value("#held-effort") == "medium"
    assert page.input_value("#held-budget") == "3,000"
    assert page.input_value("#held-version") == "v2"
    assert page.input_value("#samples") == "2"
    page.wait_for_function(  # the results come back too: each cell's sculpture loads
        "[...document.querySelectorAll('model-viewer')].filter(e => e.loaded).length === 2"
    )
    assert page.non_local() == [] and page.errors == []


def test_a_reopened_sweep_can_be_tweaked_and_run_again(page: RecordedPage, served: Served) -> None:
    sweep_id = _finished(served.runner, _budget_plan())
    _reopen_from_history(page, served.url, sweep_id)
    assert _segment(page, "kind") == "text" and _segment(page, "axis") == "max_tokens"
    assert _checked(page, "#wrap-vary-budget") == ["16", "64", "256"]
    assert page.input_value("#held-model") == LOREM  # a typed id comes back as it was
    page.wait_for_function(
        "document.querySelector('#estimate').innerText.startsWith('3 variants varying max')"
    )
    page.fill("#prompt", "Write a haiku about snow.")
    page.click("#wrap-vary-budget >> text='64'")  # drop one budget
    page.wait_for_function(
        "document.querySelector('#estimate').innerText.startsWith('2 variants varying max')"
    )
    page.click("#run")
    page.wait_for_function(
        "/\\/2 variants in [\\d.]+s wall clock/.test(document.querySelector('#status').innerText)"
    )
    page.goto(f"{served.url}/history")
    page.wait_for_selector("text=a haiku about snow")
    assert page.locator("#history-table tbody tr").count() == 2
    assert page.non_local() == [] and page.errors == []


def test_a_link_to_a_missing_sweep_gets_a_web_answer(page: RecordedPage, served: Served) -> None:
    page.goto(f"{served.url}/?sweep=nope")
    page.wait_for_selector("#missing-sweep")
    text = page.inner_text("#missing-sweep")
    assert "no sweep 'nope' on this server" in text
    assert "sweepbench " not in text and "`" not in text  # no command for a web visitor
    assert _segment(page, "kind") == "excalidraw"  # the page still works, on its defaults
    page.click("#missing-sweep-history")
    page.wait_for_selector("text=No sweeps yet")
    assert page.non_local() == [] and page.errors == []
