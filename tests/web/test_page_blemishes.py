"""The page's rough edges (issue 13, items 9 and 11), each shown in Chromium: the shell on a
narrow screen, the Effort select of a model without effort, the model's full name, one alert
per missing key, UTC said aloud in History, a placeholder that reads as one, an estimate that
counts what the page shows, and sidebar entries that say what their pages will do."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import build_plan
from tests.web.browser import TIMEOUT_MS, TIMEOUT_S, RecordedPage, serve

PHONE = {"width": 390, "height": 844}
LOREM = "Scripted: fixed lorem ipsum text · scripted/lorem"


@pytest.fixture
def app() -> Iterator[Any]:
    from sweepbench.web.app import create_app

    store = Store.open()
    dash_app = create_app(store)
    try:
        yield dash_app
    finally:
        dash_app.server.config["sweepbench.context"].close()  # the runner and the loop
        store.close()


@pytest.fixture
def base_url(app: Any) -> Iterator[str]:
    with serve(app) as url:
        yield url


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paid providers usable (placeholder keys: nothing here calls them), so the estimate line
    counts the variants it prices."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "placeholder-anthropic")
    monkeypatch.setenv("OPENAI_API_KEY", "placeholder-openai")


def _open(page: RecordedPage, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#estimate:not(:empty)")


def _estimate_starts(page: RecordedPage, text: str) -> None:
    page.wait_for_function(f"document.querySelector('#estimate').innerText.startsWith({text!r})")


def _choose(page: RecordedPage, select: str, label: str) -> None:
    """Pick ``label`` in a searchable Mantine select."""
    page.click(select)
    page.fill(select, label.split(" · ")[-1])
    page.locator("[role=option]:visible", has_text=label).first.click()


def _type_models(page: RecordedPage, models: list[str], *, enter_last: bool = True) -> None:
    box = page.locator("#vary-model")
    box.click()
    for model in models:
        box.fill(model)
        if model != models[-1] or enter_last:
            box.press("Enter")


def _finished_sweep(app: Any) -> str:
    """A small text sweep run to the end in the app's runner (so History lists one); its id."""
    runner: SweepRunner = app.server.config["sweepbench.runner"]
    plan = build_plan("a haiku", "model", ["scripted/echo", "scripted/lorem"], kind="text")
    live = runner.start(plan)
    deadline = time.monotonic() + TIMEOUT_S
    while not live.done:
        assert time.monotonic() < deadline, "the sweep did not finish"
        time.sleep(0.05)
    return live.id


def _no_sideways_scroll(page: RecordedPage) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width}"


def _clean(page: RecordedPage) -> None:
    assert page.non_local() == [] and page.errors == []


# -- item 9: narrow screens ----------------------------------------------------------------------


def _box(page: RecordedPage, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, f"{selector} has no box"
    return dict(box)


def _uncovered(page: RecordedPage, selector: str) -> bool:
    """Whether the element at ``selector``'s centre is that element (nothing lies on top)."""
    return bool(
        page.eval_on_selector(
            selector,
            "e => { const r = e.getBoundingClientRect();"
            " const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
            " return e === top || e.contains(top); }",
        )
    )


def _navbar_open(page: RecordedPage, opened: bool) -> None:
    """Wait until the navbar is on screen (or slid off it: collapsed, Mantine moves it left)."""
    test = "> 0" if opened else "<= 0"
    page.wait_for_function(
        f"document.querySelector('#navbar').getBoundingClientRect().right {test}"
    )
    page.wait_for_timeout(300)  # the slide has ended


def test_a_phone_sees_the_page_and_a_burger_for_the_navbar(
    browser: Any, app: Any, base_url: str
) -> None:
    sweep_id = _finished_sweep(app)
    context = browser.new_context(viewport=PHONE)
    try:
        page = RecordedPage(context.new_page())
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.page.set_default_timeout(TIMEOUT_MS)
        _open(page, base_url)
        assert page.is_visible("#burger")
        _navbar_open(page, False)  # collapsed: nothing lies over the page
        for control in ("#kind", "#prompt", "#estimate"):
            page.locator(control).scroll_into_view_if_needed()
            assert page.is_visible(control) and _uncovered(page, control), control
            assert _box(page, control)["x"] >= 0
        _no_sideways_scroll(page)

        page.evaluate("window.scrollTo(0, 0)")
        page.click("#burger")
        _navbar_open(page, True)
        assert _uncovered(page, "#nav-\\/history")
        page.click("#burger")
        _navbar_open(page, False)
        assert _uncovered(page, "#prompt")

        page.click("#burger")
        _navbar_open(page, True)
        page.click("#nav-\\/history")  # following a link closes it again
        page.wait_for_selector(f"#row-{sweep_id}")
        _navbar_open(page, False)
        _no_sideways_scroll(page)  # the table scrolls inside its box
        assert page.errors == []
    finally:
        context.close()


def test_a_wide_screen_keeps_the_navbar_and_no_burger(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    assert page.is_visible("#navbar") and not page.is_visible("#burger")
    navbar, prompt = _box(page, "#navbar"), _box(page, "#prompt")
    assert prompt["x"] >= navbar["x"] + navbar["width"]  # side by side, not on top
    _clean(page)


# -- item 11: blemishes --------------------------------------------------------------------------


def test_a_model_without_effort_says_none_not_blank(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("text=Text")
    page.click("text=Vary max tokens")  # the held model is the bundled SmolLM2: no effort
    page.wait_for_selector("#held-effort[disabled]")
    assert page.input_value("#held-effort") == "none"
    assert "takes no effort setting" in page.inner_text("#wrap-held-effort")
    _choose(page, "#held-model", LOREM)  # a model with effort unlocks it
    page.wait_for_selector("#held-effort:not([disabled])")
    page.click("#held-effort")
    page.locator("[role=option]:visible", has_text="medium").first.click()
    page.wait_for_function("document.querySelector('#held-effort').value === 'medium'")
    assert "takes no effort setting" not in page.inner_text("#wrap-held-effort")
    _clean(page)


def test_the_held_model_shows_its_whole_name(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.click("text=Vary max tokens")
    page.wait_for_selector("#held-model", state="visible")
    assert page.input_value("#held-model") == "SmolLM2 135M Instruct (bundled) · local/smollm2-135m"
    fits = page.eval_on_selector("#held-model", "e => e.scrollWidth <= e.clientWidth")
    assert fits, "the model's name is cut off"
    _clean(page)


def test_two_missing_keys_are_one_alert(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    page.fill("#prompt", "hello")
    _type_models(page, ["anthropic/claude-opus-5", "openai/gpt-6-astra"])
    # the alert follows the picker: wait until it names the second model too (it shows one
    # name as soon as the first model is in, and a loaded machine can be read in between)
    page.wait_for_function(
        "(document.querySelector('#refusal-key')?.innerText || '').includes('openai/gpt-6-astra')"
    )
    assert page.locator("[id='refusal-key']").count() == 1
    text = page.inner_text("#refusal-key")
    assert "anthropic/claude-opus-5" in text and "openai/gpt-6-astra" in text
    ids = page.eval_on_selector_all("#refusals [id]", "es => es.map(e => e.id)")
    assert len(ids) == len(set(ids)), f"an id twice: {ids}"
    _clean(page)


def test_history_says_its_times_are_utc(page: RecordedPage, app: Any, base_url: str) -> None:
    sweep_id = _finished_sweep(app)
    page.goto(f"{base_url}/history")
    page.wait_for_selector(f"#row-{sweep_id}")
    started = page.inner_text(f"#row-{sweep_id} td >> nth=0")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", started.strip()), started
    _clean(page)


def test_the_empty_prompt_reads_as_a_placeholder(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    for kind in ("Text", "Drawing"):
        page.click(f"#kind >> text={kind}")
        page.wait_for_function(
            "document.querySelector('#prompt').placeholder.startsWith('Write your prompt here')"
        )
        assert page.input_value("#prompt") == ""
        assert page.is_disabled("#run")
        assert "Write a prompt first." in page.inner_text("#refusals")
    _clean(page)


def test_a_model_id_being_typed_is_counted(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    _estimate_starts(page, "2 variants varying models")
    _type_models(page, ["scripted/echo", "scripted/lorem"], enter_last=False)
    _estimate_starts(page, "4 variants varying models")  # three chips and one being typed
    page.click("#prompt")  # it becomes a chip: still four
    _estimate_starts(page, "4 variants varying models")
    pills = page.locator("#wrap-vary-model .mantine-Pill-label").all_inner_texts()
    assert len(pills) == 4
    _clean(page)


@pytest.mark.usefixtures("keyed")
def test_the_estimate_counts_only_the_efforts_shown(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)  # a drawing, varying effort on Claude Opus 5
    _estimate_starts(page, "2 variants varying effort")
    page.click("#wrap-vary-effort >> text='max'")
    _estimate_starts(page, "3 variants varying effort")
    _choose(page, "#held-model", "GPT-6 Astra · openai/gpt-6-astra")  # takes no "max"
    page.wait_for_function("!document.querySelector('#wrap-vary-effort').innerText.includes('max')")
    _estimate_starts(page, "2 variants varying effort")
    checked = page.eval_on_selector_all(
        "#wrap-vary-effort input:checked", "es => es.map(e => e.value)"
    )
    assert checked == ["low", "high"]
    _clean(page)


def test_the_sidebar_says_what_each_page_does(page: RecordedPage, base_url: str) -> None:
    _open(page, base_url)
    navbar = page.inner_text("#navbar")
    assert "issue" not in navbar.lower() and "soon" not in navbar.lower()
    for label in ("Leaderboard", "Run a benchmark", "Benchmark sweep", "About"):
        assert label in navbar
    assert "Scores against price" in navbar and "A question set" in navbar
    _clean(page)


def test_each_models_default_effort_is_the_plans_empty_effort() -> None:
    from sweepbench.web.sweep_controls import plan_from_controls

    models = ["anthropic/claude-opus-5", "scripted/lorem"]
    plan = plan_from_controls(
        "text", "model", [], [], models, [], None, "default", 1000, "v1", 1, "hi"
    )
    assert plan.held["effort"] == "default"
    assert [c.effort_requested for c in plan.cells] == ["low", "none"]  # each model's own
