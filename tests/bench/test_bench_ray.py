"""The Ray executor (``bench run --executor ray --workers N``): the other workers of a shared run
are Ray actors on a local Ray cluster, on a scripted model that waits at a gate
(tests/bench/gate_helpers.py): each worker answers a few items, then waits holding the rest of
its claims until the test has killed one of them, so the kill always lands mid-run. Every item
is answered exactly once when a worker is SIGKILLed mid-run, the ledger's settled total is the
answers' costs plus the killed worker's unsaved calls at worst case, and a run limit the
workers together would overshoot is never exceeded. On PostgreSQL too (issue 18)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.store import Store
from sweepbench.store.workers import forget_workers
from tests.backends import PG_URL, reset_postgres
from tests.bench.gate_helpers import every_worker_holding, gated, kill_then_open
from tests.bench.helpers import set_prices
from tests.bench.scale_helpers import answered_exactly_once, run_account
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.helpers import run_cli

pytest.importorskip("ray")

ITEMS = 120
GATED = gated(guess("0.9"), "kill", after=6)
"""Each worker answers 6 items, then waits at the gate (the test opens it after the kill)."""
BACKENDS = ["sqlite", "postgres"] if PG_URL else ["sqlite"]


@pytest.fixture(params=BACKENDS)
def backend(
    request: pytest.FixtureRequest, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    if request.param == "postgres":
        assert PG_URL is not None
        reset_postgres(PG_URL)
        forget_workers()
        monkeypatch.setenv("SWEEPBENCH_DB", PG_URL)
    set_prices(isolated_home, {"scripted.guess": (1, 1)})  # priced: the calls hold leases
    return str(request.param)


def test_four_ray_workers_lose_nothing_when_one_is_killed(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    thread, failed, killed = kill_then_open(
        "kill", every_worker_holding(4, answered=24), "four workers holding claims, 24 answers"
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", GATED, "--executor", "ray",
        "--workers", "4", "--concurrency", "2", "--limit", "5", "--yes", "--json",
    )  # fmt: skip
    thread.join()
    assert not failed, failed
    report = json.loads(out)
    figures = {k: v for k, v in report.items() if not isinstance(v, dict | list)}
    assert code == 0, (err, figures)
    assert "3 more worker(s) (ray) joined run" in err
    assert killed, "no Ray worker was found to kill"
    assert "a Ray worker died" in err
    assert report["status"] == "completed" and report["scored"] == ITEMS
    answered_exactly_once(ITEMS)
    account = run_account(report["run_id"], killed)
    assert account.open_holds == 0  # the killed worker's lease was settled when the run ended
    # the settled total is what the answers cost, plus the killed worker's calls that never
    # reached the store (in flight, or finished since its last commit), at their worst case
    assert account.settled == account.answers + account.unaccounted
    assert account.unaccounted >= 0
    assert account.holders == 4, "the work was not shared between the Ray workers"
    with Store.open() as store:
        run = BenchStore(store).run(report["run_id"])
        assert run is not None and run.settings["claims"] is True


def test_a_run_limit_holds_for_every_ray_worker_together(
    backend: str, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    set_prices(isolated_home, {"scripted.guess": (1, 100)})  # the answers cost the most
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    limit = Decimal("0.02")  # a few dozen answers' worth: the 4 workers would overshoot it
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", guess("0.9", ttft="0.05"),
        "--executor", "ray", "--workers", "4", "--concurrency", "4", "--max-tokens", "16",
        "--limit", str(limit), "--yes", "--json",
    )  # fmt: skip
    report = json.loads(out) if out.strip() else {}
    assert code == 1, err  # paused at the limit
    assert report.get("status") == "paused_budget", (report, err)
    assert 0 < report["scored"] < ITEMS
    account = run_account(report["run_id"])
    assert account.open_holds == 0
    assert account.settled <= int(limit * 1_000_000)
    assert account.settled == account.answers  # no worker died: every charge is an answer's


def test_ray_address_needs_the_ray_executor(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "--workers", "2",
        "--ray-address", "127.0.0.1:1", "--yes",
    )  # fmt: skip
    assert code == 2 and "--ray-address needs --executor ray" in err


def test_a_cluster_of_several_machines_is_refused_with_a_sqlite_store(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver's connection check, in this process, with Ray's cluster calls replaced by a
    two-machine answer (a real second machine is not at hand)."""
    import ray

    from sweepbench.bench.ray_driver import connect_cluster
    from sweepbench.errors import UserError

    connected: list[str | None] = []
    stopped: list[bool] = []
    monkeypatch.setattr(ray, "init", lambda address=None, **_: connected.append(address))
    monkeypatch.setattr(ray, "nodes", lambda: [{"Alive": True}, {"Alive": True}])
    monkeypatch.setattr(ray, "shutdown", lambda: stopped.append(True))
    with pytest.raises(UserError, match="2 machines but the store is a SQLite file"):
        connect_cluster("10.0.0.5:6379", 3, sqlite_store=True)
    assert connected == ["10.0.0.5:6379"] and stopped == [True]
    assert connect_cluster("10.0.0.5:6379", 3, sqlite_store=False) is False  # PostgreSQL


def test_the_command_never_connects_to_ray_itself(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Ray's driver (its global state, threads and prints) lives in a process of its own:
    after a Ray run this process has not connected to Ray, and its stdout is one document."""
    import ray

    def connected_here(*_: object, **__: object) -> None:
        raise AssertionError("the command connected to Ray in its own process")

    monkeypatch.setattr(ray, "init", connected_here)
    path = marked_benchmark(tmp_path / "bench", 24)
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(path), "--model", guess("0.9"),
        "--executor", "ray", "--workers", "2", "--yes", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["scored"] == 24
    assert not ray.is_initialized()
