"""Tests for the scorer registry (sweepbench.bench.scoring.registry)."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest
import yaml

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import (
    RULE_SCORERS,
    SCORERS,
    Score,
    ScorerInfo,
    UnknownScorerError,
    format_checker,
    get_scorer,
    retries_when_cut,
    rule_scorer_names,
    score_answer,
    scorer,
    scorer_names,
)
from sweepbench.bench.scoring.choice import choice_task
from sweepbench.bench.scoring.registry import FormatCheck, unregister
from sweepbench.bench.sources.declared import SCORERS as DECLARED_SCORERS
from sweepbench.errors import DataError

SOURCES = resources.files("sweepbench.bench.sources")


def shipped(name: str) -> Any:
    """A YAML file shipped with the package, parsed."""
    return yaml.safe_load(SOURCES.joinpath(name).read_text(encoding="utf-8"))


def tasks_of(declaration: Any) -> list[dict[str, Any]]:
    """The task mappings of an ELBench catalogue or a declared benchmark."""
    tasks = declaration["tasks"]
    assert isinstance(tasks, list) and tasks
    return tasks


def task(scorer_name: str, **options: Any) -> Task:
    """A task scored by ``scorer_name``."""
    return Task(id="t", area="a", name="T", grading="auto", scorer=scorer_name, options=options)


def item(reference: Any = "B", **metadata: Any) -> Item:
    """One item with ``reference``."""
    return Item("f::1", "1", "t", "default", "Pick one.", reference, metadata)


# --- the shipped benchmarks -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["elbench_registry.yaml", "sample/benchmark.yaml"])
def test_every_scorer_a_shipped_benchmark_uses_is_registered(name: str) -> None:
    for spec in tasks_of(shipped(name)):
        info = get_scorer(spec["scorer"])
        assert info.name == spec["scorer"]
        if "grading" in spec:  # the ELBench catalogue states it; it must agree
            assert info.grading == spec["grading"], spec["id"]
        rule = (spec.get("options") or {}).get("rule_scorer")
        if rule is not None:
            assert rule in rule_scorer_names(), spec["id"]


def test_the_registry_and_the_declared_gradings_agree() -> None:
    assert set(scorer_names()) == set(DECLARED_SCORERS)
    for name, grading in DECLARED_SCORERS.items():
        assert get_scorer(name).grading == grading


def test_the_facts_the_callers_read() -> None:
    def having(fact: str) -> set[str]:
        return {n for n in scorer_names() if getattr(get_scorer(n), fact)}

    assert having("format_check") == {"choice", "choice_multi", "choice_free"}
    assert having("partial_credit") == {"option_set"}
    assert having("retry_when_cut") == {"math", "aime"}
    assert having("needs_judge") == {"judge", "runtime"}
    assert rule_scorer_names() == RULE_SCORERS
    assert scorer_names() == SCORERS
    assert scorer_names()[0] == "choice" and scorer_names()[-2:] == ("judge", "runtime")


def test_the_choice_format_check_comes_from_the_registry() -> None:
    check = format_checker(task("choice"), item())
    assert check is not None
    assert check("ANSWER: B") and not check("no idea")
    assert format_checker(task("exact"), item()) is None
    assert retries_when_cut(task("aime")) and not retries_when_cut(task("choice"))


# --- registering --------------------------------------------------------------------------


def test_registering_a_name_twice_raises() -> None:
    with pytest.raises(ValueError, match="'choice' is already registered"):
        scorer("choice")(lambda task, item, response: Score.binary(True))
    assert get_scorer("choice").score is choice_task


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownScorerError) as raised:
        get_scorer("exactt")
    message = str(raised.value)
    assert message.startswith("unknown scorer 'exactt'; known: choice, choice_multi, ")
    assert all(name in message for name in scorer_names())
    with pytest.raises(DataError, match=r"^task t: unknown scorer 'exactt'; known: choice, "):
        score_answer(task("exactt"), item(), "B")
    assert format_checker(task("exactt"), item()) is None
    assert not retries_when_cut(task("exactt"))


def test_a_judged_scorer_is_not_a_rule() -> None:
    with pytest.raises(DataError, match="'judge' is not a rule scorer"):
        score_answer(task("judge"), item(), "B")


@pytest.fixture
def echo() -> Iterator[ScorerInfo]:
    """A scorer registered by this test module (passes when the response repeats the
    reference), removed afterwards."""

    def echo_format(task: Task, item: Item) -> FormatCheck:
        return lambda text: bool(text.strip())

    @scorer(
        "test_echo", format_check=echo_format, partial_credit=True, retry_when_cut=True,
        options=("loud",),
    )  # fmt: skip
    def echo_task(task: Task, item: Item, response: str) -> Score:
        return Score.binary(response.strip() == str(item.reference), "echo", loud=task.options)

    try:
        yield get_scorer("test_echo")
    finally:
        unregister("test_echo")


def test_a_scorer_registered_elsewhere_is_dispatched_by_score_answer(echo: ScorerInfo) -> None:
    assert "test_echo" in scorer_names() and "test_echo" in rule_scorer_names()
    assert echo.partial_credit and echo.options == frozenset({"loud"})
    passed = score_answer(task("test_echo", loud=True), item("hello"), " hello ")
    assert passed.passed and passed.reason == "echo" and passed.metadata["loud"] == {"loud": True}
    assert not score_answer(task("test_echo"), item("hello"), "bye").passed
    check = format_checker(task("test_echo"), item())
    assert check is not None and check("x") and not check("  ")
    assert retries_when_cut(task("test_echo"))


def test_the_test_scorer_is_gone_afterwards() -> None:
    assert "test_echo" not in scorer_names()
    with pytest.raises(UnknownScorerError):
        get_scorer("test_echo")
