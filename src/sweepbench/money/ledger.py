"""The spend ledger (sweeps.md §8): every paid call, whatever made it, holds its worst case
here before it starts and is settled at its actual cost when it ends.

Ceilings, by *scope*: the host's dollars per UTC day and lifetime bound every paid call; the
rolling call window counts interactive paid calls (sweeps, generate) only; a run's own limit
(``run:<id>``) and its per-role limits (``run:<id>:role:<role>``) are stored with the ledger, so
they bind every process that spends for the run. **$0 calls never count against any ceiling**
and keep no row. A sweep is admitted as a whole; a benchmark worker takes *leases* (one
reservation covering its next calls) and settles them in batches with its answers.

Every read-modify-write is one write transaction in the store (``BEGIN IMMEDIATE`` on SQLite,
plus a transaction-scoped advisory lock on PostgreSQL), so any number of threads, worker
processes and the CLI share one set of ceilings. Money is stored as integer micro-dollars.

It is a blast-radius limit, not accounting: it prices from a static table, ignores cache-write
premiums and discounts, and a fresh store starts a fresh ledger.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.errors import UserError
from sweepbench.money import ledger_sql as q
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
from sweepbench.money.received import StoredReceivedCost
from sweepbench.roles import INTERACTIVE_ROLES
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations as res
from sweepbench.store.workers import this_worker

__all__ = [  # noqa: RUF022 (grouped: the ledger, then the values it re-exports)
    "Ledger", "Settlement", "MAX_RUN_SECONDS", "RETENTION_DAYS", "STALE_AFTER_S",
    "Ceilings", "Charge", "Reservation", "SpendRefused", "SpendSummary",
]  # fmt: skip

log = logging.getLogger(__name__)

MAX_RUN_SECONDS = 3600
"""A call is cancelled after this long (sweeps.md §9.1)."""
STALE_AFTER_S = MAX_RUN_SECONDS + 300
"""An open reservation older than this belongs to a crashed worker and expires."""
RETENTION_DAYS = 8
"""Settled reservations are kept this many UTC days (today included)."""
_PG_LOCK_KEY = 0x5357_4C47  # "SWLG": serialises ledger writers on PostgreSQL

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware."""


@dataclass(frozen=True)
class Settlement:
    """What one held amount is settled at: ``actual_usd`` (None: the reserved amount, for a
    call with no price) and, optionally, the ``calls`` row it paid for."""

    reservation_id: str
    actual_usd: Decimal | None
    call_id: str | None = None


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
        self._received = StoredReceivedCost()

    @property
    def worker(self) -> str:
        """This process's worker id (registered on first use; see ``store.workers``). Looked up
        each time, never kept here: a forked child, or a process whose registration was ended
        (``forget_workers``), must not hold money under a worker that is, or will be, dead."""
        return this_worker(self.store.engine)

    # -- limits ----------------------------------------------------------------------------

    def set_limits(
        self, run_id: str, total: Decimal | None, roles: Mapping[str, Decimal] | None = None
    ) -> None:
        """Store a run's limits (its total and per role; None clears one). Every process that
        spends for the run is then held to them; setting them again (a resumed run with a
        raised limit) replaces them."""
        _check_run_id(run_id)
        roles = roles or {}
        with self._write() as (conn, now):
            q.set_cap(conn, q.run_scope(run_id), _cap(total), now)
            for role, usd in roles.items():
                q.set_cap(conn, q.role_scope(run_id, role), _cap(usd), now)

    # -- admission -------------------------------------------------------------------------

    def admit(
        self,
        run_id: str,
        charges: Sequence[Charge],
        *,
        run_limit_usd: Decimal | None = None,
        role_limits_usd: Mapping[str, Decimal] | None = None,
    ) -> list[str | None]:
        """Admit a run's calls as a whole, once, and hold each at its worst case; return the
        reservation ids in the order of ``charges`` (None for a free call: it holds nothing).
        Refused (:class:`SpendRefused`, a ``BudgetExceeded``; nothing written) when the call
        window (interactive paid calls only), the daily or lifetime ceiling, the run's limit
        (``run_limit_usd``, stored for the run, or one stored earlier) or a role's limit
        (``role_limits_usd``, stored in the same transaction, or one stored earlier) would be
        crossed. A run of only $0 calls is never refused."""
        charges = list(charges)
        _check_run_id(run_id)
        if any(not isinstance(c, Charge) for c in charges):
            raise TypeError("admit() takes a sequence of Charge")
        paid = [c for c in charges if not c.free]
        if not paid:
            return [None] * len(charges)
        worker = self.worker
        with self._write() as (conn, now):
            if run_limit_usd is not None:
                q.set_cap(conn, q.run_scope(run_id), _cap(_checked(run_limit_usd)), now)
            for role, usd in (role_limits_usd or {}).items():
                q.set_cap(conn, q.role_scope(run_id, role), _cap(_checked(usd)), now)
            self._tidy(conn, now)
            ids = self._admit_in(conn, now, run_id, charges, worker, kind="call")
        return ids

    def lease(
        self, run_id: str, role: str, model: str, want_usd: Decimal, need_usd: Decimal
    ) -> tuple[str, Decimal]:
        """Hold money for a benchmark worker's next calls in one transaction: ``want_usd`` if
        it fits, else as much as fits down to ``need_usd`` (the next call's worst case).
        Returns the lease's reservation id and the amount held. SpendRefused when not even
        ``need_usd`` fits under every ceiling that applies (the run then pauses)."""
        _check_run_id(run_id)
        need = usd_to_micro(_checked(need_usd), up=True)
        want = max(usd_to_micro(_checked(want_usd), up=True), need)
        worker = self.worker
        with self._write() as (conn, now):
            self._tidy(conn, now)
            fig = q.figures(conn, now)
            room = self._room(conn, fig, run_id, role)
            amount = want if room is None else max(min(want, room), need)
            charge = Charge(model=model, ceiling_usd=micro_to_usd(amount), role=role)
            [rid] = self._admit_in(conn, now, run_id, [charge], worker, kind="lease", fig=fig)
        assert rid is not None
        return rid, micro_to_usd(amount)

    def _admit_in(
        self,
        conn: Connection,
        now: datetime,
        run_id: str,
        charges: list[Charge],
        worker: str,
        *,
        kind: str,
        fig: q.Figures | None = None,
    ) -> list[str | None]:
        fig = fig or q.figures(conn, now)
        paid = [c for c in charges if not c.free]
        roles = {c.role for c in charges}  # free ones too: a graded sweep of free cells
        sweep_roles = {"sweep", "judge"} if kind == "call" else {"sweep"}  # a graded sweep
        noun = (
            "sweep"
            if "sweep" in roles and roles <= sweep_roles
            else "generation"
            if roles == {"generate"}
            else "run"
        )
        interactive = sum(1 for c in paid if c.role in INTERACTIVE_ROLES and kind == "call")
        calls_left = max(self.ceilings.calls_per_hour - fig.calls_in_window, 0)
        if interactive > calls_left:
            raise calls_refusal(
                limit=self.ceilings.calls_per_hour, left=calls_left, needed=interactive, noun=noun
            )
        micros = [usd_to_micro(c.ceiling_usd, up=True) for c in paid]
        by_role: dict[str, int] = {}
        for c, micro in zip(paid, micros, strict=True):
            by_role[c.role] = by_role.get(c.role, 0) + micro
        self._check_money(conn, fig, sum(micros), by_role, noun, run_id)
        ids: list[str | None] = []
        rows: list[dict[str, Any]] = []
        common = {"run_id": run_id, "admitted_at": now, "day": fig.day, "state": "reserved"}
        paid_micros = iter(micros)
        for c in charges:
            if c.free:
                ids.append(None)
                continue
            rid = uuid.uuid4().hex
            ids.append(rid)
            rows.append(
                {**common, "id": rid, "model": c.model, "role": c.role, "free": False,
                 "reserved_micro": next(paid_micros), "kind": kind, "worker": worker}
            )  # fmt: skip
        conn.execute(res.insert(), rows)
        return ids

    def _room(self, conn: Connection, fig: q.Figures, run_id: str, role: str) -> int | None:
        """The most that can still be held for ``role`` of ``run_id`` (None: no limit)."""
        rooms: list[int] = []
        cum = self.ceilings.total_usd
        if cum is not None:
            rooms.append(cap_to_micro(cum) - fig.spent_total - fig.reserved_open)
        rooms.append(cap_to_micro(self.ceilings.daily_usd) - fig.spent_today - fig.reserved_today)
        run_cap = q.cap(conn, q.run_scope(run_id))
        if run_cap is not None:
            rooms.append(run_cap - q.total(conn, q.run_scope(run_id)) - q.open_held(conn, run_id))
        role_cap = q.cap(conn, q.role_scope(run_id, role))
        if role_cap is not None:
            rooms.append(
                role_cap
                - q.total(conn, q.role_scope(run_id, role))
                - q.open_held(conn, run_id, role)
            )
        return max(min(rooms), 0) if rooms else None

    def _check_money(
        self,
        conn: Connection,
        fig: q.Figures,
        reserve: int,
        by_role: dict[str, int],
        noun: str,
        run_id: str,
    ) -> None:
        """Raise for the failing dollar ceiling with the least left (lifetime first on a tie,
        then daily, then the run's own limit, then a role's)."""
        if reserve <= 0:
            return
        failing: list[tuple[int, int, CeilingName, int, int, str | None]] = []
        cum_cap = self.ceilings.total_usd
        if cum_cap is not None:
            cap = cap_to_micro(cum_cap)
            left = cap - fig.spent_total - fig.reserved_open
            if reserve > left:
                failing.append((left, 0, "cumulative", cap, fig.spent_total, None))
        cap = cap_to_micro(self.ceilings.daily_usd)
        left = cap - fig.spent_today - fig.reserved_today
        if reserve > left:
            failing.append((left, 1, "daily", cap, fig.spent_today, None))
        run_cap = q.cap(conn, q.run_scope(run_id))
        if run_cap is not None:
            spent = q.total(conn, q.run_scope(run_id))
            left = run_cap - spent - q.open_held(conn, run_id)
            if reserve > left:
                failing.append((left, 2, "run", run_cap, spent, None))
        for role, micro in sorted(by_role.items()):
            role_cap = q.cap(conn, q.role_scope(run_id, role))
            if role_cap is None:
                continue
            spent = q.total(conn, q.role_scope(run_id, role))
            left = role_cap - spent - q.open_held(conn, run_id, role)
            if micro > left:
                failing.append((left, 3, "role", role_cap, spent, role))
        if failing:
            left, _, which, cap, spent, failed_role = min(failing, key=lambda f: (f[0], f[1]))
            held = fig.reserved_today if which == "daily" else 0
            needed = reserve if failed_role is None else by_role[failed_role]
            raise money_refusal(
                which, noun=noun, reserve=needed, left=left, cap=cap, spent=spent, held=held,
                role=failed_role,
            )  # fmt: skip

    # -- settlement ------------------------------------------------------------------------

    def attach(self, reservation_id: str, call_id: str) -> None:
        """Link a reservation to the ``calls`` row of the call it pays for (before the call's
        traffic starts, so a dead worker's call is settled from its stored events). UserError
        for an unknown reservation or one already linked to another call."""
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
        high). Settle completed, truncated, failed *and cancelled* calls, at the usage seen. A
        cost above the reservation is recorded as it is and flagged (never hidden).

        Idempotent: settling a reservation that is no longer open changes nothing, logs a
        warning and returns False; the first settlement stands. Returns True when this call
        settled it. UserError for an unknown id."""
        with self._write() as (conn, now):
            _get(conn, reservation_id)
            return bool(self.settle_in(conn, [Settlement(reservation_id, actual_usd)], now))

    def settle_many(self, settlements: Sequence[Settlement]) -> int:
        """Settle several holds in one transaction; returns how many were still open."""
        if not settlements:
            return 0
        with self._write() as (conn, now):
            return self.settle_in(conn, settlements, now)

    def settle_in(
        self, conn: Connection, settlements: Sequence[Settlement], now: datetime | None = None
    ) -> int:
        """Settle inside a caller's write transaction (a benchmark's group commit, so that an
        answer and the money it cost are stored together). On PostgreSQL the ledger's lock is
        taken on ``conn``. Returns how many were still open."""
        if not settlements:
            return 0
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        now = now or self._now()
        reserved = {
            row.id: int(row.reserved_micro)
            for row in conn.execute(
                sa.select(res.c.id, res.c.reserved_micro).where(
                    res.c.id.in_([s.reservation_id for s in settlements])
                )
            )
        }
        amounts: dict[str, tuple[int, str]] = {}
        links: list[tuple[str, str]] = []
        for s in settlements:
            if s.reservation_id not in reserved:
                raise UserError(f"no spend reservation with id {s.reservation_id!r}")
            micro = (
                reserved[s.reservation_id]
                if s.actual_usd is None
                else usd_to_micro(_checked(s.actual_usd), up=False)
            )
            amounts[s.reservation_id] = (micro, "settled")
            if s.call_id is not None:
                links.append((s.reservation_id, s.call_id))
        for rid, call_id in links:
            conn.execute(
                res.update().where(res.c.id == rid, res.c.call_id.is_(None)).values(call_id=call_id)
            )
        return len(q.settle_rows(conn, amounts, now))

    def note_used_in(self, conn: Connection, used: Sequence[tuple[str, int]]) -> None:
        """Record what open leases' finished calls have cost so far (``used_micro``), inside
        the group commit that stores those calls' answers: the ledger's own account of a lease
        whose worker dies later (the rest of it, calls in flight or not yet saved, is charged
        at its worst case: a provider may have billed them)."""
        for reservation_id, micro in used:
            conn.execute(
                res.update()
                .where(res.c.id == reservation_id, res.c.state == "reserved")
                .values(used_micro=micro)
            )

    def shrink(self, reservation_id: str, reserved_usd: Decimal) -> None:
        """Lower an open hold to ``reserved_usd`` (never raises it): a closed lease keeps only
        what its calls still in flight may cost, so the rest is free for the next lease."""
        micro = usd_to_micro(_checked(reserved_usd), up=True)
        with self._write() as (conn, _):
            conn.execute(
                res.update()
                .where(
                    res.c.id == reservation_id,
                    res.c.state == "reserved",
                    res.c.reserved_micro > micro,
                )
                .values(reserved_micro=micro)
            )

    def release(self, reservation_id: str) -> bool:
        """Settle at $0: the call never reached the provider (refused connection, 4xx at
        submit). Same return as :meth:`settle`."""
        return self.settle(reservation_id, Decimal(0))

    def expire_stale(self, max_age_s: float = STALE_AFTER_S) -> int:
        """Settle reservations still open ``max_age_s`` after admission at their reserved
        amount and mark them ``expired``; return how many. :meth:`admit` does this too."""
        with self._write() as (conn, now):
            return q.expire(conn, now, max_age_s)

    def reap_dead(self) -> int:
        """Settle what dead workers held, now: a call at what it had received (its stored
        events), a lease at its reserved amount. Returns how many. Admission does this too."""
        with self._write() as (conn, now):
            return q.reap_dead(conn, now, self._received)

    def purge(self, older_than_days: int = RETENTION_DAYS) -> int:
        """Delete settled and expired reservations of UTC days at least ``older_than_days``
        before today; return how many. Lifetime and per-run totals are kept."""
        with self._write() as (conn, now):
            return q.purge(conn, now, older_than_days)

    def _tidy(self, conn: Connection, now: datetime) -> None:
        """Settle what dead workers held, expire stale holds, purge old rows (inside the
        admission's transaction: a refusal writes nothing, so a refused admission leaves this
        to the next one, or to :meth:`reap_dead`)."""
        q.reap_dead(conn, now, self._received)
        q.expire(conn, now, STALE_AFTER_S)
        q.purge(conn, now, RETENTION_DAYS)

    # -- reading ---------------------------------------------------------------------------

    def summary(self) -> SpendSummary:
        """Spent, reserved and left against each ceiling, and the call window, right now."""
        with self.store.engine.connect() as conn:
            if conn.dialect.name == "postgresql":  # one snapshot for all the figures
                conn.execution_options(isolation_level="REPEATABLE READ")
            fig = q.figures(conn, self._now())
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
            overruns=fig.overruns_today,
        )

    def reservations(self, run_id: str) -> list[Reservation]:
        """A run's reservations still on file, in admission order."""
        query = sa.select(res).where(res.c.run_id == run_id).order_by(res.c.admitted_at)
        with self.store.engine.connect() as conn:
            return [Reservation.from_stored(row._mapping) for row in conn.execute(query)]

    def run_spent(self, run_id: str) -> Decimal:
        """A run's settled spend across resumptions (survives the purge)."""
        with self.store.engine.connect() as conn:
            return micro_to_usd(q.total(conn, q.run_scope(run_id)))

    def role_spent(self, run_id: str, role: str) -> Decimal:
        """What one role of a run has settled, across resumptions and processes."""
        with self.store.engine.connect() as conn:
            return micro_to_usd(q.total(conn, q.role_scope(run_id, role)))

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


def _check_run_id(run_id: str) -> None:
    if not run_id or len(run_id) > 120:
        raise ValueError(f"a run id has 1–120 characters: {run_id!r}")


def _cap(amount: Decimal | None) -> int | None:
    return None if amount is None else cap_to_micro(_checked(amount))


def _checked(amount: Decimal) -> Decimal:
    usd_to_micro(amount, up=False)  # raises for floats, NaN, infinities and negatives
    return amount


def _get(conn: Connection, reservation_id: str) -> Reservation:
    row = conn.execute(sa.select(res).where(res.c.id == reservation_id)).one_or_none()
    if row is None:
        raise UserError(f"no spend reservation with id {reservation_id!r}")
    return Reservation.from_stored(row._mapping)
