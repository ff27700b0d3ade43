"""Whether a stored benchmark run is being run, and by whom: the runs this process's own sessions
hold (:data:`ACTIVE_RUNS`), the workers a run records (the one that started or claimed it and
those that joined it), and when one of them counts as alive.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sweepbench.bench.storage_rows import RunRow
from sweepbench.store.workers import REUSED_PID_AFTER_S, pid_alive

STALE_AFTER_S = 60.0
"""A run marked running whose row was not touched for this long has no live worker (the
runner touches it every 15 s)."""


ACTIVE_RUNS: dict[str, str] = {}
"""Runs a session of this process is running now (run id → settings hash): a second session
in the same process (the Python API) must not continue them either."""
ACTIVE_RUNS_LOCK = threading.Lock()


def release_run(run_id: str) -> None:
    """This process's session of ``run_id`` has ended (see
    :meth:`.storage.BenchStore.claim_run`)."""
    with ACTIVE_RUNS_LOCK:
        ACTIVE_RUNS.pop(run_id, None)


def this_worker() -> dict[str, Any]:
    """Who is running a run: this host and process."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def run_is_live(run: RunRow, now: datetime | None = None) -> bool:
    """True when a run marked ``running`` still has a live worker in another process: on this
    host, its process exists; elsewhere, its row was touched in the last minute. A run shared
    between workers (``--workers``) is live while any of them is."""
    if run.status != "running":
        return False
    return any(worker_alive(run, w, now) for w in run_workers(run))


def run_workers(run: RunRow) -> list[dict[str, Any]]:
    """Every worker recorded for a run: the one that started or claimed it, and those that
    joined it (a run shared through item claims)."""
    main = run.settings.get("worker") or {}
    joined = [w for w in run.settings.get("joined") or [] if isinstance(w, dict)]
    return [main, *(w for w in joined if w != main)]


def worker_alive(run: RunRow, worker: Mapping[str, Any], now: datetime | None) -> bool:
    """Whether one of a run's workers is alive (see :func:`run_is_live`)."""
    pid = worker.get("pid")
    if worker.get("host") == socket.gethostname() and isinstance(pid, int):
        if pid == os.getpid():  # this process: live only while one of its sessions runs it
            with ACTIVE_RUNS_LOCK:
                return run.id in ACTIVE_RUNS
        age = ((now or datetime.now(UTC)) - run.updated_at).total_seconds()
        if age > REUSED_PID_AFTER_S:  # silent this long: the pid now belongs to another program
            return False
        return pid_alive(pid)
    age = ((now or datetime.now(UTC)) - run.updated_at).total_seconds()
    return age < STALE_AFTER_S
