"""One budget parser for every surface (issue 29 §4): "64.000", "64,000" and "64k" are 64,000
tokens on the web as in the CLI, a wrong one is refused naming it, and the Run a benchmark
page warns under 1,000 tokens; the Benchmark sweep page's held budget (a number box made a
pasted "64.000" 64) is read by the same parser."""

from __future__ import annotations

import re

import pytest

from sweepbench.axes.cells import MAX_BUDGET, SHORT_BUDGET, read_budget
from sweepbench.cli.validate import read_budget as cli_read_budget
from sweepbench.errors import UserError
from sweepbench.web.bench_views import budget_note
from sweepbench.web.request_form import budget
from tests.web.browser import TIMEOUT_MS, RecordedPage
from tests.web.conftest import Served

TYPED = {
    "64.000": 64_000, "64,000": 64_000, " 64 000 ": 64_000, "64k": 64_000, "64K": 64_000,
    "1e5": 100_000, "8192": 8_192, "1.000.000": 1_000_000, "500": 500, "0.5k": 500,
}  # fmt: skip


@pytest.mark.parametrize(("typed", "tokens"), TYPED.items())
def test_the_web_reads_a_budget_as_the_cli_does(typed: str, tokens: int) -> None:
    assert read_budget(typed) == cli_read_budget(typed) == budget(typed, "Limit") == tokens


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("64 tokens", "cannot read max tokens '64 tokens' as a number (64000 or 64k)"),
        ("abc", "cannot read max tokens 'abc' as a number"),
        ("0", f"max tokens 0 out of range: a budget is 1 to {MAX_BUDGET:,} tokens"),
        ("-5", "max tokens -5 out of range"),
        ("20,000,000", "max tokens 20,000,000 out of range"),
        ("inf", "cannot read max tokens 'inf'"),
    ],
)
def test_a_wrong_budget_is_refused_naming_it_the_same_everywhere(typed: str, words: str) -> None:
    for parse in (read_budget, cli_read_budget):
        with pytest.raises(UserError, match="^" + re.escape(words)):
            parse(typed)
    with pytest.raises(
        UserError, match="^" + re.escape("Answer length limit: " + words.split(" (")[0])
    ):
        budget(typed, "Answer length limit")


def test_an_empty_budget_is_the_default() -> None:
    assert (
        budget("", "Limit") is None and budget(None, "Limit") is None and budget("  ", "x") is None
    )


def test_the_page_warns_under_1000_tokens_and_says_how_it_read_the_rest() -> None:
    assert SHORT_BUDGET == 1_000
    assert budget_note("64.000") == ("64,000 tokens.", "dimmed")
    assert budget_note("1,000") == ("1,000 tokens.", "dimmed")
    text, colour = budget_note("999")
    assert colour == "orange" and text.startswith("999 tokens is under 1,000: answers will be cut")
    text, colour = budget_note("64 tokens")
    assert colour == "red" and "cannot read max tokens '64 tokens'" in text
    assert budget_note("") == ("", "dimmed") and budget_note(None) == ("", "dimmed")


def test_the_benchmark_sweep_pages_held_budget_is_read_by_the_same_parser(
    served: Served, page: RecordedPage
) -> None:
    expect = pytest.importorskip("playwright.sync_api").expect
    page.goto(f"{served.url}/bench-sweep")
    box = page.locator("#bs-values")
    box.click()
    for model in ("scripted/guess", "scripted/echo"):
        box.fill(model)
        box.press("Enter")
    box.press("Escape")
    page.fill("#bs-judge", "scripted/guess")
    page.click("#bs-advanced")
    page.fill("#bs-max-tokens", "64.000")  # pasted: a number box made this 64
    page.evaluate("document.activeElement && document.activeElement.blur()")
    estimate = page.locator("#bs-estimate")
    expect(estimate).to_contain_text("held: effort default, max_tokens 64000,", timeout=TIMEOUT_MS)
    page.fill("#bs-max-tokens", "64 tokens")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    problem = "Answer length limit: cannot read max tokens '64 tokens' as a number (64000 or 64k)"
    expect(page.get_by_text(problem)).to_be_visible(timeout=TIMEOUT_MS)
    assert page.errors == [] and page.failures == [] and page.non_local() == []


@pytest.mark.parametrize("typed", ["64.000", "64k"])
def test_bench_runs_max_tokens_is_read_by_the_same_parser(typed: str) -> None:
    from typer.testing import CliRunner

    from sweepbench.cli.app import app

    estimate = ["bench", "estimate", "sample", "--model", "scripted/guess", "--judge"]
    result = CliRunner().invoke(app, [*estimate, "scripted/guess", "--max-tokens", typed])
    assert result.exit_code == 0, result.output
    assert "(64,000 tokens)" in " ".join(result.output.split())
    bad = CliRunner().invoke(app, [*estimate, "scripted/guess", "--max-tokens", "abc"])
    assert bad.exit_code == 2 and "cannot read max tokens 'abc'" in " ".join(bad.output.split())
