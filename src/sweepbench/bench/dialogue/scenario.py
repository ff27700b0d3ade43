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

from sweepbench.bench.dialogue import elbench_runtime, prompts
from sweepbench.bench.dialogue.ending import END_KEYWORDS
from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, rules_for
from sweepbench.errors import DataError
from sweepbench.models.base import Message

Runtime = Literal["sweepbench", "elbench"]
"""Whose rules play and evaluate a dialogue: sweepbench's own (declared dialogue tasks), or
ELBench's runtime (tasks built from ELBench's templates; :mod:`.elbench_runtime`), which the
``corrected`` scoring version amends where a rule of it is a defect (docs/benchmarks.md)."""
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
    """How each speaker is named in the transcript the evaluator reads (ELBench: the
    template's agent names, so ``test_model`` for some single-turn tasks)."""
    runtime: Runtime = "sweepbench"
    version: str = DEFAULT_SCORING_VERSION
    """The run's scoring version (``replicated`` or ``corrected``)."""
    max_turns: int | None = None
    """ELBench, guided: the superstep budget, ``min(recursion_limit, 20)`` model calls,
    teacher's and student's together (:func:`.elbench_runtime.superstep_limit`)."""
    evaluation_attempts: int = 2
    """Evaluator replies tried before an evaluation is unknown (ELBench: the template's
    ``retry.attempt``) or a failure (sweepbench: one retry, as for the judge)."""
    call_attempts: int | None = None
    """Attempts of each call (ELBench: the template's ``retry.attempt``); None: by flow."""

    @property
    def replicated(self) -> bool:
        """ELBench's runtime exactly as its code runs it (not amended)."""
        return self.runtime == "elbench" and self.version == "replicated"

    @property
    def opening_is_the_students(self) -> bool:
        """Whether the student's history holds the seeded opening: as a user message in
        ELBench's runtime (replicated); never in sweepbench's or corrected."""
        return self.replicated

    def teacher_turn_limit(self) -> int | None:
        """Teacher turns after which a lesson ends on a teacher turn, or None when the limit
        counts supersteps instead (ELBench replicated: it may end on a student turn)."""
        if self.max_turns is None:
            return self.max_steps
        if self.replicated:
            return None
        return (self.max_turns + 1) // 2  # corrected: the same budget, the teacher's last word


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
    runtime = str(options.get("runtime") or "sweepbench")
    if runtime not in ("sweepbench", "elbench"):
        raise DataError(f"{where}.runtime: {runtime!r} is not sweepbench or elbench")
    version = rules_for(str(options.get("scoring_version") or DEFAULT_SCORING_VERSION)).version
    elbench = runtime == "elbench"
    threshold = float(options.get("pass_threshold", default_threshold))
    if elbench and version == "replicated":
        threshold = elbench_runtime.PASS_THRESHOLD
    extra: dict[str, Any] = {}
    if elbench:
        retry = options.get("retry")
        attempt = retry.get("attempt") if isinstance(retry, Mapping) else None
        attempts = _whole(attempt, elbench_runtime.DEFAULT_ATTEMPTS)
        extra = {
            "runtime": "elbench",
            "max_turns": elbench_runtime.superstep_limit(options.get("recursion_limit"))
            if guided
            else None,
            "evaluation_attempts": attempts,
            "call_attempts": attempts,
            "names": {"teacher": "teacher", "student": "student",
                      **dict(options.get("names") or {}), "opening": "opening"},
        }  # fmt: skip
        if version == "replicated":  # ELBench only asks for the veto in its rubric
            veto = None
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
        threshold=threshold,
        keep_turns=int(options.get("keep_turns", KEEP_TURNS)),
        max_steps=int(options.get("max_steps", MAX_STEPS)),
        veto_field=None if veto is None else str(veto),
        format_mode="function" if mode == "function" else "prompt",
        version=version,
        **extra,
    )


def _whole(value: Any, default: int) -> int:
    """A whole number of at least 1 from a template, else ``default``."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if number >= 1 else default


def scenario_for(task: Task) -> Scenario:
    """The scenario of a dialogue task (``task.options["dialogue"]``)."""
    options = task.options.get("dialogue")
    if isinstance(options, Scenario):
        return options
    if not isinstance(options, Mapping):
        raise DataError(f"{task.id}: a dialogue task needs options.dialogue")
    # the task's own scale and threshold (they normalise its score) are the scenario's too,
    # and the run's scoring version (stamped on the task by the plan) says which rules play it
    names = ("scale", "pass_threshold", "scoring_version")
    inherited = {k: task.options[k] for k in names if k in task.options}
    return scenario_from_options(task.id, {**inherited, **options})


def is_dialogue(task: Task) -> bool:
    """True for a task the teaching runtime plays (rather than one answer and a grade)."""
    return task.multi_turn or "dialogue" in task.options
