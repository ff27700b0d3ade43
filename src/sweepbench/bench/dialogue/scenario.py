"""What a dialogue task is (spec §15): its flow, each role's prompts, the rubric and the scale.

A scenario is declared with the task (``options.dialogue`` in a benchmark declaration, or
built from an ELBench teaching template) and filled per item from the item's payload:
``{name}`` placeholders take the payload's fields; other braces are left as they are, so a
rubric may show JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sweepbench.bench.dialogue import prompts
from sweepbench.bench.dialogue.ending import END_KEYWORDS
from sweepbench.bench.items import Item, Task
from sweepbench.errors import DataError
from sweepbench.models.base import Message

Flow = Literal["single", "guided"]
"""``single``: one teacher turn, then the evaluation (knowledge, question, cross);
``guided``: teacher and student take turns until an end keyword or the step limit."""

MAX_STEPS = 20
"""A guided dialogue's step limit (a step is one teacher turn); reaching it ends the dialogue
silently, and it is still evaluated."""
KEEP_TURNS = 3
EVALUATOR_MIN_TOKENS = 1024
"""The evaluator's output budget is at least this (spec §15.1)."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class FormatField:
    """One field of the evaluation JSON: its name, ``int`` / ``float`` / ``bool`` / ``str``, and
    what it rates."""

    name: str
    type: str = "int"
    description: str = ""


@dataclass(frozen=True)
class Scenario:
    """A dialogue task's runtime settings."""

    id: str
    flow: Flow
    teacher: tuple[Message, ...]
    """The teacher's prompt list (templates)."""
    evaluation: tuple[Message, ...]
    """The rubric (templates); the task fields, the dialogue and the format are added."""
    fields: tuple[FormatField, ...]
    scale: int = 5
    """The top of the rating scale (5 or 10); the bottom is 1."""
    threshold: float = 3.0
    """A dialogue passes at a score at or above this (3.0 on 1–5, 6.0 on 1–10)."""
    student: tuple[Message, ...] = ()
    opening: str | None = None
    """The seeded first message of a guided lesson (template)."""
    keep_turns: int = KEEP_TURNS
    max_steps: int = MAX_STEPS
    veto_field: str | None = None
    """Guided: when this field (role consistency) is at the bottom of the scale, every field
    is forced to it (role confusion vetoes the whole evaluation)."""
    end_keywords: tuple[str, ...] = END_KEYWORDS
    format_mode: Literal["prompt", "function"] = "prompt"
    """``prompt``: the evaluator writes the marked JSON block; ``function``: it is also sent a
    JSON schema built from the fields (structured output), and a bare object is read too."""
    names: Mapping[str, str] = field(
        default_factory=lambda: {"opening": "student", "teacher": "teacher", "student": "student"}
    )
    """How each speaker is named in the transcript the evaluator reads."""


def fill(template: str, payload: Mapping[str, Any]) -> str:
    """``{name}`` placeholders replaced by the payload's fields (unknown ones kept)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in payload:
            return match.group(0)
        text = payload[name]
        return text if isinstance(text, str) else str(text)

    return _PLACEHOLDER.sub(value, template)


def filled(
    messages: Sequence[Message], payload: Mapping[str, Any], *, ask: bool = True
) -> tuple[Message, ...]:
    """A prompt list with its placeholders filled; with ``ask``, a list with no user message
    repeats its system text as the user message (spec §15.2), so the model is asked
    something."""
    out = tuple(Message(m.role, fill(m.content, payload)) for m in messages)
    if ask and out and not any(m.role == "user" for m in out):
        system = "\n\n".join(m.content for m in out if m.role == "system")
        out = (*out, Message("user", system))
    return out


def payload_of(item: Item) -> dict[str, Any]:
    """The fields an item's templates are filled from: its payload (ELBench) or its metadata
    fields (a declaration's ``fields.metadata``), plus ``prompt`` (and ``question``, when the
    payload has none)."""
    payload = item.metadata.get("payload")
    if isinstance(payload, Mapping):
        return {**payload, "prompt": payload.get("prompt", item.prompt)}
    data = dict(item.metadata)
    data.setdefault("prompt", item.prompt)
    data.setdefault("question", item.prompt)
    return data


def _messages(raw: Any, where: str) -> tuple[Message, ...]:
    if isinstance(raw, str):
        return (Message("system", raw),)
    if not isinstance(raw, list):
        raise DataError(f"{where}: expected a prompt text or a list of {{role, content}}")
    out = []
    for n, entry in enumerate(raw, 1):
        if not isinstance(entry, Mapping) or "content" not in entry:
            raise DataError(f"{where}[{n}]: expected {{role, content}}")
        role = str(entry.get("role") or "system").lower()
        if role not in ("system", "user", "assistant"):
            raise DataError(f"{where}[{n}].role: {role!r} is not system, user or assistant")
        out.append(Message(role, str(entry["content"])))  # type: ignore[arg-type]
    return tuple(out)


def _fields(raw: Any, where: str) -> tuple[FormatField, ...]:
    if not isinstance(raw, list) or not raw:
        raise DataError(f"{where}: expected a list of fields (names, or {{field, type}})")
    out = []
    for n, entry in enumerate(raw, 1):
        if isinstance(entry, str):
            out.append(FormatField(entry))
        elif isinstance(entry, Mapping) and entry.get("field"):
            kind = str(entry.get("type") or "int")
            if kind not in ("int", "float", "bool", "str"):
                raise DataError(f"{where}[{n}].type: {kind!r} is not int, float, bool or str")
            out.append(FormatField(str(entry["field"]), kind, str(entry.get("description", ""))))
        else:
            raise DataError(f"{where}[{n}]: expected a field name or {{field, type}}")
    return tuple(out)


def scenario_from_options(task_id: str, options: Mapping[str, Any]) -> Scenario:
    """A scenario from a task's ``dialogue`` options (see docs/benchmarks.md, "Teaching
    dialogues"); DataError naming the field that is wrong."""
    where = f"{task_id}: options.dialogue"
    flow = str(options.get("flow") or "single")
    if flow not in ("single", "guided"):
        raise DataError(f"{where}.flow: {flow!r} is not single or guided")
    scale = int(options.get("scale") or 5)
    if scale not in (5, 10):
        raise DataError(f"{where}.scale: {scale} is not 5 or 10")
    default_threshold = 6.0 if scale == 10 else 3.0
    guided = flow == "guided"
    teacher_default = prompts.TEACHER_GUIDED if guided else prompts.TEACHER_SINGLE
    fields = _fields(options.get("fields"), f"{where}.fields")
    veto = options.get("veto_field", fields[0].name if guided else None)
    mode = str(options.get("format_mode") or "prompt")
    if mode not in ("prompt", "function"):
        raise DataError(f"{where}.format_mode: {mode!r} is not prompt or function")
    return Scenario(
        id=str(options.get("scenario_id") or task_id),
        flow="guided" if guided else "single",
        teacher=_messages(options.get("teacher", teacher_default), f"{where}.teacher"),
        student=_messages(options.get("student", prompts.STUDENT), f"{where}.student")
        if guided
        else (),
        opening=str(options.get("opening", prompts.OPENING)) if guided else None,
        evaluation=_messages(options.get("rubric", ""), f"{where}.rubric"),
        fields=fields,
        scale=scale,
        threshold=float(options.get("pass_threshold", default_threshold)),
        keep_turns=int(options.get("keep_turns", KEEP_TURNS)),
        max_steps=int(options.get("max_steps", MAX_STEPS)),
        veto_field=None if veto is None else str(veto),
        format_mode="function" if mode == "function" else "prompt",
    )


def scenario_for(task: Task) -> Scenario:
    """The scenario of a dialogue task (``task.options["dialogue"]``)."""
    options = task.options.get("dialogue")
    if isinstance(options, Scenario):
        return options
    if not isinstance(options, Mapping):
        raise DataError(f"{task.id}: a dialogue task needs options.dialogue")
    # the task's own scale and threshold (they normalise its score) are the scenario's too
    inherited = {k: task.options[k] for k in ("scale", "pass_threshold") if k in task.options}
    return scenario_from_options(task.id, {**inherited, **options})


def is_dialogue(task: Task) -> bool:
    """True for a task the teaching runtime plays (rather than one answer and a grade)."""
    return task.multi_turn or "dialogue" in task.options
