"""The spend ledger (sweeps.md §8): admit a run as a whole against the host's ceilings, then
settle each call at its actual cost.

Every read-modify-write is one write transaction in the store (``BEGIN IMMEDIATE`` on SQLite,
plus a transaction-scoped advisory lock on PostgreSQL), so any number of threads, worker
processes and the CLI share one set of ceilings. Money is stored as integer micro-dollars.

It is a blast-radius limit, not accounting: it prices from a static table, ignores cache-write
premiums and discounts, and a fresh store starts a fresh ledger.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.errors import UserError
from sweepbench.money.ceilings import (
    CeilingName,
    Ceilings,
    Charge,
    Reservation,
    SpendRefused,
    SpendSummary,
    calls_refusal,
    cap_to_micro,
    micro_to_usd,
    money_refusal,
    usd_to_micro,
)
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations as res
from sweepbench.store.schema import spend_totals as totals

__all__ = [  # noqa: RUF022 (grouped: the ledger, then the values it re-exports)
    "Ledger", "MAX_RUN_SECONDS", "RETENTION_DAYS", "STALE_AFTER_S",
    "Ceilings", "Charge", "Reservation", "SpendRefused", "SpendSummary",
]  # fmt: skip

log = logging.getLogger(__name__)

MAX_RUN_SECONDS = 3600
"""A call is cancelled after this long (sweeps.md §9.1)."""
STALE_AFTER_S = MAX_RUN_SECONDS + 300
"""An open reservation older than this belongs to a crashed worker and expires."""
RETENTION_DAYS = 8
"""Settled reservations are kept this many UTC days (today included)."""
WINDOW = timedelta(hours=1)
ALL = "all"
_PG_LOCK_KEY = 0x5357_4C47  # "SWLG": serialises ledger writers on PostgreSQL

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware."""


@dataclass(frozen=True)
class _Figures:
    day: str
    spent_today: int
    reserved_today: int
    reserved_open: int
    open_count: int
    spent_total: int
    calls_in_window: int


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Ledger:
    """The shared spend ledger in ``store``. ``ceilings`` default to :meth:`Ceilings.from_env`
    (read once, here); ``clock`` returns an aware datetime (tests move it). Holds no state of
    its own: share one between threads, or make one per process on the same store."""

    def __init__(
        self, store: Store, ceilings: Ceilings | None = None, clock: Clock | None = None
    ) -> None:
        self.store = store
        self.ceilings = Ceilings.from_env() if ceilings is None else ceilings
        self._clock = clock or _utc_now

    # -- admission -------------------------------------------------------------------------

    def admit(
        self,
        run_id: str,
        charges: Sequence[Charge],
        *,
        run_limit_usd: Decimal | None = None,
    ) -> list[str]:
        """Admit a run's calls as a whole, once, and reserve each at its ceiling; return the
        reservation ids in the order of ``charges``. Refused (:class:`SpendRefused`, a
        ``BudgetExceeded``; nothing written) when the call window, the daily or lifetime
        ceiling, or ``run_limit_usd`` (the run's settled + open spend) would be crossed.
        A run of only $0 calls is never refused for money."""
        charges = list(charges)
        if not run_id or len(run_id) > 64:
            raise ValueError(f"a run id has 1–64 characters: {run_id!r}")
        if any(not isinstance(c, Charge) for c in charges):
            raise TypeError("admit() takes a sequence of Charge")
        run_cap = None if run_limit_usd is None else cap_to_micro(_checked(run_limit_usd))
        if not charges:
            return []
        micros = [usd_to_micro(c.ceiling_usd, up=True) for c in charges]
        reserve = sum(micros)
        noun = "sweep" if all(c.role == "sweep" for c in charges) else "run"
        exempt = self.ceilings.exempt_free_calls
        calls_needed = sum(1 for c in charges if not (exempt and c.free))
        ids = [uuid.uuid4().hex for _ in charges]
        with self._write() as (conn, now):
            _expire(conn, now, STALE_AFTER_S)
            _purge(conn, now, RETENTION_DAYS)
            fig = self._figures(conn, now)
            calls_left = max(self.ceilings.calls_per_hour - fig.calls_in_window, 0)
            if calls_needed > calls_left:
                raise calls_refusal(
                    limit=self.ceilings.calls_per_hour,
                    left=calls_left,
                    needed=calls_needed,
                    noun=noun,
                )
            if reserve > 0:
                self._check_money(conn, fig, reserve, noun, run_id, run_cap)
            common = {"run_id": run_id, "admitted_at": now, "day": fig.day, "state": "reserved"}
            rows = [
                {**common, "id": rid, "model": c.model, "role": c.role, "free": c.free}
                | {"reserved_micro": micro}
                for rid, c, micro in zip(ids, charges, micros, strict=True)
            ]
            conn.execute(res.insert(), rows)
        return ids

    def _check_money(
        self,
        conn: Connection,
        fig: _Figures,
        reserve: int,
        noun: str,
        run_id: str,
        run_cap: int | None,
    ) -> None:
        """Raise for the failing dollar ceiling with the least left (lifetime first on a tie,
        then daily, then the run's own limit)."""
        failing: list[tuple[int, int, CeilingName, int, int]] = []  # remainder, rank, …
        cum_cap = self.ceilings.total_usd
        if cum_cap is not None:
            cap = cap_to_micro(cum_cap)
            left = cap - fig.spent_total - fig.reserved_open
            if reserve > left:
                failing.append((left, 0, "cumulative", cap, fig.spent_total))
        cap = cap_to_micro(self.ceilings.daily_usd)
        left = cap - fig.spent_today - fig.reserved_today
        if reserve > left:
            failing.append((left, 1, "daily", cap, fig.spent_today))
        if run_cap is not None:
            run_spent = _total(conn, f"run:{run_id}")
            open_q = sa.select(sa.func.coalesce(sa.func.sum(res.c.reserved_micro), 0)).where(
                res.c.run_id == run_id, res.c.state == "reserved"
            )
            left = run_cap - run_spent - int(conn.scalar(open_q) or 0)
            if reserve > left:
                failing.append((left, 2, "run", run_cap, run_spent))
        if failing:
            left, _, which, cap, spent = min(failing)
            held = fig.reserved_today if which == "daily" else 0
            raise money_refusal(
                which, noun=noun, reserve=reserve, left=left, cap=cap, spent=spent, held=held
            )

    # -- settlement ------------------------------------------------------------------------

    def attach(self, reservation_id: str, call_id: str) -> None:
        """Link a reservation to the ``calls`` row of the call it paid for. UserError for an
        unknown reservation or one already linked to another call."""
        with self._write() as (conn, _):
            done = conn.execute(
                res.update()
                .where(
                    res.c.id == reservation_id,
                    sa.or_(res.c.call_id.is_(None), res.c.call_id == call_id),
                )
                .values(call_id=call_id)
            )
            if done.rowcount == 0:
                linked = _get(conn, reservation_id).call_id
                raise UserError(f"reservation {reservation_id} already belongs to call {linked}")

    def settle(self, reservation_id: str, actual_usd: Decimal | None) -> bool:
        """Settle an open reservation at the call's actual cost (rounded half-up to the
        micro-dollar), or at its reserved amount when ``actual_usd`` is None (no price: count
        high). Settle completed, truncated, failed *and cancelled* calls, at the usage seen.

        Idempotent: settling a reservation that is no longer open (settled, or expired by
        :meth:`expire_stale`) changes nothing, logs a warning and returns False; the first
        settlement stands. Returns True when this call settled it. UserError for an unknown id.
        """
        micro = None if actual_usd is None else usd_to_micro(_checked(actual_usd), up=False)
        with self._write() as (conn, now):
            row = _get(conn, reservation_id)
            if row.state != "reserved":
                log.warning(
                    "spend reservation %s is already %s at %s; not settling it again at %s",
                    reservation_id,
                    row.state,
                    format_usd(row.settled_usd),
                    format_usd(actual_usd, none="its reserved amount"),
                )
                return False
            amount = usd_to_micro(row.reserved_usd, up=True) if micro is None else micro
            conn.execute(
                res.update()
                .where(res.c.id == reservation_id)
                .values(settled_micro=amount, settled_at=now, state="settled")
            )
            _add_to_totals(conn, {row.run_id: amount}, now)
        return True

    def release(self, reservation_id: str) -> bool:
        """Settle at $0: the call never reached the provider (refused connection, 4xx at
        submit). It keeps its slot in the call window. Same return as :meth:`settle`."""
        return self.settle(reservation_id, Decimal(0))

    def expire_stale(self, max_age_s: float = STALE_AFTER_S) -> int:
        """Settle reservations still open ``max_age_s`` after admission (a crashed worker)
        at their reserved amount and mark them ``expired``; return how many. :meth:`admit`
        does this too, before it checks."""
        with self._write() as (conn, now):
            return _expire(conn, now, max_age_s)

    def purge(self, older_than_days: int = RETENTION_DAYS) -> int:
        """Delete settled and expired reservations of UTC days at least ``older_than_days``
        before today; return how many. Lifetime and per-run totals are kept. :meth:`admit`
        purges at the default retention."""
        with self._write() as (conn, now):
            return _purge(conn, now, older_than_days)

    # -- reading ---------------------------------------------------------------------------

    def summary(self) -> SpendSummary:
        """Spent, reserved and left against each ceiling, and the call window, right now."""
        with self.store.engine.connect() as conn:
            if conn.dialect.name == "postgresql":  # one snapshot for all the figures
                conn.execution_options(isolation_level="REPEATABLE READ")
            fig = self._figures(conn, self._now())
        c = self.ceilings
        left_today = max(cap_to_micro(c.daily_usd) - fig.spent_today - fig.reserved_today, 0)
        left_total = (
            None
            if c.total_usd is None
            else max(cap_to_micro(c.total_usd) - fig.spent_total - fig.reserved_open, 0)
        )
        binding: Literal["daily", "cumulative"] = (
            "cumulative" if left_total is not None and left_total <= left_today else "daily"
        )
        return SpendSummary(
            ceilings=c,
            day=fig.day,
            spent_today=micro_to_usd(fig.spent_today),
            spent_total=micro_to_usd(fig.spent_total),
            reserved=micro_to_usd(fig.reserved_open),
            reserved_today=micro_to_usd(fig.reserved_today),
            open_reservations=fig.open_count,
            remaining_today=micro_to_usd(left_today),
            remaining_total=None if left_total is None else micro_to_usd(left_total),
            calls_in_window=fig.calls_in_window,
            calls_left=max(c.calls_per_hour - fig.calls_in_window, 0),
            overridden=c.overridden,
            binding=binding,
        )

    def reservations(self, run_id: str) -> list[Reservation]:
        """A run's reservations still on file, in admission order."""
        query = sa.select(res).where(res.c.run_id == run_id).order_by(res.c.admitted_at)
        with self.store.engine.connect() as conn:
            return [Reservation.from_stored(row._mapping) for row in conn.execute(query)]

    def run_spent(self, run_id: str) -> Decimal:
        """A run's settled spend across resumptions (survives the purge)."""
        with self.store.engine.connect() as conn:
            return micro_to_usd(_total(conn, f"run:{run_id}"))

    # -- internals -------------------------------------------------------------------------

    def _now(self) -> datetime:
        moment = self._clock()
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError(f"the ledger's clock returned a naive datetime: {moment!r}")
        return moment.astimezone(UTC)

    @contextmanager
    def _write(self) -> Iterator[tuple[Connection, datetime]]:
        with self.store.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
            # The clock is read once the lock is held, so admission times follow lock order.
            yield conn, self._now()

    def _figures(self, conn: Connection, now: datetime) -> _Figures:
        day = now.date().isoformat()
        is_open = res.c.state == "reserved"

        def total(column: sa.ColumnElement[Any], *where: sa.ColumnElement[bool]) -> int:
            return int(conn.scalar(sa.select(sa.func.coalesce(column, 0)).where(*where)) or 0)

        in_window = [res.c.admitted_at > now - WINDOW]
        if self.ceilings.exempt_free_calls:
            in_window.append(res.c.free == sa.false())
        return _Figures(
            day=day,
            spent_today=total(sa.func.sum(res.c.settled_micro), res.c.day == day),
            reserved_today=total(sa.func.sum(res.c.reserved_micro), res.c.day == day, is_open),
            reserved_open=total(sa.func.sum(res.c.reserved_micro), is_open),
            open_count=total(sa.func.count(), is_open),
            spent_total=_total(conn, ALL),
            calls_in_window=total(sa.func.count(), *in_window),
        )


def _checked(amount: Decimal) -> Decimal:
    usd_to_micro(amount, up=False)  # raises for floats, NaN, infinities and negatives
    return amount


def _get(conn: Connection, reservation_id: str) -> Reservation:
    row = conn.execute(sa.select(res).where(res.c.id == reservation_id)).one_or_none()
    if row is None:
        raise UserError(f"no spend reservation with id {reservation_id!r}")
    return Reservation.from_stored(row._mapping)


def _total(conn: Connection, scope: str) -> int:
    query = sa.select(totals.c.settled_micro).where(totals.c.scope == scope)
    return int(conn.scalar(query) or 0)


def _add_to_totals(conn: Connection, by_run: dict[str, int], now: datetime) -> None:
    """Add settled micro-dollars to the lifetime total and to each run's (under the lock)."""
    amounts = {ALL: sum(by_run.values())}
    amounts.update({f"run:{run_id}": micro for run_id, micro in by_run.items()})
    for scope, micro in amounts.items():
        done = conn.execute(
            totals.update()
            .where(totals.c.scope == scope)
            .values(settled_micro=totals.c.settled_micro + micro, updated_at=now)
        )
        if done.rowcount == 0:
            conn.execute(
                totals.insert().values(scope=scope, settled_micro=micro, since=now, updated_at=now)
            )


def _expire(conn: Connection, now: datetime, max_age_s: float) -> int:
    cutoff = now - timedelta(seconds=max_age_s)
    stale = conn.execute(
        sa.select(res.c.id, res.c.run_id, res.c.reserved_micro).where(
            res.c.state == "reserved", res.c.admitted_at < cutoff
        )
    ).all()
    if not stale:
        return 0
    conn.execute(
        res.update()
        .where(res.c.id.in_([row.id for row in stale]))
        .values(settled_micro=res.c.reserved_micro, settled_at=now, state="expired")
    )
    by_run: dict[str, int] = {}
    for row in stale:
        by_run[row.run_id] = by_run.get(row.run_id, 0) + int(row.reserved_micro)
    _add_to_totals(conn, by_run, now)
    log.warning(
        "expired %d spend reservation(s) open for over %d s, counted at their reserved amount",
        len(stale),
        max_age_s,
    )
    return len(stale)


def _purge(conn: Connection, now: datetime, older_than_days: int) -> int:
    cutoff = (now.date() - timedelta(days=older_than_days)).isoformat()
    done = conn.execute(res.delete().where(res.c.state != "reserved", res.c.day <= cutoff))
    return int(done.rowcount)
