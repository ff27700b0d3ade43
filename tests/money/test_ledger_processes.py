"""Many OS processes on one ledger: sweeps admitting and settling, benchmark workers leasing and
settling in batches, one process killed with SIGKILL while it holds money. Afterwards nothing is
left open, and no ceiling (daily, the run's, a role's) was ever crossed.

Each process is ``tests/money/ledger_driver.py`` started with ``sys.executable``; the store is a
SQLite file, and PostgreSQL too when ``SWEEPBENCH_TEST_POSTGRES`` names a throwaway database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sweepbench.money.ceilings import micro_to_usd, usd_to_micro
from sweepbench.money.ledger import Ceilings, Ledger
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations, spend_totals
from sweepbench.store.workers import forget_workers
from tests.backends import BACKENDS, backend_url
from tests.money.ledger_driver import CALL_USAGE

DRIVER = Path(__file__).with_name("ledger_driver.py")
PROCESSES = 8
ROUNDS = 8
DAILY = Decimal("0.05")
BENCH_RUN = "bench-many"
RUN_LIMIT = Decimal("0.02")
JUDGE_LIMIT = Decimal("0.008")
PRICE_IN, PRICE_OUT = 3, 15
VICTIMS = {0: "sweep", 1: "bench", 2: "sweep"}
"""Which kind of process is killed in each repetition."""


@pytest.fixture(autouse=True)
def _stop_workers() -> Iterator[None]:
    yield
    forget_workers()


def wait_for(paths: list[Path], timeout_s: float, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(p.exists() for p in paths):
        exited = [p.args for p in procs if p.poll() is not None]
        if exited or time.monotonic() > deadline:
            missing = [p.name for p in paths if not p.exists()]
            pytest.fail(f"waiting for {missing}; exited early: {len(exited)} process(es)")
        time.sleep(0.005)


def start(cfgs: list[dict[str, Any]], env: dict[str, str]) -> list[subprocess.Popen[bytes]]:
    """Each process's output goes to ``output-<index>.txt`` (a pipe nobody reads can fill)."""
    procs = []
    for cfg in cfgs:
        with open(Path(cfg["dir"]) / f"output-{cfg['index']}.txt", "wb") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(DRIVER), json.dumps(cfg)],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    return procs


def output(work: Path, index: int) -> str:
    return (work / f"output-{index}.txt").read_text(errors="replace")


@pytest.mark.parametrize("repetition", sorted(VICTIMS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_many_processes_never_cross_a_ceiling(
    tmp_path: Path, isolated_home: Path, backend: str, repetition: int
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        f"[scripted.echo]\nprice_in = {PRICE_IN}\nprice_out = {PRICE_OUT}\n"
    )
    url = backend_url(backend, tmp_path / "ledger.db")
    ceilings = Ceilings(daily_usd=DAILY, calls_per_hour=10_000)
    with Store.open(url) as store:  # migrated, and the run's limits stored, before the race
        Ledger(store, ceilings).set_limits(BENCH_RUN, RUN_LIMIT, {"judge": JUDGE_LIMIT})
    work = tmp_path / "work"
    work.mkdir()
    victim_mode = VICTIMS[repetition]
    modes = ["sweep", "bench"] * (PROCESSES // 2)
    victim = modes.index(victim_mode)
    cfgs = [
        {
            "url": url,
            "dir": str(work),
            "index": i,
            "mode": mode,
            "seed": 1000 * repetition + i,
            "victim": i == victim,
            "victim_index": victim,
            "rounds": ROUNDS,
            "daily": str(DAILY),
            "bench_run": BENCH_RUN,
        }
        for i, mode in enumerate(modes)
    ]
    env = {**os.environ, "SWEEPBENCH_HOME": str(isolated_home)}
    env.pop("SWEEPBENCH_DB", None)
    procs = start(cfgs, env)
    try:
        wait_for([work / f"ready-{i}" for i in range(PROCESSES)], 60, procs)
        (work / "start").touch()  # all together
        holding_file = work / f"holding-{victim}.json"
        wait_for([holding_file], 60, procs)
        procs[victim].send_signal(signal.SIGKILL)
        assert procs[victim].wait(timeout=30) == -signal.SIGKILL
        (work / "killed").touch()
        for i, proc in enumerate(procs):
            proc.wait(timeout=60)
            if i != victim:
                assert proc.returncode == 0, output(work, i)
    finally:
        (work / "killed").touch()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    results = [
        json.loads((work / f"result-{i}.json").read_text()) for i in range(PROCESSES) if i != victim
    ]
    assert not (work / f"result-{victim}.json").exists()
    assert [r["errors"] for r in results] == [[]] * (PROCESSES - 1)
    holding = json.loads(holding_file.read_text())

    with Store.open(url) as store:
        ledger = Ledger(store, ceilings)
        with store.engine.connect() as conn:
            held = {
                r.id: r
                for r in conn.execute(
                    sa.select(spend_reservations).where(
                        spend_reservations.c.id.in_(holding["reservations"])
                    )
                )
            }
        # what the victim held was settled by a live process, before anything here ran
        assert {r.state for r in held.values()} == {"settled"}
        assert ledger.reap_dead() == 0
        if holding["kind"] == "lease":  # the calls in flight were never recorded: the worst case
            [lease] = held.values()
            assert lease.settled_micro == lease.reserved_micro
        else:  # the call that streamed at its reported usage, the others never started
            call_micro = usd_to_micro(
                Decimal(
                    CALL_USAGE["input_tokens"] * PRICE_IN + CALL_USAGE["output_tokens"] * PRICE_OUT
                )
                / 1_000_000,
                up=True,
            )
            assert {rid: r.settled_micro for rid, r in held.items()} == {
                rid: call_micro if rid == holding["call"] else 0 for rid in held
            }

        s = ledger.summary()
        run_spent = ledger.run_spent(BENCH_RUN)
        judge_spent = ledger.role_spent(BENCH_RUN, "judge")
        with store.engine.connect() as conn:
            everything = conn.execute(sa.select(spend_reservations)).all()
            totals = dict(
                conn.execute(sa.select(spend_totals.c.scope, spend_totals.c.settled_micro)).all()
            )
    states = {r.state for r in everything}
    assert states <= {"settled", "expired"}, states
    assert (s.reserved, s.open_reservations, s.overruns) == (0, 0, 0)
    assert not any(r.overrun for r in everything)
    assert all(r.settled_micro <= r.reserved_micro for r in everything)

    settled_today = sum(r.settled_micro for r in everything if r.day == s.day)
    bench = [r for r in everything if r.run_id == BENCH_RUN]
    judge = [r for r in bench if r.role == "judge"]
    assert usd_to_micro(s.spent_today, up=False) == settled_today
    assert totals["all"] == sum(r.settled_micro for r in everything)
    assert totals[f"run:{BENCH_RUN}"] == sum(r.settled_micro for r in bench)
    assert totals[f"run:{BENCH_RUN}:role:judge"] == sum(r.settled_micro for r in judge)
    # the ceilings held, in the end and at every moment a process looked
    assert s.spent_today <= DAILY
    assert run_spent <= RUN_LIMIT
    assert judge_spent <= JUDGE_LIMIT
    most = max(r["max_committed_micro"] for r in results)
    assert most <= usd_to_micro(DAILY, up=False)
    refusals: dict[str, int] = {}
    for r in results:
        for ceiling, n in r["refused"].items():
            refusals[ceiling] = refusals.get(ceiling, 0) + n
    assert sum(refusals.values()) > 0  # the ceilings were contended, not idle
    assert sum(r["admitted"] for r in results) > 0
    print(
        f"\n[{backend} #{repetition}, killed a {victim_mode} process] spent today "
        f"{s.spent_today} of {DAILY} (most committed seen {micro_to_usd(most)}); run "
        f"{run_spent} of {RUN_LIMIT}; judge {judge_spent} of {JUDGE_LIMIT}; {len(everything)} "
        f"reservations; admitted {sum(r['admitted'] for r in results)}; refused {refusals}"
    )
