"""A sweep survives its worker: kill -9 mid-sweep keeps the finished cells and the sweep reads
back as interrupted, its held money settled at what was received; SIGTERM acts as Stop all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.sweeps.history import list_sweeps, load_sweep

DRIVER = Path(__file__).with_name("sweep_crash_driver.py")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def priced(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        "[scripted.lorem]\nprice_in = 100\nprice_out = 100\n"
        "[scripted.echo]\nprice_in = 100\nprice_out = 100\n"
    )


def start(url: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), url, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("ready "):
        proc.kill()
        raise AssertionError(f"driver failed: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, line.split()[1]


@pytest.mark.usefixtures("priced")
def test_kill_9_mid_sweep_keeps_finished_cells_and_marks_it_interrupted(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    proc, sweep_id = start(url)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    store = Store.open(url)
    document = load_sweep(store, sweep_id)
    assert document["status"] == "interrupted"
    fast, slow = document["cells"]
    assert fast["status"] == "done" and fast["text"] == "one two three"
    assert slow["status"] == "interrupted"
    assert [s.status for s in list_sweeps(store) if s.id == sweep_id] == ["interrupted"]
    ledger = Ledger(store)
    ledger.reap_dead()  # what any admission does first
    holds = ledger.reservations(sweep_id)
    assert holds and all(h.state == "settled" for h in holds)
    [slow_hold] = [h for h in holds if h.call_id != fast["call_id"]]
    assert slow_hold.settled_usd is not None and slow_hold.reserved_usd is not None
    # settled at what it had received before the kill, not at its whole reservation
    assert 0 < slow_hold.settled_usd < slow_hold.reserved_usd
    assert ledger.summary().open_reservations == 0


@pytest.mark.usefixtures("priced")
def test_sigterm_is_stop_all(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'term.db'}"
    proc, sweep_id = start(url, "--sigterm")
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert "closed" in out
    store = Store.open(url)
    document = load_sweep(store, sweep_id)
    assert document["status"] == "stopped"
    fast, slow = document["cells"]
    assert fast["status"] == "done" and slow["status"] == "stopped" and slow["text"]
    ledger = Ledger(store)
    assert all(h.state == "settled" for h in ledger.reservations(sweep_id))
    assert ledger.summary().open_reservations == 0
