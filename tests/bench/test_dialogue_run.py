"""Teaching dialogues through the benchmark runner and the engine (spec §15): each turn one
call (teacher = target, student, evaluator = judge), each stored as it finishes; the veto; a
failed evaluation kept as a retryable failure; a student limit pausing a run; a resume after
a stop mid-dialogue paying each finished turn once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sweepbench.bench.dialogue.storage import read_turns
from sweepbench.bench.items import Area, Benchmark, Item, Task
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_config import Limits
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import BenchStore
from sweepbench.engine import RetryPolicy
from sweepbench.store import Store
from sweepbench.store.schema import bench_turns
from tests.bench import dialogue_kill_driver as driver
from tests.bench.helpers import calls_of, set_prices
from tests.bench.plans import build_plan, prepare

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
FIELDS = ["role_consistency", "guidance", "accuracy"]
TUTOR = "scripted/tutor?end_after=3"
EVALUATOR = "scripted/evaluator?score=4"


def dialogue_task(task_id: str, n: int, **dialogue: Any) -> Task:
    items = tuple(
        Item(
            key=Item.make_key(f"{task_id}.yaml", f"{task_id}-{i}"), sample_id=f"{task_id}-{i}",
            task=task_id, dimension="default", prompt=f"Exercise {i}: 3 + {i} = ?",
            metadata={"payload": {"question": f"3 + {i} = ?", "profile": "shy"}},
            source_file=f"{task_id}.yaml", row=i + 1,
        )
        for i in range(n)
    )  # fmt: skip
    options = {"scale": 5, "dialogue": {"fields": FIELDS, "rubric": "Rate it.", **dialogue}}
    return Task(task_id, "teach", f"Teach {task_id}", "runtime", "runtime", items,
                options=options, multi_turn=True)  # fmt: skip


def teaching(n: int = 2, *, single: int = 0) -> Benchmark:
    tasks = [dialogue_task("guided", n, flow="guided")]
    if single:
        tasks.append(dialogue_task("explain", single, flow="single"))
    return Benchmark("teach", "Teach", (Area("teach", "Teaching", tuple(tasks)),), version="v1")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")


async def _run(store: Store, benchmark: Benchmark, **kwargs: Any) -> tuple[RunOutcome, BenchRunner]:
    kwargs.setdefault("model", TUTOR)
    kwargs.setdefault("judge", EVALUATOR)
    concurrency = kwargs.pop("concurrency", 8)
    prepared = prepare(benchmark, store, **kwargs)
    runner = BenchRunner(prepared, store, retry=FAST, dialogue_retry_delay_s=0.0,
                         accept_unpriced=True, concurrency=concurrency)  # fmt: skip
    return await runner.run(), runner


def _roles(store: Store, run_id: str, key: str | None = None) -> Counter[str]:
    return Counter(c.role for c in calls_of(store, run_id) if key is None or c.item_key == key)


async def test_guided_dialogue_ends_on_the_keyword_and_is_scored(store: Store) -> None:
    outcome, _ = await _run(store, teaching(2, single=1))
    assert outcome.status == "completed" and outcome.scored == 3
    rows = {r["key"]: r for r in BenchStore(store).answers(outcome.run_id)}
    guided = rows["guided.yaml::guided-0"]
    assert guided["score"] == 4.0 and guided["passed"] and guided["result"] == "pass"
    meta = guided["score_metadata"]
    assert meta["ended"] == "keyword" and meta["steps"] == 3 and meta["message_count"] == 6
    assert meta["score_items"] == {f: 4 for f in FIELDS} and meta["source"] == (
        "basic_education_runtime"
    )
    assert guided["answer"].startswith("student: 这是本次一对一辅导所要讲的习题: 3 + 0 = ?")
    assert "下课" in guided["answer"] and guided["judge"] == EVALUATOR
    # one call per turn, as its own role; every turn stored
    assert _roles(store, outcome.run_id, "guided.yaml::guided-0") == {
        "target": 3, "student": 2, "judge": 1,
    }  # fmt: skip
    turns = read_turns(store, outcome.run_id, "guided.yaml::guided-0")
    assert [t.speaker for t in turns] == ["opening"] + ["teacher", "student"] * 2 + ["teacher"]
    assert _roles(store, outcome.run_id, "explain.yaml::explain-0") == {"target": 1, "judge": 1}
    student_calls = [c for c in calls_of(store, outcome.run_id) if c.role == "student"]
    assert {c.model for c in student_calls} == {EVALUATOR}  # no --student: the judge's model


async def test_twenty_steps_end_silently_and_are_evaluated(store: Store) -> None:
    outcome, _ = await _run(store, teaching(1), model="scripted/tutor")
    assert outcome.status == "completed"
    (row,) = BenchStore(store).answers(outcome.run_id)
    assert row["score_metadata"]["ended"] == "step_limit" and row["score_metadata"]["steps"] == 20
    assert _roles(store, outcome.run_id) == {"target": 20, "student": 19, "judge": 1}


async def test_role_confusion_vetoes_every_dimension(store: Store) -> None:
    outcome, _ = await _run(store, teaching(1), judge="scripted/evaluator?score=5&veto=1")
    (row,) = BenchStore(store).answers(outcome.run_id)
    assert row["score"] == 1.0 and not row["passed"] and row["result"] == "fail"
    assert row["score_metadata"]["vetoed"] is True
    assert row["score_metadata"]["score_items"] == {f: 1 for f in FIELDS}


async def test_unparseable_evaluation_retried_then_a_failure_and_resumed(store: Store) -> None:
    outcome, _ = await _run(store, teaching(1), judge="scripted/echo?text=no%20idea")
    assert outcome.status == "completed_with_errors"
    (row,) = BenchStore(store).answers(outcome.run_id)
    assert row["status"] == "failed" and row["error_type"] == "judge_unparseable"
    assert row["score"] is None and row["raw_judge"] == "no idea"
    assert _roles(store, outcome.run_id) == {"target": 3, "student": 2, "judge": 2}
    # the same settings again continue the run: only the evaluation is asked again
    again, _ = await _run(store, teaching(1), judge="scripted/echo?text=no%20idea")
    assert again.run_id == outcome.run_id
    assert _roles(store, outcome.run_id) == {"target": 3, "student": 2, "judge": 4}


async def test_student_limit_pauses_the_run_keeping_finished_dialogues(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("SWEEPBENCH_HOME", str(home))
    set_prices(home, {"scripted.student": (10, 10)})
    benchmark = teaching(4)
    plan = build_plan(benchmark, model=TUTOR, judge=EVALUATOR, student="scripted/student")
    student = plan.role("student")
    assert student is not None and student.model == "scripted/student"
    assert student.low is not None and student.high is not None and student.high > student.low
    outcome, _ = await _run(
        store, benchmark, student="scripted/student", concurrency=1, max_tokens=40,
        limits=Limits(roles={"student": Decimal("0.01")}),
    )  # fmt: skip
    assert outcome.status == "paused_budget" and "simulated student" in (outcome.reason or "")
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert rows and all(r["status"] == "scored" for r in rows) and len(rows) < 4
    assert Decimal(0) < outcome.spent_by_role["student"] <= Decimal("0.01")


async def test_resume_after_a_stop_mid_dialogue_pays_each_finished_turn_once(
    store: Store,
) -> None:
    benchmark = teaching(1)
    tutor = "scripted/tutor?end_after=6&ttft=0.05"  # a turn takes long enough to be cut
    prepared = prepare(benchmark, store, model=tutor, judge=EVALUATOR)
    runner = BenchRunner(prepared, store, retry=FAST, dialogue_retry_delay_s=0.0)
    execute = runner.executor.execute
    made = 0

    async def stop_after_five(spec: Any, **kwargs: Any) -> Any:
        nonlocal made
        made += 1
        if made == 5:  # stopped while the third teacher turn is in flight
            asyncio.get_running_loop().call_later(0.01, runner.stop, "crash")
        return await execute(spec, **kwargs)

    runner.executor.execute = stop_after_five  # type: ignore[method-assign]
    first = await runner.run()
    assert first.status == "interrupted"
    key = "guided.yaml::guided-0"
    kept = read_turns(store, first.run_id, key)
    assert [t.speaker for t in kept] == ["opening", "teacher", "student", "teacher", "student"]
    assert list(BenchStore(store).answers(first.run_id)) == []  # no answer: it goes on later
    second, _ = await _run(store, benchmark, model=tutor)
    assert second.run_id == first.run_id and second.status == "completed"
    turns = read_turns(store, first.run_id, key)
    spoken = Counter(t.speaker for t in turns)
    assert spoken == {"opening": 1, "teacher": 6, "student": 5}
    finished = [c for c in calls_of(store, first.run_id) if c.stop_reason == "end"]
    paid = Counter(c.role for c in finished)
    assert paid == {"target": 6, "student": 5, "judge": 1}  # each finished turn exactly once
    assert "(step 3)" in turns[5].content  # the dialogue went on where it stopped


def test_kill_nine_mid_dialogue_then_resume_pays_each_finished_turn_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'killed.db'}"
    repo = Path(__file__).resolve().parents[2]
    store = Store.open(url)  # migrated before the child starts
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.dialogue_kill_driver", url], cwd=repo,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _turns_stored(store) < 9 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    (run,) = BenchStore(store).runs(5)
    stored_before = _turns_stored(store)
    assert 9 <= stored_before < driver.DIALOGUES * 16  # killed part-way
    outcome = asyncio.run(driver.drive(url))
    assert outcome.run_id == run.id and outcome.status == "completed" and outcome.scored == 4
    for n in range(driver.DIALOGUES):
        key = f"lessons.yaml::lesson-{n}"
        spoken = Counter(t.speaker for t in read_turns(store, run.id, key))
        assert spoken == {"opening": 1, "teacher": 8, "student": 7}
        finished = Counter(
            c.role for c in calls_of(store, run.id) if c.item_key == key and c.stop_reason == "end"
        )
        assert finished == {"target": 8, "student": 7, "judge": 1}  # no finished turn twice


def _turns_stored(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(sa.select(sa.func.count()).select_from(bench_turns)) or 0)


async def test_a_failing_turn_is_retried_per_spec_then_a_failure_keeping_the_turns(
    store: Store,
) -> None:
    benchmark = teaching(1, single=1)
    outcome, _ = await _run(store, benchmark, model="scripted/tutor?fail=500")
    assert outcome.status == "completed_with_errors" and outcome.errors == 2
    rows = {r["key"]: r for r in BenchStore(store).answers(outcome.run_id)}
    assert {r["error_type"] for r in rows.values()} == {"provider_error"}
    attempts = Counter(c.item_key for c in calls_of(store, outcome.run_id))
    assert attempts == {"guided.yaml::guided-0": 15, "explain.yaml::explain-0": 5}
    # the opening was stored; a run that works now plays on from it
    turns = read_turns(store, outcome.run_id, "guided.yaml::guided-0")
    assert [t.speaker for t in turns] == ["opening"]


async def test_function_mode_evaluator_gets_the_schema(store: Store) -> None:
    task = dialogue_task("guided", 1, flow="guided", format_mode="function")
    benchmark = Benchmark("fn", "Fn", (Area("teach", "Teaching", (task,)),), version="v1")
    bare = 'scripted/echo?text={"role_consistency":5,"guidance":4,"accuracy":3}'
    outcome, _ = await _run(store, benchmark, judge=bare)
    (row,) = BenchStore(store).answers(outcome.run_id)
    assert row["status"] == "scored" and row["score"] == 4.0
    (grade,) = [c for c in calls_of(store, outcome.run_id) if c.role == "judge"]
    settings = grade.request["settings"]
    assert settings["response_format"]["required"] == FIELDS
    assert (settings["effort"], settings["temperature"]) == ("none", 0.0)
    assert settings["max_tokens"] == 1024
