"""Items claimed in the store (issue 18): how several worker processes, on one machine or many,
share the items of one benchmark run without answering any twice.

A run's items still to answer are rows of ``bench_claims`` in the plan's order, each free or
held by one worker (a ``workers`` row: ``pid@host`` with a heartbeat, see
:mod:`sweepbench.store.workers`). A worker claims the next free items in one write
transaction — on PostgreSQL ``SELECT … FOR UPDATE SKIP LOCKED``, so claimers never wait on each
other's rows; on SQLite the write lock (``BEGIN IMMEDIATE``) serialises them. The claims of a
worker that has died (its process gone on this host, or its heartbeat silent elsewhere) are
freed and claimed again. An answered item's row is deleted in the transaction that stores its
answer (:meth:`ItemClaims.finish` on the caller's connection), so an item is either still to
answer or answered, never both; a worker that stops gives its unanswered claims back
(:meth:`ItemClaims.release`).

Every item is answered exactly once as long as a worker only asks for items it holds and
stores each answer with :meth:`finish` in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.store import Store
from sweepbench.store.engine import writer
from sweepbench.store.schema import bench_claims as claims
from sweepbench.store.workers import dead_workers

ENQUEUE_BATCH = 5_000
"""Rows inserted per statement when a run's items are queued."""
ANALYZE_AFTER = 1_000
"""Queuing at least this many items refreshes PostgreSQL's statistics of the queue."""


def _now() -> datetime:
    return datetime.now(UTC)


class ItemClaims:
    """The claimable items of one run."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._writer = writer(store.engine)
        self._after = -1
        """The position of the last item claimed here: the next search starts after it."""

    def enqueue(self, keys: Sequence[str]) -> int:
        """Queue the run's items still to answer, in order; keys already queued keep their
        place and their claim (so every worker of a run may call this). Returns how many
        were added."""
        with self._writer.begin() as conn:
            present = set(
                conn.scalars(sa.select(claims.c.key).where(claims.c.run_id == self.run_id))
            )
            start = conn.scalar(
                sa.select(sa.func.coalesce(sa.func.max(claims.c.position), -1)).where(
                    claims.c.run_id == self.run_id
                )
            )
            missing = [k for k in dict.fromkeys(keys) if k not in present]
            base = int(start if start is not None else -1) + 1
            rows = [
                {"run_id": self.run_id, "key": key, "position": base + i}
                for i, key in enumerate(missing)
            ]
            for at in range(0, len(rows), ENQUEUE_BATCH):
                conn.execute(claims.insert(), rows[at : at + ENQUEUE_BATCH])
        if len(missing) >= ANALYZE_AFTER and self.store.engine.dialect.name == "postgresql":
            # fresh statistics: planned for the empty table it was, every claim and every
            # answer's delete would scan the whole queue (measured: 10 × slower at 20,000)
            with self.store.engine.connect() as conn:
                conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                    f"ANALYZE {claims.name}"
                )
        return len(missing)

    def claim(self, worker: str, n: int) -> list[str]:
        """Up to ``n`` free items for ``worker``, in the plan's order (fewer, or none, when
        no more are free); the claims of dead workers are freed first when too few are.

        The search starts after the last item this object claimed: the queue's head is a
        run of answered (deleted) and claimed rows whose index entries PostgreSQL keeps until
        it vacuums, and scanning them on every claim would make a run's claims quadratic in
        its items. Only when too few are found there is the whole queue searched (items
        given back or freed from dead workers sit before the cursor)."""
        if n < 1:
            return []
        with self._writer.begin() as conn:
            found = self._free(conn, n, after=self._after)
            if len(found) < n:
                found = self._free(conn, n, after=None)
                if len(found) < n and self._free_dead(conn):
                    found = self._free(conn, n, after=None)
            keys = [key for key, _ in found]
            if keys:
                conn.execute(
                    claims.update()
                    .where(claims.c.run_id == self.run_id, claims.c.key.in_(keys))
                    .values(worker=worker, claimed_at=_now())
                )
                self._after = max(self._after, max(position for _, position in found))
        return keys

    def _free(self, conn: Connection, n: int, *, after: int | None) -> list[tuple[str, int]]:
        where = [claims.c.run_id == self.run_id, claims.c.worker.is_(None)]
        if after is not None:
            where.append(claims.c.position > after)
        query = (
            sa.select(claims.c.key, claims.c.position)
            .where(*where)
            .order_by(claims.c.position)
            .limit(n)
            .with_for_update(skip_locked=True)  # PostgreSQL; SQLite holds its write lock
        )
        return [(key, int(position)) for key, position in conn.execute(query)]

    def _free_dead(self, conn: Connection) -> int:
        """Free the claims of this run's dead workers; how many were freed."""
        holders = set(
            conn.scalars(
                sa.select(claims.c.worker)
                .where(claims.c.run_id == self.run_id, claims.c.worker.is_not(None))
                .distinct()
            )
        )
        dead = dead_workers(conn, holders)
        if not dead:
            return 0
        done = conn.execute(
            claims.update()
            .where(claims.c.run_id == self.run_id, claims.c.worker.in_(sorted(dead)))
            .values(worker=None, claimed_at=None)
        )
        return int(done.rowcount or 0)

    def finish(self, conn: Connection, keys: Iterable[str]) -> None:
        """Remove answered items, on the caller's connection: call it in the transaction that
        stores their answers."""
        listed = list(keys)
        if listed:
            conn.execute(
                claims.delete().where(claims.c.run_id == self.run_id, claims.c.key.in_(listed))
            )

    def release(self, worker: str, keys: Iterable[str] | None = None) -> int:
        """Give ``worker``'s unanswered claims (or only ``keys`` of them) back to the run."""
        condition = [claims.c.run_id == self.run_id, claims.c.worker == worker]
        if keys is not None:
            condition.append(claims.c.key.in_(list(keys)))
        with self._writer.begin() as conn:
            done = conn.execute(
                claims.update().where(*condition).values(worker=None, claimed_at=None)
            )
        given_back = int(done.rowcount or 0)
        if given_back:
            self._after = -1  # first in line again
        return given_back

    def counts(self) -> tuple[int, int]:
        """(free, claimed) items of the run still to answer."""
        query = (
            sa.select(claims.c.worker.is_(None), sa.func.count())
            .where(claims.c.run_id == self.run_id)
            .group_by(claims.c.worker.is_(None))
        )
        with self.store.engine.connect() as conn:
            found = {bool(free): int(count) for free, count in conn.execute(query)}
        return found.get(True, 0), found.get(False, 0)

    def clear(self) -> None:
        """Forget the run's queue (a new session queues what is left again)."""
        with self._writer.begin() as conn:
            conn.execute(claims.delete().where(claims.c.run_id == self.run_id))
