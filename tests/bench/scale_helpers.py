"""What the scale-out tests check after a shared run: every item answered exactly once, no
claim left, and the ledger's account of the run (issue 18)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy as sa

from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_claims, bench_spend, spend_reservations
from sweepbench.store.schema import workers as workers_table


@dataclass(frozen=True)
class RunAccount:
    """A run's money as the ledger and the answers tell it, in micro-dollars."""

    settled: int
    """Every settled reservation of the run."""
    answers: int
    """The spend lines of the stored answers (what the answered calls cost)."""
    open_holds: int
    """Reservations still held (0 once the run ended)."""
    holders: int
    """Workers that held money for the run."""
    unaccounted: int
    """What the killed workers' leases were settled at beyond what their answered calls
    cost (``used_micro``): their calls in flight or not yet saved, at worst case."""


def run_account(run_id: str, killed: Collection[str] = ()) -> RunAccount:
    res = spend_reservations
    with Store.open() as store, store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(
                res.c.worker, res.c.state, res.c.settled_micro, res.c.used_micro, res.c.kind
            ).where(res.c.run_id == run_id)
        ).all()
        answers = conn.scalar(
            sa.select(sa.func.coalesce(sa.func.sum(bench_spend.c.micro_usd), 0)).where(
                bench_spend.c.run_id == run_id
            )
        )
    unaccounted = sum(
        int(r.settled_micro or 0) - int(r.used_micro or 0)
        for r in rows
        if r.worker in killed and r.kind == "lease" and r.state != "reserved"
    )
    return RunAccount(
        settled=sum(int(r.settled_micro or 0) for r in rows if r.state != "reserved"),
        answers=int(answers or 0),
        open_holds=sum(1 for r in rows if r.state == "reserved"),
        holders=len({r.worker for r in rows}),
        unaccounted=unaccounted,
    )


def answered_exactly_once(items: int) -> None:
    with Store.open() as store, store.engine.connect() as conn:
        keys = list(conn.scalars(sa.select(bench_answers.c.key)))
        left = conn.scalar(sa.select(sa.func.count()).select_from(bench_claims))
    assert len(keys) == len(set(keys)) == items, (len(keys), len(set(keys)))  # none lost/twice
    assert left == 0


def killer(after_answers: int, *, timeout_s: float = 90) -> tuple[threading.Thread, list[str]]:
    """A thread that SIGKILLs one worker other than this process once ``after_answers`` are
    stored; the list receives the killed worker's id."""
    killed: list[str] = []

    def kill() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with Store.open() as store, store.engine.connect() as conn:  # a fresh snapshot
                done = conn.scalar(sa.select(sa.func.count()).select_from(bench_answers))
                others = conn.execute(
                    sa.select(workers_table.c.id, workers_table.c.pid).where(
                        workers_table.c.pid != os.getpid(), workers_table.c.stopped_at.is_(None)
                    )
                ).all()
            holders = _holding(others)
            if holders and (done or 0) >= after_answers:
                worker_id, pid = holders[0]
                os.kill(pid, signal.SIGKILL)  # no finally, no release: its claims stay
                killed.append(worker_id)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread, killed


def _holding(candidates: list[sa.Row[tuple[str, int]]]) -> list[tuple[str, int]]:
    """The candidates holding claims right now (a worker in the middle of its share)."""
    if not candidates:
        return []
    with Store.open() as store, store.engine.connect() as conn:
        holding = set(
            conn.scalars(sa.select(bench_claims.c.worker).where(bench_claims.c.worker.is_not(None)))
        )
    return [(c.id, c.pid) for c in candidates if c.id in holding]
