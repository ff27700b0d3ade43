"""The judge contract (spec §14) that benchmarks and judge-scored sweeps both use: the shapes a
judge reads (:class:`JudgeSpec`, any task and item with the fields of :class:`JudgedTask` and
:class:`JudgedItem`), the request a judge model gets (:func:`judge_messages`, held to
:func:`verdict_schema`), and how its reply is read (:func:`parse_verdict`, into a
:class:`Score`).

Pure functions only: the caller sends the messages, retries an unusable verdict and records the
spending. ``parse_verdict`` returns None for a reply that says nothing usable, so that the caller
can turn it into a failure record (``judge_unparseable``, ``unparseable``) instead of a score of
0. The wording and the reading are ELBench's, byte for byte: ``JUDGE_PROMPT_VERSION`` changes
with either.

Below both runs layers: it imports neither ``sweepbench.bench`` nor ``sweepbench.sweeps``.
``bench.items`` re-exports :class:`JudgeSpec` and ``bench.scoring.base`` :class:`Score`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sweepbench.judging.reply import extract_json_object, strip_thinking

if TYPE_CHECKING:  # imported where it is used: ``bench.items`` (which every command loads)
    # re-exports JudgeSpec, and ``models.base`` loads the whole models package
    from sweepbench.models.base import Message

JUDGE_SYSTEM = "Return JSON only. No reasoning text."
JUDGE_MAX_TOKENS = 1024
"""The CLI's judge output budget (capped by the judge model's own maximum)."""
JUDGE_PROMPT_VERSION = "1"
"""Bump when the wording of the judge request changes (part of a run's settings hash)."""

MAX_REASON_CHARS = 2000
"""A judge's reason is cut to this many characters."""

STRICT_JSON_PREAMBLE = (
    "You are grading one answer given by a model under test. Return exactly one JSON object and "
    "nothing else: the first character of your reply must be `{` and the last must be `}`. "
    "No markdown fences, no text before or after the object."
)
DECISION_PREAMBLE = (
    "You are grading one answer given by a model under test. Return only your verdict, as exactly "
    "one JSON object with the single key judge_result: the first character of your reply must be "
    "`{` and the last must be `}`. No reasoning, no score, no other text."
)
OUTPUT_FORMAT_KEYS = "keys: judge_result, score (0..1), judge_reason, judge_metadata (object)"

GENERIC_POSITIVE_WORDS = frozenset({"pass", "passed"})
"""Verdict words that mean the task's positive label whatever that label is."""
GENERIC_NEGATIVE_WORDS = frozenset({"fail", "failed"})
"""Verdict words that mean the task's negative label whatever that label is."""
LABEL_SYNONYMS: Mapping[str, frozenset[str]] = {
    "pass": frozenset({"passed"}),
    "fail": frozenset({"failed"}),
    "guide": frozenset({"guided", "guidance"}),
    "answer": frozenset({"answered"}),
    "safe": frozenset(),
    "unsafe": frozenset({"not safe", "not_safe", "not-safe"}),
}
"""Other spellings accepted for a label, keyed by the label (all lower case)."""

_LABEL_DECORATION = " `*\"'.!。！"
"""Characters stripped from both ends of a verdict word (markdown, quotes, final stops)."""


# --- shapes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Score:
    """One graded answer.

    ``score`` is in [0, 1]; ``result`` is the verdict label (``pass``/``fail``, or a task's own
    labels such as ``guide``, ``safe``, ``unsafe``); ``passed`` says whether the label counts as a
    pass. ``metadata`` keeps what the scorer saw (the extracted letters, per-instruction IFEval
    results, …) so a surprising grade can be checked by a person."""

    score: float
    result: str
    passed: bool
    reason: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    format_valid: bool = True
    """False when the answer did not follow the required format (no extractable answer)."""

    @classmethod
    def binary(cls, ok: bool, reason: str = "", **metadata: Any) -> Score:
        """1/pass or 0/fail."""
        return cls(1.0 if ok else 0.0, "pass" if ok else "fail", ok, reason, metadata)


@dataclass(frozen=True)
class JudgeSpec:
    """How a judge model grades a task (spec §14)."""

    rubric: str
    """One sentence: what a passing answer does."""
    positive_label: str = "pass"
    negative_label: str = "fail"
    template: str = ""
    """The name shown after ``[JUDGE_TASK]`` (defaults to the task id)."""


class JudgedTask(Protocol):
    """What the judge reads of a task (a benchmark's ``bench.items.Task`` has these fields)."""

    @property
    def id(self) -> str: ...
    @property
    def area(self) -> str: ...
    @property
    def judge(self) -> JudgeSpec | None: ...


class JudgedItem(Protocol):
    """What the judge reads of an item (a benchmark's ``bench.items.Item`` has these fields)."""

    @property
    def dimension(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def reference(self) -> Any: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class PlainTask:
    """A task built for one grade outside a benchmark (a judge-scored sweep's)."""

    id: str
    area: str
    judge: JudgeSpec | None


@dataclass(frozen=True)
class PlainItem:
    """An item built for one grade outside a benchmark (a judge-scored sweep's sample)."""

    prompt: str
    dimension: str = "default"
    reference: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


# --- request -------------------------------------------------------------------------------------


def judge_messages(
    task: JudgedTask, item: JudgedItem, response: str, *, decision: bool = False
) -> tuple[Message, ...]:
    """The system and user messages that ask a judge model to grade ``response`` (spec §14).

    ``decision`` asks a decision ("System 1") judge for the verdict only."""
    spec = _judge_spec(task)
    preamble = DECISION_PREAMBLE if decision else STRICT_JSON_PREAMBLE
    blocks = [
        f"[JUDGE_TASK] {spec.template or task.id}",
        f"[MODULE] {task.area}",
        f"[SUBSET] {item.metadata.get('subset', '')}",
        f"[TASK] {task.id}",
        f"[DIMENSION] {item.dimension}",
        f"[REFERENCE] {_to_json(item.reference, sort_keys=False)}",
        f"[METADATA] {_to_json(item.metadata, sort_keys=True)}",
        f"[PROMPT]\n{item.prompt}",
        f"[MODEL_RESPONSE]\n{response}",
        f"[RUBRIC]\n{spec.rubric}",
        _output_format(spec, decision=decision),
    ]
    user = preamble + "\n\n" + "\n".join(blocks)
    from sweepbench.models.base import Message

    return (Message("system", JUDGE_SYSTEM), Message("user", user))


def judge_request_text_chars(task: JudgedTask, item: JudgedItem, *, decision: bool = False) -> int:
    """Characters of the judge request without the answer (the plan's low estimate, §6.1)."""
    return sum(len(m.content) for m in judge_messages(task, item, "", decision=decision))


def _judge_spec(task: JudgedTask) -> JudgeSpec:
    """The task's judge configuration; a task graded by a judge must have one."""
    if task.judge is None:
        raise ValueError(f"task {task.id!r} has no judge configuration (rubric and labels)")
    return task.judge


def _output_format(spec: JudgeSpec, *, decision: bool) -> str:
    """The ``[OUTPUT_FORMAT]`` block, naming the two allowed verdict labels."""
    positive, negative = spec.positive_label, spec.negative_label
    if decision:
        return (
            "[OUTPUT_FORMAT] keys: judge_result\n"
            f'Reply with {{"judge_result": "{positive}"}} or {{"judge_result": "{negative}"}} '
            "and nothing else."
        )
    return (
        f"[OUTPUT_FORMAT] {OUTPUT_FORMAT_KEYS}\n"
        f'judge_result is "{positive}" or "{negative}"; score is a number from 0 to 1; '
        "judge_reason is a short string; judge_metadata is a JSON object."
    )


def _to_json(value: Any, *, sort_keys: bool) -> str:
    """``value`` as one-line JSON (non-ASCII kept; anything JSON cannot say written as text)."""
    if isinstance(value, Mapping) and not isinstance(value, dict):
        value = dict(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, default=str)
    except TypeError:  # keys of mixed types cannot be sorted
        return json.dumps(value, ensure_ascii=False, default=str)


def verdict_schema(task: JudgedTask, decision: bool) -> dict[str, Any]:
    """The JSON schema a judge's reply is held to (a strict response format): the task's two
    labels as ``judge_result``, with a ``score`` and a ``judge_reason`` unless ``decision``."""
    assert task.judge is not None
    labels = [task.judge.positive_label, task.judge.negative_label]
    properties: dict[str, Any] = {"judge_result": {"type": "string", "enum": labels}}
    if not decision:
        properties |= {"score": {"type": "number"}, "judge_reason": {"type": "string"}}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


# --- response parsing ----------------------------------------------------------------------------


def parse_verdict(text: str, judge: JudgeSpec, *, decision: bool = False) -> Score | None:
    """The judge's grade read from its reply, or None when the reply says nothing usable.

    Reads the fenced ``json`` block or the outermost object (JSON, else a Python-style literal),
    clamps the score to [0, 1], and derives a missing label from the score (≥ 0.5 → positive) or
    a missing score from the label. In ``decision`` mode a bare verdict word is accepted too, and
    the score is 1/0 with no reason."""
    body = strip_thinking(text or "")
    if body is None or not body.strip():
        return None
    parsed = extract_json_object(body)
    if parsed is None:
        label = normalise_label(body, judge) if decision else None
        return _decision_score(label, judge) if label else None
    label, score = _label_and_score(parsed, judge)
    if label is None:
        return None
    if decision:
        return _decision_score(label, judge)
    assert score is not None  # _label_and_score gives a score whenever it gives a label
    return Score(
        score=score,
        result=label,
        passed=label == judge.positive_label,
        reason=_reason(parsed.get("judge_reason"), label, score, judge),
        metadata=_metadata(parsed.get("judge_metadata")),
    )


def _label_and_score(
    parsed: Mapping[str, Any], judge: JudgeSpec
) -> tuple[str | None, float | None]:
    """The verdict label and the score, each derived from the other when missing.

    ``(None, None)`` when there is neither a known label nor a numeric score."""
    raw_label = parsed.get("judge_result")
    label = normalise_label(raw_label, judge) if isinstance(raw_label, str) else None
    score = coerce_score(parsed.get("score"))
    if label is None and score is None:
        return None, None
    if label is None:
        assert score is not None
        label = judge.positive_label if score >= 0.5 else judge.negative_label
    if score is None:
        score = 1.0 if label == judge.positive_label else 0.0
    return label, score


def _decision_score(label: str, judge: JudgeSpec) -> Score:
    """A decision judge's verdict: score 1/0, no reason."""
    passed = label == judge.positive_label
    return Score(score=1.0 if passed else 0.0, result=label, passed=passed)


def normalise_label(raw: str, judge: JudgeSpec) -> str | None:
    """The task's label that ``raw`` names (case, spaces, quotes and final punctuation ignored).

    ``pass``/``fail`` (and ``passed``/``failed``) always name the positive/negative label; each
    label also accepts the spellings in ``LABEL_SYNONYMS``. None for anything else."""
    word = re.sub(r"\s+", " ", raw).strip(_LABEL_DECORATION).lower()
    if not word:
        return None
    for label in (judge.positive_label, judge.negative_label):
        lowered = label.strip().lower()
        if word == lowered or word in LABEL_SYNONYMS.get(lowered, frozenset()):
            return label
    if word in GENERIC_POSITIVE_WORDS:
        return judge.positive_label
    if word in GENERIC_NEGATIVE_WORDS:
        return judge.negative_label
    return None


_FRACTION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*$")
_PERCENT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*%\s*$")


def _score_text(text: str) -> float | None:
    """A score written as text: ``"0.8"``, ``"8/10"`` (→ 0.8) or ``"30%"`` (→ 0.3)."""
    if (fraction := _FRACTION.match(text)) is not None:
        denominator = float(fraction.group(2))
        return float(fraction.group(1)) / denominator if denominator else None
    if (percent := _PERCENT.match(text)) is not None:
        return float(percent.group(1)) / 100
    try:
        return float(text.strip())
    except ValueError:
        return None


def coerce_score(value: Any) -> float | None:
    """A numeric score (a number or a numeric string) clamped to [0, 1]; None when there is none.

    Booleans and NaN are not scores."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        number_or_none = _score_text(value)
        if number_or_none is None:
            return None
        number = number_or_none
    else:
        return None
    if math.isnan(number):
        return None
    return min(1.0, max(0.0, number))


def _reason(value: Any, label: str, score: float, judge: JudgeSpec) -> str:
    """The judge's reason as text, cut to ``MAX_REASON_CHARS``. A reason that is only a verdict
    word (a small judge writes ``"judge_reason": "pass"`` beside ``"judge_result": "fail"``) is
    no reason: the row says the verdict it carries instead, so reason and result never
    disagree."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else _to_json(value, sort_keys=False)
    if text.strip() and normalise_label(text, judge) is not None:
        return (
            f"Verdict {label} (score {score:g}); the judge gave no reason, only the word "
            f"{text.strip()[:40]!r}."
        )
    return text[:MAX_REASON_CHARS]


def _metadata(value: Any) -> dict[str, Any]:
    """The judge's metadata when it is an object, else empty."""
    return dict(value) if isinstance(value, dict) else {}
