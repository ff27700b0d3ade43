"""The benchmark paths that cross processes, run again with the store on PostgreSQL
(``SWEEPBENCH_TEST_POSTGRES``, which ``.ci/run`` provides; skipped without one): a run scored
and reported, a benchmark sweep killed with SIGKILL and resumed, and ``bench stop`` from
another process. The same test bodies as the SQLite ones, with ``SWEEPBENCH_DB`` pointed at
the cluster (its schema wiped first)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sweepbench.store.workers import forget_workers
from tests.backends import PG_URL, reset_postgres
from tests.bench import test_bench_stop, test_bench_sweep_kill, test_bench_workers
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(not PG_URL, reason="no PostgreSQL (SWEEPBENCH_TEST_POSTGRES)")


@pytest.fixture
def on_postgres(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store of this test (and of the processes it starts) on a wiped PostgreSQL."""
    assert PG_URL is not None
    reset_postgres(PG_URL)
    forget_workers()  # this process's worker row went with the wiped schema: register anew
    monkeypatch.setenv("SWEEPBENCH_DB", PG_URL)
    return PG_URL


def test_a_benchmark_run_is_scored_and_reported_on_postgres(
    on_postgres: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "--model", "scripted/guess",
        "--judge", "scripted/guess", "--yes", "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["scored"] == 40 and report["errors"] == 0
    code, out, _ = run_cli(monkeypatch, capsys, "db", "status", "--json")
    assert code == 0 and json.loads(out)["url"].startswith("postgresql")


CROSS_PROCESS = [
    test_bench_sweep_kill.test_kill_9_mid_sweep_then_resume_answers_every_item_of_every_setting_once,
    test_bench_stop.test_bench_stop_from_another_process_stops_the_run_and_the_same_command_continues_it,
    test_bench_workers.test_three_worker_processes_answer_every_item_exactly_once,
]
"""SQLite tests whose processes share the store, run again here on PostgreSQL."""


@pytest.mark.parametrize("body", CROSS_PROCESS, ids=lambda body: body.__module__.rsplit(".", 1)[-1])
def test_a_cross_process_path_on_postgres(
    body: Callable[..., None], on_postgres: str, isolated_home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    body(isolated_home, tmp_path, monkeypatch, capsys)
