"""Which processes are making model calls, and which of them are dead.

Every process that holds money in the ledger or runs a sweep registers itself once per store as a
*worker* (``pid@host`` plus a random suffix, so a reused pid is a new worker) and touches its row
every :data:`HEARTBEAT_S` seconds from a daemon thread. Another process decides a worker is dead
when its row says it stopped, when it is on this host and its pid is gone, or when its heartbeat
has been silent for :data:`DEAD_AFTER_S` seconds. What a dead worker held — open reservations, a
sweep marked running — is then settled or marked interrupted at once, not an hour later.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from sweepbench.store.engine import writer
from sweepbench.store.schema import workers

log = logging.getLogger(__name__)

HEARTBEAT_S = 5.0
"""How often a live worker touches its row."""
DEAD_AFTER_S = 60.0
"""A worker on another host whose heartbeat is this old is dead."""
REUSED_PID_AFTER_S = 600.0
"""On this host a worker's pid is checked at once; but one whose heartbeat has been silent this
long is dead even if its pid exists (it was given to another program since)."""


@dataclass(frozen=True)
class WorkerRow:
    """A registered worker as stored."""

    id: str
    host: str
    pid: int
    heartbeat_at: datetime
    stopped_at: datetime | None


def _now() -> datetime:
    return datetime.now(UTC)


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists on this host."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    except OSError:
        return False
    return not _exited(pid)


def _exited(pid: int) -> bool:
    """True when ``pid`` has exited but its parent has not reaped it yet (a zombie, state ``Z``
    or ``X`` in ``/proc/PID/stat``): ``kill(pid, 0)`` still succeeds, yet it can settle nothing.
    A killed Ray worker stays so until the raylet gets to it, which on a busy machine can be
    longer than its run's other workers take to finish. Where ``/proc`` is absent: False."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    state = text.rpartition(b")")[2].split(maxsplit=1)[:1]  # the name may hold ")" and spaces
    return state in ([b"Z"], [b"X"])


def is_dead(row: WorkerRow, now: datetime | None = None) -> bool:
    """Whether a worker can no longer settle what it holds."""
    if row.stopped_at is not None:
        return True
    age = ((now or _now()) - row.heartbeat_at).total_seconds()
    if row.host == socket.gethostname():
        return not pid_alive(row.pid) or age > REUSED_PID_AFTER_S
    return age > DEAD_AFTER_S


def dead_workers(conn: Connection, ids: set[str], now: datetime | None = None) -> set[str]:
    """Of ``ids``, those that are dead (an id with no row is dead too: it was never ours)."""
    ids = ids - _own_ids()  # this process is alive, whatever happened to its row
    if not ids:
        return set()
    rows = conn.execute(sa.select(workers).where(workers.c.id.in_(sorted(ids)))).all()
    found = {r.id: WorkerRow(r.id, r.host, r.pid, r.heartbeat_at, r.stopped_at) for r in rows}
    return {i for i in ids if i not in found or is_dead(found[i], now)}


class _Registration:
    def __init__(self, engine: Engine) -> None:
        self.engine = writer(engine)
        self.id = f"{os.getpid()}@{socket.gethostname()}:{uuid.uuid4().hex[:8]}"[:120]
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(
                workers.insert().values(
                    id=self.id, host=socket.gethostname(), pid=os.getpid(),
                    started_at=now, heartbeat_at=now, stopped_at=None,
                )
            )  # fmt: skip
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="sweepbench-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        workers.update().where(workers.c.id == self.id).values(heartbeat_at=_now())
                    )
            except Exception:  # a busy or closed database: the next beat tries again
                log.debug("worker heartbeat failed", exc_info=True)

    def stop(self) -> None:
        self._stop.set()
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    workers.update().where(workers.c.id == self.id).values(stopped_at=_now())
                )
        except Exception:
            log.debug("could not mark worker %s stopped", self.id, exc_info=True)


_registrations: dict[str, _Registration] = {}
_lock = threading.Lock()


def this_worker(engine: Engine) -> str:
    """This process's worker id in the database behind ``engine`` (registered on first use;
    the heartbeat thread runs until the process exits)."""
    key = f"{os.getpid()}:{engine.url}"
    with _lock:
        reg = _registrations.get(key)
        if reg is None:
            reg = _registrations[key] = _Registration(engine)
        return reg.id


def _own_ids() -> set[str]:
    with _lock:
        return {reg.id for key, reg in _registrations.items() if key.startswith(f"{os.getpid()}:")}


def forget_workers() -> None:
    """Mark this process's workers stopped (at exit, and in tests that close a store)."""
    with _lock:
        for reg in _registrations.values():
            reg.stop()
        _registrations.clear()


atexit.register(forget_workers)
