"""States a multi-process test waits for, with the scripted model's gate (``gate=NAME``).

A shared run's workers answer on a gated scripted model, so nothing finishes until the test
opens the gate (``gate_after=K``: each process answers K calls first, then waits). The test
waits for the state it needs in the store — every worker holding claims, so many answers
stored — and only then opens the gate, stops the run or kills a worker. However loaded the
machine, the first worker cannot finish the run before the others have joined, and a stop
or a kill always lands while items are still pending. The timeouts are only there so that a
regression fails instead of hanging the suite; no duration is asserted.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import sqlalchemy as sa

from sweepbench.models.scripted import gate_path
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_claims
from sweepbench.store.schema import workers as workers_table
from sweepbench.store.workers import pid_alive

STATE_TIMEOUT_S = 300.0
"""How long a wanted state may take to come about on a loaded machine."""


def gated(model: str, gate: str, *, after: int = 0) -> str:
    """``model`` (a ``scripted/...`` id) waiting at ``gate`` after ``after`` calls a process."""
    extra = f"gate={gate}" + (f"&gate_after={after}" if after else "")
    return f"{model}{'&' if '?' in model else '?'}{extra}"


def open_gate(gate: str) -> None:
    path = gate_path(gate)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def holders() -> dict[str, int]:
    """Each live worker holding claims right now, with its pid (a fresh snapshot)."""
    with Store.open() as store, store.engine.connect() as conn:
        holding = set(
            conn.scalars(sa.select(bench_claims.c.worker).where(bench_claims.c.worker.is_not(None)))
        )
        rows = conn.execute(
            sa.select(workers_table.c.id, workers_table.c.pid).where(
                workers_table.c.stopped_at.is_(None)
            )
        ).all()
    return {row.id: int(row.pid) for row in rows if row.id in holding}


def answers() -> int:
    with Store.open() as store, store.engine.connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(bench_answers)) or 0)


def wait_until(
    condition: Callable[[], bool], what: str, *, alive: Callable[[], bool] = lambda: True
) -> None:
    """Wait until ``condition()`` holds; fail saying ``what`` was awaited when ``alive()``
    stops holding first (the process under test ended) or after :data:`STATE_TIMEOUT_S`."""
    deadline = time.monotonic() + STATE_TIMEOUT_S
    while not condition():
        assert alive(), f"the run ended before {what}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def every_worker_holding(workers: int, *, answered: int = 0) -> Callable[[], bool]:
    """The state "``workers`` workers hold claims and ``answered`` answers are stored"."""
    return lambda: len(holders()) >= workers and answers() >= answered


def in_background(task: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``task`` in a thread beside an in-process command; the list gets its failure."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            task()
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, failed


def open_when(
    gate: str, condition: Callable[[], bool], what: str
) -> tuple[threading.Thread, list[BaseException]]:
    """A thread that opens ``gate`` once ``condition()`` holds — and, so that the command
    beside it always ends, also when it never does (the failure is in the list)."""

    def task() -> None:
        try:
            wait_until(condition, what)
        finally:
            open_gate(gate)

    return in_background(task)


def kill_then_open(
    gate: str, condition: Callable[[], bool], what: str
) -> tuple[threading.Thread, list[BaseException], list[str]]:
    """A thread that, once ``condition()`` holds, SIGKILLs one worker other than this process
    that holds claims (its claims and leases stay behind), then opens ``gate``; the last list
    gets the killed worker's id."""
    killed: list[str] = []

    def task() -> None:
        try:
            wait_until(condition, what)
            others = [(w, pid) for w, pid in holders().items() if pid != os.getpid()]
            assert others, "no joined worker holding claims was found to kill"
            victim, pid = others[0]
            os.kill(pid, signal.SIGKILL)  # no finally, no release: its claims stay
            killed.append(victim)
            # the others may go on once it is dead as they see it (it exits as the OS gets to it)
            wait_until(lambda: not pid_alive(pid), f"worker {victim} to die")
        finally:
            open_gate(gate)

    thread, failed = in_background(task)
    return thread, failed, killed
