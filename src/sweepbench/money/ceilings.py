"""The spend ledger's values: the host's ceilings (sweeps.md §8.1) read from the environment,
a charge to admit, a reservation, the summary, and the refusal with its wording (§8.3).

Money is a ``Decimal`` of US dollars here and integer micro-dollars in the store. The ledger
itself is :mod:`sweepbench.money.ledger`, which re-exports all of these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from decimal import localcontext as _localcontext
from typing import Any, Literal

from sweepbench.errors import BudgetExceeded, UserError
from sweepbench.money.prices import format_usd
from sweepbench.roles import label
from sweepbench.variables import CALLS_PER_HOUR, DAILY_USD, TOTAL_USD
from sweepbench.variables import MAX_USD as MAX_USD
from sweepbench.variables import parse_usd_amount as parse_usd_amount

DAILY_USD_ENV = DAILY_USD.name
CALLS_PER_HOUR_ENV = CALLS_PER_HOUR.name
TOTAL_USD_ENV = TOTAL_USD.name

DEFAULT_DAILY_USD = DAILY_USD.default
DEFAULT_CALLS_PER_HOUR = CALLS_PER_HOUR.default
MICRO = Decimal(1_000_000)
_FAST_BELOW = Decimal(10) ** 15
_MICRO_KNOWN = 4096
"""Conversions :func:`usd_to_micro` remembers, per rounding (equal amounts convert equally)."""
_MICRO_UP: dict[Decimal, int] = {}
_MICRO_HALF_UP: dict[Decimal, int] = {}

CeilingName = Literal["calls", "daily", "cumulative", "run", "role"]
"""Which limit refused an admission (``role``: a run's limit for one role)."""
State = Literal["reserved", "settled", "expired"]
"""A reservation's state: open, settled at its cost, or expired at its reserved amount."""


def _check_usd(name: str, value: Decimal) -> None:
    if not isinstance(value, Decimal):
        raise TypeError(f"{name} must be a Decimal, got {type(value).__name__}: {value!r}")
    if not value.is_finite() or value < 0:
        raise ValueError(f"{name} must be a finite amount ≥ 0, not {value}")


def usd_to_micro(amount: Decimal, *, up: bool) -> int:
    """Dollars → integer micro-dollars, exactly: rounded up (``up=True``, for reservations, so
    a reservation never under-states the worst case) or half-up (settlements)."""
    known = _MICRO_UP if up else _MICRO_HALF_UP
    if type(amount) is Decimal and amount.is_finite():  # anything else is checked below
        micro = known.get(amount)
        if micro is not None:  # calls' worst cases and costs repeat: converted once each
            return micro
    _check_usd("an amount", amount)
    if amount < _FAST_BELOW and len(amount.as_tuple().digits) <= 20:
        # exact in the default context (28 digits): the common case, without a new context
        micro = int((amount * MICRO).to_integral_value(ROUND_CEILING if up else ROUND_HALF_UP))
    else:
        with _localcontext() as ctx:
            ctx.prec = 80  # enough that quantize never fails on a large amount
            micro = int(
                (amount * MICRO).quantize(
                    Decimal(1), rounding=ROUND_CEILING if up else ROUND_HALF_UP
                )
            )
    if type(amount) is Decimal:
        if len(known) >= _MICRO_KNOWN:
            known.clear()
        known[amount] = micro
    return micro


def cap_to_micro(amount: Decimal) -> int:
    """A ceiling in micro-dollars, rounded down (a ceiling never grows in conversion)."""
    with _localcontext() as ctx:
        ctx.prec = 80
        return int((amount * MICRO).quantize(Decimal(1), rounding=ROUND_FLOOR))


def micro_to_usd(micro: int) -> Decimal:
    """Integer micro-dollars → dollars, exactly and in the shortest form (``1500000`` → 1.5)."""
    with _localcontext() as ctx:
        ctx.prec = 80
        # The quotient's exponent is the smallest that is exact: 10 → "10", 1.5 → "1.5".
        return Decimal(int(micro)) / MICRO if micro else Decimal(0)


@dataclass(frozen=True)
class Ceilings:
    """The host's limits: dollars per UTC day, calls per rolling hour, an optional lifetime
    total. ``overridden`` names the environment variables that were applied."""

    daily_usd: Decimal = DEFAULT_DAILY_USD
    """Dollars per UTC day (``SWEEPBENCH_DAILY_USD``, default 10); resets at 00:00 UTC."""
    calls_per_hour: int = DEFAULT_CALLS_PER_HOUR
    """Interactive paid calls (sweeps, generate) admitted in any rolling 60 minutes
    (``SWEEPBENCH_CALLS_PER_HOUR``, default 40). Benchmark calls and $0 calls never count."""
    total_usd: Decimal | None = None
    """Dollars since the ledger was created (``SWEEPBENCH_TOTAL_USD``); None = no limit."""
    overridden: tuple[str, ...] = field(default=())
    """The environment variables whose values were applied, in the order above."""

    def __post_init__(self) -> None:
        for name, value in (("daily_usd", self.daily_usd), ("total_usd", self.total_usd)):
            if value is not None:
                _check_usd(name, value)
                if value > MAX_USD:
                    raise ValueError(f"{name} must be at most {MAX_USD}, not {value}")
        if isinstance(self.calls_per_hour, bool) or not isinstance(self.calls_per_hour, int):
            raise TypeError(f"calls_per_hour must be an int, not {self.calls_per_hour!r}")
        if self.calls_per_hour < 0:
            raise ValueError(f"calls_per_hour must be ≥ 0, not {self.calls_per_hour}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Ceilings:
        """The ceilings from the environment (or ``environ``), read through the variables'
        record (:mod:`sweepbench.variables`). An unparsable, negative, non-finite or too large
        value (dollars above :data:`MAX_USD`) falls back to its default with a logged warning
        and is not listed in ``overridden``; an empty value counts as unset."""
        daily = DAILY_USD.reading(environ)
        calls = CALLS_PER_HOUR.reading(environ)
        total = TOTAL_USD.reading(environ)
        applied = tuple(r.variable.name for r in (daily, calls, total) if r.applied)
        return cls(daily.value, calls.value, total.value, applied)


class SpendRefused(BudgetExceeded):
    """An admission refused by a ceiling; nothing was written. ``str()`` is the message to
    show; the fields say which ceiling refused and by how much, for callers that decide."""

    def __init__(
        self,
        message: str,
        *,
        ceiling: CeilingName,
        needed: Decimal | int,
        remaining: Decimal | int,
        limit: Decimal | int,
        spent: Decimal | None = None,
    ) -> None:
        super().__init__(message)
        self.ceiling: CeilingName = ceiling
        """``calls``, ``daily``, ``cumulative`` or ``run``."""
        self.needed = needed
        """What the run asked for: calls (int) or dollars (Decimal)."""
        self.remaining = remaining
        """What the ceiling had left (calls, or dollars after open reservations), ≥ 0."""
        self.limit = limit
        """The ceiling itself: calls per hour or dollars."""
        self.spent = spent
        """Dollars already settled against this ceiling (None for the call window)."""


@dataclass(frozen=True)
class Charge:
    """One call a run will make, at the worst case its budget allows (its ceiling estimate).
    ``free`` marks a $0 call (local, scripted, an own server at $0): it holds nothing and counts
    against no ceiling, so the ledger keeps no row for it."""

    model: str
    ceiling_usd: Decimal
    role: str = "sweep"
    free: bool = False

    def __post_init__(self) -> None:
        raw: object = self.ceiling_usd
        if isinstance(raw, int) and not isinstance(raw, bool):  # exact, so accepted
            object.__setattr__(self, "ceiling_usd", Decimal(raw))
        usd_to_micro(self.ceiling_usd, up=True)  # TypeError/ValueError for float, NaN, < 0
        if not self.model or (len(self.model) > 300 and not self.free):  # free: never stored
            raise UserError(
                f"a model id has 1–300 characters to be paid for, not {len(self.model):,}: "
                f"{self.model[:60]}…"
            )
        if not self.role or len(self.role) > 40:
            raise ValueError(f"a charge needs a role of 1–40 characters: {self.role!r}")
        if self.free and self.ceiling_usd != 0:
            raise ValueError(f"a free charge costs $0, not {self.ceiling_usd} ({self.model})")


@dataclass(frozen=True)
class Reservation:
    """One admitted call as the ledger holds it."""

    id: str
    run_id: str
    call_id: str | None
    model: str
    role: str
    admitted_at: datetime
    day: str
    reserved_usd: Decimal
    settled_usd: Decimal | None
    settled_at: datetime | None
    state: State
    free: bool
    kind: str = "call"
    """``call`` (one call) or ``lease`` (a benchmark worker's next calls)."""
    overrun: bool = False
    """Settled above what was reserved (the real charge is recorded as it is)."""
    worker: str | None = None

    @classmethod
    def from_stored(cls, row: Mapping[Any, Any]) -> Reservation:
        """From a ``spend_reservations`` row (micro-dollars)."""
        settled = row["settled_micro"]
        return cls(
            id=row["id"],
            run_id=row["run_id"],
            call_id=row["call_id"],
            model=row["model"],
            role=row["role"],
            admitted_at=row["admitted_at"],
            day=row["day"],
            reserved_usd=micro_to_usd(row["reserved_micro"]),
            settled_usd=None if settled is None else micro_to_usd(settled),
            settled_at=row["settled_at"],
            state=row["state"],
            free=bool(row["free"]),
            kind=row.get("kind") or "call",
            overrun=bool(row.get("overrun")),
            worker=row.get("worker"),
        )


@dataclass(frozen=True)
class SpendSummary:
    """Where the host stands against its ceilings (sweeps.md §8.1 ``summary()``)."""

    ceilings: Ceilings
    day: str
    """Today's UTC date, ``YYYY-MM-DD``."""
    spent_today: Decimal
    """Settled today (by admission day), expired reservations included."""
    spent_total: Decimal
    """Settled since the ledger was created (survives the purge of old rows)."""
    reserved: Decimal
    """Open reservations: calls admitted and not yet settled, whatever their day."""
    reserved_today: Decimal
    """The part of ``reserved`` admitted today (what counts against today's ceiling)."""
    open_reservations: int
    remaining_today: Decimal
    """``daily_usd − spent_today − reserved_today``, never below 0."""
    remaining_total: Decimal | None
    """``total_usd − spent_total − reserved``, never below 0; None without a lifetime ceiling."""
    calls_in_window: int
    """Calls admitted in the last 60 minutes that count against the window."""
    calls_left: int
    overridden: tuple[str, ...]
    """Environment variables that changed a ceiling."""
    binding: Literal["daily", "cumulative"]
    """The dollar ceiling with the lower remainder (cumulative on a tie)."""
    overruns: int = 0
    """Settlements above their reservation today (real charges the estimate did not cover)."""

    @property
    def remaining(self) -> Decimal:
        """Dollars left under the binding ceiling."""
        if self.binding == "cumulative" and self.remaining_total is not None:
            return self.remaining_total
        return self.remaining_today

    def allowance_text(self) -> str:
        """The estimate line's tail (sweeps.md §6.3): ``· k calls and $r left today on this
        host``, naming the lifetime ceiling when that is the binding one."""
        calls = f"{self.calls_left} call{'' if self.calls_left == 1 else 's'}"
        left = format_usd(self.remaining)
        if self.binding == "cumulative" and self.ceilings.total_usd is not None:
            ceiling = format_usd(self.ceilings.total_usd)
            return f"· {calls} and {left} left of the {ceiling} lifetime ceiling on this host"
        return f"· {calls} and {left} left today on this host"

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict; dollars as decimal strings."""

        def usd(value: Decimal | None) -> str | None:
            return None if value is None else str(value)

        c = self.ceilings
        return {
            "day": self.day,
            "ceilings": {
                "daily_usd": usd(c.daily_usd),
                "calls_per_hour": c.calls_per_hour,
                "total_usd": usd(c.total_usd),
            },
            "spent_today": usd(self.spent_today),
            "spent_total": usd(self.spent_total),
            "reserved": usd(self.reserved),
            "reserved_today": usd(self.reserved_today),
            "open_reservations": self.open_reservations,
            "remaining_today": usd(self.remaining_today),
            "remaining_total": usd(self.remaining_total),
            "calls_in_window": self.calls_in_window,
            "calls_left": self.calls_left,
            "binding": self.binding,
            "overruns": self.overruns,
            "overridden": list(self.overridden),
            "allowance": self.allowance_text(),
        }


def calls_refusal(*, limit: int, left: int, needed: int, noun: str) -> SpendRefused:
    """The call-window refusal (sweeps.md §8.3); it names the variable that sets the window."""
    return SpendRefused(
        f"Rate limit: {limit} paid model calls per 60 minutes on this host "
        f"({CALLS_PER_HOUR_ENV}); {left} remain and this {noun} needs {needed}. Calls to free "
        "models never count.",
        ceiling="calls",
        needed=needed,
        remaining=left,
        limit=limit,
    )


def limit_flag(role: str | None) -> str:
    """The flag that sets a run's limit (the whole run, or one role)."""
    return "--limit USD" if role is None else f"--limit {role}=USD"


def money_refusal(
    which: CeilingName,
    *,
    noun: str,
    reserve: int,
    left: int,
    cap: int,
    spent: int,
    held: int,
    role: str | None = None,
) -> SpendRefused:
    """A dollar ceiling's refusal (sweeps.md §8.3), from micro-dollars: ``left`` may be ≤ 0
    (the ceiling is reached), ``held`` is what open reservations hold of it. Every refusal
    names the limit and the variable or flag that sets it; ``role`` names a role's limit."""
    e, r, c, s = (format_usd(micro_to_usd(v)) for v in (reserve, max(left, 0), cap, spent))
    advice = (
        "Lower the max-token budgets, the effort or the number of cells"
        if noun == "sweep"
        else "Lower the max-token budgets or the number of calls"
    )
    reached = left <= 0
    more = f" ({format_usd(micro_to_usd(held))} more is held by calls in progress)"
    if which == "daily" and reached:
        text = (
            f"Daily budget reached ({DAILY_USD_ENV}) — {s} of {c} spent today"
            f"{more if held else ''}. It resets at midnight UTC. This is a host limit, not a "
            "fault with your prompt."
        )
    elif which == "daily":
        text = (
            f"This {noun} could cost up to {e} and only {r} of today's {c} is left "
            f"({DAILY_USD_ENV}). {advice}, or try again after midnight UTC."
        )
    elif which == "cumulative" and reached:
        text = (
            f"Lifetime budget reached — {s} of this host's {c} lifetime ceiling is spent "
            f"({TOTAL_USD_ENV}). This is a host limit, not a fault with your prompt."
        )
    elif which == "cumulative":
        text = (
            f"This {noun} could cost up to {e} and only {r} of this host's {c} lifetime ceiling "
            f"is left ({TOTAL_USD_ENV}). {advice}."
        )
    else:
        whose = "This run's" if role is None else f"This run's {label(role)}"
        flag = "--limit-judge USD" if noun == "sweep" and role == "judge" else limit_flag(role)
        if reached:
            text = f"{whose} spending limit is reached — {s} of {c} spent. Raise it with {flag}."
        else:
            text = (
                f"This {noun} could cost up to {e} and only {r} of "
                f"{'its' if role is None else 'the ' + label(role) + chr(39) + 's'} {c} spending "
                f"limit is left. Raise it with {flag}, or {advice[0].lower()}{advice[1:]}."
            )
    return SpendRefused(
        text,
        ceiling=which,
        needed=micro_to_usd(reserve),
        remaining=micro_to_usd(max(left, 0)),
        limit=micro_to_usd(cap),
        spent=micro_to_usd(spent),
    )
