"""ELBench's teaching runtime, as its code does it (``basic_education_runtime`` and the bridge
``execution/basic_education.py`` of ZeroLoss-Lab/ELBench at bdf8ea0), for scenarios built from
ELBench's templates. Each rule here names what it replicates; the places ``corrected`` differs
are in :mod:`.scenario` and :mod:`.evaluation` and listed in docs/benchmarks.md.

- **Prompts** are filled by plain string replacement, one ``{name}`` after another in the
  task's field order (:func:`replace_variables`), and sent as the template wrote them.
- **History**: each earlier turn, ``<think>…</think>`` pairs removed and stripped, empty ones
  dropped; the seeded opening is a *user* message for both roles (it has no agent name).
- **Turn limit**: a multi-turn lesson runs at most ``min(recursion_limit, 20)`` LangGraph
  supersteps, one model call each (teacher and student alike), then is evaluated as it stands
  (:func:`superstep_limit`).
- **Stored turns** split an inline ``</think>``: reasoning before it, content after
  (:func:`split_reasoning`).
- **The evaluator** is sent the rubric with ``{task.…}`` and ``{messages.as_dialog()}`` filled
  (:func:`fill_rubric`, :func:`as_dialog`), the format instruction appended to the system
  prompt (:func:`format_instruction`), and, when the rubric has no user message, the filled
  system prompt again as the user message (:func:`evaluator_messages`).
- **Its reply** is read from the greedy ``<START…>(.*)<END…>`` match, fences and ``json``
  stripped (:func:`parse_reply`); a reply that cannot be read is asked again, up to the
  template's ``retry.attempt``, and then the evaluation is ``unknown``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sweepbench.errors import DataError
from sweepbench.models.base import Message
from sweepbench.nesting import bounded_json_loads

if TYPE_CHECKING:
    from sweepbench.bench.dialogue.scenario import FormatField, Scenario
    from sweepbench.bench.dialogue.turns import Turn

START = "<START OF EVAL OUTPUT>"
END = "<END OF EVAL OUTPUT>"
MULTI_TURN_RECURSION_LIMIT = 20
"""The bridge's cap on a multi-turn template's ``recursion_limit`` (and its value when the
template gives none it can read)."""
PASS_THRESHOLD = 3.0
"""``configs/basic_education.yaml``: ``pass_threshold: 3.0`` for every scenario."""
EVALUATOR_MAX_TOKENS = 1024
"""The bridge raises the evaluator's ``max_tokens`` to at least this."""
DEFAULT_ATTEMPTS = 3
"""The runtime's ``RetryConfig.attempt`` when a template sets none (3 s apart)."""
NO_USER_FALLBACK = "Please complete the evaluation."

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_RUBRIC_PLACEHOLDER = re.compile(r"\{(?:task\.[^{}]+|messages\.[^{}]+)\}")
_MARKED = re.compile(re.escape(START) + r"(.*)" + re.escape(END), re.DOTALL)


def superstep_limit(recursion_limit: Any) -> int:
    """A multi-turn template's superstep budget: its ``recursion_limit`` capped at 20 (20 when
    it is missing or not a whole number), as the bridge renders it."""
    try:
        declared = int(recursion_limit)
    except (TypeError, ValueError):
        declared = MULTI_TURN_RECURSION_LIMIT
    return min(declared, MULTI_TURN_RECURSION_LIMIT)


def replace_variables(template: str, variables: Mapping[str, Any]) -> str:
    """``{name}`` replaced by each task field in turn (``str.replace``, field order), as the
    runtime's ``replace_prompt`` does: a value holding another ``{field}`` is filled too."""
    for name, value in variables.items():
        template = template.replace(
            "{" + str(name) + "}", value if isinstance(value, str) else str(value)
        )
    return template


def without_think_pairs(text: str) -> str:
    """The text an earlier turn is sent back as: ``<think>…</think>`` pairs removed, stripped
    (an unclosed ``<think>`` or a lone ``</think>`` stays, as in ELBench)."""
    return _THINK.sub("", _THINK.sub("", text)).strip()  # remove_think, then content_to_text


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, content) of a reply as ELBench's export splits it: at the first
    ``</think>``, both parts stripped (a leading ``<think>`` tag is dropped from the
    reasoning); without one, no reasoning."""
    if "</think>" not in text:
        return "", text.strip()
    before, after = text.split("</think>", 1)
    before = before.strip()
    if before.startswith("<think>"):
        before = before[len("<think>") :].strip()
    return before, after.strip()


def as_dialog(turns: Sequence[Turn], names: Mapping[str, str]) -> str:
    """``messages.as_dialog()``: ``name: content`` lines of the agents' turns, the seeded
    opening left out (it has no agent name), empty turns kept."""
    return "\n".join(
        f"{names.get(t.speaker, t.speaker)}: {t.content}" for t in turns if t.speaker != "opening"
    )


def fill_rubric(template: str, task: Mapping[str, Any], dialog: str) -> str:
    """The runtime's ``replace_template``: each ``{task.FIELD}`` and ``{messages.as_dialog()}``
    found in the template replaced, in order, everywhere it occurs. DataError for a field the
    task does not have or a message function other than ``as_dialog()``."""
    for placeholder in _RUBRIC_PLACEHOLDER.findall(template):
        name = placeholder.strip("{}")
        if name.startswith("task."):
            field = name.split(".")[1]
            if field not in task:
                raise DataError(f"the rubric's {placeholder} names no field of the task")
            value = task[field]
        elif name.split(".", 1)[1] == "as_dialog()":
            value = dialog
        else:
            raise DataError(f"the rubric's {placeholder} is not a placeholder ELBench fills")
        template = template.replace(placeholder, value if isinstance(value, str) else str(value))
    return template


def format_example(fields: Sequence[FormatField], seed: str) -> str:
    """An example object of the evaluation format, compact as pydantic writes it. ELBench
    draws its values at random (polyfactory); these are drawn the same way from a generator
    seeded by ``seed`` (the scenario), so a run's requests are reproducible."""
    rng = random.Random(seed)
    values: dict[str, Any] = {}
    for field in fields:
        if field.type == "int":
            values[field.name] = rng.randint(0, 9999)
        elif field.type == "float":
            values[field.name] = round(rng.uniform(-9999, 9999), rng.randint(1, 6))
        elif field.type == "bool":
            values[field.name] = rng.random() < 0.5
        else:
            letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            values[field.name] = "".join(rng.choice(letters) for _ in range(20))
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def format_instruction(example: str) -> str:
    """What the runtime appends to the evaluator's system prompt in ``prompt`` format mode."""
    return (
        "\n\nReturn exactly one JSON object wrapped with <START OF EVAL OUTPUT> and "
        "<END OF EVAL OUTPUT>."
        "\nDo not add markdown fences, explanations, or extra text."
        "\nUse the same keys and value types as this example:\n"
        f"\n{START}\n{example}\n{END}"
    )


TOOL_INSTRUCTION = (
    "\n\nPlease call the save_result_to_database tool to store the evaluation result."
)
"""What the runtime appends to the system prompt in ``tool`` format mode."""


def evaluator_messages(
    scenario: Scenario, task: Mapping[str, Any], turns: Sequence[Turn]
) -> tuple[Message, ...]:
    """The evaluator's messages as the runtime sends them: the filled system prompt with the
    format instruction, then the other prompts filled (role ``user`` when unnamed); when none
    is a user message with text, the filled system prompt once more as the user message."""
    dialog = as_dialog(turns, scenario.names)
    systems = [m for m in scenario.evaluation if m.role == "system"]
    if len(systems) > 1:
        raise DataError(f"{scenario.id}: the rubric has more than one system prompt")
    system = fill_rubric(systems[0].content, task, dialog) if systems else ""
    others = [
        Message(m.role, fill_rubric(m.content, task, dialog))  # unnamed ones are user turns
        for m in scenario.evaluation
        if m.role != "system"
    ]
    if not any(m.role == "user" and m.content.strip() for m in others):
        fallback = fill_rubric(system, task, dialog).strip() or NO_USER_FALLBACK
        others.append(Message("user", fallback))
    if scenario.format_mode == "function":
        instruction = TOOL_INSTRUCTION
    else:
        instruction = format_instruction(format_example(scenario.fields, scenario.id))
    return (Message("system", system + instruction), *others)


class Unreadable(ValueError):
    """An evaluator reply the runtime cannot read (it asks again)."""


def parse_reply(text: str) -> Any:
    """The runtime's reading of an evaluator reply: ``\\<`` and ``\\>`` unescaped, the greedy
    marked span (first start marker to last end marker), stripped of whitespace, backticks
    and the letters of ``json`` at both ends, parsed as JSON. Unreadable when there is no
    marked span or it is not JSON."""
    text = text.replace("\\<", "<").replace("\\>", ">")
    found = _MARKED.findall(text)
    if not found:
        raise Unreadable("the reply has no <START OF EVAL OUTPUT> … <END OF EVAL OUTPUT> span")
    # ELBench's own strip: characters, not prefixes (a body ending in "n" loses it too)
    body = found[-1].strip().strip("```").strip("json")  # noqa: B005
    try:
        return bounded_json_loads(body)
    except (ValueError, RecursionError) as exc:
        raise Unreadable(f"the marked span is not JSON ({exc})") from None
