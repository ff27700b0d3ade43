"""Closing the app (Ctrl-C on ``sweepbench serve``) stops what it hosts on its benchmark loop,
keeping every finished answer, instead of leaving runs to die with the process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.sweeps.plan import plan_bench_sweep
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers
from sweepbench.web.app import create_app
from sweepbench.web.bench_sweep_live import live_sweeps
from sweepbench.web.context import WebContext
from tests.bench.sweep_helpers import guess, marked_benchmark


def test_closing_the_app_stops_a_hosted_benchmark_sweep_and_keeps_its_answers(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 400)
    store = Store.open()
    app = create_app(store)
    context: WebContext = app.server.config["sweepbench.context"]
    request = BenchRequest.from_values(
        {"benchmark": str(path), "models": {"target": guess("0.9")}, "confirmed": True}
    )
    gate = {"gate": "close", "gate_after": "20"}  # 20 calls pass, the rest wait: never all 800
    models = [guess("0.9", ttft="0.02", **gate), guess("0.6", ttft="0.02", **gate)]
    plan = plan_bench_sweep(request, "model", models, store)
    live = live_sweeps(context).start(BenchSweepRunner(plan, store, concurrency=2))
    deadline = time.monotonic() + 60

    def answers() -> int:
        with store.engine.connect() as conn:  # a fresh read each time (no stale snapshot)
            return int(conn.scalar(sa.select(sa.func.count()).select_from(bench_answers)) or 0)

    while answers() < 10:
        assert time.monotonic() < deadline and not live.done
        time.sleep(0.05)
    context.close(timeout=20)
    assert live.done and live.problem() is None
    outcome = live.outcome()
    assert outcome is not None and outcome.status == "interrupted"
    runs = BenchStore(store)
    answered = [len(runs.statuses(o.run_id)) for o in outcome.outcomes if o is not None]
    assert all(0 < count < 400 for count in answered)
    store.close()


def test_closing_the_app_stops_its_hosted_runs_and_empties_its_queue(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.web.bench_page import start_from_page
    from sweepbench.web.bench_run_host import host_for
    from tests.web.test_bench_queue import _values

    monkeypatch.setenv("SWEEPBENCH_MAX_HOSTED_RUNS", "1")
    store = Store.open()
    app = create_app(store)
    context: WebContext = app.server.config["sweepbench.context"]
    host = host_for(context)
    model = "scripted/guess?ttft=0.2&gate=close&gate_after=3"  # 3 answers, then every call waits
    _, first = start_from_page(context, host, _values(model), "", True)
    _, second = start_from_page(context, host, _values(model, **{"bp-preset": "quick"}), "", True)
    assert first is not None and second is not None and host.ahead(second) == 1
    runs = BenchStore(store)
    deadline = time.monotonic() + 60
    while not runs.statuses(first):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    context.close(timeout=20)
    assert host.live() == []
    run = runs.run(first)
    assert run is not None and run.status == "interrupted" and 0 < len(runs.statuses(first)) <= 3
    assert runs.run(second) is None  # the queued one never started: nothing recorded
    store.close()


def test_the_app_hosts_its_sweeps_and_runs_on_one_loop_and_closing_ends_it(
    isolated_home: Path,
) -> None:
    import threading

    def loops() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("sweepbench-web")}

    before = loops()
    store = Store.open()
    app = create_app(store)
    context: WebContext = app.server.config["sweepbench.context"]
    started = loops() - before
    assert len(started) == 1  # the sweep runner and the benchmark host share it
    assert context.runner._supervisor is context.supervisor
    context.close(timeout=20)
    assert not any(t.is_alive() for t in started)
    store.close()
