"""Time and reasoning on the Sweep page in a real Chromium (issue 13, items 5, 7, 8): the
estimate line says how long a sweep takes, a cell waiting its turn says "queued" (not
"writing…"), the serial figure is left out when the calls ran one at a time, and a model's
reasoning streams into a collapsible "Thinking" block that stays open while it grows."""

from __future__ import annotations

import dataclasses
import re

import pytest

from sweepbench.models.providers import PROVIDERS
from sweepbench.sweeps.plan import build_plan
from tests.web.browser import RecordedPage, pick_models
from tests.web.conftest import Served

pytest.importorskip("playwright.sync_api")


def _card(page: RecordedPage, index: int) -> str:
    return f'[id*=\'"type":"cell"\'][id*=\'"index":{index}\']'


def _text_of(page: RecordedPage, kind: str, index: int) -> str:
    selector = f'[id*=\'"type":"{kind}"\'][id*=\'"index":{index}\']'
    return str(page.inner_text(selector))


def _wait_text(page: RecordedPage, kind: str, index: int, pattern: str) -> None:
    """Wait until a cell's ``kind`` element (cell-badges, cell-detail…) matches ``pattern``."""
    selector = f'[id*=\'"type":"{kind}"\'][id*=\'"index":{index}\']'
    page.wait_for_function(
        "([s, p]) => { const e = document.querySelector(s); "
        "return !!e && new RegExp(p, 'i').test(e.innerText); }",
        arg=[selector, pattern],
    )


def _assert_clean(page: RecordedPage) -> None:
    assert page.non_local() == []
    assert page.errors == []


def test_the_estimate_line_says_how_long_the_sweep_takes(
    page: RecordedPage, served: Served
) -> None:
    page.goto(served.url)
    page.wait_for_selector("#estimate:not(:empty)")
    pick_models(page, ["scripted/sketch?tps=400", "scripted/sketch?tps=100"])
    page.wait_for_function(
        "/Runs in about \\d+ s: .*~\\d+ s/.test(document.querySelector('#estimate').innerText)"
    )
    line = page.inner_text("#estimate")
    assert line.startswith("2 variants varying models") and "nothing is spent" in line
    pick_models(page, ["scripted/sketch?tps=400", "local/smollm2-135m"])
    page.wait_for_function(
        "document.querySelector('#estimate').innerText"
        ".includes('No timing history for local/smollm2-135m yet')"
    )
    _assert_clean(page)


def test_a_waiting_cell_says_queued_and_no_serial_figure_is_claimed(
    page: RecordedPage, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the scripted provider made to run one call at a time, as the local model does
    serial = dataclasses.replace(PROVIDERS["scripted"], one_at_a_time=True)
    monkeypatch.setitem(PROVIDERS, "scripted", serial)
    plan = build_plan(
        "three primes", "model", ["scripted/lorem?words=90&tps=30", "scripted/echo?tps=30"]
    )
    live = served.runner.start(plan)
    page.goto(f"{served.url}/?sweep={live.id}")
    page.wait_for_selector("#cell-grid")
    _wait_text(page, "cell-badges", 0, "writing…")
    badges = _text_of(page, "cell-badges", 1)
    assert "QUEUED" in badges.upper() and "WRITING" not in badges.upper()
    assert _text_of(page, "cell-detail", 1) == "queued: scripted calls run one at a time"
    page.wait_for_function(
        "/variants in [\\d.]+s wall clock/.test(document.querySelector('#status').innerText)"
    )
    status = page.inner_text("#status")
    assert re.fullmatch(r"2/2 variants in [\d.]+s wall clock · ~\$0 total", status), status
    assert "if run one at a time" not in status  # they did run one at a time
    _assert_clean(page)


def test_reasoning_streams_into_a_thinking_block_that_stays_open(
    page: RecordedPage, served: Served
) -> None:
    plan = build_plan("x", "effort", ["low", "high"], model="scripted/lorem?words=300&tps=40")
    live = served.runner.start(plan)  # high thinks 300 tokens (7.5 s) before it answers
    page.goto(f"{served.url}/?sweep={live.id}")
    block = f"{_card(page, 1)} .cell-thinking"
    toggle, reasoning = f"{block} button", f"{block} pre"
    page.wait_for_selector(f"{toggle}:has-text('Thinking…')")
    _wait_text(page, "cell-detail", 1, r"\d+ out \(\d+ thinking\)")
    assert page.get_attribute(toggle, "aria-expanded") == "false"  # collapsed until asked
    page.click(toggle)
    page.wait_for_selector(f"{toggle}[aria-expanded='true']")
    first = len(page.inner_text(reasoning))
    page.wait_for_timeout(1200)  # several ticks
    assert page.get_attribute(toggle, "aria-expanded") == "true"  # the updates kept it open
    assert len(page.inner_text(reasoning)) > first  # and it grew
    assert page.inner_text(reasoning).startswith("step1 step2")
    page.click("#stop")
    page.wait_for_function("document.querySelector('#status').innerText.startsWith('Stopped')")
    _wait_text(page, "cell-badges", 1, "stopped")
    summary = page.inner_text(toggle)
    assert re.fullmatch(r"Thinking · [\d,]+ tokens", summary.strip()), summary
    detail = _text_of(page, "cell-detail", 1)
    assert re.search(r"[\d,]+ out \([\d,]+ thinking\) / [\d,]+ in", detail), detail
    status = page.inner_text("#status")
    assert "What was written is kept" in status and "What was drawn" not in status
    _assert_clean(page)
