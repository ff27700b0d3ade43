"""The spend ledger's queries, run inside the ledger's write transactions: the figures each
ceiling is checked against, the settled totals by scope, expiry, purge, and settling what dead
workers held. Money is integer micro-dollars here."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.roles import INTERACTIVE_ROLES
from sweepbench.store.schema import spend_reservations as res
from sweepbench.store.schema import spend_totals as totals
from sweepbench.store.workers import dead_workers

log = logging.getLogger(__name__)

ALL = "all"
WINDOW = timedelta(hours=1)


def run_scope(run_id: str) -> str:
    """The scope of a run's own limit."""
    return f"run:{run_id}"


def role_scope(run_id: str, role: str) -> str:
    """The scope of a run's limit for one role."""
    return f"run:{run_id}:role:{role}"


@dataclass(frozen=True)
class Figures:
    """Where the host stands, read under the ledger's lock."""

    day: str
    spent_today: int
    reserved_today: int
    reserved_open: int
    open_count: int
    spent_total: int
    calls_in_window: int
    overruns_today: int


def _sum(conn: Connection, column: sa.ColumnElement[Any], *where: sa.ColumnElement[bool]) -> int:
    return int(conn.scalar(sa.select(sa.func.coalesce(column, 0)).where(*where)) or 0)


def figures(conn: Connection, now: datetime) -> Figures:
    """The host's figures at ``now``. The call window counts interactive paid calls only."""
    day = now.date().isoformat()
    is_open = res.c.state == "reserved"
    return Figures(
        day=day,
        spent_today=_sum(conn, sa.func.sum(res.c.settled_micro), res.c.day == day),
        reserved_today=_sum(conn, sa.func.sum(res.c.reserved_micro), res.c.day == day, is_open),
        reserved_open=_sum(conn, sa.func.sum(res.c.reserved_micro), is_open),
        open_count=_sum(conn, sa.func.count(), is_open),
        spent_total=total(conn, ALL),
        calls_in_window=_sum(
            conn,
            sa.func.count(),
            res.c.admitted_at > now - WINDOW,
            res.c.free == sa.false(),
            res.c.kind == "call",
            res.c.role.in_(sorted(INTERACTIVE_ROLES)),
        ),
        overruns_today=_sum(conn, sa.func.count(), res.c.day == day, res.c.overrun == sa.true()),
    )


def total(conn: Connection, scope: str) -> int:
    """Settled micro-dollars of a scope (0 when it has none)."""
    query = sa.select(totals.c.settled_micro).where(totals.c.scope == scope)
    return int(conn.scalar(query) or 0)


def cap(conn: Connection, scope: str) -> int | None:
    """A scope's limit in micro-dollars (None: no limit)."""
    value = conn.scalar(sa.select(totals.c.cap_micro).where(totals.c.scope == scope))
    return None if value is None else int(value)


def open_held(conn: Connection, run_id: str, role: str | None = None) -> int:
    """Micro-dollars a run (or one of its roles) holds in open reservations."""
    where = [res.c.run_id == run_id, res.c.state == "reserved"]
    if role is not None:
        where.append(res.c.role == role)
    return _sum(conn, sa.func.sum(res.c.reserved_micro), *where)


def set_cap(conn: Connection, scope: str, cap_micro: int | None, now: datetime) -> None:
    """Set (or clear) a scope's limit, creating the scope when new."""
    done = conn.execute(
        totals.update().where(totals.c.scope == scope).values(cap_micro=cap_micro, updated_at=now)
    )
    if done.rowcount == 0:
        conn.execute(
            totals.insert().values(
                scope=scope, settled_micro=0, since=now, updated_at=now, cap_micro=cap_micro
            )
        )


def add_to_totals(conn: Connection, rows: Iterable[tuple[str, str, int]], now: datetime) -> None:
    """Add settled micro-dollars, given as ``(run_id, role, micro)``, to the lifetime total, to
    each run's and to each run × role's."""
    amounts: dict[str, int] = {}
    for run_id, role, micro in rows:
        for scope in (ALL, run_scope(run_id), role_scope(run_id, role)):
            amounts[scope] = amounts.get(scope, 0) + micro
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


def settle_rows(
    conn: Connection, settlements: dict[str, tuple[int, str]], now: datetime
) -> list[str]:
    """Settle open reservations: id → (micro-dollars, state). Those no longer open are left as
    they are (the first settlement stands); returns the ids settled now. A settlement above
    the reservation is recorded as it is and flagged ``overrun``."""
    if not settlements:
        return []
    rows = conn.execute(
        sa.select(res.c.id, res.c.run_id, res.c.role, res.c.reserved_micro, res.c.state).where(
            res.c.id.in_(list(settlements))
        )
    ).all()
    done: list[str] = []
    added: list[tuple[str, str, int]] = []
    for row in rows:
        if row.state != "reserved":
            log.warning("spend reservation %s is already %s; not settling it again", row.id,
                        row.state)  # fmt: skip
            continue
        micro, state = settlements[row.id]
        overrun = micro > int(row.reserved_micro)
        if overrun:
            log.warning(
                "a charge above its reservation: %s settled at %d µ$ against %d µ$ reserved",
                row.id, micro, row.reserved_micro,
            )  # fmt: skip
        conn.execute(
            res.update()
            .where(res.c.id == row.id, res.c.state == "reserved")
            .values(settled_micro=micro, settled_at=now, state=state, overrun=overrun)
        )
        done.append(row.id)
        added.append((row.run_id, row.role, micro))
    add_to_totals(conn, added, now)
    return done


def expire(conn: Connection, now: datetime, max_age_s: float) -> int:
    """Settle reservations still open ``max_age_s`` after admission at their reserved amount."""
    cutoff = now - timedelta(seconds=max_age_s)
    stale = conn.execute(
        sa.select(res.c.id, res.c.reserved_micro).where(
            res.c.state == "reserved", res.c.admitted_at < cutoff
        )
    ).all()
    if not stale:
        return 0
    settle_rows(conn, {r.id: (int(r.reserved_micro), "expired") for r in stale}, now)
    log.warning(
        "expired %d spend reservation(s) open for over %d s, counted at their reserved amount",
        len(stale),
        max_age_s,
    )
    return len(stale)


def reap_dead(conn: Connection, now: datetime, received: ReceivedCost) -> int:
    """Settle the open reservations of dead workers: a call at what it had received (its
    stored events), a lease at its reserved amount (the calls in flight when its worker died
    were never recorded, so only the worst case is sure not to hide a charge)."""
    held = conn.execute(
        sa.select(res.c.id, res.c.worker, res.c.kind, res.c.call_id, res.c.reserved_micro).where(
            res.c.state == "reserved", res.c.worker.is_not(None)
        )
    ).all()
    if not held:
        return 0
    dead = dead_workers(conn, {r.worker for r in held}, now)
    settlements: dict[str, tuple[int, str]] = {}
    for row in held:
        if row.worker not in dead:
            continue
        micro = int(row.reserved_micro)
        if row.kind == "call":
            micro = received(conn, row.call_id, micro)
        settlements[row.id] = (micro, "settled")
    if settlements:
        log.warning("settled %d reservation(s) held by dead workers", len(settlements))
    return len(settle_rows(conn, settlements, now))


class ReceivedCost:
    """What a call had cost when its worker died, from the store (interface for reap_dead)."""

    def __call__(self, conn: Connection, call_id: str | None, reserved: int) -> int:
        """Micro-dollars; never more than ``reserved`` unless the stored usage says so."""
        raise NotImplementedError


def purge(conn: Connection, now: datetime, older_than_days: int) -> int:
    """Delete settled and expired reservations of UTC days at least that old."""
    cutoff = (now.date() - timedelta(days=older_than_days)).isoformat()
    done = conn.execute(res.delete().where(res.c.state != "reserved", res.c.day <= cutoff))
    return int(done.rowcount)
