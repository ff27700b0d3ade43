"""Rate limits shared by every worker of a run, counted in the store.

Ten worker processes each keeping ``--rpm 60`` alone would send 600 requests a minute. Here the
window is one table (``rate_events``): right before a request is sent (its concurrency slots
already taken, :meth:`~sweepbench.engine.ratelimit.WindowLimiter.acquire`), a worker, in one
write transaction (SQLite's write lock; a transaction-scoped advisory lock per model on
PostgreSQL), reads the clock, deletes the model's requests that no longer count, checks the
request against the rest by the same rule as the in-process limiter
(:func:`~sweepbench.engine.ratelimit.wait_needed`: a request counts for a whole minute, its end
included) and records it if it fits. So the limit holds across processes and machines for the
moments requests are sent, in any 60 s; it costs one short transaction per request, which only
a rate-limited model pays.

Moments are the sender's wall clock (seconds since the epoch): machines sharing a run are
assumed to keep time (NTP); a clock a second off shifts its requests by a second.
"""

from __future__ import annotations

import asyncio
import time
import zlib

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from sweepbench.engine.ratelimit import (
    MINUTE_S,
    Clock,
    RateLimits,
    Sleep,
    WindowLimiter,
    in_window,
    wait_needed,
)
from sweepbench.store.engine import writer
from sweepbench.store.schema import rate_events

_KEEP_S = MINUTE_S + 1.0
"""Rows older than this are deleted: they no longer count, whatever the float rounding."""
_PG_LOCK_SPACE = 0x5357_5254  # "SWRT": the first key of the two-key form, one lock per model
"""The two-key advisory locks live apart from the single-key ones (the ledger's, the runs'),
so no model's lock can be one of those."""


class StoreRateLimiter(WindowLimiter):
    """Waits until a request to one model fits its limits as counted in the store by every
    process. Same interface as :class:`~sweepbench.engine.ratelimit.RateLimiter`; this
    process's own tasks queue first, then the store decides."""

    def __init__(
        self,
        engine: Engine,
        scope: str,
        limits: RateLimits,
        *,
        clock: Clock = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        super().__init__(limits, clock=clock, sleep=sleep)
        self.scope = scope
        self._engine = writer(engine)
        self._pg_key = zlib.crc32(scope.encode()) - 2**31  # a signed 32-bit second key

    async def _attempt(self, tokens: int) -> float:
        return await asyncio.to_thread(self._take, tokens)

    def _take(self, tokens: int) -> float:
        """One transaction: forget the expired, check, record if it fits; the wait if not."""
        table = rate_events
        with self._engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:space, :k)"),
                    {"space": _PG_LOCK_SPACE, "k": self._pg_key},
                )
            now = self._clock()  # under the lock: no other worker records in between
            conn.execute(  # a second of slack: which rows count is decided below, exactly
                table.delete().where(table.c.scope == self.scope, table.c.at <= now - _KEEP_S)
            )
            rows = conn.execute(
                sa.select(table.c.at, table.c.tokens)
                .where(table.c.scope == self.scope)
                .order_by(table.c.at)
            ).all()
            events = [(float(at), int(n)) for at, n in rows if in_window(float(at), now)]
            wait = wait_needed(self.limits, events, now, tokens)
            if wait <= 0:
                conn.execute(table.insert().values(scope=self.scope, at=now, tokens=tokens))
            return wait
