"""kill -9 in the middle of a benchmark sweep, then the same command again: every item of every
setting is answered exactly once, with exactly one cost line, and the sweep is the same one.

The sweep runs in a child process (``sweepbench bench sweep`` through the real entry point) so
that SIGKILL hits it for real: no ``finally``, no flush, no status update. Its calls wait at a
scripted gate after 200, so the kill lands while items are provably pending however loaded the
machine; the gate is opened for the second command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.sweeps.store import SweepStore
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_spend
from tests.bench.gate_helpers import open_gate
from tests.bench.helpers import set_prices
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")

REPO = Path(__file__).resolve().parents[2]
ITEMS = 600
GATE = {"gate": "sweep-kill", "gate_after": "200"}  # the child answers 200, then waits
MODELS = [guess("0.9", ttft="0.003", **GATE), guess("0.6", ttft="0.003", **GATE)]
START_TIMEOUT_S = 120.0


def _answers(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(bench_answers)) or 0)


def test_kill_9_mid_sweep_then_resume_answers_every_item_of_every_setting_once(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    set_prices(isolated_home, {"scripted.guess": (1, 1)})  # priced: every answer has a cost line
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    args = ["bench", "sweep", str(path), "--axis", "model", "--values", ",".join(MODELS),
            "--yes", "--concurrency", "4"]  # fmt: skip
    with Store.open() as store:
        store.engine.dispose()
    child = subprocess.Popen(
        [sys.executable, "-c", "from sweepbench.cli import main; main()", *args],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        with Store.open() as store:
            while _answers(store) < 150:
                assert child.poll() is None, "the sweep ended before it could be killed"
                assert time.monotonic() < deadline, "the sweep never started answering"
                time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    with Store.open() as store:
        killed_at = _answers(store)
        [sweep] = SweepStore(store).sweeps()
    assert 150 <= killed_at <= 200
    open_gate(GATE["gate"])
    code, _out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert f"Continues sweep {sweep.id}" in err
    with Store.open() as store:
        assert [s.id for s in SweepStore(store).sweeps()] == [sweep.id]
        with store.engine.connect() as conn:
            answers = conn.execute(sa.select(bench_answers.c.run_id, bench_answers.c.key)).all()
            spend = conn.execute(
                sa.select(bench_spend.c.run_id, bench_spend.c.key).where(
                    bench_spend.c.role == "target"
                )
            ).all()
    per_run = Counter(run for run, _ in answers)
    assert sorted(per_run.values()) == [ITEMS, ITEMS]
    # exactly one cost line per stored answer: nothing asked twice was paid twice unseen
    assert Counter(spend) == Counter(answers)
