"""The evaluator's prompt, its parser, the guided veto and the score (spec §15.2).

The evaluator reads the rubric with the task's fields and the dialogue (``role: content``
lines) and answers with one JSON object between the markers. The score is the mean of every
numeric leaf of that object (booleans count 0/1); a dialogue passes at the scenario's
threshold. An answer with no usable object is retried, then is a failure — never a 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepbench.bench.dialogue import elbench_runtime
from sweepbench.bench.dialogue.scenario import FormatField, Scenario, filled
from sweepbench.bench.dialogue.turns import Turn, transcript
from sweepbench.models.base import Message
from sweepbench.nesting import bounded_json_loads

START = "<START OF EVAL OUTPUT>"
END = "<END OF EVAL OUTPUT>"
_FENCE = re.compile(r"^\s*```[A-Za-z]*\s*|\s*```\s*$")
_EXAMPLES = {"int": 3, "float": 3.5, "bool": True, "str": "…"}


class EvaluationFailed(Exception):
    """No attempt of the evaluator gave a usable evaluation (a retryable failure)."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True)
class Evaluation:
    """A parsed evaluation and what it comes to."""

    values: dict[str, Any]
    """The evaluation JSON (after the veto)."""
    score: float | None
    """The mean of its numbers; None when ELBench would record it ``unknown`` (no number, or
    no readable reply after every attempt)."""
    passed: bool
    vetoed: bool
    raw: str

    @property
    def result(self) -> str:
        """``pass``, ``fail`` or ``unknown``."""
        if self.score is None:
            return "unknown"
        return "pass" if self.passed else "fail"

    @classmethod
    def unknown(cls, raw: str, values: dict[str, Any] | None = None) -> Evaluation:
        """An evaluation ELBench records as ``unknown``: no score, not a pass."""
        return cls(values or {}, None, False, False, raw)


def format_example(fields: Sequence[FormatField]) -> str:
    """An example object with every format field (what the evaluator must return)."""
    example = {f.name: _EXAMPLES.get(f.type, 3) for f in fields}
    return json.dumps(example, ensure_ascii=False, indent=2)


def _task_lines(payload: Mapping[str, Any]) -> str:
    lines = []
    for name, value in payload.items():
        if name in ("prompt",):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{name}: {text}")
    return "\n".join(lines)


def evaluation_messages(
    scenario: Scenario, payload: Mapping[str, Any], turns: Sequence[Turn]
) -> tuple[Message, ...]:
    """The evaluator's messages: the rubric (filled), then the task fields, the dialogue and
    the format with its example, added to the last user message; in ELBench's runtime, as
    ELBench sends them (:func:`.elbench_runtime.evaluator_messages`)."""
    if scenario.runtime == "elbench":
        return elbench_runtime.evaluator_messages(scenario, payload, turns)
    rubric = filled(scenario.evaluation, payload) or (Message("user", ""),)
    fields = "\n".join(
        f"- {f.name} ({f.type}){': ' + f.description if f.description else ''}"
        for f in scenario.fields
    )
    added = (
        f"\n\n[Task]\n{_task_lines(payload)}\n\n"
        f"[Dialogue]\n{transcript(turns, dict(scenario.names))}\n\n"
        f"[Output]\nRate on a scale of 1 to {scenario.scale}. Fields:\n{fields}\n"
        f"Return exactly one JSON object between {START} and {END}, like this:\n"
        f"{START}\n{format_example(scenario.fields)}\n{END}"
    )
    last_user = max(i for i, m in enumerate(rubric) if m.role == "user")
    out = list(rubric)
    out[last_user] = Message("user", (out[last_user].content + added).strip())
    return tuple(out)


def parse_evaluation(text: str, *, bare: bool = False) -> dict[str, Any] | None:
    """The evaluation object of an evaluator's reply, or None: the last marked block, ``\\<``
    and ``\\>`` unescaped, fences and a leading "json" stripped, parsed as a JSON object.
    With ``bare`` (function mode), a reply without markers is read as the object itself."""
    text = text.replace("\\<", "<").replace("\\>", ">")
    start = text.rfind(START)
    if start < 0 and not bare:
        return None
    body = text[start + len(START) :] if start >= 0 else text
    end = body.find(END)
    if end >= 0:
        body = body[:end]
    body = _FENCE.sub("", body.strip()).strip()
    if body[:4].lower() == "json":
        body = body[4:].strip()
    try:
        value = bounded_json_loads(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def evaluation_schema(fields: Sequence[FormatField]) -> dict[str, Any]:
    """The JSON schema of the evaluation object (function mode)."""
    types = {"int": "integer", "float": "number", "bool": "boolean", "str": "string"}
    return {
        "type": "object",
        "properties": {f.name: {"type": types.get(f.type, "number")} for f in fields},
        "required": [f.name for f in fields],
        "additionalProperties": False,
    }


def numeric_leaves(value: Any) -> list[float]:
    """Every number in a JSON value, recursing through objects and lists (booleans 0/1)."""
    if isinstance(value, bool):
        return [1.0 if value else 0.0]
    if isinstance(value, int | float):
        return [float(value)] if math.isfinite(value) else []
    if isinstance(value, Mapping):
        return [n for v in value.values() for n in numeric_leaves(v)]
    if isinstance(value, list):
        return [n for v in value for n in numeric_leaves(v)]
    return []


def apply_veto(values: dict[str, Any], scenario: Scenario) -> tuple[dict[str, Any], bool]:
    """Guided: role confusion (the veto field at the bottom of the scale) forces every format
    field to the bottom too. Returns the values and whether the veto applied."""
    field = scenario.veto_field
    if field is None or field not in values:
        return values, False
    leaves = numeric_leaves(values[field])
    if not leaves or min(leaves) > 1:
        return values, False
    names = {f.name for f in scenario.fields} | {field}
    vetoed = {k: (_bottom(v) if k in names else v) for k, v in values.items()}
    for name in names - set(vetoed):
        vetoed[name] = 1
    return vetoed, True


def _bottom(value: Any) -> Any:
    """A value with every number set to 1 (the bottom of every scale)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return 1
    if isinstance(value, Mapping):
        return {k: _bottom(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bottom(v) for v in value]
    return value


def judged(raw: str, scenario: Scenario) -> Evaluation | None:
    """The evaluation of one reply, or None when it holds no object with a number."""
    values = parse_evaluation(raw, bare=scenario.format_mode == "function")
    if values is None:
        return None
    values, vetoed = apply_veto(values, scenario)
    leaves = numeric_leaves(values)
    if not leaves:
        return None
    score = sum(leaves) / len(leaves)
    return Evaluation(values, score, score >= scenario.threshold, vetoed, raw)


def judged_as_elbench(raw: str, scenario: Scenario) -> Evaluation | None:
    """The evaluation of one reply as ELBench's runtime reads it (replicated): None when the
    reply cannot be read (it is asked again); otherwise every number of the object, with no
    veto, its mean the score, ``unknown`` when it holds none."""
    try:
        value = elbench_runtime.parse_reply(raw)
    except elbench_runtime.Unreadable:
        return None
    values = value if isinstance(value, dict) else {"value": value}
    # as ELBench's aggregate_numeric_score visits it; a non-finite number (NaN) is left out:
    # it would make every mean and range NaN
    numbers = numeric_leaves(value)
    if not numbers:
        return Evaluation.unknown(raw, values)
    score = sum(numbers) / len(numbers)
    return Evaluation(values, score, score >= scenario.threshold, False, raw)
