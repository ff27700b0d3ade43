"""The estimate: typical and ceiling per call, totals, the estimate line, calibration."""

from __future__ import annotations

from decimal import Decimal

import pytest

from sweepbench.models import model_info
from sweepbench.models.base import GenerateSettings, Message, Request
from sweepbench.money.estimate import estimate_call
from sweepbench.store import CallEnd, CallStart, Store
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.pricing import estimate_plan


def test_spec_test_vector() -> None:
    # Opus 5, low, 24,000, system prompt of 5,200 characters → input 1,500 tokens = $0.0075;
    # typical $0.3135; ceiling $0.6075 (sweeps.md §6.1).
    request = Request(
        "anthropic/claude-opus-5",
        (Message("system", "x" * 5200), Message("user", "")),
        GenerateSettings(),
    )
    e = estimate_call(
        model_info("anthropic/claude-opus-5"), request, effort="low", max_tokens=24000
    )
    assert e.input_tokens == 1500
    assert e.typical == Decimal("0.3135") and e.ceiling == Decimal("0.6075")


def test_unpriced_is_no_estimate_never_zero() -> None:
    plan = build_plan("hi", "model", ["openai/gpt-99", "anthropic/claude-opus-5"])
    estimate = estimate_plan(plan)
    assert estimate.typical is None and estimate.ceiling is None
    assert estimate.line() == "2 variants · no price on file for openai/gpt-99."


def test_local_is_free_and_says_so() -> None:
    estimate = estimate_plan(build_plan("hi", "max_tokens", ["16", "64"]))
    assert estimate.free and estimate.ceiling == 0
    assert "free models: nothing is spent" in estimate.line()


def test_line_names_axis_extremes_and_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    plan = build_plan(
        "hi", "model", ["anthropic/claude-opus-5", "openai/gpt-5.6-luna"], max_tokens=8000
    )
    line = estimate_plan(plan).line("· 40 calls and $10 left today on this host")
    assert line.startswith("2 variants varying models · about $")
    assert "Cheapest GPT-5.6 Luna" in line and "dearest Claude Opus 5" in line
    assert line.endswith("· 40 calls and $10 left today on this host")
    effort = build_plan("hi", "effort", ["low", "high"], model="anthropic/claude-opus-5")
    assert "(assumes low uses 51%, high uses 68% of the budget)" in estimate_plan(effort).line()


def test_no_keys_shows_the_hypothetical_figure() -> None:
    plan = build_plan("hi", "effort", ["low", "high"], model="anthropic/claude-opus-5")
    assert estimate_plan(plan).line().startswith("No provider keys here — nothing will be spent.")


def test_repeats_multiply() -> None:
    one = estimate_plan(
        build_plan("hi", "model", ["anthropic/claude-opus-5", "openai/gpt-5.6-luna"])
    )
    three = estimate_plan(
        build_plan("hi", "model", ["anthropic/claude-opus-5", "openai/gpt-5.6-luna"], repeats=3)
    )
    assert one.ceiling is not None and three.ceiling == one.ceiling * 3


def test_typical_is_calibrated_from_recorded_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    store = Store.open()
    for _ in range(5):
        store.record_call(
            CallStart(
                model="anthropic/claude-opus-5",
                provider="anthropic",
                request={"settings": {"max_tokens": 1000, "effort": "low"}},
            ),
            CallEnd(stop_reason="end", output_tokens=100),
        )
    plan = build_plan(
        "hi", "effort", ["low", "high"], model="anthropic/claude-opus-5", max_tokens=1000
    )
    estimate = estimate_plan(plan, store)
    low, high = estimate.cells
    assert low.call.fraction == pytest.approx(0.1) and low.call.calibrated_from == 5
    assert high.call.fraction == pytest.approx(0.68) and high.call.calibrated_from == 0
    assert "calibrated from 5 runs" in estimate.line()
