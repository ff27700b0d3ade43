"""The format of a benchmark declaration and its check: the scorer names a task may use and
the options each reads, the pydantic models of a declaration, and :func:`validate_declaration`,
which reports every mistake at once with its location (``tasks[2].scorer: unknown scorer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from sweepbench.bench.items import Grading, TaskScore
from sweepbench.errors import DataError

SCORERS: dict[str, Grading] = {
    "choice": "auto", "choice_multi": "auto", "option_set": "auto", "ifeval": "auto",
    "math": "auto", "aime": "auto", "exact": "auto", "normalised": "auto", "regex": "auto",
    "numeric": "auto", "edu_rule": "auto", "choice_free": "auto", "judge": "judge",
    "runtime": "runtime",
}  # fmt: skip
"""Every scorer name a task may declare, and how it grades."""

NEEDS_REFERENCE = frozenset(
    {"choice", "choice_multi", "choice_free", "option_set", "math", "aime", "exact", "normalised",
     "numeric"}
)  # fmt: skip
"""Scorers that compare the answer with the item's reference, so every row must carry one."""

SCORER_OPTIONS: dict[str, frozenset[str]] = {
    "choice": frozenset({"choices", "prefixes"}),
    "choice_multi": frozenset({"choices", "prefixes"}),
    "regex": frozenset({"pattern"}),
    "numeric": frozenset({"tolerance", "relative"}),
    "judge": frozenset({"scale", "rule_scorer"}),
    "edu_rule": frozenset({"scale"}),
    "runtime": frozenset({"scale", "pass_threshold", "dialogue"}),
}
"""The options each scorer reads (scorers not listed read none)."""

_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""A ``{{ Field }}`` placeholder of a prompt template (group 1: the field's name)."""


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


class PromptVersionDeclaration(_Strict):
    """Another version of the benchmark's prompts (``prompt_versions: {v2: {...}}``): a
    system prompt for every item, and/or a template of the user message where ``{prompt}``
    stands for the item's own prompt."""

    system: str | None = None
    template: str | None = None

    @model_validator(mode="after")
    def _says_something(self) -> PromptVersionDeclaration:
        if self.system is None and self.template is None:
            raise ValueError("give a system prompt, a template, or both")
        if self.template is not None and "{prompt}" not in self.template:
            raise ValueError("the template must contain {prompt} (the item's own prompt)")
        return self


class BenchmarkDeclaration(_Strict):
    """A whole benchmark declaration."""

    id: str = Field(pattern=_NAME)
    name: str = Field(min_length=1)
    description: str = ""
    overall: Literal["mean_of_areas", "mean_of_tasks"] = "mean_of_areas"
    prompt_version: str = Field("1", pattern=_NAME)
    """The name of the benchmark's own prompts (what a run uses unless told otherwise)."""
    prompt_versions: dict[str, PromptVersionDeclaration] = {}
    """Other versions of the prompts, by name (compared with ``bench sweep --axis
    prompt_version``)."""

    @model_validator(mode="after")
    def _version_names(self) -> BenchmarkDeclaration:
        for name in self.prompt_versions:
            if not re.match(_NAME, name):
                raise ValueError(f"prompt_versions: {name!r} is not a name (letters, digits, _.-)")
            if name == self.prompt_version:
                raise ValueError(
                    f"prompt_versions: {name!r} is the benchmark's own prompt_version; "
                    "give the other version another name"
                )
        return self

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


# --------------------------------------------------------------------------- the check


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
    if isinstance(fields.get("prompt_template"), str):
        for message in _template_mistakes(fields["prompt_template"]):
            yield ("fields", "prompt_template"), message
    if task.get("format") != "hf":
        for key in ("split", "config"):
            if task.get(key) is not None:
                yield (key,), "only used with format: hf"
    data = task["data"] if isinstance(task.get("data"), str) else ""
    if task.get("sheet") is not None and (task.get("format") or _suffix_format(data)) != "xlsx":
        yield ("sheet",), "only used with xlsx data"


def _template_mistakes(template: str) -> Iterator[str]:
    """An empty placeholder, and the first ``{{`` that starts none (unclosed, or a name with
    braces): either would give every row a wrong prompt. ``}}`` alone is left alone (a JSON
    example in a prompt closes two objects so)."""
    if any(not match.group(1) for match in PLACEHOLDER.finditer(template)):
        yield "an empty {{ }} placeholder; name a field inside it"
    rest = PLACEHOLDER.sub(lambda match: " " * len(match.group()), template)
    start = rest.find("{{")
    if start >= 0:
        line = template.count("\n", 0, start) + 1
        yield (
            f"the {{{{ on line {line} of the template ({template[start : start + 24]!r}) "
            "opens no placeholder: write {{ Field }} with a closing }}"
        )


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


def _check_threshold(value: Any) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return "" if ok else "must be a number of 0 or more"


def _check_dialogue(value: Any) -> str:
    """A teaching dialogue's scenario (``bench.dialogue.scenario``), checked by building it."""
    from sweepbench.bench.dialogue.scenario import scenario_from_options

    if not isinstance(value, Mapping):
        return "must be a mapping (flow, fields, rubric, …; see docs/benchmarks.md)"
    try:
        scenario_from_options("task", value)
    except (DataError, ValueError, TypeError) as exc:
        return str(exc).removeprefix("task: options.dialogue")
    return ""


_OPTION_CHECKS: dict[str, Callable[[Any], str]] = {
    "choices": _check_choices, "prefixes": _check_prefixes, "tolerance": _check_tolerance,
    "relative": _check_relative, "scale": _check_scale, "pattern": _check_pattern,
    "rule_scorer": _check_rule_scorer, "pass_threshold": _check_threshold,
    "dialogue": _check_dialogue,
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
