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

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Generic, TypeVar

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
CLAIM_AHEAD_S = 0.25
"""A worker claims about this much of its own work at a time (:class:`ClaimSizes`)."""
CLAIM_MOST = 512
"""The most items one claim takes."""
PACE_WINDOW_S = 1.0
"""A worker's pace is measured over about this long (:class:`ClaimSizes`)."""
PACE_ITEMS = 4
"""A worker's pace is known once it has started this many of its least batches."""

T = TypeVar("T")


def _now() -> datetime:
    return datetime.now(UTC)


class ClaimSizes:
    """How many items a worker claims next: about :data:`CLAIM_AHEAD_S` of its own pace, never
    fewer than ``least`` (the first claims' size) nor more than :data:`CLAIM_MOST`, and at
    most twice the last. The pace is the items it started over the last :data:`PACE_WINDOW_S`
    (or since its first claim), known once it has started :data:`PACE_ITEMS` × ``least``
    items: a worker that answers a few items at once and then waits is not taken for a fast
    one.

    Every claim is a write transaction, and on SQLite one worker's transaction waits for the
    other's (its whole event loop with it): at a fixed 16, two workers of an instant model
    spent more time claiming than answering (issue 30: 1.86 × one worker's time per item). A
    slow model keeps the batch at ``least``, so the last items are still shared out evenly;
    a fast one claims a quarter second of work at a time, which is all a worker that dies or
    stops can leave behind (its claims are freed and claimed again)."""

    def __init__(self, least: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.least = max(1, least)
        self._clock = clock
        self._marks: deque[tuple[float, int]] = deque()
        """(when, items started by then) at each claim, over the pace window."""
        self._count = 0
        self._last = self.least

    def started(self) -> None:
        """The worker started one of its claimed items."""
        self._count += 1

    def next(self) -> int:
        """The size of the claim to make now."""
        if not self._marks:
            return self.least
        at, count = self._marks[0]
        items = self._count - count
        if items < PACE_ITEMS * self.least:  # too few yet to know the pace
            return self.least
        pace = items / max(self._clock() - at, 1e-3)  # items a second
        wanted = int(pace * CLAIM_AHEAD_S)
        return max(self.least, min(wanted, 2 * self._last, CLAIM_MOST))

    def took(self, asked: int) -> None:
        """A claim of ``asked`` items was made (now)."""
        now = self._clock()
        self._marks.append((now, self._count))
        while len(self._marks) > 1 and now - self._marks[1][0] >= PACE_WINDOW_S:
            self._marks.popleft()  # the oldest kept is the newest at least a window old
        self._last = max(asked, 1)


class ClaimedItems(Generic[T]):
    """One worker's claimed items not started yet, and how it claims more.

    :meth:`next` hands out the next one, claiming a batch in its own transaction when none is
    left. :meth:`top_up` claims more in a transaction the worker is writing anyway (the group
    commit that stores its answers), when a fast worker has fewer than a batch left: the write
    lock is taken once for both, so it seldom waits for a claim of its own. Items
    claimed there are handed out only once that transaction has committed (:meth:`committed`;
    :meth:`rolled_back` forgets them), so an item is never answered without its claim."""

    def __init__(self, claims: ItemClaims, worker: str, items: Mapping[str, T], least: int) -> None:
        self.claims = claims
        self.worker = worker
        self._items = items
        self._ready: deque[T] = deque()
        self._incoming: list[T] = []
        self._incoming_asked = 0
        self.sizes = ClaimSizes(least)
        self._dry = False
        """The last claim found fewer free items than it asked for: top-ups wait for the
        next claim of :meth:`next` (which also frees dead workers' claims)."""

    @property
    def pending(self) -> int:
        """Claimed items not handed out yet."""
        return len(self._ready)

    def next(self) -> T | None:
        """The next claimed item to answer; None when the run has none left to claim."""
        if not self._ready:
            asked = self.sizes.next()
            with self.claims.writer.begin() as conn:
                got = self._claim_in(conn, asked)
            self.sizes.took(asked)
            self._ready.extend(got)
        if not self._ready:
            return None
        self.sizes.started()
        return self._ready.popleft()

    def top_up(self, conn: Connection) -> None:
        """In the caller's write transaction: claim a batch more when fewer are left and the
        worker's pace asks for more than the least batch (a slow worker claims only when it
        has none left, as many as before, so the last items are shared out evenly)."""
        if self._dry or self._incoming:
            return
        wanted = self.sizes.next()
        if wanted > self.sizes.least and len(self._ready) < wanted:
            self._incoming = self._claim_in(conn, wanted)
            self._incoming_asked = wanted

    def committed(self) -> None:
        """The transaction of :meth:`top_up` committed: its items may be answered."""
        if self._incoming_asked:
            self.sizes.took(self._incoming_asked)
        self._ready.extend(self._incoming)
        self._incoming, self._incoming_asked = [], 0

    def rolled_back(self) -> None:
        """The transaction of :meth:`top_up` failed: its claims were never made."""
        if self._incoming_asked:
            self.claims.rewind()
        self._incoming, self._incoming_asked = [], 0

    def _claim_in(self, conn: Connection, asked: int) -> list[T]:
        keys = self.claims.claim_in(conn, self.worker, asked)
        self._dry = len(keys) < asked
        unknown = [k for k in keys if k not in self._items]
        if unknown:  # queued by a worker with another plan: give them back
            self.claims.release_in(conn, self.worker, unknown)
        return [self._items[k] for k in keys if k in self._items]


class ItemClaims:
    """The claimable items of one run."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.writer = writer(store.engine)
        """The store's engine whose transactions take the write lock up front."""
        self._after = -1
        """The position of the last item claimed here: the next search starts after it."""

    def enqueue(self, keys: Sequence[str]) -> int:
        """Queue the run's items still to answer, in order; keys already queued keep their
        place and their claim (so every worker of a run may call this). Returns how many
        were added."""
        with self.writer.begin() as conn:
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
        with self.writer.begin() as conn:
            return self.claim_in(conn, worker, n)

    def claim_in(self, conn: Connection, worker: str, n: int) -> list[str]:
        """:meth:`claim` in the caller's write transaction (taken with :attr:`writer`): the
        claims hold once it commits."""
        if n < 1:
            return []
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

    def rewind(self) -> None:
        """Search from the queue's head next time: a claim made in a transaction that rolled
        back moved the search past items it never claimed."""
        self._after = -1

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
        with self.writer.begin() as conn:
            return self.release_in(conn, worker, keys)

    def release_in(self, conn: Connection, worker: str, keys: Iterable[str] | None = None) -> int:
        """:meth:`release` in the caller's write transaction."""
        condition = [claims.c.run_id == self.run_id, claims.c.worker == worker]
        if keys is not None:
            condition.append(claims.c.key.in_(list(keys)))
        done = conn.execute(claims.update().where(*condition).values(worker=None, claimed_at=None))
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
        with self.writer.begin() as conn:
            conn.execute(claims.delete().where(claims.c.run_id == self.run_id))
