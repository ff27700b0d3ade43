"""What a surface (the CLI, the web app) gives to start a benchmark run, and the rules for
starting one: ``prepare`` plans it (continuing a stored run with the same settings), and
``start_check`` says whether it is refused, needs the user's confirmation because it spends
money, or is ready. Surfaces only fill a ``BenchRequest`` and render the answers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, field_validator

from sweepbench.bench import resume
from sweepbench.bench.catalog import load_benchmark, preset, scope
from sweepbench.bench.defaults import DEFAULT_CONCURRENCY
from sweepbench.bench.dialogue.calibration import plan_calibration
from sweepbench.bench.items import Benchmark, Scope
from sweepbench.bench.plan import Limits, Selection
from sweepbench.bench.results import format_money
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, ScoringVersion
from sweepbench.errors import UserError
from sweepbench.money.ceilings import parse_usd_amount
from sweepbench.roles import BENCH_ROLES, Role, label, parse_role
from sweepbench.store import Store

if TYPE_CHECKING:
    from sweepbench.money.ledger import Ledger

MAX_CONCURRENCY = 100
UNPRICED_REFUSAL = "no listed price; add --accept-unpriced to run anyway"
RUN_NEEDS = "the run's lowest estimate"
"""What a benchmark run needs the host's ceilings to hold before it starts (it pauses when one
is reached and continues after)."""


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


# -- the start rules ---------------------------------------------------------------------------


def load(request: BenchRequest) -> Benchmark:
    """The benchmark a request names (UserError when it cannot be loaded)."""
    return load_benchmark(
        request.benchmark, request.data, allow_data_outside=request.allow_data_outside
    )


def prepare(
    request: BenchRequest,
    store: Store | None,
    *,
    benchmark: Benchmark | None = None,
    join: bool = False,
) -> PreparedRun:
    """Plan the run a request asks for, continuing the newest run with the same settings
    unless ``resume`` is off (``store`` None: never continues). ``benchmark`` is the request's,
    already loaded (loaded here when None)."""
    models = request.models
    prepared = resume.prepare(
        benchmark if benchmark is not None else load(request), store,
        model=models["target"], judge=models.get("judge"), decision_judge=request.decision_judge,
        selection=request.selection, limits=request.limits, max_tokens=request.max_tokens,
        resume=request.resume, retry_failed=request.retry_failed,
        rule_scoring=request.edu_scoring == "rule", student=models.get("student"),
        scoring=request.scoring, effort=request.effort, temperature=request.temperature,
        repeats=request.repeats, prompt_version=request.prompt_version, join=join,
    )  # fmt: skip
    unused = [
        f"The {label(role)} ({model}) is not used: none of the selected tasks needs one."
        for role, model in models.items()
        if role not in ("target", "judge") and role not in prepared.plan.config.models
    ]
    if unused:
        plan = replace(prepared.plan, notes=(*prepared.plan.notes, *unused))
        prepared = replace(prepared, plan=plan)
    plan = prepared.plan
    if store is not None and not plan.errors:
        pending = [i.task for i in plan.items]
        calibration = plan_calibration(store, plan.tasks, pending, plan.config.models)
        prepared = replace(prepared, dialogue_calibration=calibration)
        # a joining worker's run has started already: the ceilings pause it, as any run
        short = [] if join else host_ceiling_problems(store, plan.low, needed=RUN_NEEDS)
        if short:  # refused by the start rule, before anything is recorded
            plan = replace(plan, limit_problems=(*plan.limit_problems, *short))
            prepared = replace(prepared, plan=plan)
    return prepared


def host_ceiling_problems(
    store: Store, needed_usd: Decimal | None, *, needed: str, ledger: Ledger | None = None
) -> list[str]:
    """The host's daily and lifetime ceilings (``SWEEPBENCH_DAILY_USD``, ``SWEEPBENCH_TOTAL_USD``)
    against what a run needs to start (``needed`` names it: a benchmark run's or sweep's lowest
    estimate — it pauses at a ceiling and continues after; a single-prompt sweep's worst case —
    it is admitted as a whole). One sentence per ceiling too low, for every surface's start
    rule; none for a $0 or unpriced run."""
    from sweepbench.money.ceilings import DAILY_USD_ENV, TOTAL_USD_ENV
    from sweepbench.money.ledger import Ledger

    if needed_usd is None or needed_usd <= 0:
        return []
    summary = (ledger or Ledger(store)).summary()
    problems: list[str] = []
    if needed_usd > summary.remaining_today:
        problems.append(
            f"{needed[:1].upper()}{needed[1:]} ({format_money(needed_usd)}) is more than today's "
            f"ceiling leaves ({format_money(summary.remaining_today)} of "
            f"{format_money(summary.ceilings.daily_usd)}, {DAILY_USD_ENV}); narrow it, raise "
            "the ceiling or try again after midnight UTC"
        )
    left, cap = summary.remaining_total, summary.ceilings.total_usd
    if left is not None and cap is not None and needed_usd > left:
        problems.append(
            f"{needed[:1].upper()}{needed[1:]} ({format_money(needed_usd)}) is more than the "
            f"lifetime ceiling leaves ({format_money(left)} of {format_money(cap)}, "
            f"{TOTAL_USD_ENV}); narrow it or raise the ceiling"
        )
    return problems


@dataclass(frozen=True)
class StartDecision:
    """Whether a prepared run may start now."""

    outcome: Literal["refused", "confirm", "ready"]
    reasons: tuple[str, ...] = ()
    """Refused: every reason (the plan's problems first)."""
    spend_up_to: Decimal | None = None
    """Confirm: the most the run may spend (its high estimate; None: unknown, a model has
    no listed price)."""
    nothing_left: bool = False
    """Ready, with nothing to run: the run it continues has scored every selected item."""

    @property
    def refused(self) -> bool:
        """The run cannot start (see ``reasons``)."""
        return self.outcome == "refused"

    @property
    def needs_confirmation(self) -> bool:
        """The run spends money and the user has not agreed yet."""
        return self.outcome == "confirm"

    @property
    def ready(self) -> bool:
        """The run may start (or has nothing left to run)."""
        return self.outcome == "ready"


def start_check(prepared: PreparedRun, request: BenchRequest) -> StartDecision:
    """The start rule of a benchmark run (:func:`start_decision` over its plan): refused when
    the plan has problems (errors, a limit or a host ceiling below its low estimate) or a model
    has no price and that is not accepted; ready when nothing is left to run; otherwise a run
    that may spend money (a high estimate above $0, or an unknown one) needs ``confirmed``."""
    plan = prepared.plan
    reasons = [*plan.errors, *plan.blocked, *plan.limit_problems]
    if plan.needs_price_ack and not request.accept_unpriced:
        reasons.append(UNPRICED_REFUSAL)
    return start_decision(
        reasons,
        nothing_left=not plan.items,
        spends=plan.needs_price_ack or bool(plan.high),
        spend_up_to=plan.high,
        confirmed=request.confirmed,
    )


def start_decision(
    reasons: Sequence[str],
    *,
    nothing_left: bool,
    spends: bool,
    spend_up_to: Decimal | None,
    confirmed: bool,
) -> StartDecision:
    """The one start rule of ``bench run``, ``bench sweep`` and ``sweep`` (and the web pages
    that start them), given each one's facts: refused with every reason there is (its plan's
    problems, and a host ceiling that cannot hold what it needs to start:
    :func:`host_ceiling_problems`); ready when nothing is left to run; a run that may spend
    money needs ``confirmed`` (the most it may spend: ``spend_up_to``); otherwise ready."""
    if reasons:
        return StartDecision("refused", reasons=tuple(reasons))
    if nothing_left:
        return StartDecision("ready", nothing_left=True)
    if spends and not confirmed:
        return StartDecision("confirm", spend_up_to=spend_up_to)
    return StartDecision("ready")
