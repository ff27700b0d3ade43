"""The LLM judge contract (spec §14): the request a judge model gets, and how its reply is read.

Pure functions only: the runner sends the messages, retries an unusable verdict once and records
the spending. ``parse_verdict`` returns None for a reply that says nothing usable, so that the
runner can turn it into a ``judge_unparseable`` failure record instead of a score of 0.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from sweepbench.bench.items import Item, JudgeSpec, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.registry import scorer, scorer_names
from sweepbench.errors import DataError
from sweepbench.models.base import Message

JUDGE_SYSTEM = "Return JSON only. No reasoning text."
JUDGE_HIGH_OUTPUT_TOKENS = 4000
"""Output tokens per grade assumed by the plan's high estimate (thinking included; spec §6.1)."""
JUDGE_MAX_TOKENS = 1024
"""The CLI's judge output budget (capped by the judge model's own maximum)."""
JUDGE_PROMPT_VERSION = "1"
"""Bump when the wording of the judge request changes (part of a run's settings hash)."""

MAX_REASON_CHARS = 2000
"""A judge's reason is cut to this many characters."""
_MAX_LITERAL_CHARS = 200_000
"""Longer candidates are not given to the literal parser (it is slow on huge inputs)."""

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

_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"^\s*<think\s*>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n?(.*?)```", re.DOTALL)
_LABEL_DECORATION = " `*\"'.!。！"
"""Characters stripped from both ends of a verdict word (markdown, quotes, final stops)."""
_BARE_LITERALS = {"true": "True", "false": "False", "null": "None"}


# --- request -------------------------------------------------------------------------------------


def judge_messages(
    task: Task, item: Item, response: str, *, decision: bool = False
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
    return (Message("system", JUDGE_SYSTEM), Message("user", user))


def judge_request_text_chars(task: Task, item: Item, *, decision: bool = False) -> int:
    """Characters of the judge request without the answer (the plan's low estimate, §6.1)."""
    return sum(len(m.content) for m in judge_messages(task, item, "", decision=decision))


def _judge_spec(task: Task) -> JudgeSpec:
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


# --- JSON extraction (shared with the highlevel_edu rule scorer) ---------------------------------


def strip_thinking(text: str) -> str | None:
    """``text`` without a leading ``<think>…</think>`` trace; None when the trace never closes
    (the reply was cut off while thinking)."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    if _THINK_OPEN.match(text):
        return None
    return text


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a model's reply holds, or None.

    Looks in the first fenced block that holds an object (a ``json`` fence first), else in the
    whole text; takes the outermost ``{…}``, else each top-level balanced object in turn. Each
    candidate is parsed as JSON, then as a Python-style literal (single quotes, True/False/None,
    and bare true/false/null)."""
    for region in _search_regions(text):
        for candidate in _object_candidates(region):
            parsed = parse_object(candidate)
            if parsed is not None:
                return parsed
    return None


def parse_object(candidate: str) -> dict[str, Any] | None:
    """``candidate`` parsed as a JSON object, else as a Python literal dict; None otherwise."""
    try:
        value = json.loads(candidate, strict=False)  # raw line breaks inside reasons
    except (ValueError, RecursionError):
        value = _literal(candidate)
    return value if isinstance(value, dict) else None


def _literal(candidate: str) -> Any:
    """``candidate`` read by ``ast.literal_eval`` (never ``eval``), with JSON's bare words
    ``true``/``false``/``null`` outside strings turned into Python's; None when it is not a
    literal."""
    if len(candidate) > _MAX_LITERAL_CHARS:
        return None
    for source in (candidate, _pythonise_bare_words(candidate)):
        try:
            return ast.literal_eval(source)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _pythonise_bare_words(text: str) -> str:
    """``text`` with ``true``/``false``/``null`` outside quoted strings written the Python way."""
    pieces: list[str] = []
    position = 0
    for start, end in _string_spans(text):
        pieces.append(_replace_bare_words(text[position:start]))
        pieces.append(text[start:end])
        position = end
    pieces.append(_replace_bare_words(text[position:]))
    return "".join(pieces)


def _replace_bare_words(code: str) -> str:
    """``true``/``false``/``null`` in code (no strings) replaced by ``True``/``False``/``None``."""
    return re.sub(r"\b(true|false|null)\b", lambda m: _BARE_LITERALS[m.group(1)], code)


def _string_spans(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each quoted string (single or double quotes, backslash escapes)."""
    index = 0
    while index < len(text):
        char = text[index]
        if char in "\"'":
            end = _string_end(text, index)
            yield index, end
            index = end
        else:
            index += 1


def _string_end(text: str, start: int) -> int:
    """The index just past the string that opens at ``start`` (the text's end if unclosed)."""
    quote = text[start]
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index + 1
        index += 1
    return len(text)


def _search_regions(text: str) -> list[str]:
    """Where to look for the object: the fenced blocks holding one (``json`` fences first),
    then the whole text."""
    fenced = [(lang.lower(), body) for lang, body in _FENCE.findall(text) if "{" in body]
    ordered = [body for lang, body in fenced if lang == "json"]
    ordered += [body for lang, body in fenced if lang != "json"]
    return [*ordered, text]


def _object_candidates(region: str) -> Iterator[str]:
    """The outermost ``{…}`` span (first ``{`` to last ``}``), then each top-level balanced
    ``{…}`` in order."""
    first, last = region.find("{"), region.rfind("}")
    if first == -1 or last < first:
        return
    outermost = region[first : last + 1]
    yield outermost
    for span in _balanced_objects(region, first):
        if span != outermost:
            yield span


def _balanced_objects(text: str, start: int) -> Iterator[str]:
    """Each top-level balanced ``{…}`` from ``start`` on (braces inside quoted strings do not
    count); stops at the first object that never closes."""
    index = start
    while index != -1 and index < len(text):
        end = _object_end(text, index)
        if end is None:
            return
        yield text[index:end]
        index = text.find("{", end)


def _object_end(text: str, start: int) -> int | None:
    """The index just past the ``}`` closing the ``{`` at ``start``; None when it never closes."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _string_end(text, index)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


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
