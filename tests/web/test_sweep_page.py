"""The Sweep page in a real Chromium: controls, estimate, runs that fill in, Stop all, History,
the access gate — and no request ever leaves 127.0.0.1.

Set SWEEPBENCH_SCREENSHOTS=DIR to save the finished sweeps' screenshots (docs/ uses them)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sweepbench.store import Store
from tests.web.browser import RecordedPage, pick_models, serve

pytest.importorskip("playwright.sync_api")

FAST_SKETCH = ["scripted/sketch?tps=400", "scripted/sketch?tps=250"]
# Each drawing streams its thinking and 200 of its ~820 answer tokens (about 9 elements), then
# waits at a gate that never opens: Stop all always lands mid-answer, however loaded the machine.
HELD_SKETCH = ["scripted/sketch?tps=300&gate=stop&gate_at=200",
               "scripted/sketch?tps=250&gate=stop&gate_at=200"]  # fmt: skip


@pytest.fixture
def base_url() -> Iterator[str]:
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store)
    try:
        with serve(app) as url:
            yield url
    finally:
        app.server.config["sweepbench.context"].close()  # the runner and the loop
        store.close()


def _shown(page: RecordedPage, selector: str) -> bool:
    return bool(page.locator(selector).is_visible())


def _open(page: RecordedPage, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#estimate:not(:empty)")


def _run(page: RecordedPage, prompt: str) -> None:
    page.fill("#prompt", prompt)
    page.wait_for_selector("#run:not([disabled])")
    page.click("#run")
    page.wait_for_selector("#cell-grid")


def _finished(page: RecordedPage) -> str:
    """Wait for the finished status line (and Stop all disabled again); return it."""
    page.wait_for_function(
        "/variants in [\\d.]+s wall clock/.test(document.querySelector('#status').innerText)"
    )
    page.wait_for_selector("#stop[disabled]")
    return str(page.inner_text("#status"))


def _screenshot(page: RecordedPage, name: str) -> None:
    folder = os.environ.get("SWEEPBENCH_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _assert_clean(page: RecordedPage) -> None:
    assert page.non_local() == []
    assert page.errors == []


def test_page_loads_offline_with_the_keyless_notice(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    assert "no provider keys" in page.inner_text("#keyless-notice").lower()
    assert "free models: nothing is spent" in page.inner_text("#estimate")
    assert page.is_disabled("#stop")
    _assert_clean(page)


def _expect(page: RecordedPage, shown: list[str], hidden: list[str]) -> None:
    for selector in shown:
        page.wait_for_selector(selector, state="visible")
    for selector in hidden:
        page.wait_for_selector(selector, state="hidden")


def test_only_the_controls_the_run_reads_are_shown(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("text=Compare models")
    _expect(page, ["#vary-model", "#held-effort", "#held-budget"], ["#held-model"])
    page.click("text=Vary max tokens")
    _expect(page, ["#wrap-vary-budget", "#held-model"], ["#held-budget", "#vary-model"])
    page.click("text=Vary effort")
    _expect(page, ["#wrap-vary-effort", "#held-budget"], ["#held-effort", "#wrap-vary-budget"])
    assert not _shown(page, "text=Vary prompt version")  # drawings have one version
    page.click("text=Sculpture")
    page.wait_for_selector("text=Vary prompt version")
    page.click("text=Vary prompt version")
    _expect(page, ["#wrap-vary-version", "#held-model"], ["#held-version"])
    _assert_clean(page)


def test_the_estimate_follows_the_controls(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    pick_models(page, FAST_SKETCH)
    page.wait_for_function(
        "document.querySelector('#estimate').innerText.startsWith('2 variants varying models')"
    )
    pick_models(page, FAST_SKETCH[:1])
    page.wait_for_selector("#refusal-cells")
    assert "at least two models" in page.inner_text("#refusals")
    assert page.is_disabled("#run")


def test_a_drawing_sweep_fills_every_cell(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    pick_models(page, FAST_SKETCH)
    _run(page, "a payments service")
    page.wait_for_function(
        "[...document.querySelectorAll('[data-elements]')].length === 2 && "
        "[...document.querySelectorAll('[data-elements]')].every(e => e.dataset.elements === '23')"
    )
    status = _finished(page)
    assert re.match(r"2/2 variants in [\d.]+s wall clock \(≈[\d.]+s if run one at a time\)", status)
    assert "46 elements" in status
    badges = page.inner_text("#cell-grid")
    assert "23 ELEMENTS" in badges.upper() and "DONE" in badges.upper()
    _screenshot(page, "sweep-drawing")
    _assert_clean(page)


def test_stop_all_stops_every_cell_and_keeps_the_drawing(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    pick_models(page, HELD_SKETCH)
    _run(page, "a payments service")
    page.wait_for_function(
        "[...document.querySelectorAll('[data-elements]')].some(e => +e.dataset.elements >= 2)"
    )
    page.click("#stop")
    page.wait_for_selector("#stop[disabled]")
    page.wait_for_function("document.querySelector('#status').innerText.startsWith('Stopped 2')")
    counts = page.eval_on_selector_all("[data-elements]", "es => es.map(e => +e.dataset.elements)")
    assert len(counts) == 2 and all(c <= 10 for c in counts) and max(counts) >= 2
    badges = page.locator("[id*='cell-badges']").all_inner_texts()
    assert len(badges) == 2 and all("STOPPED" in b.upper() for b in badges)
    page.wait_for_timeout(800)
    later = page.eval_on_selector_all("[data-elements]", "es => es.map(e => +e.dataset.elements)")
    assert later == counts  # nothing more arrives after the stop
    assert page.is_enabled("#run")
    _assert_clean(page)


def test_a_sculpture_sweep_shows_each_glb(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("text=Sculpture")
    page.wait_for_selector("text=Vary prompt version")
    pick_models(page, ["scripted/sculpt?tps=600", "scripted/sculpt?tps=300"])
    _run(page, "a brazier")
    page.wait_for_function(
        "[...document.querySelectorAll('[data-loaded]')].filter(e => e.dataset.loaded === '1')"
        ".length === 2"
    )
    text = page.inner_text("#cell-grid")
    assert "4/4 joints blend (100%)" in text
    assert "triangles" in text and "3 COLOURS" in text.upper()
    page.wait_for_timeout(1500)  # let the viewers settle for the screenshot
    _screenshot(page, "sweep-sculpture")
    _assert_clean(page)


def test_a_text_sweep_streams_the_answers(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("text=Text")
    pick_models(page, ["scripted/lorem?tps=300", "scripted/echo?tps=100"])
    _run(page, "Name three primes and say why each is prime.")
    assert _finished(page).startswith("2/2 variants")
    text = page.inner_text("#cell-grid")
    assert "Lorem ipsum dolor sit amet" in text
    assert "Name three primes" in text
    _screenshot(page, "sweep-text")
    _assert_clean(page)


def test_a_finished_sweep_reopens_from_history(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    pick_models(page, FAST_SKETCH)
    _run(page, "a payments service")
    _finished(page)
    page.click("text=History")
    page.wait_for_selector("text=a payments service")
    page.click("a:has-text('Open')")
    page.wait_for_function(
        "[...document.querySelectorAll('[data-elements]')].length === 2 && "
        "[...document.querySelectorAll('[data-elements]')].every(e => e.dataset.elements === '23')"
    )
    assert page.inner_text("#status").startswith("2/2 variants")
    _assert_clean(page)


def test_a_public_server_needs_the_token_to_spend(
    page: RecordedPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.web.app import create_app
    from sweepbench.web.gate import Gate

    monkeypatch.setenv("ANTHROPIC_API_KEY", "placeholder-for-the-gate-test")
    store = Store.open()
    app = create_app(store, gate=Gate("0.0.0.0", token="s3cret"))
    try:
        with serve(app) as url:
            page.goto(url)  # off loopback the whole app waits behind the sign-in
            page.wait_for_selector("#sign-in-token")
            assert not page.locator("#prompt").count()
            page.fill("#sign-in-token", "wrong")
            page.click("#sign-in-submit")
            page.wait_for_selector("#sign-in-token")
            assert not page.locator("#prompt").count()
            page.fill("#sign-in-token", "s3cret")
            page.click("#sign-in-submit")
            page.wait_for_selector("#estimate:not(:empty)")
            page.fill("#prompt", "a payments service")
            page.wait_for_selector("#run:not([disabled])")  # signed in: paid runs may start
            assert not page.locator("#gate-closed").count()
            html: Any = page.content()
            assert "placeholder-for-the-gate-test" not in html and "s3cret" not in html
    finally:
        app.server.config["sweepbench.context"].close()  # the runner and the loop
        store.close()


def test_small_budgets_are_offered_where_they_show_the_cliff() -> None:
    from sweepbench.web.defaults import LOCAL, budget_chips

    assert budget_chips("text", "anthropic/claude-opus-5")[:3] == [16, 64, 256]  # text: always
    assert budget_chips("excalidraw", LOCAL)[:3] == [500, 1000, 2000]  # free model: small too
    assert budget_chips("sculpture", "scripted/sculpt")[0] == 250
    paid = budget_chips("excalidraw", "anthropic/claude-opus-5")
    assert min(paid) == 4000  # a paid drawing starts where drawings fit
    assert 8192 in budget_chips("excalidraw", "anthropic/claude-opus-5", [8192])  # chosen stay


def test_the_max_tokens_cliff_shows_in_the_web(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("#kind >> text=Text")
    page.click("text=Vary max tokens")
    page.wait_for_selector("#wrap-vary-budget >> text='16'")
    checked = page.eval_on_selector_all(
        "#wrap-vary-budget input:checked", "es => es.map(e => e.value)"
    )
    assert checked == ["16", "64", "256"]  # no key: the cliff is what the page starts on
    page.click("#held-model")
    page.fill("#held-model", "scripted/lorem")
    page.locator("[role=option]:visible", has_text="scripted/lorem").first.click()
    _run(page, "Write a haiku about rain.")
    _finished(page)
    text = page.inner_text("#cell-grid")
    assert "TRUNCATED at 16 tokens" in text  # the lesson of the README's first sweep
    assert "TRUNCATED at 256 tokens" not in text
    _assert_clean(page)


def test_a_pasted_held_budget_is_read_as_the_cli_reads_it(
    page: RecordedPage, base_url: str
) -> None:
    """ "64.000" pasted into Max tokens is 64,000 tokens (the number box read "." as a decimal
    point and kept 64), as ``sweep --max-tokens 64.000`` reads it."""
    _open(page, base_url)
    page.click("text=Compare models")
    page.wait_for_selector("#held-budget", state="visible")
    page.fill("#held-budget", "64.000")
    page.wait_for_function("document.querySelector('#held-budget').value === '64,000'")
    _assert_clean(page)
