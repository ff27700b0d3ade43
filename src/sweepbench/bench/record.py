"""The stored record of a benchmark run (``RunRecord``): what a session leaves when it ends.

Written by the runner at the end of every session (a resume rewrites it), read by the
leaderboard, which never recomputes scores or bootstrap ranges per view. A record holds the
run's settings and their hash, each role's model and spend, the prices used, the scoring and
judge prompt versions, coverage (per task, area and overall: selected, scored, failed,
unasked, complete), and the scores (0–100, with their bootstrap 95% range and n).

The format is versioned: ``format`` names it, ``version`` is its integer version. A reader of
a newer sweepbench migrates older versions on load (:func:`load_record`); a record of a
version this code does not know is a :class:`DataError`, never a guess. Money is a decimal
string of US dollars (``"0.0125"``), never a JSON number.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from sweepbench.errors import DataError

if TYPE_CHECKING:
    pass

FORMAT: Final = "sweepbench-run-record"
"""The value of every record's ``format`` field."""
VERSION: Final = 1
"""The version :func:`build_record` writes and :class:`RunRecord` is."""
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""The versions :func:`load_record` reads (older ones are migrated to :data:`VERSION`)."""
SCORING_VERSION = "1"
"""The version of the scoring formulas of :mod:`sweepbench.bench.results` (task score, count-
weighted area score, overall, bootstrap within tasks). Bump when any of them changes."""


def scoring_label(rules_version: str) -> str:
    """A record's ``scoring.version``: the formulas' version and the rule scorers' scoring
    version (``1+replicated``, ``1+corrected``). Records written before scoring versions say
    ``1`` alone (their rules were close to ``corrected``)."""
    return f"{SCORING_VERSION}+{rules_version}"


def rules_version_of(label: str) -> str | None:
    """The scoring version named in a record's ``scoring.version`` (None for an older record
    that names none)."""
    _, plus, rules = label.partition("+")
    return rules if plus else None


RunStatus = Literal["running", "completed", "completed_with_errors", "paused_budget", "interrupted"]
"""The runner's statuses (``bench.storage.RUN_STATES``)."""
RecordRole = Literal["target", "judge", "student"]
"""A role a model plays in a run: the model under test, the judge, the simulated student."""
_ROLES: tuple[RecordRole, ...] = get_args(RecordRole)

_DECIMAL_TEXT = r"^-?[0-9]+(\.[0-9]+)?$"
_DECIMAL_PATTERN = re.compile(_DECIMAL_TEXT)


# ---------------------------------------------------------------- money and time


def _money(value: object) -> Decimal:
    """A Decimal of US dollars from a Decimal or a decimal string; never a float or int."""
    if isinstance(value, str):
        if not _DECIMAL_PATTERN.fullmatch(value):
            raise ValueError(f"money must be a decimal string such as '0.0125', not {value!r}")
        value = Decimal(value)
    elif not isinstance(value, Decimal):
        raise ValueError(
            f"money must be a decimal string of US dollars such as '0.0125', not the "
            f"{type(value).__name__} {value!r}"
        )
    if not value.is_finite():
        raise ValueError(f"money must be a finite amount, not {value}")
    if value < 0:
        raise ValueError(f"money cannot be negative, got {value}")
    return value


def _money_text(value: Decimal) -> str:
    """A Decimal as plain decimal text (never exponent notation: 1E-7 → "0.0000001")."""
    return format(value, "f")


Money = Annotated[
    Decimal,
    PlainValidator(_money),
    PlainSerializer(_money_text, return_type=str),
    WithJsonSchema({"type": "string", "pattern": _DECIMAL_TEXT}),
]
"""US dollars: a Decimal in Python, a decimal string in JSON; floats are refused."""

UtcTime = Annotated[AwareDatetime, AfterValidator(lambda t: t.astimezone(UTC)), Field(strict=False)]
"""A timezone-aware time, kept in UTC (ISO 8601 in JSON)."""


class _Part(BaseModel):
    """A part of a record: frozen, strict, no unknown fields, attribute docstrings as
    descriptions."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, use_attribute_docstrings=True
    )


# ---------------------------------------------------------------- parts


class BenchmarkRecord(_Part):
    """Which benchmark ran, and which version of its data and prompts."""

    id: str
    """The benchmark's id (``sample``, ``elbench``, a declared benchmark's id)."""
    name: str
    """Its name for people."""
    data_version: str
    """The fingerprint of the loaded data (part of the settings hash)."""
    prompt_version: str
    """The version of the prompts the benchmark builds (before any judge suffix)."""


class SettingsRecord(_Part):
    """Everything that changes answers or scores, and its hash (the run's identity)."""

    config: dict[str, Any]
    """The run config's canonical JSON (``RunConfig.as_json()``), exactly as hashed."""
    hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 over ``config`` as compact JSON with sorted keys (``RunConfig.hash``)."""

    @model_validator(mode="after")
    def _hash_matches(self) -> SettingsRecord:
        if config_hash(self.config) != self.hash:
            raise ValueError("hash does not match config (the settings were edited)")
        return self


class LimitsRecord(_Part):
    """The spending limits last used (not part of the hash: raising one continues the run)."""

    total: Money | None = None
    """The limit on the whole run in USD; None = no limit."""
    roles: dict[RecordRole, Money] = Field(default_factory=dict)
    """The limit of each role that has one, in USD (a role left out has none)."""


class SelectionRecord(_Part):
    """What the user chose to run (spec §4); the effective item filters are in ``config``."""

    preset: str
    """The preset (``quick``, ``auto-checked``, ``full``)."""
    scope: Literal["core", "paper"]
    """``core`` leaves out region-specific tasks; ``paper`` includes them."""
    areas: tuple[str, ...] = ()
    """Areas asked for (empty = all of the preset's)."""
    tasks: tuple[str, ...] = ()
    """Task ids asked for (empty = the preset's and areas' tasks)."""
    dimensions: tuple[str, ...] = ()
    """Only items of these skills (empty = all)."""
    per_task: int | None = Field(default=None, ge=1)
    """The first N items of each task, as asked (the preset's own is in ``config``)."""
    max_items: int | None = Field(default=None, ge=0)
    """Stop after this many items overall; None = no cap."""


class RoleRecord(_Part):
    """One role of the run: its model and what it spent over every session."""

    model: str
    """The model's full ``provider/name`` id (options included)."""
    spent_usd: Money
    """USD spent by this role across every session (unpriced calls count $0)."""


class PriceRecord(_Part):
    """A model's price as used for the run's spend."""

    input_per_million: Money
    """USD per million input tokens."""
    output_per_million: Money
    """USD per million output tokens (reasoning included)."""
    cache_read_per_million: Money | None = None
    """USD per million cached input tokens read; None = the input rate."""
    cache_write_per_million: Money | None = None
    """USD per million input tokens written to the cache; None = the input rate."""
    source: str
    """Where the figure came from (``OpenRouter catalogue``, ``genai-prices 0.0.x``, …)."""
    date: str | None = None
    """When the source was published or fetched (ISO date); None when it says no date."""


class ScoringRecord(_Part):
    """How the answers were scored."""

    version: str
    """The version of the scoring formulas and of the rule scorers' readings
    (:func:`scoring_label`: ``1+replicated``, ``1+corrected``; ``1`` in older records)."""
    judge_prompt_version: str | None
    """The version of the judge's request wording; None when no judge graded anything."""
    decision_judge: bool
    """True when the judge gave a verdict only (no score or reason)."""
    rule_scored: bool
    """True when judged tasks with a rule scorer were scored by the rule (never ranked with
    judged runs)."""
    overall_method: Literal["mean_of_areas", "mean_of_tasks"]
    """How the overall score is made: the unweighted mean of the areas, or of the tasks."""
    bootstrap_resamples: int = Field(ge=0)
    """Resamples behind the 95% ranges (0 = no ranges)."""
    bootstrap_seed: int
    """The bootstrap's random seed."""


class _Tally(_Part):
    """Counts of items: in the data, selected, and what became of the selected ones."""

    items: int = Field(ge=0)
    """Items in the loaded data (of the in-scope tasks)."""
    selected: int = Field(ge=0)
    """Items this run selected (after the preset, skills and caps)."""
    scored: int = Field(ge=0)
    """Selected items with a scored answer."""
    failed: int = Field(ge=0)
    """Selected items whose latest attempt failed (retryable)."""
    unasked: int = Field(ge=0)
    """Selected items not asked yet (the run paused or stopped)."""
    complete: bool
    """True when every item of the data has a scored answer (the score is comparable)."""

    @model_validator(mode="after")
    def _adds_up(self) -> _Tally:
        if self.scored + self.failed + self.unasked != self.selected:
            raise ValueError(
                f"scored + failed + unasked ({self.scored} + {self.failed} + {self.unasked}) "
                f"must equal selected ({self.selected})"
            )
        if self.selected > self.items:
            raise ValueError(f"selected ({self.selected}) exceeds items ({self.items})")
        return self


class TaskCoverage(_Tally):
    """One in-scope task's coverage."""

    area: str
    """The key of the task's area."""

    @model_validator(mode="after")
    def _complete_rule(self) -> TaskCoverage:
        if self.complete != (self.items > 0 and self.scored == self.items):
            raise ValueError("complete must be true exactly when every item is scored")
        return self


class AreaCoverage(_Tally):
    """One area's coverage: the sums over its in-scope tasks."""

    label: str
    """The area's name for people."""
    tasks: int = Field(ge=1)
    """In-scope tasks of the area."""
    tasks_selected: int = Field(ge=0)
    """Tasks with at least one selected item."""
    tasks_scored: int = Field(ge=0)
    """Tasks with at least one scored answer."""


class OverallCoverage(_Tally):
    """The run's coverage: the sums over its areas; ``complete`` = it covers its scope."""

    all_areas_present: bool
    """True when every area of the scope has at least one scored answer."""


class CoverageRecord(_Part):
    """Coverage per in-scope task, per area and overall (what the scores stand on)."""

    tasks: dict[str, TaskCoverage]
    """By task id, every in-scope task of the benchmark in its order (selected or not)."""
    areas: dict[str, AreaCoverage]
    """By area key, every area with an in-scope task."""
    overall: OverallCoverage
    """The whole run."""

    @model_validator(mode="after")
    def _sums(self) -> CoverageRecord:
        fields = ("items", "selected", "scored", "failed", "unasked")
        for key, area in self.areas.items():
            tasks = [t for t in self.tasks.values() if t.area == key]
            expected = {f: sum(getattr(t, f) for t in tasks) for f in fields}
            expected |= {
                "tasks": len(tasks),
                "tasks_selected": sum(1 for t in tasks if t.selected),
                "tasks_scored": sum(1 for t in tasks if t.scored),
                "complete": all(t.complete for t in tasks),
            }
            _check_sums(f"areas.{key}", area, expected)
        orphans = sorted({t.area for t in self.tasks.values()} - set(self.areas))
        if orphans:
            raise ValueError(f"tasks name areas that are not listed: {', '.join(orphans)}")
        areas = list(self.areas.values())
        expected = {f: sum(getattr(a, f) for a in areas) for f in fields}
        expected |= {
            "complete": bool(areas) and all(a.complete for a in areas),
            "all_areas_present": bool(areas) and all(a.scored for a in areas),
        }
        _check_sums("overall", self.overall, expected)
        return self


def _check_sums(where: str, part: BaseModel, expected: Mapping[str, object]) -> None:
    """ValueError naming the first field of ``part`` that differs from its expected value."""
    for name, value in expected.items():
        if getattr(part, name) != value:
            raise ValueError(f"{where}.{name} is {getattr(part, name)!r}; its parts give {value!r}")


class ScoreRecord(_Part):
    """One normalised score with its bootstrap 95% range."""

    score: float = Field(ge=0, le=100)
    """The score on 0–100 (a task: its pass rate or scaled mean score × 100)."""
    low: float | None = Field(ge=0, le=100)
    """The 2.5th percentile of the bootstrap (0–100); None when no bootstrap ran."""
    high: float | None = Field(ge=0, le=100)
    """The 97.5th percentile of the bootstrap (0–100); None when no bootstrap ran."""
    n: int = Field(ge=1)
    """Scored answers the score stands on."""
    mean_score: float
    """The mean raw score of those answers (on a task's own scale, e.g. 1–5)."""
    pass_rate: float = Field(ge=0, le=1)
    """The share of those answers that passed (0–1)."""

    @model_validator(mode="after")
    def _range(self) -> ScoreRecord:
        if (self.low is None) != (self.high is None):
            raise ValueError("low and high are both numbers or both null")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low ({self.low}) is above high ({self.high})")
        return self


class ScoresRecord(_Part):
    """Scores per task, per area and overall; a task or area with no scored answer is absent
    (never 0)."""

    tasks: dict[str, ScoreRecord]
    """By task id, in benchmark order."""
    areas: dict[str, ScoreRecord]
    """By area key (Σ count × task score / Σ count), in benchmark order."""
    overall: ScoreRecord | None
    """The overall score (per ``scoring.overall_method``); None when nothing was scored."""


class CountsRecord(_Part):
    """The run's answers as stored."""

    scored: int = Field(ge=0)
    """Items with a scored answer."""
    failed: int = Field(ge=0)
    """Items whose latest attempt failed (``--retry-failed`` retries them)."""
    errors_by_type: dict[str, int]
    """Failed items by error type (``provider_error``, ``judge_unparseable``, …)."""
    left_out: int = Field(ge=0)
    """Scored answers not counted in the scores (tasks outside the selection or scope)."""

    @model_validator(mode="after")
    def _errors_add_up(self) -> CountsRecord:
        if sum(self.errors_by_type.values()) != self.failed:
            raise ValueError(
                f"errors_by_type adds up to {sum(self.errors_by_type.values())}, "
                f"not failed ({self.failed})"
            )
        return self


# ---------------------------------------------------------------- the record


class RunRecord(_Part):
    """What a benchmark session leaves: settings, roles, scoring, coverage, scores, spend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["sweepbench-run-record"]
    """Names the format: always ``sweepbench-run-record``."""
    version: Literal[1]
    """The format's version."""
    run_id: str
    """The run's id (``<model slug>-<YYYYMMDD-HHMMSS>-<hash[:8]>``)."""
    benchmark: BenchmarkRecord
    """Which benchmark, data version and prompt version."""
    created_at: UtcTime
    """When the run started (UTC)."""
    updated_at: UtcTime
    """When the run was last written, i.e. when this session ended (UTC)."""
    status: RunStatus
    """How the run stands: completed, completed_with_errors, paused_budget, interrupted,
    running."""
    reason: str | None
    """Why it stopped or has errors, in words (scrubbed of secrets); None when completed."""
    settings: SettingsRecord
    """The run config and its hash."""
    limits: LimitsRecord
    """The spending limits last used."""
    selection: SelectionRecord
    """What the user chose to run."""
    roles: dict[RecordRole, RoleRecord]
    """Each role's model and spend: ``target`` always, ``judge`` when one graded."""
    spent_usd: Money
    """USD spent by every role together across every session."""
    prices: dict[str, PriceRecord | None]
    """The price used per model id; None = no price on file (its calls counted $0)."""
    scoring: ScoringRecord
    """Scoring and judge prompt versions, overall method, bootstrap settings."""
    coverage: CoverageRecord
    """Selected, scored, failed and unasked items per task, area and overall."""
    scores: ScoresRecord
    """The 0–100 scores with bootstrap 95% ranges, per task, area and overall."""
    counts: CountsRecord
    """Stored answers: scored, failed by error type, left out."""

    @model_validator(mode="after")
    def _consistent(self) -> RunRecord:
        if "target" not in self.roles:
            raise ValueError("roles: the target role (model under test) is required")
        total = sum((r.spent_usd for r in self.roles.values()), Decimal(0))
        if total != self.spent_usd:
            raise ValueError(f"spent_usd ({self.spent_usd}) is not the roles' sum ({total})")
        unpriced = sorted({r.model for r in self.roles.values()} - set(self.prices))
        if unpriced:
            raise ValueError(f"prices: no entry for {', '.join(unpriced)} (null = unpriced)")
        for kind in ("tasks", "areas"):
            extra = set(getattr(self.scores, kind)) - set(getattr(self.coverage, kind))
            if extra:
                raise ValueError(f"scores.{kind}: {', '.join(sorted(extra))} not in coverage")
        if self.updated_at < self.created_at:
            raise ValueError("updated_at is before created_at")
        return self


# ---------------------------------------------------------------- building


def config_hash(config: Mapping[str, Any]) -> str:
    """The settings hash of a run config's JSON, as ``RunConfig.hash`` computes it."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sums(parts: list[TaskCoverage] | list[AreaCoverage]) -> dict[str, int]:
    """The item counts of some coverage parts, added up."""
    names = ("items", "selected", "scored", "failed", "unasked")
    return {name: sum(getattr(p, name) for p in parts) for name in names}


_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Version → a function turning a record of that version into one of the next version."""


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _location(loc: tuple[str | int, ...]) -> str:
    """A pydantic location as a path (``scores.tasks.arithmetic.low``, ``areas[2]``); a bad
    map key reads ``roles.boss (the key)``; empty for the record as a whole."""
    out = ""
    for key in loc:
        if key == "[key]":
            out += " (the key)"
        else:
            out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _words(error: Mapping[str, Any]) -> str:
    """One validation error in words."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required but missing"
    return str(error["msg"]).removeprefix("Value error, ")


def load_record(source: str | bytes | Mapping[str, Any], *, where: str = "run record") -> RunRecord:
    """A record from its JSON text (or the parsed dict) of any supported version, migrated to
    the current one. DataError saying what and where (``where`` names the file) for text that
    is not JSON, another format, an unknown version, or a malformed field."""
    if isinstance(source, str | bytes):
        try:
            text = source.decode("utf-8") if isinstance(source, bytes) else source
            data = json.loads(text, parse_constant=_no_constant)
        except UnicodeDecodeError as exc:
            raise DataError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{where}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
            ) from None
        except ValueError as exc:
            raise DataError(f"{where}: not JSON ({exc})") from None
    else:
        data = source
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: expected a JSON object, found {type(data).__name__}")
    fmt = data.get("format")
    if fmt != FORMAT:
        found = "no format field" if fmt is None else f"format {fmt!r}"
        raise DataError(f"{where}: format: not a sweepbench run record ({found})")
    version = data.get("version")
    if "version" not in data:
        raise DataError(f"{where}: version: required but missing")
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or version not in SUPPORTED_VERSIONS
    ):
        readable = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
        raise DataError(
            f"{where}: version: {version!r} is not a run record version this sweepbench reads "
            f"({readable}); a newer sweepbench may have written it"
        )
    record = dict(data)
    while record["version"] != VERSION:
        record = _MIGRATIONS[record["version"]](record)
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{where}: not plain JSON data ({exc})") from None
    try:
        return RunRecord.model_validate_json(text)
    except ValidationError as exc:
        errors = exc.errors()
        shown = "; ".join(
            ": ".join(part for part in (_location(tuple(e["loc"])), _words(e)) if part)
            for e in errors[:3]
        )
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        raise DataError(f"{where}: {shown}{more}") from None


def dump_record(record: RunRecord) -> str:
    """A record as JSON: two-space indents, fields in declaration order, maps in their own
    order, money as decimal strings, a final newline; the same record always gives the same
    text, and ``dump_record(load_record(text)) == text`` for text this function wrote."""
    return record.model_dump_json(indent=2) + "\n"
