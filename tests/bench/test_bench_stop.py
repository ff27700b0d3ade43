"""``sweepbench bench stop RUN`` and ``bench sweeps stop SWEEP`` from another process: the run (in
a child process, through the real entry point) sees the request recorded in the store, stops as
Ctrl-C does (answers kept, ``interrupted``), and the same command continues it to the end.

The model waits at a gate (tests/bench/gate_helpers.py) after a few answers a process, so the
stop is asked while items are provably still pending — however loaded the machine, the run
cannot finish first — and the gate is opened for the continuation."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.storage import STOP_REQUEST, BenchStore, stop_reason
from sweepbench.bench.storage_rows import RunRow
from sweepbench.bench.sweeps.store import SweepRow, SweepSettingRow, SweepStore
from sweepbench.engine.supervisor import Supervisor
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_claims
from sweepbench.web.bench_run_host import BenchRunHost
from sweepbench.web.bench_sweep_live import LiveSweeps
from tests.bench.gate_helpers import answers, every_worker_holding, gated, open_gate, wait_until
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
ITEMS = 300
KEPT = 10
"""Answers each process gives before its calls wait at the gate."""
GATED = gated(guess("0.9"), "stop", after=KEPT)


def _answers(store: Store) -> Counter[str]:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(bench_answers.c.run_id, bench_answers.c.key)).all()
    assert len(rows) == len(set(rows))
    return Counter(run for run, _ in rows)


def _child(*args: str) -> subprocess.Popen[bytes]:
    with Store.open() as store:  # the store exists (and is migrated) before the child opens it
        store.engine.dispose()
    return subprocess.Popen(
        [sys.executable, "-c", "from sweepbench.cli import main; main()", *args],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip


def _alive(child: subprocess.Popen[bytes]) -> bool:
    return child.poll() is None


def test_bench_stop_from_another_process_stops_the_run_and_the_same_command_continues_it(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    args = ["bench", "run", str(path), "--model", GATED, "--concurrency", "2", "--yes"]
    child = _child(*args)
    try:
        # KEPT answers stored, the next calls waiting at the gate: items are still pending
        wait_until(lambda: answers() >= KEPT, f"{KEPT} answers", alive=lambda: _alive(child))
        with Store.open() as store:
            [run] = BenchStore(store).runs()
        code, out, err = run_cli(monkeypatch, capsys, "bench", "stop", run.id, "--wait")
        assert code == 0, err  # --wait returned: the run said it stopped
        assert f"to stop run {run.id}" in out and f"process {child.pid} on" in out
        assert "stopped early" in out and "bench stop" in out
        assert child.wait(timeout=120) == 1  # an interrupted run exits 1, as after Ctrl-C
    finally:
        if child.poll() is None:
            child.kill()
    with Store.open() as store:
        stopped = BenchStore(store).run(run.id)
        kept = _answers(store)[run.id]
    assert stopped is not None and stopped.status == "interrupted"
    assert stopped.reason is not None
    assert stopped.reason.startswith(f"stopped by `bench stop` from process {os.getpid()} on ")
    assert kept == KEPT  # the finished answers are kept, the waiting calls cancelled

    # a finished or stopped run is not running: exit 1, saying its status
    code, _out, err = run_cli(monkeypatch, capsys, "bench", "stop", run.id)
    assert code == 1 and "not running" in err and "stopped early" in err

    # the same command continues it: the old request does not stop the new session
    open_gate("stop")
    code, _out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    with Store.open() as store:
        done = BenchStore(store).run(run.id)
        assert _answers(store) == Counter({run.id: ITEMS})  # every item answered once
    assert done is not None and done.status == "completed"
    assert STOP_REQUEST not in done.settings

    code, _out, err = run_cli(monkeypatch, capsys, "bench", "stop", run.id)
    assert code == 1 and "finished" in err


def test_bench_stop_of_an_unknown_run_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run_cli(monkeypatch, capsys, "bench", "stop", "no-such-run")
    assert code == 2 and "no benchmark run" in err
    code, _out, err = run_cli(monkeypatch, capsys, "bench", "sweeps", "stop", "no-such-sweep")
    assert code == 2 and "no benchmark sweep" in err


def test_bench_sweeps_stop_stops_every_setting_of_a_sweep_run_elsewhere(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    # one gate for the sweep's process: 2 × KEPT calls pass, then every call waits, holding
    # the provider's slots (which the settings share: one of them may have answered none)
    passes = 2 * KEPT
    models = [gated(guess(p), "sweep", after=passes) for p in ("0.9", "0.6")]
    args = ["bench", "sweep", str(path), "--axis", "model", "--values", ",".join(models),
            "--yes", "--concurrency", "2"]  # fmt: skip
    child = _child(*args)

    def passed() -> bool:
        with Store.open() as store:
            counts = _answers(store)
        return sum(counts.values()) == passes

    try:
        wait_until(passed, f"{passes} answers", alive=lambda: _alive(child))
        with Store.open() as store:
            [sweep] = SweepStore(store).sweeps()
            running = SweepStore(store).runs(sweep)
            assert len(running) == 2 and all(
                r is not None and r.status == "running" for r in running
            )
        code, out, err = run_cli(monkeypatch, capsys, "bench", "sweeps", "stop", sweep.id, "--wait")
        assert code == 0, err
        assert out.count("Asked process") == 2 and out.count("stopped early") == 2
        child.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    with Store.open() as store:
        runs = SweepStore(store).runs(sweep)
        kept = _answers(store)
    assert all(r is not None and r.status == "interrupted" for r in runs)
    assert all(
        r is not None and (r.reason or "").startswith("stopped by `bench stop`") for r in runs
    )
    assert sum(kept.values()) == passes  # the answers kept, the waiting calls cancelled
    code, _out, err = run_cli(monkeypatch, capsys, "bench", "sweeps", "stop", sweep.id)
    assert code == 1 and "not running" in err


def _running_elsewhere(store: Store, run_id: str, config_hash: str) -> None:
    """A run row marked running by a live worker on another machine (touched just now)."""
    now = datetime.now(UTC)
    BenchStore(store).create_run(
        RunRow(run_id, config_hash, "b", "m", None, "running", None, now, now, 3,
               {"worker": {"host": "elsewhere.example", "pid": 1}})
    )  # fmt: skip


def test_a_page_stop_of_a_run_or_sweep_live_elsewhere_records_the_request() -> None:
    supervisor = Supervisor()
    store = Store.open()
    try:
        _running_elsewhere(store, "r-live", "h1")
        host = BenchRunHost(store, supervisor)
        assert host.stop("r-live")  # not hosted here, live elsewhere: asked through the store
        request = BenchStore(store).stop_request("r-live")
        assert request is not None and request["pid"] == os.getpid()
        assert stop_reason(request).startswith("stopped by a web page's Stop from process ")
        assert not host.stop("no-such-run")

        _running_elsewhere(store, "r-a", "ha")
        _running_elsewhere(store, "r-b", "hb")
        now = datetime.now(UTC)
        settings = tuple(
            SweepSettingRow(label=run, value=run, config_hash=h, run_id=run, model="m",
                            effort=None, max_tokens=10, prompt_version="v1")
            for run, h in (("r-a", "ha"), ("r-b", "hb"))
        )  # fmt: skip
        SweepStore(store).save(
            SweepRow("sw", "hash", "b", "model", now, now, {}, settings, {})
        )  # fmt: skip
        sweeps = LiveSweeps(supervisor, store)
        assert sweeps.stop("sw")
        assert all(BenchStore(store).stop_request(r) is not None for r in ("r-a", "r-b"))
        BenchStore(store).set_status("r-a", "interrupted")
        BenchStore(store).set_status("r-b", "completed")
        assert not sweeps.stop("sw")  # nothing of it is running any more
        assert not LiveSweeps(supervisor).stop("sw")  # no store: nothing to ask
    finally:
        supervisor.close()
        store.close()


EXECUTORS = ["local", "ray"] if importlib.util.find_spec("ray") else ["local"]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_bench_stop_reaches_every_worker_of_a_shared_run(
    executor: str, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    args = ["bench", "run", str(path), "--model", GATED, "--concurrency", "2", "--workers", "3",
            "--executor", executor, "--yes"]  # fmt: skip
    child = _child(*args)
    try:
        # every worker has answered its KEPT items and waits at the gate holding claims
        wait_until(
            every_worker_holding(3, answered=3 * KEPT),
            f"three workers holding claims, {3 * KEPT} answers",
            alive=lambda: _alive(child),
        )
        with Store.open() as store:
            [run] = BenchStore(store).runs()
        code, _out, err = run_cli(monkeypatch, capsys, "bench", "stop", run.id, "--wait")
        assert code == 0, err
        # the first worker ends only once every other worker has: all of them stopped
        assert child.wait(timeout=120) == 1
    finally:
        if child.poll() is None:
            child.kill()
    with Store.open() as store, store.engine.connect() as conn:
        stopped = BenchStore(store).run(run.id)
        held = conn.scalar(
            sa.select(sa.func.count())
            .select_from(bench_claims)
            .where(bench_claims.c.worker.is_not(None))
        )
        kept = _answers(store)[run.id]
    assert stopped is not None and stopped.status == "interrupted"
    assert held == 0  # every worker gave its unanswered claims back
    assert kept == 3 * KEPT  # each worker's answers kept, its waiting calls cancelled

    open_gate("stop")
    code, _out, err = run_cli(monkeypatch, capsys, *args)  # the same command continues it
    assert code == 0, err
    with Store.open() as store:
        assert _answers(store) == Counter({run.id: ITEMS})  # every item answered once
