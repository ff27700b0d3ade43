"""How a row of an ELBench record file becomes an item: the generic loader follows the file's
field mapping (safety files, the two spreadsheets, omni, edu); the choice, IFEval, MATH and AIME
loaders keep the prompt construction of spec §13. A row that cannot be read and a repeated id
become :class:`~sweepbench.bench.items.LoadProblem` entries on the task; the rest loads.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepbench.bench.items import Item, LoadProblem
from sweepbench.bench.scoring.math_extract import aime_reference
from sweepbench.bench.sources import elbench_prompts as prompts
from sweepbench.bench.sources.elbench_registry import FieldMapping, FileEntry, TaskSpec
from sweepbench.bench.sources.records import Record, iter_records
from sweepbench.errors import DataError

_EDU_DIMENSION_KEYS = ("dimension", "field", "ability", "tag", "标签", "维度")
_OPTION_SET_KEY = re.compile(r"[A-G](?:\s*[,，、]\s*[A-G]|\s+[A-G])*")
_WHOLE_NUMBER = re.compile(r"[-+]?\d+")

# --- rows to items --------------------------------------------------------------------------


class RowError(Exception):
    """A row that cannot become an item: which field and why."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class RowContext:
    """What a row loader needs besides the row itself."""

    entry: FileEntry
    mapping: FieldMapping
    task: TaskSpec
    stem: str
    """The canonical name made safe for ids (``mmlu_pro_sampled_jsonl``)."""


RowLoader = Callable[[RowContext, Mapping[str, Any], int], Item]


def field_value(record: Mapping[str, Any], name: str) -> Any:
    """A field of a record; a dotted name walks into nested objects (``metadata.subject``)."""
    if name in record:
        return record[name]
    value: Any = record
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _filled(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value != {}


def first_filled(record: Mapping[str, Any], names: Sequence[str]) -> Any:
    for name in names:
        value = field_value(record, name)
        if _filled(value):
            return value
    return None


def make_item(ctx: RowContext, sample_id: str, row: int, **fields: Any) -> Item:
    """An item of the context's task (key, task, source file and row filled in)."""
    name = ctx.entry.canonical_name
    return Item(
        key=Item.make_key(name, sample_id),
        sample_id=sample_id,
        task=ctx.task.id,
        source_file=name,
        row=row,
        **fields,
    )


def _format_prompt(ctx: RowContext, prompt: str) -> str:
    """The prompt with the task's answer-format suffix, when the task has one (§10.1)."""
    answer = ctx.task.answer_format
    if answer is None:
        return prompt
    return prompts.with_answer_format(prompt, answer.instruction, answer.present_if)


def _generic_id(ctx: RowContext, record: Mapping[str, Any], row: int) -> str:
    """``<stem>-<16 hex of SHA-1>`` over the id fields, or over name, row and record JSON."""
    parts = [
        prompts.stringify(value)
        for value in (field_value(record, name) for name in ctx.mapping.sample_id_fields)
        if _filled(value)
    ]
    if not parts:
        raw = json.dumps(record, ensure_ascii=False, default=str)
        parts = [ctx.entry.canonical_name, str(row), raw]
    digest = hashlib.sha1("||".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{ctx.stem}-{digest}"


def _generic_prompt(ctx: RowContext, record: Mapping[str, Any]) -> str:
    mapping = ctx.mapping
    if mapping.prompt_template:
        names = prompts.template_fields(mapping.prompt_template)
        if not any(_filled(field_value(record, name)) for name in names):
            raise RowError("every prompt field is empty", ", ".join(names))
        return prompts.render_template(mapping.prompt_template, record)
    value = first_filled(record, mapping.prompt_fields)
    if value is None:
        raise RowError("the prompt is empty", " / ".join(mapping.prompt_fields) or None)
    return prompts.stringify(value)


def _generic_dimension(mapping: FieldMapping, record: Mapping[str, Any]) -> str:
    value = first_filled(record, mapping.dimension_fields)
    if value is None and mapping.dimension_resolver == "highlevel_edu":
        value = first_filled(record, _EDU_DIMENSION_KEYS)
    return prompts.stringify(value).strip() if value is not None else "default"


def _generic_reference(ctx: RowContext, record: Mapping[str, Any]) -> Any:
    mapping = ctx.mapping
    if not mapping.reference_fields:
        return None
    if mapping.reference_shape == "value":
        name = mapping.reference_fields[0]
        value = field_value(record, name)
        if not _filled(value):
            raise RowError("the answer key is empty", name)
        text = prompts.stringify(value).strip()
        _check_answer_key(ctx.task, text, name)
        return text
    found = {name: record[name] for name in mapping.reference_fields if name in record}
    return found or None


def _check_answer_key(task: TaskSpec, text: str, name: str) -> None:
    """RowError for a letter answer key its scorer could never match: ``choice_multi`` keys
    are capital letters among the task's options written together (``B``, ``AC``);
    ``option_set`` keys are capitals A–G separated by commas or spaces (``A, C``)."""
    if task.scorer == "choice_multi":
        count = int(task.options.get("choices", 4))
        last = chr(ord("A") + count - 1)
        if not re.fullmatch(f"[A-{last}]+", text):
            raise RowError(f"the answer key {text!r} is not capital letters from A to {last}", name)
    elif task.scorer == "option_set" and not _OPTION_SET_KEY.fullmatch(text):
        raise RowError(
            f"the answer key {text!r} is not capital letters from A to G separated by commas",
            name,
        )
    elif task.scorer == "choice" and not re.fullmatch("[A-Z]", text):
        raise RowError(f"the answer key {text!r} is not one capital option letter", name)


def load_generic_row(ctx: RowContext, record: Mapping[str, Any], row: int) -> Item:
    """A row through its field mapping: safety files, the two spreadsheets, omni, edu."""
    metadata = {
        name: value
        for name in ctx.mapping.metadata_fields
        if _filled(value := field_value(record, name))
    }
    return make_item(
        ctx,
        _generic_id(ctx, record, row),
        row,
        dimension=_generic_dimension(ctx.mapping, record),
        prompt=_format_prompt(ctx, _generic_prompt(ctx, record)),
        reference=_generic_reference(ctx, record),
        metadata=metadata,
    )


def _input_texts(record: Mapping[str, Any]) -> list[str]:
    """The text contents of the record's ``input`` messages, in order."""
    messages = record.get("input")
    if isinstance(messages, str):
        return [messages]
    if not isinstance(messages, list):
        return []
    return [
        message["content"]
        for message in messages
        if isinstance(message, Mapping) and isinstance(message.get("content"), str)
    ]


def _record_id(record: Mapping[str, Any], row: int) -> str:
    value = record.get("id")
    return prompts.stringify(value) if _filled(value) else str(row)


def load_choice_row(ctx: RowContext, record: Mapping[str, Any], row: int) -> Item:
    """An MMLU-Pro or C-Eval row: a zero-shot prompt rebuilt from the last question block of
    the stored few-shot input, with the record's own options (spec §13)."""
    question = next(
        (q for text in reversed(_input_texts(record)) if (q := prompts.last_question(text))),
        None,
    )
    if question is None:
        raise RowError("no question/options block in the input", "input")
    choices = record.get("choices")
    if not isinstance(choices, list) or not choices or len(choices) > 26:
        raise RowError("expected a list of 1 to 26 options", "choices")
    target = prompts.stringify(record.get("target")).strip().upper()
    letters = prompts.option_letters(len(choices)).split(",")
    if target not in letters:
        raise RowError(f"the answer {target!r} is not one of {','.join(letters)}", "target")
    subject_value = first_filled(record, ctx.mapping.dimension_fields)
    subject = prompts.stringify(subject_value).strip() if subject_value is not None else ""
    prompt = prompts.zero_shot_choice_prompt(
        question, [prompts.stringify(c) for c in choices], ctx.mapping.prompt_language
    )
    metadata: dict[str, Any] = {"choices": len(choices)}
    if subject:
        metadata["subject"] = subject
    return make_item(
        ctx,
        f"{ctx.stem}-{prompts.slug(subject)}-{_record_id(record, row)}",
        row,
        dimension=subject or "default",
        prompt=_format_prompt(ctx, prompt),
        reference=target,
        metadata=metadata,
    )


def _ifeval_kwargs(value: Any, count: int) -> list[dict[str, Any]]:
    """IFEval keyword arguments as dicts (the file stores JSON strings), one per instruction."""
    if value is None:
        value = [{}] * count
    if not isinstance(value, list) or len(value) != count:
        raise RowError(f"expected a list of {count} argument objects", "metadata.kwargs")
    parsed: list[dict[str, Any]] = []
    for entry in value:
        if isinstance(entry, str):
            try:
                entry = json.loads(entry) if entry.strip() else {}
            except json.JSONDecodeError as exc:
                raise RowError(f"not valid JSON ({exc.msg})", "metadata.kwargs") from exc
        if entry is None:
            entry = {}
        if not isinstance(entry, dict):
            raise RowError("each entry must be an object", "metadata.kwargs")
        parsed.append({key: val for key, val in entry.items() if val is not None})
    return parsed


def _check_ifeval(metadata: Mapping[str, Any]) -> None:
    """RowError when the IFEval checker could not use the row's instructions (an unknown id,
    arguments it cannot take), so a row that could never be scored is a bad row at load."""
    from sweepbench.bench.scoring.ifeval import build_checks

    try:
        build_checks(metadata["instruction_id_list"], metadata["kwargs"], metadata["ifeval_prompt"])
    except DataError as exc:
        field = "metadata.kwargs" if "kwarg" in str(exc) else "metadata.instruction_id_list"
        raise RowError(str(exc), field) from None


def load_ifeval_row(ctx: RowContext, record: Mapping[str, Any], row: int) -> Item:
    """An IFEval row: the prompt is ``metadata.prompt`` (else the first input message)."""
    meta = record.get("metadata") if isinstance(record.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    prompt = meta.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        texts = _input_texts(record)
        prompt = texts[0] if texts else ""
    if not prompt.strip():
        raise RowError("the prompt is empty", "metadata.prompt")
    ids = meta.get("instruction_id_list")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise RowError(
            "expected a non-empty list of instruction ids", "metadata.instruction_id_list"
        )
    metadata: dict[str, Any] = {
        "instruction_id_list": list(ids),
        "kwargs": _ifeval_kwargs(meta.get("kwargs"), len(ids)),
        "ifeval_prompt": prompt,
    }
    _check_ifeval(metadata)
    if _filled(meta.get("key")):
        metadata["key"] = meta["key"]
    return make_item(
        ctx,
        f"{ctx.stem}-{_record_id(record, row)}",
        row,
        dimension="default",
        prompt=prompt,
        reference=None,
        metadata=metadata,
    )


def _first_message(record: Mapping[str, Any]) -> str:
    texts = _input_texts(record)
    if not texts or not texts[0].strip():
        raise RowError("no input message", "input")
    return texts[0]


def _target(record: Mapping[str, Any]) -> str:
    target = (
        prompts.stringify(record.get("target")).strip() if _filled(record.get("target")) else ""
    )
    if not target:
        raise RowError("the answer key is empty", "target")
    return target


def load_math_row(ctx: RowContext, record: Mapping[str, Any], row: int) -> Item:
    """A MATH-500 row: the first input message (it already asks for ``\\boxed{}``); the skill
    is the Level."""
    level_value = first_filled(record, ctx.mapping.dimension_fields)
    level = prompts.stringify(level_value).strip() if level_value is not None else ""
    return make_item(
        ctx,
        f"{ctx.stem}-{prompts.slug(level)}-{_record_id(record, row)}",
        row,
        dimension=level or "default",
        prompt=_first_message(record),
        reference=_target(record),
        metadata={"level": level} if level else {},
    )


def load_aime_row(ctx: RowContext, record: Mapping[str, Any], row: int) -> Item:
    """An AIME row: the first input message; the key is the ``\\boxed{}`` content or the
    stripped target."""
    level_value = first_filled(record, ctx.mapping.dimension_fields)
    level = prompts.stringify(level_value).strip() if level_value is not None else ""
    return make_item(
        ctx,
        f"{ctx.stem}-{prompts.slug(level)}-{_record_id(record, row)}",
        row,
        dimension="default",
        prompt=_first_message(record),
        reference=_aime_key(record),
        metadata={},
    )


def _aime_key(record: Mapping[str, Any]) -> str:
    """An AIME answer key: the ``\\boxed{}`` content or the stripped target, which must be a
    whole number (AIME answers are integers; anything else could never be matched)."""
    key = aime_reference(_target(record))
    if not _WHOLE_NUMBER.fullmatch(key):
        shown = prompts.stringify(record.get("target")).strip()
        raise RowError(f"the answer key {shown!r} is not a whole number", "target")
    return key


ROW_LOADERS: dict[str, RowLoader] = {
    "generic": load_generic_row,
    "choice": load_choice_row,
    "ifeval": load_ifeval_row,
    "math": load_math_row,
    "aime": load_aime_row,
}


@dataclass
class TaskLoad:
    """What loading one task's file produced."""

    items: list[Item] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    missing: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """Task options the file itself gives (a teaching template's dialogue scenario)."""


def load_rows(ctx: RowContext, path: Path, shown: str) -> TaskLoad:
    """Every row of a record file through the entry's row loader; bad rows and duplicate ids
    become problems."""
    loader = ROW_LOADERS[ctx.entry.loader]
    result = TaskLoad()
    first_row: dict[str, int] = {}
    records: Iterator[Record] = iter_records(path, sheet=ctx.mapping.sheet_name, name=shown)
    for record in records:
        if record.problem is not None:
            result.problems.append(record.problem)
            continue
        assert record.data is not None
        try:
            item = loader(ctx, record.data, record.line)
        except RowError as exc:
            result.problems.append(LoadProblem(shown, exc.message, record.line, exc.field))
            continue
        except (TypeError, ValueError, AttributeError) as exc:  # a shape no check foresaw
            message = f"could not be read ({type(exc).__name__}: {exc})"
            result.problems.append(LoadProblem(shown, message, record.line))
            continue
        if item.sample_id in first_row:
            message = f"duplicate id {item.sample_id} (first at line {first_row[item.sample_id]})"
            result.problems.append(LoadProblem(shown, message, record.line, "id"))
            continue
        first_row[item.sample_id] = record.line
        result.items.append(item)
    return result
