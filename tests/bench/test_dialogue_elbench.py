"""ELBench's teaching templates as dialogue scenarios (spec §15), and a run over them on
scripted models. Skipped when the reference data is absent."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from sweepbench.bench.dialogue.scenario import scenario_for
from sweepbench.bench.items import Benchmark
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_config import Selection
from sweepbench.bench.sources.elbench import load_elbench
from sweepbench.bench.storage import BenchStore
from sweepbench.engine import RetryPolicy
from sweepbench.store import Store
from tests.bench.helpers import calls_of, elbench_root
from tests.bench.plans import prepare

DATA = elbench_root()
TEACHING = ("knowledge", "question", "cross", "guided")


@pytest.fixture(scope="module")
def bench() -> Benchmark:
    if not DATA.is_dir():
        pytest.skip("the ELBench reference data is absent")
    return load_elbench(DATA)


def test_templates_become_scenarios(bench: Benchmark) -> None:
    found = {}
    for task_id in ("knowledge", "question", "cross", "guided"):
        task = bench.task(task_id)
        scenario = scenario_for(task)
        assert task.available
        found[task_id] = (scenario.flow, scenario.scale, scenario.threshold, len(scenario.fields))
    # replicated (the default): ELBench's pass mark of 3.0 for every scenario
    assert found == {
        "knowledge": ("single", 10, 3.0, 6), "question": ("single", 5, 3.0, 5),
        "cross": ("single", 5, 3.0, 15), "guided": ("guided", 5, 3.0, 14),
    }  # fmt: skip
    guided = scenario_for(bench.task("guided"))
    assert guided.runtime == "elbench" and guided.max_turns == 20
    assert guided.veto_field is None and guided.keep_turns == 3  # ELBench has no code veto
    assert guided.names["teacher"] == "teacher"
    assert scenario_for(bench.task("question")).names["teacher"] == "test_model"
    task = bench.task("guided")
    corrected = scenario_for(
        replace(task, options={**task.options, "scoring_version": "corrected"})
    )
    assert corrected.veto_field == "角色一致性"
    assert guided.opening == "这是本次一对一辅导所要讲的习题: {question}"
    assert guided.student and guided.teacher[0].role == "system"


async def test_teaching_tasks_run_on_scripted_models(bench: Benchmark, tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    selection = Selection(tasks=("knowledge", "guided"), per_task=2)
    prepared = prepare(bench, store, model="scripted/tutor?end_after=2",
                       judge="scripted/guess", selection=selection)  # fmt: skip
    assert not prepared.plan.errors
    fast = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
    runner = BenchRunner(prepared, store, retry=fast, dialogue_retry_delay_s=0.0)
    outcome = await runner.run()
    assert outcome.status == "completed" and outcome.scored == 4
    rows = list(BenchStore(store).answers(outcome.run_id))
    scenes = Counter(r["score_metadata"]["_scene"] for r in rows)
    assert scenes == {"knowledge_point_explanation": 2, "guided_problem_solving_teaching": 2}
    guided = [r for r in rows if r["task"] == "guided"]
    assert all(len(r["score_metadata"]["score_items"]) == 14 for r in guided)
    roles = Counter(c.role for c in calls_of(store, outcome.run_id))
    assert roles == {"target": 2 + 2 * 2, "student": 2, "judge": 4}


def test_the_full_preset_on_scripted_guess_covers_the_teaching_tasks(
    bench: Benchmark, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import cli

    code = cli(
        monkeypatch, "bench", "run", "elbench", "--data", str(DATA), "--preset", "full",
        "--model", "scripted/guess", "--judge", "scripted/guess", "--yes", "--json",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    shown = json.loads(captured.out)
    with Store.open() as store:
        rows = list(BenchStore(store).answers(shown["run_id"]))
    taught = Counter(r["task"] for r in rows if r["task"] in TEACHING)
    assert taught == {"knowledge": 10, "question": 10, "cross": 10, "guided": 15}
    assert all(r["status"] == "scored" for r in rows if r["task"] in TEACHING)
