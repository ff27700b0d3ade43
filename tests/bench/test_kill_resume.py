"""A kill -9 at a random moment of a 2,000-item run, then a resume: every item is answered
exactly once, none lost, none twice, and every stored answer has exactly one cost line.

The run happens in a child process (``tests.bench.kill_driver``) so that SIGKILL hits it
for real: no ``finally``, no flush, no status update. Each trial kills the run twice (the
second kill lands in a resumed session) and then resumes it to completion in-process.

The scripted model is given a small price (the operator's ``models.toml`` in the test's
``SWEEPBENCH_HOME``, which the child inherits): a $0 call writes no spend line, and the point is
to see each answer stored together with its cost and its ``calls`` row, and the ledger's holds
of a killed session settled (never below what was paid) once it is found dead.
"""

from __future__ import annotations

import asyncio
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO

import pytest

from sweepbench.bench.items import Item
from sweepbench.bench.storage import BenchStore
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark
from tests.bench.kill_driver import ITEMS, drive, prepare_run

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 90.0
"""Generous: a slow machine may take many seconds just to import the package."""
EXIT_TIMEOUT_S = 120.0
ALL_KEYS = frozenset(i.key for t in toy_benchmark(ITEMS).tasks for i in t.items)
EVEN_KEYS = frozenset(Item.make_key("arith.jsonl", f"arith-{i}") for i in range(0, ITEMS, 2))


@dataclass
class Killed:
    """What one start-and-kill of the driver saw."""

    run_id: str | None
    """The run the driver announced (None when it had nothing to run)."""
    finished_first: bool
    """The driver ended on its own before the kill came."""


def _reader(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.strip())
    lines.put(None)


def start_and_kill(url: str, delay_s: float, stderr_path: Path) -> Killed:
    """Start the driver, wait for it to say ``started``, wait ``delay_s`` and SIGKILL it."""
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.kill_driver", url],
            cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        run_id: str | None = None
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while run_id is None:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0.001))
                if line is None:  # ended without starting (nothing left to run)
                    break
                if line.startswith("started "):
                    run_id = line.split(" ", 1)[1]
            if run_id is not None:
                time.sleep(delay_s)
            else:  # no "started": let it end by itself
                proc.wait(timeout=EXIT_TIMEOUT_S)
            finished_first = proc.poll() is not None
            if not finished_first:
                os.kill(proc.pid, signal.SIGKILL)
            code = proc.wait(timeout=EXIT_TIMEOUT_S)
        except queue.Empty:
            proc.kill()
            proc.wait()
            pytest.fail(f"the driver never started: {stderr_path.read_text()[-2000:]}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if finished_first:
        assert code == 0, stderr_path.read_text()[-2000:]
    else:
        assert code == -signal.SIGKILL
    return Killed(run_id, finished_first)


def check_stored(store: Store, run_id: str) -> int:
    """The invariants after any kill; returns how many items are stored."""
    runs = BenchStore(store)
    row = runs.run(run_id)
    assert row is not None and row.id == run_id
    assert row.status in ("running", "completed")  # a killed session never records an end
    statuses = runs.statuses(run_id)
    assert set(statuses) <= ALL_KEYS
    assert set(statuses.values()) <= {"scored"}  # the scripted model never fails
    lines = list(runs.spend_lines(run_id))
    assert {s["role"] for s in lines} <= {"target"}
    target_lines = Counter(s["key"] for s in lines)
    # one cost line per stored answer: none without its cost, no cost counted twice, and no
    # cost for an answer that was lost
    assert set(target_lines) == set(statuses)
    assert set(target_lines.values()) <= {1}
    answers = list(runs.answers(run_id))
    assert len(answers) == len(statuses)  # the primary key keeps each key once
    assert all(a["answer"] == "42" for a in answers)
    assert all(a["passed"] == (a["key"] in EVEN_KEYS) for a in answers)
    tokens = {a["key"]: (a["input_tokens"], a["output_tokens"]) for a in answers}
    assert {s["key"]: (s["input_tokens"], s["output_tokens"]) for s in lines} == tokens
    assert all(Decimal(s["usd"]) > 0 for s in lines)
    spent = runs.spent(run_id).get("target", Decimal(0))
    assert spent == sum((Decimal(s["usd"]) for s in lines), Decimal(0))
    # the calls log is written in the same group commit: one finished call per stored answer,
    # none for an answer that was lost (a killed session leaves no trace of its last calls)
    calls = store.list_calls(limit=None, run_id=run_id)
    assert Counter(c.item_key for c in calls) == Counter(list(statuses))
    assert all(c.role == "target" and c.stop_reason == "end" and c.text == "42" for c in calls)
    assert {c.item_key: c.cost_usd for c in calls} == {s["key"]: Decimal(s["usd"]) for s in lines}
    return len(statuses)


def resume_to_completion(url: str, run_id: str) -> None:
    """Resume in-process and check the run ends complete with every item once."""
    store = Store.open(url)
    try:
        before = check_stored(store, run_id)
        prepared = prepare_run(store)
        assert prepared.previous is not None and prepared.previous.id == run_id
        assert len(prepared.plan.items) == ITEMS - before
        assert {i.key for i in prepared.plan.items}.isdisjoint(BenchStore(store).statuses(run_id))
    finally:
        store.close()
    outcome = asyncio.run(drive(url))
    assert outcome.run_id == run_id
    assert outcome.status == "completed", outcome.reason
    assert outcome.resumed is True
    assert outcome.session_scored == ITEMS - before
    assert (outcome.scored, outcome.errors) == (ITEMS, 0)
    store = Store.open(url)
    try:
        assert check_stored(store, run_id) == ITEMS
        runs = BenchStore(store)
        row = runs.run(run_id)
        assert row is not None and row.status == "completed"
        assert sum(1 for a in runs.answers(run_id) if a["passed"]) == ITEMS // 2
        assert [r.id for r in runs.runs()] == [run_id]  # no second run was started
        # the ledger: what the killed sessions held is settled at what it held (their last
        # calls were never recorded, so only that is sure not to hide a charge), the rest at
        # what the calls cost; nothing stays held, and no charge is counted below its cost
        ledger = Ledger(store)
        ledger.reap_dead()  # done by any admission too; explicit for a run with nothing left
        assert all(r.state != "reserved" for r in ledger.reservations(run_id))
        paid = sum(runs.spent(run_id).values(), Decimal(0))
        assert ledger.run_spent(run_id) >= paid > 0
    finally:
        store.close()


@pytest.fixture
def priced_echo(isolated_home: Path) -> None:
    """$1 per 1M input tokens and $2 per 1M output tokens for scripted/echo."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 2\n")


def test_kill_nine_then_resume_answers_every_item_exactly_once(
    tmp_path: Path, priced_echo: None
) -> None:
    rng = random.Random(20240607)
    interrupted: list[int] = []
    for trial in range(3):
        url = f"sqlite:///{tmp_path / f'kill-{trial}.db'}"
        run_id: str | None = None
        left = 1.0
        for kill in range(2):
            # the second kill comes sooner, in proportion to what is left to answer
            delay = rng.uniform(0.05, 0.8) * max(left, 0.1)
            killed = start_and_kill(url, delay, tmp_path / f"err-{trial}-{kill}")
            if killed.run_id is None:  # the previous session had already answered everything
                assert run_id is not None and kill > 0
                continue
            assert run_id in (None, killed.run_id)  # the second session resumed the same run
            run_id = killed.run_id
            store = Store.open(url)
            try:
                stored = check_stored(store, run_id)
            finally:
                store.close()
            left = (ITEMS - stored) / ITEMS
            if not killed.finished_first:
                interrupted.append(stored)
        assert run_id is not None
        resume_to_completion(url, run_id)
    # the test means something only if some kill caught a run part-way through
    assert any(n < ITEMS for n in interrupted), interrupted
