"""The rules for starting a benchmark run: ``prepare`` plans a :class:`BenchRequest`
(continuing a stored run with the same settings; the benchmark's own judge when none is
chosen), and ``start_check`` says whether it is refused, needs the user's confirmation because
it spends money, or is ready. Surfaces only fill a request and render the answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.dialogue.calibration import plan_calibration
from sweepbench.bench.items import Benchmark
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.results import format_money
from sweepbench.bench.resume import PreparedRun, plan_run
from sweepbench.bench.run_config import RunConfig
from sweepbench.roles import label
from sweepbench.store import Store

if TYPE_CHECKING:
    from sweepbench.money.ledger import Ledger

UNPRICED_REFUSAL = "no listed price; add --accept-unpriced to run anyway"
RUN_NEEDS = "the run's lowest estimate"
"""What a benchmark run needs the host's ceilings to hold before it starts (it pauses when one
is reached and continues after)."""


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
    unless ``resume`` is off (``store`` None: never continues); every surface prepares a run
    this way. ``benchmark`` is the request's, already loaded (loaded here when None). A
    request that names no judge gets the benchmark's (:func:`with_default_judge`), and the
    prepared run's request, stored with the run, names it."""
    models = request.models
    loaded = benchmark if benchmark is not None else load(request)
    request = with_default_judge(request, loaded)
    prepared = plan_run(loaded, request, store, join=join)
    added = [
        f"The {label(role)} ({model}) is not used: none of the selected tasks needs one."
        for role, model in models.items()
        if role not in ("target", "judge") and role not in prepared.plan.config.models
    ]
    board = board_note(loaded, prepared.plan.config)
    if board is not None:
        added.append(board)
    if added:
        plan = replace(prepared.plan, notes=(*prepared.plan.notes, *added))
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


def with_default_judge(request: BenchRequest, benchmark: Benchmark) -> BenchRequest:
    """``request`` with the benchmark's own judge (``benchmark.defaults.judge``; ELBench's:
    the paper's) when it names none; unchanged otherwise. The plan binds a judge only when a
    selected task needs one, so an automatically checked run is not changed by it."""
    judge = benchmark.defaults.judge
    if judge is None or "judge" in request.models:
        return request
    return request.model_copy(update={"models": {**request.models, "judge": judge}})


def board_note(benchmark: Benchmark, config: RunConfig) -> str | None:
    """What the estimate says when a run's judge puts it on a leaderboard board of its own
    (the leaderboard has one board per judge): a benchmark with published results
    (``benchmark.defaults.judge``, their judge) whose run is graded by another judge, or by
    that judge verdict-only. None when the run is graded as the published results were, no
    judge grades it (an automatically checked run stands on every board), or its judged tasks
    are scored by rule (the plan says that such runs are never ranked with judged ones)."""
    paper, judge = benchmark.defaults.judge, config.judge
    if paper is None or judge is None or config.rule_scoring:
        return None
    where = "this run goes on its own board, not beside the published results."
    if judge != paper:
        mode = " (verdict only)" if config.decision_judge else ""
        return f"Judge {judge}{mode} is not the paper's judge ({paper}): {where}"
    if config.decision_judge:
        return (
            f"Judge {judge} grading verdict only is not the paper's setup (the same judge, "
            f"giving its reasons): {where}"
        )
    return None


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


@dataclass(frozen=True)
class KeyCheck:
    """What OpenRouter's free key check said before a run that calls it: one sentence for the
    user, and the reason the run is refused, if it is."""

    said: str
    refusal: str | None = None


KEY_ACCEPTED = "Key accepted."
KEY_REJECTED = "OpenRouter did not accept this API key. Check that it was copied in full."
KEY_UNCHECKED = "Could not check the key just now; the run will tell you if it is rejected."


def check_openrouter_key(models: Sequence[str], low_usd: Decimal | None) -> KeyCheck | None:
    """Before a run whose models include an OpenRouter one (and a key is set): OpenRouter's
    free key check (``/api/v1/key``; nothing is spent). A rejected key refuses the run, and so
    does credit left below the run's lowest estimate (both figures said); a check that cannot
    be made lets the run go on. None when no model is OpenRouter's or no key is set (the
    plan already says so)."""
    from sweepbench.errors import ProviderError
    from sweepbench.models.openrouter import NAME, check_key
    from sweepbench.settings import provider_key

    if not any(m.startswith(f"{NAME}/") for m in models) or not provider_key(NAME):
        return None
    try:
        status = check_key()
    except ProviderError:
        return KeyCheck(KEY_UNCHECKED)
    if not status.valid:
        return KeyCheck(KEY_REJECTED, refusal=KEY_REJECTED)
    left = status.limit_remaining
    if left is None:
        return KeyCheck(f"{KEY_ACCEPTED} This key has no credit limit of its own.")
    said = f"{KEY_ACCEPTED} This key has {format_money(left)} of credit left."
    if low_usd is not None and left < low_usd:
        return KeyCheck(
            said,
            refusal=f"this key has {format_money(left)} of credit left, less than the run's "
            f"lowest estimate ({format_money(low_usd)}); add credit or narrow the run",
        )
    return KeyCheck(said)
