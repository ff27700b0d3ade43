"""The plan of a benchmark sweep: one question set under several settings, exactly one axis
varying (model, effort, max tokens or prompt version), each setting an ordinary benchmark run.

The axis is read by the same function as a single-prompt sweep's
(:func:`sweepbench.axes.cells.axis_cells`), so both refuse the same things in the same words.
Each setting is planned by :func:`sweepbench.bench.start.prepare`, which continues the run
with its settings hash when there is one; the sweep prices every setting and the total, per
role, and is checked as a whole before anything starts:

- **Limits** (``--limit``, ``--limit ROLE=USD``) are the whole sweep's. They are divided among
  the settings so that their sum never exceeds the sweep's: each setting gets its lowest
  estimate plus a share of the rest in proportion to how far its high estimate is above its
  low, on top of what it already spent. Every setting's run is then held to its share by the
  ledger, as any run is to its limit.
- **Ceilings**: the settings' lowest estimates together must fit what the host's daily and
  lifetime ceilings leave, or the sweep is refused before any call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, Decimal

from sweepbench.axes import AXES
from sweepbench.axes.cells import Held, Refusal, axis_cells
from sweepbench.bench.defaults import DEFAULT_ANSWER_TOKENS
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import RoleCost, Totals, sum_estimates
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.results import format_money
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run_config import Limits
from sweepbench.bench.start import (
    UNPRICED_REFUSAL,
    StartDecision,
    host_ceiling_problems,
    load,
    prepare,
    start_decision,
)
from sweepbench.bench.sweeps.store import SweepRow, SweepStore
from sweepbench.errors import UserError
from sweepbench.money.ledger import Ledger
from sweepbench.roles import BENCH_ROLES, label
from sweepbench.store import Store

MAX_SETTINGS = 10
"""The most settings one benchmark sweep runs (the first ten values; a note says so)."""
_MICRO = Decimal("0.000001")


@dataclass(frozen=True)
class SweepSetting:
    """One setting of the sweep: its request and its prepared run."""

    index: int
    label: str
    """How the setting is shown (``effort=low · 8,192 tok``)."""
    value: str
    """The axis value, as text."""
    request: BenchRequest
    prepared: PreparedRun

    @property
    def low(self) -> Decimal | None:
        """This setting's lowest estimate (None: a model has no price)."""
        return self.prepared.plan.low

    @property
    def high(self) -> Decimal | None:
        """This setting's highest estimate (None: a model has no price)."""
        return self.prepared.plan.high


@dataclass(frozen=True)
class RoleTotal:
    """One role's calls and estimate over every setting."""

    role: str
    calls: int
    low: Decimal | None
    high: Decimal | None


@dataclass(frozen=True)
class BenchSweepPlan(Totals):
    """What a benchmark sweep will do and may cost, setting by setting and in total."""

    request: BenchRequest
    """The held request (the sweep's selection, judge, limits, …)."""
    benchmark: Benchmark
    axis: str
    values: tuple[str, ...]
    held: dict[str, object]
    settings: tuple[SweepSetting, ...]
    roles: tuple[RoleTotal, ...]
    errors: tuple[str, ...]
    """What stops the sweep: the axis's refusals and every setting's plan errors."""
    blocked: tuple[str, ...]
    """What stops running it but not its estimate: a model that cannot be called here now."""
    limit_problems: tuple[str, ...]
    """The sweep's limits or the host's ceilings below the lowest estimate."""
    notes: tuple[str, ...]
    sweep_hash: str
    previous: SweepRow | None
    """The stored sweep with these settings: running continues it."""

    @property
    def needs_price_ack(self) -> bool:
        """A setting calls a model with no listed price."""
        return any(s.prepared.plan.needs_price_ack for s in self.settings)

    @property
    def spends(self) -> bool:
        """Whether the sweep may cost money (some setting's plan does: see
        :attr:`BenchPlan.spends`), so that a surface must gate it."""
        return any(s.prepared.plan.spends for s in self.settings)

    @property
    def pending(self) -> int:
        """Items still to answer, over every setting."""
        return sum(len(s.prepared.plan.items) for s in self.settings)

    @property
    def spent(self) -> Decimal:
        """What the settings' runs already spent (a continued sweep)."""
        return sum((s.prepared.plan.already_spent for s in self.settings), Decimal(0))


def sweep_hash(benchmark: Benchmark, axis: str, config_hashes: Sequence[str]) -> str:
    """What identifies a sweep: its benchmark, axis and every setting's settings hash, in
    order (so the same command, run again, finds the same sweep)."""
    text = json.dumps([benchmark.id, axis, list(config_hashes)], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def plan_bench_sweep(
    request: BenchRequest,
    axis: str,
    values: Sequence[str],
    store: Store | None,
    *,
    benchmark: Benchmark | None = None,
    ledger: Ledger | None = None,
) -> BenchSweepPlan:
    """Plan the sweep; never raises on a setting's problem (they are ``errors``). UserError
    for an unknown axis or a benchmark that cannot be loaded."""
    if axis not in AXES:
        raise UserError(f"unknown axis {axis!r}; axes: {', '.join(AXES)}")
    benchmark = benchmark if benchmark is not None else load(request)
    refusals: list[Refusal] = []
    notes: list[str] = []
    target = request.models["target"]
    budget = request.max_tokens or DEFAULT_ANSWER_TOKENS
    version = request.prompt_version or benchmark.prompt_version
    held = Held(target, request.effort or "", budget, version)
    cells, dropped = axis_cells(
        axis, list(values), held, versions=benchmark.versions, what=benchmark.name,
        cap=MAX_SETTINGS, refusals=refusals, notes=notes,
    )  # fmt: skip
    if dropped:
        notes.append(f"Only the first {MAX_SETTINGS} settings are run ({dropped} more given).")
    errors = [r.message for r in refusals if r.severity != "info" and not r.needs_key]
    blocked = [r.message for r in refusals if r.severity != "info" and r.needs_key]
    unlimited = request.model_copy(update={"limit": None, "role_limits": {}})
    settings: list[SweepSetting] = []
    for cell in cells:
        value = {
            "model": cell.model,
            "effort": cell.effort_requested,
            "max_tokens": str(cell.max_tokens),
            "prompt_version": cell.prompt_version,
        }[axis]
        update: dict[str, object] = {
            "models": {**request.models, "target": cell.model},
            "prompt_version": None if cell.prompt_version == benchmark.prompt_version
            else cell.prompt_version,
        }  # fmt: skip
        if axis == "effort" or request.effort:  # resolved per model, as a sweep's cells are
            update["effort"] = None if cell.effort_applied == "none" else cell.effort_applied
        if axis == "max_tokens" or request.max_tokens is not None:
            update["max_tokens"] = cell.max_tokens
        setting_request = unlimited.model_copy(update=update)
        prepared = prepare(setting_request, store, benchmark=benchmark)
        settings.append(
            SweepSetting(cell.index, _setting_label(axis, value, cell.label), value,
                         setting_request, prepared)
        )  # fmt: skip
    for setting in settings:
        errors.extend(f"{setting.label}: {e}" for e in setting.prepared.plan.errors)
        blocked.extend(setting.prepared.plan.blocked)  # the same model: said once
    if settings and not errors and request.limits.any:
        settings = _with_shares(settings, request.limits, store, benchmark)
    roles = _role_totals(settings)
    limit_problems = _limit_problems(settings, request.limits, roles, store, ledger)
    for setting in settings:
        notes.extend(
            f"{setting.label}: {n}" for n in setting.prepared.plan.notes if _setting_note(n)
        )
    hashes = [s.prepared.plan.config.hash for s in settings]
    digest = sweep_hash(benchmark, axis, hashes)
    previous = SweepStore(store).find(digest) if store is not None and settings else None
    shown_held: dict[str, object] = {
        "model": target,
        "effort": request.effort or "default",
        "max_tokens": budget,
        "prompt_version": version,
    }
    shown_held.pop(axis, None)
    if request.repeats != 1:
        shown_held["repeats"] = request.repeats
    if request.temperature is not None:
        shown_held["temperature"] = request.temperature
    if request.models.get("judge"):
        shown_held["judge"] = request.models["judge"]
    return BenchSweepPlan(
        request=request, benchmark=benchmark, axis=axis, values=tuple(values),
        held=shown_held, settings=tuple(settings), roles=roles,
        errors=tuple(dict.fromkeys(errors)), blocked=tuple(dict.fromkeys(blocked)),
        limit_problems=tuple(limit_problems),
        notes=tuple(dict.fromkeys(notes)), sweep_hash=digest, previous=previous,
    )  # fmt: skip


def _setting_label(axis: str, value: str, cell_label: str) -> str:
    """A setting's name in tables and verdicts: the model id, ``effort=low``, …"""
    if axis == "model":
        return value
    if axis == "max_tokens":
        return f"max_tokens={int(value):,}"
    if axis == "effort" and "(not accepted)" in cell_label:
        return f"effort={value} (not accepted)"
    return f"{axis}={value}"


def _setting_note(note: str) -> bool:
    """The plan notes worth repeating per setting (the rest are the same for every one and
    said once by the held request's estimate)."""
    return not note.startswith(("A limit is held by", "No cost estimate"))


def _with_shares(
    settings: list[SweepSetting], limits: Limits, store: Store | None, benchmark: Benchmark
) -> list[SweepSetting]:
    """The settings re-planned with their shares of the sweep's limits."""
    shares: list[dict[str | None, Decimal]] = [{} for _ in settings]
    scopes: list[str | None] = [None, *[r for r in BENCH_ROLES if limits.for_role(r) is not None]]
    for scope in scopes:
        amount = limits.total if scope is None else limits.for_role(scope)
        if amount is None:
            continue
        costs = [_scope_costs(s.prepared.plan.roles, scope) for s in settings]
        for share, value in zip(shares, divide(amount, costs), strict=True):
            share[scope] = value
    out: list[SweepSetting] = []
    for setting, share in zip(settings, shares, strict=True):
        roles = {r: usd for r, usd in share.items() if r is not None}
        request = setting.request.model_copy(
            update={"limit": share.get(None), "role_limits": roles}
        )
        prepared = prepare(request, store, benchmark=benchmark)
        out.append(replace(setting, request=request, prepared=prepared))
    return out


def _scope_costs(roles: Sequence[RoleCost], scope: str | None) -> tuple[Decimal, Decimal, Decimal]:
    """(spent, low, high) of one setting for a scope (None: every role)."""
    chosen = [r for r in roles if scope is None or r.role == scope]
    spent = sum((r.spent for r in chosen), Decimal(0))
    low = sum((r.low or Decimal(0) for r in chosen), Decimal(0))
    high = sum((r.high or r.low or Decimal(0) for r in chosen), Decimal(0))
    return spent, low, max(high, low)


def divide(amount: Decimal, costs: Sequence[tuple[Decimal, Decimal, Decimal]]) -> list[Decimal]:
    """Split a limit among settings given each one's (spent, low, high): each gets what it
    spent, its low estimate, and a share of the rest in proportion to ``high − low`` (equal
    shares when every high equals its low), rounded down to the micro-dollar so that the
    shares never add up to more than ``amount``. With too little for every low estimate the
    shares follow the lows (the sweep is then refused anyway)."""
    spent = sum((c[0] for c in costs), Decimal(0))
    left = max(amount - spent, Decimal(0))
    lows = sum((c[1] for c in costs), Decimal(0))
    spread = [c[2] - c[1] for c in costs]
    total_spread = sum(spread, Decimal(0))
    shares: list[Decimal] = []
    for (done, low, _high), extra in zip(costs, spread, strict=True):
        if left < lows:
            part = left * low / lows if lows else left / len(costs)
        elif total_spread:
            part = low + (left - lows) * extra / total_spread
        else:
            part = low + (left - lows) / len(costs)
        shares.append((done + part).quantize(_MICRO, rounding=ROUND_DOWN))
    return shares


def _role_totals(settings: Sequence[SweepSetting]) -> tuple[RoleTotal, ...]:
    totals: dict[str, list[RoleCost]] = {}
    for setting in settings:
        for role in setting.prepared.plan.roles:
            totals.setdefault(role.role, []).append(role)
    return tuple(
        RoleTotal(
            role=role,
            calls=sum(r.calls for r in costs),
            low=sum_estimates(r.low for r in costs),
            high=sum_estimates(r.high for r in costs),
        )
        for role, costs in totals.items()
    )


def _limit_problems(
    settings: Sequence[SweepSetting],
    limits: Limits,
    roles: Sequence[RoleTotal],
    store: Store | None,
    ledger: Ledger | None,
) -> list[str]:
    """The sweep's limits and the host's ceilings against the lowest estimate."""
    problems: list[str] = []
    spent = sum((s.prepared.plan.already_spent for s in settings), Decimal(0))
    low = sum_estimates(r.low for r in roles)
    if low is not None and limits.total is not None and limits.total - spent < low:
        left = f", {format_money(limits.total - spent)} left" if spent else ""
        problems.append(
            f"The sweep's total limit ({format_money(limits.total)}{left}) is below its lowest "
            f"estimate ({format_money(low)}, every setting together)"
        )
    for total in roles:
        cap = limits.for_role(total.role)
        if cap is None or total.low is None:
            continue
        role_spent = sum(
            (r.spent for s in settings for r in s.prepared.plan.roles if r.role == total.role),
            Decimal(0),
        )
        if cap - role_spent < total.low:
            problems.append(
                f"The sweep's limit for the {label(total.role)} ({format_money(cap)}) is below "
                f"its lowest estimate ({format_money(total.low)}, every setting together)"
            )
    if store is not None:  # the start rule's ceilings, as for one run: its lowest estimate
        needed = "the sweep's lowest estimate"
        problems.extend(host_ceiling_problems(store, low, needed=needed, ledger=ledger))
    if not problems:  # a setting's own share: only when the whole fits (the shares follow it)
        for setting in settings:
            problems.extend(f"{setting.label}: {p}" for p in setting.prepared.plan.limit_problems)
    return problems


def sweep_start_check(plan: BenchSweepPlan, request: BenchRequest) -> StartDecision:
    """The benchmark start rule (:func:`~sweepbench.bench.start.start_decision`) for the
    whole sweep: refused when anything stops it (the axis, a setting's plan, a limit or host
    ceiling below the lowest estimate, an unpriced model not accepted); ready when every
    setting has nothing left; otherwise a sweep that may spend money needs ``confirmed``."""
    reasons = [*plan.errors, *plan.blocked, *plan.limit_problems]
    if not plan.settings and not reasons:
        reasons.append("no setting to run")
    if plan.needs_price_ack and not request.accept_unpriced:
        reasons.append(UNPRICED_REFUSAL)
    return start_decision(
        reasons,
        nothing_left=plan.pending == 0,
        spends=plan.needs_price_ack or bool(plan.high),
        spend_up_to=plan.high,
        confirmed=request.confirmed,
    )
