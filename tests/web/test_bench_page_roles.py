"""The Run a benchmark page's judge and simulated student in a real Chromium, as ELBench-live
offers them (issue 29 §4): ELBench's judge starts as the paper's, the estimate says when
another judge puts the run on its own board, "Use a decision model as the judge" makes the
judge picker offer OpenRouter's decision models (from a fake OpenRouter), and "Use a separate
model as the simulated student" reveals a student picker filled with ELBench's student. The
ELBench tests read the reference copy of its data (skipped when absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.bench.helpers import elbench_root
from tests.servers import OpenRouterServer
from tests.servers.openrouter import openrouter_model
from tests.web.browser import TIMEOUT_MS, RecordedPage, ServedApp, served_app

expect = pytest.importorskip("playwright.sync_api").expect
DATA = elbench_root()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="the ELBench reference data is absent")
PAPER_JUDGE = "openrouter/qwen/qwen3-235b-a22b"
STUDENT = "openrouter/liquid/lfm-2.5-24b-a2b"
MODEL = "scripted/guess"
VERDICT = openrouter_model("acme/verdict-1", name="Acme: Verdict 1")
D1 = openrouter_model("liquid/d1-ultra", name="Liquid: D1 Ultra")
ELBENCH_LABEL = "ELBench (your copy of its data)"
BOARD_NOTE = (
    f"Judge {MODEL} is not the paper's judge ({PAPER_JUDGE}): this run goes on its own board, "
    "not beside the published results."
)


App = ServedApp


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    """OpenRouter as a fake that lists two decision models, ELBench's second."""
    with OpenRouterServer(decision_models=[VERDICT, D1]) as server:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        yield server


@pytest.fixture
def app() -> Iterator[App]:
    """The app, with the folder holding ELBench's reference data as its benchmark folder."""
    with served_app(benchmark_folders=[DATA.parent]) as served:
        yield served


def _open(page: RecordedPage, app: App) -> None:
    page.goto(f"{app.url}/benchmarks")
    page.wait_for_selector("#bp-run")
    page.click("text=Advanced settings")
    expect(page.locator("#bp-judge")).to_be_visible(timeout=TIMEOUT_MS)


def _choose(page: RecordedPage, label: str) -> None:
    page.click("#bp-benchmark")
    option = page.get_by_role("option", name=label, exact=True)
    expect(option).not_to_have_attribute("data-combobox-disabled", "true", timeout=TIMEOUT_MS)
    option.click()
    expect(page.locator("#bp-benchmark")).to_have_value(label, timeout=TIMEOUT_MS)


def _choose_elbench(page: RecordedPage) -> None:
    page.fill("#bp-data", DATA.name)  # the data folder, inside the server's benchmark folder
    _choose(page, ELBENCH_LABEL)


def _estimate(page: RecordedPage, expected: str) -> str:
    """Press Estimate cost; the estimate's text once it says ``expected``."""
    page.click("#bp-estimate-button")
    lines = page.locator("#bp-estimate-lines")
    expect(lines).to_contain_text(expected, timeout=TIMEOUT_MS)
    return " ".join(lines.inner_text().split())


def _judge_options(page: RecordedPage, showing: str) -> list[str]:
    """The judge picker's options, once one of them says ``showing``."""
    box = page.locator("#bp-judge")
    box.fill("")
    box.click()
    listbox = page.locator(f"[id='{box.get_attribute('aria-controls')}']")
    expect(listbox.get_by_role("option").filter(has_text=showing).first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    found: list[str] = listbox.get_by_role("option").all_inner_texts()
    box.press("Escape")
    return found


def _clean(page: RecordedPage) -> None:
    assert page.errors == [] and page.failures == [] and page.non_local() == []


@needs_data
def test_elbench_judge_is_the_papers_and_another_goes_on_its_own_board(
    page: RecordedPage, app: App
) -> None:
    _open(page, app)
    expect(page.locator("#bp-judge")).to_have_value("", timeout=TIMEOUT_MS)  # the sample's
    _choose_elbench(page)
    expect(page.locator("#bp-judge")).to_have_value(PAPER_JUDGE, timeout=TIMEOUT_MS)
    page.fill("#bp-model", MODEL)
    page.keyboard.press("Escape")
    page.check("#bp-preset-quick")
    said = _estimate(page, f"graded by {PAPER_JUDGE}")
    assert "own board" not in said

    page.fill("#bp-judge", MODEL)  # typed: kept, and said to go on its own board
    page.keyboard.press("Escape")
    _estimate(page, BOARD_NOTE)
    _choose(page, "sweepbench sample")  # another benchmark keeps a typed judge
    expect(page.locator("#bp-judge")).to_have_value(MODEL, timeout=TIMEOUT_MS)
    _clean(page)


@needs_data
def test_elbench_offers_its_decision_judge_and_its_student(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    _open(page, app)
    expect(page.locator("#bp-student-box")).to_be_hidden(timeout=TIMEOUT_MS)
    _choose_elbench(page)
    expect(page.locator("#bp-judge")).to_have_value(PAPER_JUDGE, timeout=TIMEOUT_MS)
    page.check("#bp-decision")
    expect(page.locator("#bp-judge")).to_have_value(
        "openrouter/liquid/d1-ultra", timeout=TIMEOUT_MS
    )  # ELBench's, though listed second
    page.uncheck("#bp-decision")
    expect(page.locator("#bp-judge")).to_have_value(PAPER_JUDGE, timeout=TIMEOUT_MS)

    page.check("#bp-separate-student")
    expect(page.locator("#bp-student-box")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#bp-student")).to_have_value(STUDENT, timeout=TIMEOUT_MS)
    page.uncheck("#bp-separate-student")
    expect(page.locator("#bp-student-box")).to_be_hidden(timeout=TIMEOUT_MS)
    _clean(page)


def test_the_decision_switch_offers_openrouters_decision_models(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    _open(page, app)
    page.check("#bp-decision")
    first = "openrouter/acme/verdict-1"
    expect(page.locator("#bp-judge")).to_have_value(first, timeout=TIMEOUT_MS)  # the first
    offered = _judge_options(page, first)
    assert offered == [first, "openrouter/liquid/d1-ultra"]
    page.uncheck("#bp-decision")
    expect(page.locator("#bp-judge")).to_have_value("", timeout=TIMEOUT_MS)  # the sample's
    assert first not in _judge_options(page, MODEL)  # the chat models again
    _clean(page)


def test_the_student_picker_shows_only_with_its_switch(page: RecordedPage, app: App) -> None:
    _open(page, app)
    box = page.locator("#bp-student-box")
    expect(box).to_be_hidden(timeout=TIMEOUT_MS)
    page.check("#bp-separate-student")
    expect(box).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator("#bp-student")).to_have_value("", timeout=TIMEOUT_MS)  # no default
    _clean(page)
