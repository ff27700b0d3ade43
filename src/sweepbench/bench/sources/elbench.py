"""The ELBench adapter: load the user's copy of the ELBench question set as a
:class:`~sweepbench.bench.items.Benchmark` (spec §2–§4, §13).

The catalogue is data (``elbench_registry.yaml`` beside this module): four areas, 18 tasks, a
file registry that says where each task's file may lie, and field mappings that say how a row
becomes an item. ELBench's data carries no licence, so sweepbench never ships it: the user
points at a ``benchmark_root/`` folder. A file that cannot be found disables only its task;
a row that cannot be read becomes a :class:`LoadProblem` on its task, and the rest loads.
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sweepbench.bench.items import Area, Benchmark, Grading, Item, JudgeSpec, LoadProblem, Task
from sweepbench.bench.scoring.mathanswer import aime_reference
from sweepbench.bench.sources import elbench_prompts as prompts
from sweepbench.bench.sources.records import Record, iter_records, read_text
from sweepbench.errors import DataError, UserError

BENCHMARK_ID = "elbench"
PROMPT_VERSION = "elbench-1"
REGISTRY_FILE = "elbench_registry.yaml"
DATA_HINT = "ELBench's data must be given with --data PATH/benchmark_root"
_GRADINGS: tuple[Grading, ...] = ("auto", "judge", "runtime")
_LOADERS = ("generic", "choice", "ifeval", "math", "aime", "teaching")
_EDU_DIMENSION_KEYS = ("dimension", "field", "ability", "tag", "标签", "维度")
_OPTION_SET_KEY = re.compile(r"[A-G](?:\s*[,，、]\s*[A-G]|\s+[A-G])*")
_WHOLE_NUMBER = re.compile(r"[-+]?\d+")

# --- the registry (catalogue as data) -------------------------------------------------------


@dataclass(frozen=True)
class AreaSpec:
    """An area: its canonical key, display label and data folder."""

    key: str
    label: str
    folder: str


@dataclass(frozen=True)
class AnswerFormat:
    """A task's answer instruction (spec §10.1) and the markers that mean an equivalent
    instruction is already in the prompt."""

    instruction: str
    present_if: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    """A task as the registry declares it (everything but its items)."""

    id: str
    area: str
    name: str
    grading: Grading
    scorer: str
    options: Mapping[str, Any] = field(default_factory=dict)
    judge: JudgeSpec | None = None
    region_specific: bool = False
    multi_turn: bool = False
    mean_score: bool = False
    answer_format: AnswerFormat | None = None
    description: str = ""


@dataclass(frozen=True)
class FileEntry:
    """One data file: what it is called, which task it feeds and where it may lie."""

    canonical_name: str
    module: str
    subset: str
    task: str
    loader: str
    mapping: str
    path_hints: tuple[str, ...] = ()
    filename_patterns: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldMapping:
    """How a row of a file becomes an item. Field names may be dotted (``metadata.subject``)."""

    sample_id_fields: tuple[str, ...] = ()
    prompt_fields: tuple[str, ...] = ()
    prompt_template: str | None = None
    dimension_fields: tuple[str, ...] = ()
    dimension_resolver: str | None = None
    reference_fields: tuple[str, ...] = ()
    reference_shape: str = "object"
    """``value``: the first reference field as a string; ``object``: {field: value}."""
    metadata_fields: tuple[str, ...] = ()
    sheet_name: str | None = None
    prompt_language: str = "en"


@dataclass(frozen=True)
class Scenario:
    """A teaching scenario (spec §2.3): its id, task, skill label and expected task count."""

    scenario_id: str
    task: str
    dimension: str
    expected_tasks: int


@dataclass(frozen=True)
class Registry:
    """The whole ELBench catalogue as data."""

    areas: tuple[AreaSpec, ...]
    tasks: tuple[TaskSpec, ...]
    files: tuple[FileEntry, ...]
    mappings: Mapping[str, FieldMapping]
    scenarios: Mapping[str, Scenario]
    """By task id."""

    def file_for(self, task_id: str) -> FileEntry:
        """The registry entry of a task's data file."""
        for entry in self.files:
            if entry.task == task_id:
                return entry
        raise DataError(f"{REGISTRY_FILE}: no file entry for task {task_id!r}")


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    """The registry shipped beside this module, parsed and checked (cached)."""
    text = resources.files(__package__ or "sweepbench.bench.sources").joinpath(REGISTRY_FILE)
    return parse_registry(yaml.safe_load(text.read_text(encoding="utf-8")))


def parse_registry(document: Any) -> Registry:
    """A registry from its parsed YAML; DataError naming the entry when something is wrong."""
    top = _mapping(document, REGISTRY_FILE)
    areas = tuple(_area(_mapping(a, "areas[]")) for a in _list(top, "areas"))
    tasks = tuple(_task(_mapping(t, "tasks[]")) for t in _list(top, "tasks"))
    files = tuple(_file_entry(_mapping(f, "files[]")) for f in _list(top, "files"))
    mappings = {
        str(key): _field_mapping(_mapping(value, f"mappings.{key}"))
        for key, value in _mapping(top.get("mappings"), "mappings").items()
    }
    scenarios = {
        s.task: s for s in (_scenario(_mapping(x, "scenarios[]")) for x in _list(top, "scenarios"))
    }
    registry = Registry(areas, tasks, files, mappings, scenarios)
    _check_registry(registry)
    return registry


def _check_registry(registry: Registry) -> None:
    """Every task has one known area and one file; every file a known mapping and loader."""
    area_keys = {area.key for area in registry.areas}
    task_ids = [task.id for task in registry.tasks]
    if len(set(task_ids)) != len(task_ids):
        raise DataError(f"{REGISTRY_FILE}: duplicate task ids")
    for task in registry.tasks:
        if task.area not in area_keys:
            raise DataError(f"{REGISTRY_FILE}: task {task.id}: unknown area {task.area!r}")
        if sum(entry.task == task.id for entry in registry.files) != 1:
            raise DataError(f"{REGISTRY_FILE}: task {task.id} needs exactly one file entry")
    for entry in registry.files:
        if entry.mapping not in registry.mappings:
            raise DataError(f"{REGISTRY_FILE}: {entry.canonical_name}: unknown mapping")
        if entry.loader not in _LOADERS:
            raise DataError(f"{REGISTRY_FILE}: {entry.canonical_name}: unknown loader")
        if entry.loader == "teaching" and entry.task not in registry.scenarios:
            raise DataError(f"{REGISTRY_FILE}: {entry.canonical_name}: no teaching scenario")


def _area(raw: Mapping[str, Any]) -> AreaSpec:
    return AreaSpec(_text(raw, "key"), _text(raw, "label"), _text(raw, "folder"))


def _task(raw: Mapping[str, Any]) -> TaskSpec:
    grading = _text(raw, "grading")
    if grading not in _GRADINGS:
        raise DataError(f"{REGISTRY_FILE}: task {raw.get('id')}: unknown grading {grading!r}")
    judge = None
    if raw.get("judge") is not None:
        spec = _mapping(raw["judge"], f"task {raw.get('id')}: judge")
        judge = JudgeSpec(
            rubric=" ".join(_text(spec, "rubric").split()),
            positive_label=_text(spec, "positive_label"),
            negative_label=_text(spec, "negative_label"),
        )
    answer_format = None
    if raw.get("answer_format") is not None:
        spec = _mapping(raw["answer_format"], f"task {raw.get('id')}: answer_format")
        answer_format = AnswerFormat(_text(spec, "instruction"), _texts(spec, "present_if"))
    return TaskSpec(
        id=_text(raw, "id"),
        area=_text(raw, "area"),
        name=_text(raw, "name"),
        grading=grading,
        scorer=_text(raw, "scorer"),
        options=dict(_mapping(raw.get("options") or {}, "options")),
        judge=judge,
        region_specific=bool(raw.get("region_specific", False)),
        multi_turn=bool(raw.get("multi_turn", False)),
        mean_score=raw.get("score_by") == "mean_score",
        answer_format=answer_format,
        description=str(raw.get("description") or ""),
    )


def _file_entry(raw: Mapping[str, Any]) -> FileEntry:
    return FileEntry(
        canonical_name=_text(raw, "canonical_name"),
        module=_text(raw, "module"),
        subset=_text(raw, "subset"),
        task=_text(raw, "task"),
        loader=_text(raw, "loader"),
        mapping=_text(raw, "mapping"),
        path_hints=_texts(raw, "path_hints"),
        filename_patterns=_texts(raw, "filename_patterns"),
        aliases=_texts(raw, "aliases"),
    )


def _field_mapping(raw: Mapping[str, Any]) -> FieldMapping:
    template = raw.get("prompt_template")
    return FieldMapping(
        sample_id_fields=_texts(raw, "sample_id_fields"),
        prompt_fields=_texts(raw, "prompt_fields"),
        prompt_template=str(template) if template else None,
        dimension_fields=_texts(raw, "dimension_fields"),
        dimension_resolver=_optional_text(raw, "dimension_resolver"),
        reference_fields=_texts(raw, "reference_fields"),
        reference_shape=str(raw.get("reference_shape") or "object"),
        metadata_fields=_texts(raw, "metadata_fields"),
        sheet_name=_optional_text(raw, "sheet_name"),
        prompt_language=str(raw.get("prompt_language") or "en"),
    )


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    return Scenario(
        scenario_id=_text(raw, "scenario_id"),
        task=_text(raw, "task"),
        dimension=_text(raw, "dimension"),
        expected_tasks=int(raw.get("expected_tasks") or 0),
    )


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DataError(f"{REGISTRY_FILE}: {where}: expected a mapping")
    return value


def _list(raw: Mapping[str, Any], key: str) -> list[Any]:
    value = raw.get(key)
    if not isinstance(value, list):
        raise DataError(f"{REGISTRY_FILE}: {key}: expected a list")
    return value


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{REGISTRY_FILE}: {key}: expected text, found {value!r}")
    return value


def _optional_text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return str(value) if value not in (None, "") else None


def _texts(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key) or []
    if not isinstance(value, list):
        raise DataError(f"{REGISTRY_FILE}: {key}: expected a list")
    return tuple(str(item) for item in value)


# --- finding the files ----------------------------------------------------------------------


def data_root(root: Path) -> Path:
    """The ``benchmark_root/`` folder the user gave, or the one inside the folder they gave.
    UserError when the path does not exist or is not a folder."""
    path = Path(root).expanduser()
    if not path.exists():
        raise UserError(f"no ELBench data at {path}: the folder does not exist; {DATA_HINT}")
    if not path.is_dir():
        raise UserError(f"no ELBench data at {path}: it is not a folder; {DATA_HINT}")
    nested = path / "benchmark_root"
    areas = load_registry().areas
    if nested.is_dir() and not any((path / area.folder).is_dir() for area in areas):
        return nested
    return path


def _nfc(text: str) -> str:
    """Unicode NFC (file names from macOS copies may be decomposed)."""
    return unicodedata.normalize("NFC", text)


class FileIndex:
    """Every file under the data root by (NFC) name, walked once and only when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_name: dict[str, list[Path]] | None = None

    def by_name(self) -> dict[str, list[Path]]:
        """File name → paths, nearest the root first."""
        if self._by_name is None:
            found: dict[str, list[Path]] = {}
            for folder, dirs, files in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    found.setdefault(_nfc(name), []).append(Path(folder) / name)
            for paths in found.values():
                paths.sort(key=lambda p: (len(p.parts), str(p)))
            self._by_name = found
        return self._by_name

    def resolve(self, entry: FileEntry) -> Path | None:
        """Where an entry's file is: a path hint under the root, else a file anywhere in the
        tree named with the canonical name or an alias, else one matching a glob pattern."""
        for hint in entry.path_hints:
            candidate = self.root / hint
            if candidate.is_file():
                return candidate
        by_name = self.by_name()
        for name in (entry.canonical_name, *entry.aliases):
            if paths := by_name.get(_nfc(name)):
                return paths[0]
        for pattern in entry.filename_patterns:
            matches = [
                path
                for name, paths in by_name.items()
                if fnmatch.fnmatchcase(name, _nfc(pattern))
                for path in paths
            ]
            if matches:
                return min(matches, key=lambda p: (len(p.parts), str(p)))
        return None


def _fingerprint(found: Sequence[tuple[str, Path]]) -> str:
    """A short SHA-256 over the found files' canonical names and content hashes (stable across
    copies: no paths or times)."""
    digest = hashlib.sha256()
    for name, path in found:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "unreadable"
        digest.update(f"{name}\0{content}\n".encode())
    return digest.hexdigest()[:16]


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


def _first_filled(record: Mapping[str, Any], names: Sequence[str]) -> Any:
    for name in names:
        value = field_value(record, name)
        if _filled(value):
            return value
    return None


def _item(ctx: RowContext, sample_id: str, row: int, **fields: Any) -> Item:
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
    value = _first_filled(record, mapping.prompt_fields)
    if value is None:
        raise RowError("the prompt is empty", " / ".join(mapping.prompt_fields) or None)
    return prompts.stringify(value)


def _generic_dimension(mapping: FieldMapping, record: Mapping[str, Any]) -> str:
    value = _first_filled(record, mapping.dimension_fields)
    if value is None and mapping.dimension_resolver == "highlevel_edu":
        value = _first_filled(record, _EDU_DIMENSION_KEYS)
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
    return _item(
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
    subject_value = _first_filled(record, ctx.mapping.dimension_fields)
    subject = prompts.stringify(subject_value).strip() if subject_value is not None else ""
    prompt = prompts.zero_shot_choice_prompt(
        question, [prompts.stringify(c) for c in choices], ctx.mapping.prompt_language
    )
    metadata: dict[str, Any] = {"choices": len(choices)}
    if subject:
        metadata["subject"] = subject
    return _item(
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
    return _item(
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
    level_value = _first_filled(record, ctx.mapping.dimension_fields)
    level = prompts.stringify(level_value).strip() if level_value is not None else ""
    return _item(
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
    level_value = _first_filled(record, ctx.mapping.dimension_fields)
    level = prompts.stringify(level_value).strip() if level_value is not None else ""
    return _item(
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


# --- teaching templates ---------------------------------------------------------------------


def _read_yaml(path: Path, shown: str) -> Any:
    """A YAML file parsed with the C loader when available; DataError when it cannot be."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = read_text(path, shown)
    except OSError as exc:
        raise DataError(f"{shown}: cannot read the file ({exc.strerror or exc})") from exc
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown}:{mark.line + 1}" if mark is not None else shown
        raise DataError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc


def teaching_payloads(tasks: Any, shown: str) -> tuple[str, list[tuple[int, Any]]]:
    """The ``tasks`` section's mode and its payloads as (row, payload): ``iter`` lists them,
    ``union`` crosses the value lists (3 learner profiles × 5 problems = 15)."""
    if not isinstance(tasks, Mapping):
        raise DataError(f"{shown}: tasks: expected a mapping with mode and content")
    mode = str(tasks.get("mode") or "iter").lower()
    content = tasks.get("content")
    if mode == "iter":
        if not isinstance(content, list):
            raise DataError(f"{shown}: tasks.content: expected a list for mode iter")
        return mode, list(enumerate(content, start=1))
    if mode == "union":
        if not isinstance(content, Mapping) or not content:
            raise DataError(f"{shown}: tasks.content: expected lists by field for mode union")
        if not all(isinstance(values, list) for values in content.values()):
            raise DataError(f"{shown}: tasks.content: every field needs a list for mode union")
        keys = [str(key) for key in content]
        combos = itertools.product(*content.values())
        return mode, [(row, dict(zip(keys, c, strict=True))) for row, c in enumerate(combos, 1)]
    raise DataError(f"{shown}: tasks.mode: unknown mode {mode!r} (iter or union)")


def load_teaching(ctx: RowContext, path: Path, shown: str, scenario: Scenario) -> TaskLoad:
    """A teaching template's tasks as items (counted and listed; the dialogue runtime comes
    later). A template holding a literal API key is rejected (spec §20 #18)."""
    document = _read_yaml(path, shown)
    result = TaskLoad()
    if not isinstance(document, Mapping):
        result.missing = f"{shown} is not a teaching template (expected a YAML mapping)"
        return result
    if secrets := prompts.literal_key_paths(document):
        for where in secrets:
            message = (
                "holds a literal API key; keys come only from the environment, so this "
                "template is rejected: leave api_key empty or use ${YOUR_KEY_VARIABLE}"
            )
            result.problems.append(LoadProblem(shown, message, None, where))
        result.missing = (
            f"{shown} rejected: {', '.join(secrets)} holds a literal API key "
            "(keys come only from the environment)"
        )
        return result
    mode, payloads = teaching_payloads(document.get("tasks"), shown)
    for row, payload in payloads:
        if not isinstance(payload, Mapping):
            kind = type(payload).__name__
            result.problems.append(LoadProblem(shown, f"a task is a {kind}", row, "tasks"))
            continue
        result.items.append(_teaching_item(ctx, scenario, mode, row, payload))
    if scenario.expected_tasks and len(payloads) != scenario.expected_tasks:
        message = f"expected {scenario.expected_tasks} tasks, found {len(payloads)}"
        result.problems.append(LoadProblem(shown, message, None, "tasks"))
    return result


def _teaching_item(
    ctx: RowContext, scenario: Scenario, mode: str, row: int, payload: Mapping[str, Any]
) -> Item:
    """One teaching task: a stable id from its payload, the question or query as its prompt."""
    canonical = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    seed = f"{ctx.entry.canonical_name}::{row}::{canonical}"
    digest = hashlib.sha1(seed.encode("utf-8")).hexdigest()[:16]
    text = _first_filled(payload, ctx.mapping.prompt_fields)
    prompt = prompts.stringify(text) if text is not None else canonical
    return _item(
        ctx,
        f"{ctx.stem}-{digest}",
        row,
        dimension=scenario.dimension,
        prompt=prompt,
        reference=None,
        metadata={"payload": dict(payload), "mode": mode, "scenario_id": scenario.scenario_id},
    )


# --- the benchmark --------------------------------------------------------------------------


def load_task(registry: Registry, spec: TaskSpec, index: FileIndex) -> tuple[Task, Path | None]:
    """One task with its items, or marked missing when its file cannot be found or read."""
    entry = registry.file_for(spec.id)
    path = index.resolve(entry)
    if path is None:
        result = TaskLoad(missing=f"{entry.canonical_name} not found under {index.root}")
    else:
        shown = path.relative_to(index.root).as_posix()
        ctx = RowContext(
            entry, registry.mappings[entry.mapping], spec, prompts.safe_stem(entry.canonical_name)
        )
        try:
            if entry.loader == "teaching":
                result = load_teaching(ctx, path, shown, registry.scenarios[spec.id])
            else:
                result = load_rows(ctx, path, shown)
        except DataError as exc:
            result = TaskLoad(problems=[LoadProblem(shown, str(exc))], missing=str(exc))
        if result.missing is None and not result.items:
            result.missing = f"{shown} holds no loadable items"
    return _task_from(spec, entry, result), path


def _task_from(spec: TaskSpec, entry: FileEntry, result: TaskLoad) -> Task:
    options = dict(spec.options)
    if spec.answer_format is not None:
        options["answer_instruction"] = spec.answer_format.instruction
    return Task(
        id=spec.id,
        area=spec.area,
        name=spec.name,
        grading=spec.grading,
        scorer=spec.scorer,
        items=tuple(result.items) if result.missing is None else (),
        options=options,
        judge=spec.judge,
        region_specific=spec.region_specific,
        multi_turn=spec.multi_turn,
        score_by="mean_score" if spec.mean_score else "pass_rate",
        source_file=entry.canonical_name,
        missing=result.missing,
        problems=tuple(result.problems),
        description=spec.description,
    )


def load_elbench(root: Path) -> Benchmark:
    """ELBench from the user's ``benchmark_root/`` folder (or the folder that holds it).

    UserError when the folder does not exist. A data file that cannot be found disables only
    its task (``missing``); bad rows become problems on their task."""
    registry = load_registry()
    base = data_root(root)
    index = FileIndex(base)
    tasks: dict[str, Task] = {}
    found: list[tuple[str, Path]] = []
    for spec in registry.tasks:
        task, path = load_task(registry, spec, index)
        tasks[spec.id] = task
        if path is not None:
            found.append((registry.file_for(spec.id).canonical_name, path))
    areas = tuple(
        Area(area.key, area.label, tuple(t for t in tasks.values() if t.area == area.key))
        for area in registry.areas
    )
    problems: tuple[LoadProblem, ...] = ()
    if not found:
        problems = (LoadProblem(str(base), f"no ELBench data files found; {DATA_HINT}"),)
    return Benchmark(
        id=BENCHMARK_ID,
        name="ELBench",
        areas=areas,
        description=(
            "ELBench, an education benchmark in four areas: knowledge and reasoning, safety, "
            "teaching, and character and thinking skills. Loaded from the user's own copy."
        ),
        version=_fingerprint(found),
        prompt_version=PROMPT_VERSION,
        overall="mean_of_areas",
        source=str(base.resolve()),  # a run reloads it from wherever `bench show` runs
        problems=problems,
    )
