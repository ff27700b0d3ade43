"""Benchmarks that users declare themselves: a small YAML file (or a Python module defining
``BENCHMARK: dict``) names the areas and tasks, where each task's data lives, how a row's
fields become an item, and how answers are scored.

The declaration is checked as a whole (every mistake is reported at once, with its location);
the data is then loaded row by row, and a bad row becomes a :class:`LoadProblem` on its task
while the rest loads. A data file that is missing disables its task only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from sweepbench.bench.items import (
    Area,
    Benchmark,
    Grading,
    Item,
    JudgeSpec,
    LoadProblem,
    Task,
    TaskScore,
)
from sweepbench.bench.sources.records import Record, iter_records
from sweepbench.errors import DataError, UserError

SCORERS: dict[str, Grading] = {
    "choice": "auto", "choice_multi": "auto", "option_set": "auto", "ifeval": "auto",
    "math": "auto", "aime": "auto", "exact": "auto", "normalised": "auto", "regex": "auto",
    "numeric": "auto", "edu_rule": "auto", "judge": "judge", "runtime": "runtime",
}  # fmt: skip
"""Every scorer name a task may declare, and how it grades."""

NEEDS_REFERENCE = frozenset(
    {"choice", "choice_multi", "option_set", "math", "aime", "exact", "normalised", "numeric"}
)
"""Scorers that compare the answer with the item's reference, so every row must carry one."""

SCORER_OPTIONS: dict[str, frozenset[str]] = {
    "choice": frozenset({"choices", "prefixes"}),
    "choice_multi": frozenset({"choices", "prefixes"}),
    "regex": frozenset({"pattern"}),
    "numeric": frozenset({"tolerance", "relative"}),
    "judge": frozenset({"scale", "rule_scorer"}),
    "edu_rule": frozenset({"scale"}),
    "runtime": frozenset({"scale"}),
}
"""The options each scorer reads (scorers not listed read none)."""

DECLARATION_NAMES = ("benchmark.yaml", "benchmark.yml", "benchmark.py")
"""The file looked for when a folder is given instead of a declaration file."""

SAMPLE_FOLDER = Path(__file__).resolve().parent / "sample"
"""Where the built-in sample benchmark lives (shipped inside the package)."""

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


# --------------------------------------------------------------------------- declaration shape


def _as_list(value: Any) -> Any:
    """One field name or a list of them: always a list."""
    return [value] if isinstance(value, str) else value


FieldNames = Annotated[list[str], BeforeValidator(_as_list)]


class _Strict(BaseModel):
    """A declaration part: unknown keys are mistakes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AreaDeclaration(_Strict):
    """An area: a group of tasks with one 0–100 score."""

    key: str = Field(pattern=_NAME)
    label: str = Field(min_length=1)


class JudgeDeclaration(_Strict):
    """How the judge model grades a judged task."""

    rubric: str = Field(min_length=1)
    positive_label: str = Field("pass", min_length=1)
    negative_label: str = Field("fail", min_length=1)


class FieldsDeclaration(_Strict):
    """Which fields of a data row make the item."""

    id: FieldNames | None = None
    prompt: str | None = None
    prompt_template: str | None = None
    reference: str | None = None
    dimension: str | None = None
    metadata: FieldNames = []
    instruction_ids: str = "instruction_id_list"
    kwargs: str = "kwargs"

    @property
    def prompt_field(self) -> str:
        """The field holding the prompt when no template builds it."""
        return self.prompt or "prompt"


class TaskDeclaration(_Strict):
    """A task: one data source, one way of scoring."""

    id: str = Field(pattern=_NAME)
    area: str
    name: str = ""
    description: str = ""
    data: str = Field(min_length=1)
    format: Literal["jsonl", "json", "csv", "yaml", "xlsx", "hf"] | None = None
    sheet: str | None = None
    split: str | None = None
    config: str | None = None
    fields: FieldsDeclaration = FieldsDeclaration()
    system: str | None = None
    scorer: str
    options: dict[str, Any] = {}
    judge: JudgeDeclaration | None = None
    region_specific: bool = False
    score_by: TaskScore | None = None


class BenchmarkDeclaration(_Strict):
    """A whole benchmark declaration."""

    id: str = Field(pattern=_NAME)
    name: str = Field(min_length=1)
    description: str = ""
    overall: Literal["mean_of_areas", "mean_of_tasks"] = "mean_of_areas"
    areas: list[AreaDeclaration] = Field(min_length=1)
    tasks: list[TaskDeclaration] = Field(min_length=1)


Location = tuple[str | int, ...]


@dataclass(frozen=True)
class _Mistake:
    """One problem in a declaration, at a location such as ``tasks[2].scorer``."""

    location: Location
    message: str

    def text(self) -> str:
        """``tasks[2].scorer: message``."""
        where = ""
        for part in self.location:
            where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else part)
        return f"{where}: {self.message}" if where else self.message


# --------------------------------------------------------------------------- public entry points


def load_declared(path: Path) -> Benchmark:
    """Load the benchmark declared in ``path`` (YAML, or a ``*.py`` module defining
    ``BENCHMARK``; a folder holding ``benchmark.yaml`` also works). A declaration with mistakes
    raises one DataError listing them all; bad rows and missing data files are kept on the tasks
    as problems."""
    path = _declaration_file(Path(path).expanduser())
    raw, text = _read_declaration(path)
    declaration = validate_declaration(raw, path.name)
    base = path.resolve().parent
    digest = hashlib.sha256(text)
    tasks: list[Task] = []
    for task_declaration in declaration.tasks:
        tasks.append(_load_task(task_declaration, base))
        _hash_data(digest, task_declaration, base)
    areas = tuple(
        Area(area.key, area.label, tuple(t for t in tasks if t.area == area.key))
        for area in declaration.areas
    )
    return Benchmark(
        id=declaration.id,
        name=declaration.name,
        areas=areas,
        description=declaration.description,
        version=digest.hexdigest()[:12],
        overall=declaration.overall,
        source=str(path.resolve()),
    )


def sample_benchmark() -> Benchmark:
    """The built-in sample benchmark (about 40 questions of sweepbench's own)."""
    return replace(load_declared(SAMPLE_FOLDER / "benchmark.yaml"), source="built in")


def validate_declaration(raw: Any, shown: str) -> BenchmarkDeclaration:
    """Check a parsed declaration; DataError listing every mistake (``shown`` names the file)."""
    mistakes: list[_Mistake] = []
    declaration: BenchmarkDeclaration | None = None
    if not isinstance(raw, dict):
        raise DataError(f"{shown}: expected a mapping of id, name, areas, tasks; found "
                        f"{type(raw).__name__}")  # fmt: skip
    try:
        declaration = BenchmarkDeclaration.model_validate(raw)
    except ValidationError as exc:
        mistakes.extend(_pydantic_mistakes(exc))
    mistakes.extend(_meaning_mistakes(raw))
    if mistakes or declaration is None:
        raise DataError(_mistakes_text(shown, mistakes))
    return declaration


# --------------------------------------------------------------------------- reading the file


def _declaration_file(path: Path) -> Path:
    """The declaration file itself (a folder means its ``benchmark.yaml``)."""
    if path.is_dir():
        for name in DECLARATION_NAMES:
            if (path / name).is_file():
                return path / name
        raise UserError(f"{path} holds no benchmark declaration ({', '.join(DECLARATION_NAMES)}).")
    if not path.is_file():
        raise UserError(f"No benchmark declaration at {path}.")
    return path


def _read_declaration(path: Path) -> tuple[Any, bytes]:
    """The declaration's parsed content and its bytes (for the version fingerprint)."""
    text = path.read_bytes()
    if path.suffix.lower() == ".py":
        return _python_declaration(path), text
    try:
        return yaml.safe_load(text.decode("utf-8-sig")), text
    except UnicodeDecodeError as exc:
        raise DataError(f"{path.name}: not UTF-8 text ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path.name}:{mark.line + 1}" if mark is not None else path.name
        raise DataError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc


def _python_declaration(path: Path) -> Any:
    """``BENCHMARK`` from a Python declaration module, run from its own path."""
    module_name = f"_sweepbench_declared_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DataError(f"{path.name}: cannot load it as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() in the module must not end sweepbench
        raise DataError(
            f"{path.name}: the module called sys.exit({exc.code!r}) instead of defining BENCHMARK"
        ) from None
    except Exception as exc:  # the user's module can fail in any way; report it, don't crash
        raise DataError(
            f"{path.name}: the module failed to run ({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        sys.modules.pop(module_name, None)
    if not hasattr(module, "BENCHMARK"):
        raise DataError(f"{path.name}: the module defines no BENCHMARK dict")
    return module.BENCHMARK


# --------------------------------------------------------------------------- validation messages


def _pydantic_mistakes(error: ValidationError) -> Iterator[_Mistake]:
    """Pydantic's errors, worded for people."""
    for detail in error.errors():
        location = tuple(detail["loc"])
        if detail["type"] == "extra_forbidden":
            known = _known_keys(location[:-1])
            hint = f"; known: {', '.join(known)}" if known else ""
            yield _Mistake(location, f"unknown key{hint}")
        elif detail["type"] == "missing":
            yield _Mistake(location, "required but missing")
        else:
            yield _Mistake(location, detail["msg"])


def _known_keys(location: Location) -> list[str]:
    """The keys the declaration part at ``location`` accepts."""
    model: type[BaseModel] = BenchmarkDeclaration
    for part in location:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        found = _model_in(field.annotation) if field is not None else None
        if found is None:
            return []
        model = found
    return list(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The declaration model inside an annotation such as ``list[TaskDeclaration] | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


def _meaning_mistakes(raw: Mapping[str, Any]) -> Iterator[_Mistake]:
    """Mistakes a field type cannot catch: unknown areas and scorers, missing judges, options
    a scorer does not read, duplicate ids. Reads the raw declaration and checks each value
    only when it has the right type, so these are found even beside structural mistakes."""
    areas = _dicts(raw.get("areas"))
    tasks = _dicts(raw.get("tasks"))
    area_keys = [a["key"] for _, a in areas if isinstance(a.get("key"), str)]
    yield from _duplicates(areas, "areas", "key")
    yield from _duplicates(tasks, "tasks", "id")
    for index, task in tasks:
        for location, message in _task_mistakes(task, area_keys):
            yield _Mistake(("tasks", index, *location), message)
    used = [t.get("area") for _, t in tasks]
    if tasks and all(isinstance(a, str) for a in used):
        for index, area in areas:
            if isinstance(area.get("key"), str) and area["key"] not in used:
                yield _Mistake(("areas", index), f"no task belongs to area {area['key']!r}")


def _dicts(values: Any) -> list[tuple[int, Mapping[str, Any]]]:
    """The entries of a declaration list that are mappings, with their positions."""
    if not isinstance(values, list):
        return []
    return [(index, value) for index, value in enumerate(values) if isinstance(value, dict)]


def _duplicates(
    entries: Iterable[tuple[int, Mapping[str, Any]]], part: str, key: str
) -> Iterator[_Mistake]:
    """A mistake for every repeat of an id that must be unique."""
    seen: dict[str, int] = {}
    for index, entry in entries:
        value = entry.get(key)
        if not isinstance(value, str):
            continue
        if value in seen:
            yield _Mistake(
                (part, index, key), f"{value!r} is already used by {part}[{seen[value]}]"
            )
        else:
            seen[value] = index


def _task_mistakes(task: Mapping[str, Any], area_keys: list[str]) -> Iterator[tuple[Location, str]]:
    """What is wrong with one task declaration beyond its fields' types."""
    area, scorer = task.get("area"), task.get("scorer")
    fields = task["fields"] if isinstance(task.get("fields"), dict) else {}
    if isinstance(area, str) and area_keys and area not in area_keys:
        yield ("area",), f"unknown area {area!r}; declared: {', '.join(area_keys)}"
    if isinstance(scorer, str) and scorer not in SCORERS:
        yield ("scorer",), f"unknown scorer {scorer!r}; known: {', '.join(SCORERS)}"
    elif isinstance(scorer, str):
        yield from _judge_mistakes(scorer, task.get("judge"))
        if isinstance(task.get("options"), dict):
            yield from _option_mistakes(scorer, task["options"])
        if scorer in NEEDS_REFERENCE and not fields.get("reference"):
            yield ("fields", "reference"), f"the {scorer!r} scorer needs a reference field"
    if fields.get("prompt") and fields.get("prompt_template"):
        yield ("fields",), "give either prompt or prompt_template, not both"
    if task.get("format") != "hf":
        for key in ("split", "config"):
            if task.get(key) is not None:
                yield (key,), "only used with format: hf"
    data = task["data"] if isinstance(task.get("data"), str) else ""
    if task.get("sheet") is not None and (task.get("format") or _suffix_format(data)) != "xlsx":
        yield ("sheet",), "only used with xlsx data"


def _suffix_format(data: str) -> str:
    """The format a data path's suffix implies ('' when none)."""
    return "xlsx" if data.lower().endswith(".xlsx") else ""


def _judge_mistakes(scorer: str, judge: Any) -> Iterator[tuple[Location, str]]:
    """A judged task needs a judge block; other tasks must not have one."""
    if scorer == "judge" and judge is None:
        yield ("judge",), "the 'judge' scorer needs a judge block with a one-sentence rubric"
    elif scorer != "judge" and judge is not None:
        yield ("judge",), f"only the 'judge' scorer uses a judge (this task uses {scorer!r})"


def _option_mistakes(scorer: str, options: Mapping[str, Any]) -> Iterator[tuple[Location, str]]:
    """Options the scorer does not read, or with values it cannot use."""
    known = SCORER_OPTIONS.get(scorer, frozenset())
    for key, value in options.items():
        if key not in known:
            listed = f"; known: {', '.join(sorted(known))}" if known else " (it reads none)"
            yield ("options", str(key)), f"the {scorer!r} scorer has no such option{listed}"
            continue
        problem = _OPTION_CHECKS[key](value)
        if problem:
            yield ("options", key), problem


def _check_choices(value: Any) -> str:
    ok = isinstance(value, int) and not isinstance(value, bool) and 2 <= value <= 26
    return "" if ok else "must be a whole number of options from 2 to 26"


def _check_prefixes(value: Any) -> str:
    return "" if value in ("en", "zh") else "must be 'en' or 'zh'"


def _check_tolerance(value: Any) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return "" if ok else "must be a number of 0 or more"


def _check_relative(value: Any) -> str:
    return "" if isinstance(value, bool) else "must be true or false"


def _check_scale(value: Any) -> str:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 2
    return "" if ok else "must be a whole number of 2 or more"


def _check_pattern(value: Any) -> str:
    if not isinstance(value, str):
        return "must be a regular expression (text)"
    try:
        re.compile(value)
    except re.error as exc:
        return f"not a valid regular expression ({exc})"
    return ""


def _check_rule_scorer(value: Any) -> str:
    from sweepbench.bench.scoring import RULE_SCORERS

    if value in RULE_SCORERS:
        return ""
    return f"must be a rule scorer ({', '.join(RULE_SCORERS)}), used with --edu-scoring rule"


_OPTION_CHECKS: dict[str, Callable[[Any], str]] = {
    "choices": _check_choices, "prefixes": _check_prefixes, "tolerance": _check_tolerance,
    "relative": _check_relative, "scale": _check_scale, "pattern": _check_pattern,
    "rule_scorer": _check_rule_scorer,
}  # fmt: skip


def _mistakes_text(shown: str, mistakes: list[_Mistake]) -> str:
    """One message naming every mistake, in declaration order."""
    ordered = sorted(mistakes, key=lambda m: [(0, p, "") if isinstance(p, int) else (1, 0, p)
                                              for p in m.location])  # fmt: skip
    lines = [f"{shown}: {m.text()}" for m in ordered]
    if len(lines) == 1:
        return lines[0]
    return f"{shown}: {len(lines)} problems in the benchmark declaration:\n" + "\n".join(
        f"  {line}" for line in lines
    )


# --------------------------------------------------------------------------- loading a task


def _load_task(declaration: TaskDeclaration, base: Path) -> Task:
    """A task with every readable row as an item; bad rows become problems, and a data file
    that cannot be found or opened disables the task (``missing``)."""
    shown = declaration.data
    items: list[Item] = []
    problems: list[LoadProblem] = []
    missing: str | None = None
    try:
        records = list(_records(declaration, base))
    except (DataError, UserError) as exc:
        records, missing = [], str(exc)
    builder = _ItemBuilder(declaration, shown)
    ids: dict[str, int] = {}
    for record in records:
        built = builder.build(record)
        if isinstance(built, LoadProblem):
            problems.append(built)
            continue
        duplicate = _duplicate_problem(built, ids, declaration)
        if duplicate is not None:
            problems.append(duplicate)
            continue
        ids[built.sample_id] = built.row
        items.append(built)
    return _task(declaration, tuple(items), tuple(problems), missing)


def _task(
    declaration: TaskDeclaration,
    items: tuple[Item, ...],
    problems: tuple[LoadProblem, ...],
    missing: str | None,
) -> Task:
    """The loaded :class:`Task` for a declaration."""
    judge = declaration.judge
    score_by: TaskScore = declaration.score_by or (
        "mean_score" if declaration.scorer == "option_set" else "pass_rate"
    )
    return Task(
        id=declaration.id,
        area=declaration.area,
        name=declaration.name or declaration.id,
        grading=SCORERS[declaration.scorer],
        scorer=declaration.scorer,
        items=items,
        options=dict(declaration.options),
        judge=JudgeSpec(judge.rubric, judge.positive_label, judge.negative_label, declaration.id)
        if judge is not None
        else None,
        region_specific=declaration.region_specific,
        score_by=score_by,
        source_file=declaration.data,
        missing=missing,
        problems=problems,
        description=declaration.description,
    )


def _duplicate_problem(
    item: Item, ids: Mapping[str, int], declaration: TaskDeclaration
) -> LoadProblem | None:
    """A problem when the item's id repeats one of its task (ids need only be unique within a
    task: item keys include the task, see :func:`item_key`)."""
    if item.sample_id not in ids:
        return None
    field = ", ".join(declaration.fields.id) if declaration.fields.id else None
    message = f"duplicate id {item.sample_id!r} (first on line {ids[item.sample_id]})"
    return LoadProblem(item.source_file, message, item.row, field)


def _records(declaration: TaskDeclaration, base: Path) -> Iterator[Record]:
    """The rows of a task's data (a file next to the declaration, or a Hugging Face dataset)."""
    local = _data_path(declaration.data, base)
    if declaration.format == "hf":
        from sweepbench.bench.sources.hf import hf_records  # imported here: rarely needed

        spec = str(local) if local.exists() else declaration.data
        yield from hf_records(spec, split=declaration.split or "test", name=declaration.config)
        return
    if not local.exists():
        raise DataError(f"data file not found: {local}")
    if not local.is_file():
        raise DataError(f"{declaration.data}: not a file")
    yield from iter_records(local, fmt=declaration.format, sheet=declaration.sheet,
                            name=declaration.data)  # fmt: skip


def _data_path(data: str, base: Path) -> Path:
    """A data path as declared, relative to the declaration's folder."""
    path = Path(data).expanduser()
    return path if path.is_absolute() else base / path


def _hash_data(digest: Any, declaration: TaskDeclaration, base: Path) -> None:
    """Add a task's data (its name and bytes, when it is a local file or folder) to a hash."""
    digest.update(f"\0{declaration.id}\0{declaration.data}\0".encode())
    path = _data_path(declaration.data, base)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if file.is_file():
            digest.update(file.read_bytes())


# --------------------------------------------------------------------------- rows into items


class _RowProblem(Exception):
    """A row that cannot become an item: what is wrong, and with which field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class _ItemBuilder:
    """Turns a task's rows into items, following its field mapping."""

    def __init__(self, declaration: TaskDeclaration, shown: str) -> None:
        self.declaration = declaration
        self.fields = declaration.fields
        self.shown = shown

    def build(self, record: Record) -> Item | LoadProblem:
        """The item for one row, or the problem that keeps it out."""
        if record.problem is not None or record.data is None:
            return record.problem or LoadProblem(self.shown, "unreadable row", record.line)
        try:
            return self._item(record.line, record.data)
        except _RowProblem as exc:
            return LoadProblem(self.shown, exc.message, record.line, exc.field)

    def _item(self, line: int, row: Mapping[str, Any]) -> Item:
        sample_id = self._sample_id(line, row)
        metadata = self._metadata(row)
        if self.declaration.scorer == "ifeval":
            metadata.update(_ifeval_metadata(row, self.fields))
        return Item(
            key=item_key(self.shown, self.declaration.id, sample_id),
            sample_id=sample_id,
            task=self.declaration.id,
            dimension=self._dimension(row),
            prompt=self._prompt(row),
            reference=self._reference(row, metadata),
            metadata=metadata,
            source_file=self.shown,
            row=line,
            system=self.declaration.system,
        )

    def _sample_id(self, line: int, row: Mapping[str, Any]) -> str:
        if not self.fields.id:
            return f"{self.declaration.id}-{line}"
        return "-".join(_text(_required(row, name), name, "id") for name in self.fields.id)

    def _prompt(self, row: Mapping[str, Any]) -> str:
        template = self.fields.prompt_template
        if template is not None:
            prompt = render_template(template, row)
            if not prompt.strip():
                raise _RowProblem("the prompt template gives an empty prompt")
            return prompt
        name = self.fields.prompt_field
        return _text(_required(row, name), name, "prompt")

    def _reference(self, row: Mapping[str, Any], metadata: Mapping[str, Any]) -> Any:
        """The reference as the scorer reads it; a value it could never match is a row
        problem. A true/false value (YAML ``yes``, JSON ``true``) is never taken as text."""
        name = self.fields.reference
        if name is None:
            return None
        value = _required(row, name)
        scorer = self.declaration.scorer
        if scorer not in NEEDS_REFERENCE and scorer != "regex":
            return value
        if isinstance(value, bool):
            raise _RowProblem(
                f"the reference is the {'true' if value else 'false'} value, not text or a "
                "number; write it in quotes to mean the text",
                name,
            )
        if scorer not in NEEDS_REFERENCE:  # regex: optional, compared as text
            return None if value is None else str(value)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise _RowProblem("empty reference", name)
        if scorer == "numeric":
            return _numeric_reference(value, name)
        if scorer in ("choice", "choice_multi", "option_set"):
            return letter_reference(value, name, scorer, self._choices(metadata))
        return _text_reference(value, name, scorer)

    def _choices(self, metadata: Mapping[str, Any]) -> int:
        """The number of options: the row's ``choices`` (a count, or the list of option
        texts), else the task's option, else 4."""
        value = metadata.get("choices")
        if isinstance(value, list):
            return len(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        task_value = self.declaration.options.get("choices", 4)
        return task_value if isinstance(task_value, int) else 4

    def _dimension(self, row: Mapping[str, Any]) -> str:
        """The row's skill: its dimension field ("default" when the field is empty)."""
        name = self.fields.dimension
        if name is None:
            return "default"
        value = _required(row, name)
        text = "" if value is None else str(value).strip()
        return text or "default"

    def _metadata(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata fields the mapping names (every one must be in the row); a
        ``choices`` count written as text becomes a number."""
        metadata: dict[str, Any] = {}
        for name in self.fields.metadata:
            value = _required(row, name)
            if name == "choices":
                value = _choices_value(value, name)
            metadata[name] = value
        return metadata


def item_key(data: str, task_id: str, sample_id: str) -> str:
    """The checkpoint key of a declared item: ``<data>#<task id>::<sample id>``. The task is
    part of it, so two tasks may read the same data file (and the same ids) without clashing."""
    return Item.make_key(f"{data}#{task_id}", sample_id)


def render_template(template: str, row: Mapping[str, Any]) -> str:
    """``template`` with every ``{{ Field }}`` replaced by the row's value (an empty value
    gives empty text); a field the row lacks is a row problem naming the field."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in row:
            raise _RowProblem("missing field used by the prompt template", name)
        return template_text(row[name])

    return _PLACEHOLDER.sub(value, template)


def template_text(value: Any) -> str:
    """A field value as prompt text: nothing for None, ``true``/``false`` for booleans, JSON
    (non-ASCII kept) for lists and objects, ``str`` for anything else."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _required(row: Mapping[str, Any], name: str) -> Any:
    """A field the mapping names; its absence keeps the row out."""
    if name not in row:
        raise _RowProblem("missing field", name)
    return row[name]


def _text(value: Any, name: str, what: str) -> str:
    """A field's value as non-empty text."""
    if value is None or isinstance(value, dict | list | bool):
        raise _RowProblem(f"the {what} must be text, found {_kind(value)}", name)
    text = str(value).strip() if what == "id" else str(value)
    if not text.strip():
        raise _RowProblem(f"empty {what}", name)
    return text


def _kind(value: Any) -> str:
    """A value's kind in plain words."""
    return "nothing" if value is None else type(value).__name__


def _choices_value(value: Any, name: str) -> Any:
    """A ``choices`` metadata value: a count (text digits become a number), the list of
    option texts, or empty; anything else is a row problem."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, list):
        count = len(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif value is None or (isinstance(value, str) and not value.strip()):
        return value  # empty: the task's number of options applies
    else:
        raise _RowProblem(f"expected a number of options or a list of them, found {value!r}",
                          name)  # fmt: skip
    if not 2 <= count <= 26:
        raise _RowProblem(f"{count} options; a question needs 2 to 26", name)
    return value


def _numeric_reference(value: Any, name: str) -> Any:
    """A number, or numeric text (stripped) that the numeric scorer reads as one."""
    from sweepbench.bench.scoring.text import reference_number

    try:
        reference_number(value)
    except DataError:
        raise _RowProblem(f"the reference {value!r} is not a number", name) from None
    return value.strip() if isinstance(value, str) else value


def _text_reference(value: Any, name: str, scorer: str) -> Any:
    """A text reference (math, aime, exact, normalised), stripped; a number becomes its text
    (``str``); ``exact``/``normalised`` also take a list of accepted texts."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and scorer in ("exact", "normalised"):
        accepted = [_text_reference(v, name, "math") for v in value if v is not None]
        if not accepted or not all(isinstance(v, str) and v for v in accepted):
            raise _RowProblem("a list reference must hold non-empty texts", name)
        return accepted
    raise _RowProblem(f"the reference must be text or a number, found {_kind(value)}", name)


_LETTERS = re.compile(r"[A-Za-z](?:[\s,，、;/]*[A-Za-z])*")
_WRAPPED = re.compile(r"\((.*)\)|\[(.*)\]")


def letter_reference(value: Any, name: str, scorer: str, choices: int) -> str:
    """A choice reference as exactly its option letter(s), upper-cased: ``B``, `` (b) `` and
    ``[B]`` give ``B`` for ``choice``; ``choice_multi`` gives the letters in order (``AC``),
    ``option_set`` the letters separated by commas (``A, C``). Letters must be among the first
    ``choices`` (A–G for ``option_set``); anything else ("Answer: C", "Both") is a row
    problem."""
    text = str(value).strip()
    inner = text
    if wrapped := _WRAPPED.fullmatch(text):
        inner = (wrapped.group(1) or wrapped.group(2) or "").strip()
    letters = re.findall(r"[A-Za-z]", inner) if _LETTERS.fullmatch(inner) else []
    if not letters or not ("".join(letters).isupper() or "".join(letters).islower()):
        raise _RowProblem(f"the reference {text!r} is not an option letter (such as B)", name)
    letters = [letter.upper() for letter in letters]
    if scorer == "choice" and len(letters) != 1:
        raise _RowProblem(f"the reference {text!r} must be one option letter", name)
    last = "G" if scorer == "option_set" else chr(ord("A") + min(choices, 26) - 1)
    wrong = sorted({letter for letter in letters if not "A" <= letter <= last})
    if wrong:
        raise _RowProblem(f"the reference {text!r} names {', '.join(wrong)}, not an option "
                          f"from A to {last}", name)  # fmt: skip
    if scorer == "option_set":
        return ", ".join(dict.fromkeys(letters))
    return "".join(dict.fromkeys(letters))


# --------------------------------------------------------------------------- IFEval rows


def _ifeval_metadata(row: Mapping[str, Any], fields: FieldsDeclaration) -> dict[str, Any]:
    """The instruction ids and their arguments that the IFEval checker needs, checked the way
    the checker will use them (unknown ids and unusable arguments keep the row out)."""
    from sweepbench.bench.scoring.ifeval import INSTRUCTION_IDS, build_checks

    ids_field, kwargs_field = fields.instruction_ids, fields.kwargs
    ids = _instruction_ids(_required(row, ids_field), ids_field)
    unknown = [i for i in ids if i not in INSTRUCTION_IDS]
    if unknown:
        raise _RowProblem(f"unknown IFEval instruction {', '.join(map(repr, unknown))}", ids_field)
    arguments = _instruction_kwargs(row.get(kwargs_field), len(ids), kwargs_field)
    try:
        build_checks(ids, arguments, str(row.get(fields.prompt_field, "")))
    except DataError as exc:
        raise _RowProblem(str(exc), kwargs_field) from None
    return {"instruction_id_list": ids, "kwargs": arguments}


def _instruction_ids(value: Any, name: str) -> list[str]:
    """A list of instruction ids: a list, JSON text of one, or ids separated by commas."""
    if isinstance(value, str):
        text = value.strip()
        value = _json(text, name) if text.startswith("[") else re.split(r"[,\s]+", text)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _RowProblem("expected a list of IFEval instruction ids", name)
    ids = [v.strip() for v in value if v.strip()]
    if not ids:
        raise _RowProblem("no IFEval instruction ids", name)
    return ids


def _instruction_kwargs(value: Any, count: int, name: str) -> list[dict[str, Any]]:
    """One argument dict per instruction (absent: empty dicts)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return [{} for _ in range(count)]
    if isinstance(value, str):
        value = _json(value, name)
    if isinstance(value, dict) and count == 1:
        value = [value]
    if not isinstance(value, list):
        raise _RowProblem("expected a list of argument objects, one per instruction", name)
    arguments = [_json(v, name) if isinstance(v, str) else v for v in value]
    if not all(isinstance(a, dict) for a in arguments):
        raise _RowProblem("every instruction's arguments must be an object", name)
    if len(arguments) != count:
        raise _RowProblem(f"{len(arguments)} argument objects for {count} instructions", name)
    return [{k: v for k, v in a.items() if v is not None} for a in arguments]


def _json(text: str, name: str) -> Any:
    """Parsed JSON text, or a row problem."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _RowProblem(f"not valid JSON ({exc.msg})", name) from None
