"""The ELBench catalogue as data: ``elbench_registry.yaml`` (shipped beside this module)
parsed into the models of its published results (each role's default), its four areas and 18
tasks, the file registry that says where each task's file may lie, the field mappings that say
how a row becomes an item, and the teaching scenarios; checked as a whole, a mistake naming its
entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from sweepbench.bench.items import Grading, JudgeSpec, RoleDefaults
from sweepbench.errors import DataError

REGISTRY_FILE = "elbench_registry.yaml"
_GRADINGS: tuple[Grading, ...] = ("auto", "judge", "runtime")
_LOADERS = ("generic", "choice", "ifeval", "math", "aime", "teaching")
_MODEL_ROLES = ("judge", "decision_judge", "student")
"""The keys of ``models:``: the fields of :class:`~sweepbench.bench.items.RoleDefaults`."""

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
    models: RoleDefaults = field(default_factory=RoleDefaults)
    """The models of the published results: each role's default."""

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
    models = _models(_mapping(top.get("models") or {}, "models"))
    registry = Registry(areas, tasks, files, mappings, scenarios, models)
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


def _models(raw: Mapping[str, Any]) -> RoleDefaults:
    unknown = sorted(str(k) for k in raw if k not in _MODEL_ROLES)
    if unknown:
        raise DataError(
            f"{REGISTRY_FILE}: models: unknown role {', '.join(unknown)}; known: "
            f"{', '.join(_MODEL_ROLES)}"
        )
    return RoleDefaults(**{role: _text(raw, role) for role in _MODEL_ROLES if role in raw})


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
