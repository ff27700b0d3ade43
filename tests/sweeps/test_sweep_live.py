"""Sweeps run in the background (the web app's runner): admission in the caller's thread, live
state from the subscription, Stop all from another thread, the stored document afterwards."""

from __future__ import annotations

import base64
import itertools
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime

import pytest

from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.sweeps.history import load_sweep
from sweepbench.sweeps.live import SweepRunner, stored_view
from sweepbench.sweeps.plan import Plan, build_plan


@pytest.fixture
def runner() -> Iterator[SweepRunner]:
    store = Store.open()
    runner = SweepRunner(store)
    try:
        yield runner
    finally:
        runner.close()
        store.close()


def _drawing(*models: str) -> Plan:
    return build_plan("a payments service", "model", list(models), kind="excalidraw")


def test_a_refused_plan_raises_at_start_and_runs_nothing(runner: SweepRunner) -> None:
    with pytest.raises(UserError, match="two models"):
        runner.start(_drawing("scripted/sketch?tps=0"))
    assert runner.recent() == []


def test_live_view_grows_then_matches_the_stored_document(runner: SweepRunner) -> None:
    live = runner.start(_drawing("scripted/sketch?tps=400", "scripted/sketch?tps=300"))
    seen: list[int] = []
    version = -1
    while not live.done:
        version = live.wait(version, 5.0)
        seen.append(len(live.view()["cells"][0]["items"]))
    assert seen[-1] == 23 and min(seen) < 23  # it grew while the model wrote
    assert all(a <= b for a, b in itertools.pairwise(seen))
    final = live.view()
    assert final["status"] == "done" and not final["live"]
    assert all(s["metrics"]["elements"] == 23 for s in final["cells"])
    stored = stored_view(load_sweep(runner.store, live.id))
    assert [len(s["items"]) for s in stored["cells"]] == [23, 23]
    assert stored["status"] == "done" and not stored["live"]


def test_stop_from_another_thread_stops_every_cell_and_keeps_the_elements(
    runner: SweepRunner,
) -> None:
    live = runner.start(_drawing("scripted/sketch?tps=80", "scripted/sketch?tps=70"))
    deadline = time.monotonic() + 120  # a wait for a state, scaled for a loaded machine
    while len(live.view()["cells"][0]["items"]) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runner.stop(live.id) == 2
    assert live.wait_done(120.0)
    view = live.view()
    assert view["status"] == "stopped"
    assert {s["status"] for s in view["cells"]} == {"stopped"}
    assert len(view["cells"][0]["items"]) >= 2  # what was drawn is kept
    assert runner.stop(live.id) == 0


def test_the_glb_is_served_live_and_from_the_store(runner: SweepRunner) -> None:
    plan = build_plan(
        "a brazier",
        "model",
        ["scripted/sculpt?tps=0", "scripted/sculpt?tps=1000"],
        kind="sculpture",
    )
    live = runner.start(plan)
    assert live.wait_done(120.0)  # a wait for a state; the limit is only a fail-safe
    glb = runner.file(live.id, 0, "glb")
    assert glb is not None and glb[:4] == b"glTF"
    assert runner.file(live.id, 7, "glb") is None
    document = load_sweep(runner.store, live.id)
    assert base64.b64decode(document["cells"][1]["files"]["glb"])[:4] == b"glTF"


def _free_port() -> int:
    with socket.socket() as probe:  # serve refuses port 0: ask the system for a free one
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sweepbench_serve_prints_its_url_and_serves_the_page() -> None:
    port = str(_free_port())
    process = subprocess.Popen(
        [sys.executable, "-c", "from sweepbench.cli import main; main()", "serve", "--port", port],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "http://127.0.0.1:" in line
        url = line.split("http://", 1)[1].split("/", 1)[0]
        with urllib.request.urlopen(f"http://{url}/_dash-layout", timeout=10) as response:
            assert response.status == 200 and json.load(response)
    finally:
        process.terminate()
        process.wait(10)


def test_a_stored_running_sweep_without_a_worker_ends_as_failed(runner: SweepRunner) -> None:
    from datetime import timedelta

    live = runner.start(_drawing("scripted/sketch?tps=0", "scripted/sketch?tps=5000"))
    assert live.wait_done(120.0)
    document = load_sweep(runner.store, live.id)
    document["status"] = "running"  # as a crashed process leaves it
    created = datetime.fromisoformat(document["created"])
    assert stored_view(document, now=created + timedelta(minutes=5))["live"]
    late = stored_view(document, now=created + timedelta(hours=2))
    assert not late["live"] and late["error"] == "worker stopped unexpectedly"


def test_one_visitor_of_a_shared_server_runs_a_few_sweeps_at_once(runner: SweepRunner) -> None:
    slow = ["scripted/lorem?words=2000&tps=20", "scripted/lorem?words=2000&tps=21"]
    plans = [build_plan(f"topic {i}", "model", slow) for i in range(4)]
    started = [runner.start(p, visitor="203.0.113.7", per_visitor=2) for p in plans[:2]]
    with pytest.raises(UserError, match="already have 2 sweep"):
        runner.start(plans[2], visitor="203.0.113.7", per_visitor=2)
    other = runner.start(plans[2], visitor="198.51.100.1", per_visitor=2)  # another visitor
    local = runner.start(plans[3])  # no visitor (loopback, the CLI): no such limit
    assert len(runner.recent()) == 4  # the refused one never started, nor was admitted
    runner.stop(started[0].id)
    assert started[0].wait_done(120.0)
    again = runner.start(plans[2], visitor="203.0.113.7", per_visitor=2)  # a slot came free
    for live in (*started, other, local, again):
        runner.stop(live.id)


def test_an_oversized_free_model_is_refused_before_it_runs(runner: SweepRunner) -> None:
    with pytest.raises(UserError, match="out of range"):
        runner.start(build_plan("x", "model", ["scripted/lorem?words=300000000", "scripted/echo"]))
    assert runner.recent() == []
