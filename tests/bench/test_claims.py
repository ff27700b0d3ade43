"""Items claimed in the store: several workers share one run's items, none answered twice,
a dead worker's items claimed again (SQLite, and PostgreSQL when one is given)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sweepbench.bench.claims import ItemClaims
from sweepbench.store import Store
from sweepbench.store.workers import this_worker
from tests.backends import BACKENDS, backend_url

REPO = Path(__file__).resolve().parents[2]
KEYS = [f"items.jsonl::q{i:04d}" for i in range(400)]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(str(request.param), tmp_path / "claims.db")


def _children(url: str, run_id: str, count: int, size: int, mode: str) -> list[str]:
    command = [sys.executable, "-m", "tests.bench.claims_driver", url, run_id, str(size), mode]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(count)
    ]
    seen: list[str] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        seen.extend(line for line in out.splitlines() if line)
    return seen


def test_claims_come_in_order_and_finished_items_are_gone(url: str) -> None:
    with Store.open(url) as store:
        queue = ItemClaims(store, "run-a")
        assert queue.enqueue(KEYS) == 400 and queue.enqueue(KEYS[:10]) == 0
        me = this_worker(store.engine)
        first = queue.claim(me, 5)
        assert first == KEYS[:5] and queue.claim(me, 3) == KEYS[5:8]
        assert queue.counts() == (392, 8)
        with store.begin() as conn:
            queue.finish(conn, first)
        assert queue.counts() == (392, 3)
        assert queue.release(me) == 3 and queue.counts() == (395, 0)
        assert queue.claim(me, 2) == KEYS[5:7]  # given back: first in line again
        assert ItemClaims(store, "run-b").claim(me, 5) == []  # runs never mix


def test_four_processes_share_a_run_and_answer_every_item_exactly_once(url: str) -> None:
    with Store.open(url) as store:
        ItemClaims(store, "run-shared").enqueue(KEYS)
    answered = _children(url, "run-shared", count=4, size=7, mode="drain")
    assert Counter(answered) == Counter(KEYS)  # every item once: none lost, none twice
    with Store.open(url) as store:
        assert ItemClaims(store, "run-shared").counts() == (0, 0)


def test_a_dead_workers_claims_are_claimed_again(url: str) -> None:
    with Store.open(url) as store:
        queue = ItemClaims(store, "run-dies")
        queue.enqueue(KEYS[:30])
        held = _children(url, "run-dies", count=1, size=12, mode="die")
        assert held == KEYS[:12] and queue.counts() == (18, 12)
        me = this_worker(store.engine)
        taken = queue.claim(me, 30)  # its process is gone on this host: its items are free
        assert taken == KEYS[:30]
