"""The judge's side of a benchmark: the registered ``judge`` and ``runtime`` scorers (which
refuse: the runner grades those answers through a judge model) and the plan's high estimate of a
grade's output.

The contract itself (the request a judge model gets and how its reply is read, spec §14) is
:mod:`sweepbench.judging.contract`, which judge-scored sweeps use too; its names are re-exported
here for the benchmark's modules.
"""

from __future__ import annotations

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.registry import scorer, scorer_names
from sweepbench.errors import DataError
from sweepbench.judging.contract import (
    DECISION_PREAMBLE,
    GENERIC_NEGATIVE_WORDS,
    GENERIC_POSITIVE_WORDS,
    JUDGE_MAX_TOKENS,
    JUDGE_PROMPT_VERSION,
    JUDGE_SYSTEM,
    LABEL_SYNONYMS,
    MAX_REASON_CHARS,
    OUTPUT_FORMAT_KEYS,
    STRICT_JSON_PREAMBLE,
    JudgeSpec,
    Score,
    coerce_score,
    judge_messages,
    judge_request_text_chars,
    normalise_label,
    parse_verdict,
    verdict_schema,
)
from sweepbench.judging.reply import extract_json_object, parse_object, strip_thinking

__all__ = [
    "DECISION_PREAMBLE", "GENERIC_NEGATIVE_WORDS", "GENERIC_POSITIVE_WORDS",
    "JUDGE_HIGH_OUTPUT_TOKENS", "JUDGE_MAX_TOKENS", "JUDGE_PROMPT_VERSION", "JUDGE_SYSTEM",
    "LABEL_SYNONYMS", "MAX_REASON_CHARS", "OUTPUT_FORMAT_KEYS", "STRICT_JSON_PREAMBLE",
    "JudgeSpec", "Score", "coerce_score", "extract_json_object", "judge_messages",
    "judge_request_text_chars", "judge_task", "normalise_label", "parse_object", "parse_verdict",
    "runtime_task", "strip_thinking", "verdict_schema",
]  # fmt: skip

JUDGE_HIGH_OUTPUT_TOKENS = 4000
"""Output tokens per grade assumed by the plan's high estimate (thinking included; spec §6.1)."""


# --- the registered scorers ------------------------------------------------------------------


def _not_a_rule(task: Task) -> DataError:
    """The error for asking a rule to grade a judged task."""
    known = ", ".join(scorer_names())
    return DataError(f"task {task.id}: {task.scorer!r} is not a rule scorer (known: {known})")


@scorer("judge", grading="judge", options=("scale", "rule_scorer"))
def judge_task(task: Task, item: Item, response: str) -> Score:
    """Refuses: a judge model grades these answers through the runner (:func:`judge_messages`,
    :func:`parse_verdict`)."""
    raise _not_a_rule(task)


@scorer("runtime", grading="runtime", options=("scale", "pass_threshold", "dialogue"))
def runtime_task(task: Task, item: Item, response: str) -> Score:
    """Refuses: multi-turn tasks are evaluated by the teaching runtime and a judge model."""
    raise _not_a_rule(task)
