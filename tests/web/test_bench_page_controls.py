"""The Run a benchmark page's model picker, filters and Advanced knobs in a real Chromium
(issue 29 §4): every catalogue model (OpenRouter's from a fake OpenRouter) shown with its name,
prices and size, any typed id taken; the price filter on the blended 3:1 price, the size
filter on the models' sizes (a local model's from its own file), the undisclosed checkbox,
the sliders' right-hand end no limit; effort, temperature and repeats reaching the run; a held
budget "64.000" read as the CLI reads it, 64,000 tokens, and a warning under 1,000."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.cli.validate import read_budget
from sweepbench.errors import UserError
from sweepbench.models.registry import listed_models
from sweepbench.settings import home
from sweepbench.web.bench_form import build_request
from sweepbench.web.bench_picker import UNDISCLOSED_LABEL
from tests.servers import OpenRouterServer
from tests.servers.openrouter import DEFAULT_MODELS, openrouter_model
from tests.web.browser import TIMEOUT_MS, RecordedPage, ServedApp

expect = pytest.importorskip("playwright.sync_api").expect
MODEL = "scripted/guess"
LUNA = "OpenAI: GPT-5.6 Luna · $0.25 in / $2.00 out per 1M tokens · size not published"
SMOL = "SmolLM2 135M Instruct (bundled) · $0 in / $0 out per 1M tokens · 135M"
INPUT_CHEAP = openrouter_model(  # $29 in / $40 out: cheap on input, 31.75 blended
    "vendor/input-cheap", name="Vendor: Input Cheap", prompt="0.000029", completion="0.00004"
)
BLEND_CHEAP = openrouter_model(  # $30.50 in / $20 out: dear on input, 27.875 blended
    "vendor/blend-cheap", name="Vendor: Blend Cheap", prompt="0.0000305", completion="0.00002"
)


App = ServedApp


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    """OpenRouter as a fake whose catalogue lists Luna and the two vendor models; nothing is
    cached in the test's home, so the page's listing fetches it."""
    with OpenRouterServer(models=[DEFAULT_MODELS[0], INPUT_CHEAP, BLEND_CHEAP]) as srv:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", srv.url + "/api/v1")
        yield srv


def _open(page: RecordedPage, app: App, search: str = "") -> None:
    page.goto(f"{app.url}/benchmarks{search}")
    page.wait_for_selector("#bp-run")


def _options(page: RecordedPage, search: str, *, showing: str, close: bool = True) -> list[str]:
    """The picker's options for ``search`` (the first line of each: its text), once one of
    them contains ``showing``; the list is closed again unless not ``close``."""
    box = page.locator("#bp-model")
    box.fill("")
    box.fill(search)  # a change: the list opens, filtered
    options = page.get_by_role("option")  # the visible ones: the picker's open list
    expect(options.filter(has_text=showing).first).to_be_visible(timeout=TIMEOUT_MS)
    texts = options.all_inner_texts()
    if close:
        box.press("Escape")
    return [t.splitlines()[0] for t in texts]


def _note(page: RecordedPage, shown: int, total: int) -> None:
    expect(page.locator("#bp-picker-note")).to_have_text(
        f"Showing {shown} of {total} models.", timeout=TIMEOUT_MS
    )


def _total() -> int:
    return len({info.id for info in listed_models()})


def _advanced(page: RecordedPage) -> None:
    page.click("text=Advanced settings")
    expect(page.locator("#bp-judge")).to_be_visible(timeout=TIMEOUT_MS)


def test_the_picker_shows_each_models_name_prices_and_size_and_takes_a_typed_id(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    _open(page, app)
    assert _options(page, "luna", showing=LUNA).count(LUNA) == 1  # OpenRouter's, fetched now
    assert fake.models_fetches >= 1
    _options(page, "luna", showing=LUNA, close=False)
    page.get_by_role("option").filter(has_text=LUNA).click()
    expect(page.locator("#bp-model")).to_have_value(
        "openrouter/openai/gpt-5.6-luna", timeout=TIMEOUT_MS
    )
    assert SMOL in _options(page, "smollm2", showing=SMOL)  # the local model's own size
    guess = _options(page, MODEL, showing="Scripted: answers")[0]
    assert guess.endswith(" · $0 in / $0 out per 1M tokens · size not published")

    typed = "openrouter/vendor/not-in-the-catalogue"
    _advanced(page)
    page.fill("#bp-judge", MODEL)
    page.fill("#bp-model", typed)
    page.keyboard.press("Escape")
    page.click("#bp-estimate-button")
    expect(page.locator("#bp-estimate-lines")).to_contain_text(typed, timeout=TIMEOUT_MS)
    expect(page.locator("#bp-model")).to_have_value(typed, timeout=TIMEOUT_MS)
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_the_filters_use_the_blended_price_and_the_sizes_and_their_top_is_no_limit(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    (home() / "models.toml").write_text("[scripted.guess]\nsize_b = 70\n", "utf-8")
    _open(page, app)
    total = _total()
    _note(page, total, total)  # both sliders at their right-hand end: no limit
    price = page.locator("#bp-max-price [role=slider]")
    price.focus()
    page.keyboard.press("ArrowLeft")  # $29.90 blended: a limit, so unpriced models go too
    expect(price).to_have_attribute("aria-valuenow", "29.9", timeout=TIMEOUT_MS)
    note = page.locator("#bp-picker-note")
    expect(note).not_to_have_text(f"Showing {total} of {total} models.", timeout=TIMEOUT_MS)
    shown = _options(page, "vendor/", showing="Vendor: Blend Cheap")
    assert [s.split(" · ")[0] for s in shown] == ["Vendor: Blend Cheap"]  # not input-cheap
    price.focus()
    page.keyboard.press("End")
    _note(page, total, total)
    assert len(_options(page, "vendor/", showing="Vendor: Input Cheap")) == 2

    page.get_by_label(UNDISCLOSED_LABEL).uncheck()
    _note(page, 2, total)  # the local model (from its file) and scripted/guess (models.toml)
    size = page.locator("#bp-max-size [role=slider]")
    size.focus()
    page.keyboard.press("Home")  # 1B
    _note(page, 1, total)
    assert SMOL in _options(page, "smol", showing=SMOL)
    page.get_by_label(UNDISCLOSED_LABEL).check()
    _note(page, total - 1, total)  # every model but the 70B one
    size.focus()
    page.keyboard.press("End")
    _note(page, total, total)
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_effort_temperature_and_repeats_under_advanced_reach_the_run(
    page: RecordedPage, app: App
) -> None:
    _open(page, app)
    _advanced(page)
    page.fill("#bp-judge", MODEL)
    page.fill("#bp-max-items", "3")
    page.click("#bp-effort")
    page.get_by_role("option", name="low", exact=True).click()
    page.fill("#bp-temperature", "0.5")
    page.fill("#bp-repeats", "2")
    page.fill("#bp-model", MODEL)
    page.keyboard.press("Escape")
    page.click("#bp-run")
    expect(page.locator("#bp-outcome")).to_contain_text("Finished", timeout=TIMEOUT_MS)

    (run,) = BenchStore(app.store).runs()
    settings = dict(run.settings)
    assert {k: settings["request"][k] for k in ("effort", "temperature", "repeats")} == {
        "effort": "low", "temperature": 0.5, "repeats": 2,
    }  # fmt: skip
    config = settings["config"]
    assert (config["effort"], config["temperature"], config["repeats"]) == ("low", 0.5, 2)
    assert len(BenchStore(app.store).statuses(run.id)) == 3 * 2  # each question asked twice

    _open(page, app, f"?run={run.id}")  # the reopened run holds them
    _advanced(page)
    expect(page.locator("#bp-effort")).to_have_value("low", timeout=TIMEOUT_MS)
    expect(page.locator("#bp-temperature")).to_have_value("0.5", timeout=TIMEOUT_MS)
    expect(page.locator("#bp-repeats")).to_have_value("2", timeout=TIMEOUT_MS)
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_a_typed_budget_is_read_as_the_cli_reads_it_and_a_short_one_is_warned(
    page: RecordedPage, app: App
) -> None:
    _open(page, app)
    _advanced(page)
    page.fill("#bp-judge", MODEL)
    page.fill("#bp-model", MODEL)
    page.keyboard.press("Escape")
    note = page.locator("#bp-max-tokens-note")
    page.fill("#bp-max-tokens", "64.000")
    expect(note).to_have_text("64,000 tokens.", timeout=TIMEOUT_MS)
    page.click("#bp-estimate-button")
    page.click("text=Technical details")
    expect(page.locator("#bp-details")).to_contain_text('"max_tokens"', timeout=TIMEOUT_MS)
    details = json.loads(page.inner_text("#bp-details"))
    assert details["config"]["max_tokens"] == read_budget("64.000") == 64_000

    page.fill("#bp-max-tokens", "500")
    expect(note).to_contain_text(
        "500 tokens is under 1,000: answers will be cut short", timeout=TIMEOUT_MS
    )
    page.fill("#bp-max-tokens", "64 tokens")
    expect(note).to_contain_text(
        "cannot read max tokens '64 tokens' as a number", timeout=TIMEOUT_MS
    )
    page.fill("#bp-max-tokens", "")
    expect(note).to_have_text("", timeout=TIMEOUT_MS)
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def _values(max_tokens: str) -> dict[str, object]:
    values: dict[str, object] = dict.fromkeys(
        ["bp-declaration", "bp-data", "bp-judge", "bp-student", "bp-limit-target",
         "bp-limit-judge", "bp-limit-student"]
    )  # fmt: skip
    values.update({
        "bp-benchmark": "sample", "bp-model": MODEL, "bp-separate-student": False,
        "bp-max-tokens": max_tokens,
    })  # fmt: skip
    return values


def test_the_page_request_holds_the_budget_as_read() -> None:
    assert build_request(_values("64.000")).max_tokens == 64_000
    with pytest.raises(UserError, match=r"^Answer length limit: cannot read max tokens"):
        build_request(_values("64 tokens"))
