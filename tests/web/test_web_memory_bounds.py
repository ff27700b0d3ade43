"""A long-lived server does not keep every run it hosted (issue 26 §5): the Run a benchmark
host remembers the last ``KEEP_ENDED`` ended runs and the benchmark sweep registry the last
``KEEP_ENDED`` ended sweeps; older ones are read from the store, as runs of another process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.sweeps.plan import plan_bench_sweep
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.store import Store
from sweepbench.web import bench_run_host, bench_sweep_live
from sweepbench.web.bench_page import start_from_page
from sweepbench.web.bench_run_host import host_for
from sweepbench.web.bench_sweep_live import live_sweeps
from sweepbench.web.bench_sweep_view import sweep_view
from sweepbench.web.context import WebContext
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.web.test_bench_queue import _values


@pytest.fixture
def context() -> Iterator[WebContext]:
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store)
    web: WebContext = app.server.config["sweepbench.context"]
    try:
        yield web
    finally:
        web.close()
        store.close()


def test_the_host_forgets_the_oldest_ended_runs(
    context: WebContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_run_host, "KEEP_ENDED", 2)
    host = host_for(context)
    started: list[str] = []
    for preset in ("quick", "auto", "full"):
        shown, run_id = start_from_page(
            context, host, _values("scripted/guess", **{"bp-preset": preset}), "", True
        )
        assert run_id is not None, shown
        hosted = host.hosted(run_id)
        assert hosted is not None and hosted.done.wait(60)
        started.append(run_id)
    # the third start forgot nothing yet: two had ended when it was recorded
    assert [host.hosted(r) is not None for r in started] == [True, True, True]
    shown, fourth = start_from_page(
        context, host, _values("scripted/echo", **{"bp-preset": "quick"}), "", True
    )
    assert fourth is not None, shown
    assert host.hosted(started[0]) is None and host.hosted(started[1]) is not None
    # a forgotten run is still read from the store, as another process's run is
    progress = host.progress(started[0])
    assert progress is not None and not progress.running and progress.scored > 0


def _sweep(context: WebContext, benchmark: Path, models: list[str]) -> str:
    request = BenchRequest.from_values(
        {"benchmark": str(benchmark), "models": {"target": models[0]}, "confirmed": True}
    )
    plan = plan_bench_sweep(request, "model", models, context.store)
    live = live_sweeps(context).start(BenchSweepRunner(plan, context.store))
    live.future.result(60)
    return live.runner.sweep_id


def test_the_sweep_registry_forgets_the_oldest_ended_sweeps(
    context: WebContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_sweep_live, "KEEP_ENDED", 1)
    benchmark = marked_benchmark(tmp_path / "bench", 4)
    first = _sweep(context, benchmark, [guess("0.9"), guess("0.6")])
    second = _sweep(context, benchmark, [guess("0.8"), guess("0.5")])
    registry = live_sweeps(context)
    assert registry.get(second) is not None
    _sweep(context, benchmark, [guess("0.7"), guess("0.4")])
    assert registry.get(first) is None and registry.get(second) is not None
    view: Any = sweep_view(context, None, first)  # read back from the store
    assert not view.running and view.status.startswith(f"Stored sweep {first}")
