"""A benchmark run's settings as a surface gives them (the CLI, the web app, Python): the one
description of a run from the surface to the plan (``bench.plan.build_plan`` reads it whole),
stored with the run so that it can be asked again. The start rules are ``bench.start``'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, field_validator

from sweepbench.bench.catalog import preset, scope
from sweepbench.bench.defaults import DEFAULT_CONCURRENCY
from sweepbench.bench.items import Scope
from sweepbench.bench.results import format_money
from sweepbench.bench.run_config import Limits, Selection
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, ScoringVersion
from sweepbench.bench.sources.registry import find
from sweepbench.errors import UserError
from sweepbench.models.routes import DEFAULT_ROUTE, RoutePolicy, parse_policy
from sweepbench.money.ceilings import parse_usd_amount
from sweepbench.roles import BENCH_ROLES, Role, label, parse_role

MAX_CONCURRENCY = 100


# -- money from text ---------------------------------------------------------------------------


def _usd(value: object) -> Decimal:
    """A dollar amount from 0 to $1,000,000,000 from text ("5", "$0.50") or a number; a
    ValueError saying why otherwise (the one money parser, :func:`parse_usd_amount`)."""
    return parse_usd_amount(value)


def parse_usd(text: str, where: str) -> Decimal:
    """A dollar amount from text; a UserError naming ``where`` (how the surface names the
    value, e.g. ``--limit judge=abc``) otherwise."""
    try:
        return _usd(text)
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from None


def parse_limit(
    text: str, flag: str = "--limit", *, role: Role | None = None
) -> tuple[Role | None, Decimal]:
    """One limit as ``flag`` gave it: ``USD`` (the total; None as the role) or ``ROLE=USD``.
    With ``role`` (a flag for one role's limit, e.g. ``--limit-judge``) the text is ``USD``
    for that role. Errors name the flag and its value."""
    where = f"{flag} {text}"
    if role is not None:
        return role, parse_usd(text, where)
    name, sep, amount = text.partition("=")
    if not sep:
        return None, parse_usd(text, where)
    try:
        chosen = parse_role(name, allowed=BENCH_ROLES)
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from None
    return chosen, parse_usd(amount, where)


def merge_limits(parsed: Iterable[tuple[Role | None, Decimal]]) -> Limits:
    """Limits from ``parse_limit`` results (None = the total); the same limit given twice with
    different amounts is a UserError."""
    total: Decimal | None = None
    roles: dict[str, Decimal] = {}
    for role, usd in parsed:
        before = total if role is None else roles.get(role)
        if before is not None and before != usd:
            what = "total limit" if role is None else f"limit for the {label(role)}"
            raise UserError(
                f"the {what} is given twice: {format_money(before)} and {format_money(usd)}"
            )
        if role is None:
            total = usd
        else:
            roles[role] = usd
    return Limits(total=total, roles=roles)


# -- the request -------------------------------------------------------------------------------


def _usd_or_none(value: object) -> Decimal | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _usd(value)


def _names(value: object) -> object:
    """Comma-separated text as a tuple of names (lists pass through)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return value


def _role_keys(value: object) -> object:
    """A mapping keyed by validated benchmark roles; entries whose value is None dropped."""
    if not isinstance(value, Mapping):
        return value
    checked: dict[Role, object] = {}
    for name, item in value.items():
        if item is None:
            continue
        role = parse_role(str(name), allowed=BENCH_ROLES)
        if role in checked:
            raise ValueError(f"the {label(role)} is given twice")
        checked[role] = item
    return checked


USD = Annotated[Decimal, BeforeValidator(_usd)]
Names = Annotated[tuple[str, ...], BeforeValidator(_names)]


class BenchRequest(BaseModel):
    """Everything a surface gives to start (or price) a benchmark run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: str
    """``sample``, ``elbench`` (with ``data``), or the path of a declaration."""
    data: Path | None = None
    """The data folder of a benchmark whose data is not shipped (ELBench)."""
    allow_data_outside: bool = False
    """Let a declaration read data outside its own folder (``--allow-data-outside``); off, a
    task whose data path leads out of the folder is kept out, saying why."""
    preset: str = "full"
    scope: Scope = "core"
    """``core``, or ``paper`` (region-specific sets included)."""
    areas: Names = ()
    tasks: Names = ()
    skills: Names = ()
    per_task: int | None = None
    max_items: int | None = None
    models: Annotated[dict[str, str], BeforeValidator(_role_keys)]
    """The model of each role (``BENCH_ROLES``): ``target`` (required), ``judge``,
    ``student``."""
    max_tokens: int | None = None
    effort: str | None = None
    """The effort sent to the model under test (None: none, the model's default)."""
    temperature: float | None = None
    """The model under test's temperature (None: its default)."""
    repeats: int = 1
    """How many times each item is asked; scores become per-item means."""
    prompt_version: str | None = None
    """One of the benchmark's declared prompt versions (None: its own prompts)."""
    decision_judge: bool = False
    """A verdict-only judge: cheaper, no reasons."""
    route: RoutePolicy = DEFAULT_ROUTE
    """How OpenRouter models' calls are routed among their hosts (``--route``;
    :mod:`sweepbench.models.routes`)."""
    edu_scoring: Literal["judge", "rule"] = "judge"
    """``rule``: judged tasks that have a fixed-rule scorer are scored by it instead."""
    scoring: ScoringVersion = DEFAULT_SCORING_VERSION
    """How rule scorers read answers: ``replicated`` (as ELBench does) or ``corrected``."""
    limit: Annotated[Decimal | None, BeforeValidator(_usd_or_none)] = None
    """The total spending limit, USD."""
    role_limits: Annotated[dict[str, USD], BeforeValidator(_role_keys)] = {}
    """A spending limit per role (``BENCH_ROLES``), USD."""
    concurrency: int = DEFAULT_CONCURRENCY
    rpm: int | None = None
    tpm: int | None = None
    resume: bool = True
    """Continue the newest run with the same settings (False: ``--no-resume``)."""
    retry_failed: bool = False
    accept_unpriced: bool = False
    confirmed: bool = False
    """The user agreed to spend (``--yes``, the web app's confirmation)."""

    @field_validator("models")
    @classmethod
    def _models(cls, models: dict[str, str]) -> dict[str, str]:
        models = {role: model.strip() for role, model in models.items()}
        empty = [label(role) for role, model in models.items() if not model]
        if empty:
            raise ValueError(f"no model given for the {', '.join(empty)}")
        if "target" not in models:
            raise ValueError("the model under test (target) is missing")
        return models

    @field_validator("preset")
    @classmethod
    def _preset(cls, name: str) -> str:
        try:
            return preset(name).name
        except UserError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("scope", mode="before")
    @classmethod
    def _scope(cls, name: object) -> object:
        if not isinstance(name, str):
            return name
        try:
            return scope(name)
        except UserError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("edu_scoring", mode="before")
    @classmethod
    def _edu_scoring(cls, value: object) -> object:
        choice = value.strip().lower() if isinstance(value, str) else value
        if choice not in ("judge", "rule"):
            raise ValueError(f"judge or rule, not {value!r}")
        return choice

    @field_validator("route", mode="before")
    @classmethod
    def _route(cls, value: object) -> object:
        return parse_policy(value) if isinstance(value, str) else value

    @field_validator("concurrency")
    @classmethod
    def _concurrency(cls, value: int) -> int:
        if not 1 <= value <= MAX_CONCURRENCY:
            raise ValueError(f"must be between 1 and {MAX_CONCURRENCY}, not {value}")
        return value

    @field_validator("rpm", "tpm")
    @classmethod
    def _rate(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"must be at least 1, not {value}")
        return value

    @classmethod
    def from_values(
        cls, values: Mapping[str, Any], *, names: Mapping[str, str] | None = None
    ) -> BenchRequest:
        """Validate ``values``; every problem at once in one UserError, each named as the
        surface names the field (``names``: field → e.g. ``--concurrency``)."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:
            raise UserError(request_problems(exc, names or {})) from None

    @property
    def limits(self) -> Limits:
        """The spending limits: the total and each role's."""
        return Limits(total=self.limit, roles=self.role_limits)

    @property
    def selection(self) -> Selection:
        """What to run, as chosen."""
        return Selection(
            preset=self.preset,
            scope=self.scope,
            areas=self.areas,
            tasks=self.tasks,
            dimensions=self.skills,
            per_task=self.per_task,
            max_items=self.max_items,
        )

    def stored(self) -> dict[str, Any]:
        """The settings as stored with a run (JSON): every field but the user's agreement to
        spend, which is given again each time (``confirmed``)."""
        return self.model_dump(mode="json", exclude={"confirmed"})


def request_from_run(settings: Mapping[str, Any], benchmark: str) -> BenchRequest:
    """The request a stored run was made from (``settings``: the run's stored settings;
    ``benchmark``: its benchmark id), to ask it again: as stored, or, for a run stored before
    requests were, rebuilt from its settings (its own prompt version, which such runs do not
    keep by name, is the benchmark's). The request continues the run (``resume``)."""
    stored = settings.get("request")
    if isinstance(stored, Mapping):
        return BenchRequest.model_validate({**stored, "resume": True, "retry_failed": False})
    config: Mapping[str, Any] = settings.get("config") or {}
    selection: Mapping[str, Any] = settings.get("selection") or {}
    limits: Mapping[str, Any] = settings.get("limits") or {}
    models = dict(config.get("models") or {})
    models.setdefault("target", config.get("model"))
    if config.get("judge"):
        models.setdefault("judge", config.get("judge"))
    source = str(settings.get("benchmark_source") or "")
    known = find(benchmark)  # as bench.sources.registry.reload_run reads a run's benchmark
    name, data = benchmark, None
    if known is None:
        name = source or benchmark  # a declaration, by the path it was loaded from
    elif known.needs_data:
        data = Path(source) if source else None
    values: dict[str, Any] = {
        "benchmark": name, "data": data,
        "allow_data_outside": bool(settings.get("allow_data_outside", False)),
        "preset": selection.get("preset") or "full",
        "scope": selection.get("scope") or config.get("scope") or "core",
        "areas": tuple(selection.get("areas") or ()),
        "tasks": tuple(selection.get("tasks") or ()),
        "skills": tuple(config.get("dimensions") or ()),
        "per_task": config.get("per_task"), "max_items": config.get("max_items"),
        "models": {role: model for role, model in models.items() if model},
        "max_tokens": config.get("max_tokens"),
        "decision_judge": bool(config.get("decision_judge")),
        "edu_scoring": "rule" if config.get("rule_scoring") else "judge",
        "scoring": config.get("scoring") or DEFAULT_SCORING_VERSION,
        "effort": config.get("effort"), "temperature": config.get("temperature"),
        "repeats": config.get("repeats") or 1,
        "limit": limits.get("total"),
        "role_limits": dict(limits.get("roles") or {}),
        "concurrency": settings.get("concurrency") or DEFAULT_CONCURRENCY,
    }  # fmt: skip
    return BenchRequest.model_validate(values)


def request_problems(exc: ValidationError, names: Mapping[str, str]) -> str:
    """A ValidationError of a BenchRequest as one line: ``--flag: problem; …``."""
    problems: list[str] = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        name = names.get(field, field)
        if error["type"] == "extra_forbidden":
            message = "not a setting of a benchmark run"
        elif error["type"] == "value_error":
            message = str(error["ctx"]["error"])
        else:
            message = error["msg"][:1].lower() + error["msg"][1:]
        problems.append(f"{name}: {message}" if name else message)
    return "; ".join(problems)
