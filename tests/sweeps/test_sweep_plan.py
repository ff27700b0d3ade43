"""The sweep plan: one builder for estimate and run, budget coercion, refusals."""

from __future__ import annotations

import pytest

from sweepbench.axes.cells import clamp_budget, coerce_budget
from sweepbench.models import model_info
from sweepbench.sweeps.plan import build_plan


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("64.000", 64000),
        ("64,000", 64000),
        (" 64 000 ", 64000),
        ("24000.7", 24000),
        ("1e5", 100000),
        ("64k", 64000),
        ("12,5", 125),
        (500, 500),
        ("abc", 7),
        ("", 7),
        (None, 7),
        (True, 7),
        ("nan", 7),
        ("inf", 7),
    ],
)
def test_coerce_budget_never_raises(raw: object, expected: int) -> None:
    assert coerce_budget(raw, 7) == expected


def test_clamp_budget_to_the_model_and_say_so() -> None:
    info = model_info("anthropic/claude-haiku-4-5")
    assert clamp_budget(200_000, info) == (
        64000,
        "max tokens 200,000 lowered to 64,000, anthropic/claude-haiku-4-5's limit",
    )
    assert clamp_budget(16, model_info("local/smollm2-135m")) == (16, None)


def test_budget_axis_sorted_deduplicated_and_labelled() -> None:
    plan = build_plan("hi", "max_tokens", ["8,000", "2000", "8000"], model="scripted/echo")
    assert [c.max_tokens for c in plan.cells] == [2000, 8000]
    assert [c.label for c in plan.cells] == ["2,000 tok · effort=none", "8,000 tok · effort=none"]
    assert plan.axis == "max_tokens" and "max_tokens" not in plan.held


def test_effort_axis_in_level_order_with_held_budget() -> None:
    plan = build_plan(
        "hi", "effort", ["high", "low"], model="anthropic/claude-opus-5", max_tokens="24.000"
    )
    assert [c.effort_applied for c in plan.cells] == ["low", "high"]
    assert {c.max_tokens for c in plan.cells} == {24000}
    assert plan.cells[0].label == "effort=low · 24,000 tok"


def test_calls_are_cells_times_repeats_with_the_kinds_prompt() -> None:
    plan = build_plan("hi", "prompt_version", ["v2", "v1"], model="scripted/echo", repeats=3)
    calls = plan.calls()
    assert len(calls) == 6
    assert [c.cell.prompt_version for c in calls[::3]] == ["v1", "v2"]
    v1, v2 = calls[0].request, calls[3].request
    assert v1.system is None and v2.system is not None
    assert calls[0].request.settings.max_tokens == 4000


def test_too_many_cells_are_cut_with_a_note() -> None:
    plan = build_plan(
        "hi", "max_tokens", [str(n) for n in range(100, 900, 100)], model="scripted/echo"
    )
    assert len(plan.cells) == 6 and plan.dropped == 2
    assert "Only the first 6 are run." in plan.notes


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(prompt="  ", axis="max_tokens", values=["100"]), "Write a prompt first."),
        (dict(prompt="hi", axis="max_tokens", values=[]), "Select at least one variant"),
        (dict(prompt="hi", axis="model", values=["scripted/echo"]), "at least two models"),
        (dict(prompt="hi", axis="max_tokens", values=["lots"]), "cannot read max tokens lots"),
        (dict(prompt="hi", axis="speed", values=["1"]), "unknown axis"),
        (
            dict(
                prompt="hi",
                axis="effort",
                values=["low", "high"],
                model="anthropic/claude-haiku-4-5",
            ),
            "does not accept the effort parameter, so every variant would be identical",
        ),
        (
            dict(
                prompt="hi",
                axis="effort",
                values=["high", "xhigh"],
                model="anthropic/claude-sonnet-4-6",
            ),
            "does not accept effort 'xhigh'",
        ),
        (
            dict(prompt="hi", axis="model", values=["openai/gpt-99", "scripted/echo"]),
            "No price on file for openai/gpt-99",
        ),
        (dict(prompt="hi", axis="model", values=["nosuch/x", "scripted/echo"]), "unknown provider"),
    ],
)
def test_refusals_say_what_is_wrong(kwargs: dict[str, object], words: str) -> None:
    plan = build_plan(**kwargs)  # type: ignore[arg-type]
    messages = " | ".join(r.message for r in plan.blocking())
    assert words in messages


def test_missing_key_blocks_the_run_but_not_the_estimate() -> None:
    plan = build_plan("hi", "effort", ["low", "high"], model="anthropic/claude-opus-5")
    assert [r.code for r in plan.blocking()] == ["key"]
    assert "ANTHROPIC_API_KEY" in plan.blocking()[0].message
    assert plan.blocking(spending=False) == []


def test_default_model_without_keys_is_the_bundled_local_model() -> None:
    plan = build_plan("hi", "max_tokens", ["16", "64"])
    assert {c.model for c in plan.cells} == {"local/smollm2-135m"}
    assert plan.blocking() == []
