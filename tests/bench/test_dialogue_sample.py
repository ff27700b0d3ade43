"""The sample teaching dialogues (``sample-teaching``) end to end through the CLI, offline on
the scripted tutor, student and evaluator; ``--student``, its share of the estimate and its
place in the settings hash; dialogue scenarios checked in a declaration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.dialogue.scenario import scenario_for
from sweepbench.bench.sources.declared import load_declared
from sweepbench.errors import DataError
from sweepbench.store import Store
from tests.bench.helpers import calls_of
from tests.bench.plans import build_plan
from tests.helpers import run_cli

TUTOR = "scripted/tutor?end_after=3"


def test_sample_teaching_has_three_runnable_dialogue_tasks() -> None:
    benchmark = load_benchmark("sample-teaching")
    assert {t.id: len(t.items) for t in benchmark.tasks} == {
        "guided": 2, "explain": 2, "write_question": 2,
    }  # fmt: skip
    assert all(t.available and not t.problems for t in benchmark.tasks)
    flows = {t.id: (scenario_for(t).flow, scenario_for(t).scale) for t in benchmark.tasks}
    assert flows == {"guided": ("guided", 5), "explain": ("single", 10),
                     "write_question": ("single", 5)}  # fmt: skip
    assert scenario_for(benchmark.task("explain")).threshold == 6.0


def test_the_student_is_priced_hashed_and_defaults_to_the_judge() -> None:
    benchmark = load_benchmark("sample-teaching")
    default = build_plan(benchmark, model=TUTOR, judge="scripted/evaluator")
    chosen = build_plan(benchmark, model=TUTOR, judge="scripted/evaluator",
                        student="scripted/student")  # fmt: skip
    assert default.config.models["student"] == "scripted/evaluator"
    assert chosen.config.models["student"] == "scripted/student"
    assert default.config.hash != chosen.config.hash
    roles = {r.role: r for r in chosen.roles}
    assert set(roles) == {"target", "judge", "student"}
    # 2 guided lessons of at most 20 teacher and 19 student turns, 4 single-turn tasks
    assert roles["target"].calls == 2 * 20 + 4 and roles["student"].calls == 2 * 19
    only_single = build_plan(benchmark, model=TUTOR, judge="scripted/evaluator",
                             selection=_tasks("explain"), student="scripted/student")  # fmt: skip
    assert "student" not in only_single.config.models
    assert only_single.role("student") is None


def _tasks(*ids: str) -> Any:
    from sweepbench.bench.run_config import Selection

    return Selection(tasks=ids)


def test_cli_runs_the_sample_dialogues_with_a_student(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample-teaching", "-m", TUTOR,
        "--judge", "scripted/evaluator", "--student", "scripted/student",
        "--limit", "student=1", "--yes", "--json",
    )  # fmt: skip
    assert code == 0, err
    shown = json.loads(out)
    assert shown["status"] == "completed"
    with Store.open() as store:
        calls = calls_of(store, shown["run_id"])
    models = {(c.role, c.model) for c in calls}
    assert models == {("target", TUTOR), ("student", "scripted/student"),
                      ("judge", "scripted/evaluator")}  # fmt: skip


def test_a_declaration_with_a_bad_dialogue_is_refused_where_it_is(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "q": "1+1"}\n', "utf-8")
    (tmp_path / "bench.yaml").write_text(
        "id: t\nname: T\nareas: [{key: a, label: A}]\ntasks:\n"
        "  - id: talk\n    area: a\n    data: rows.jsonl\n"
        "    fields: {id: id, prompt: q}\n    scorer: runtime\n"
        "    options: {dialogue: {flow: chat, fields: [x]}}\n",
        "utf-8",
    )
    with pytest.raises(DataError, match=r"options\.dialogue.*chat"):
        load_declared(tmp_path / "bench.yaml")


def test_show_item_prints_a_dialogue_and_export_writes_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample-teaching", "-m", TUTOR,
        "--judge", "scripted/evaluator?score=5&veto=1", "--tasks", "guided", "--yes", "--json",
    )  # fmt: skip
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    code, out, err = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--item", "guided-01")
    assert code == 0, err
    text = " ".join(out.split())
    assert "Dialogue guided-01 · 6 turns · the teacher ended the lesson" in text
    assert "opening: 这是本次一对一辅导所要讲的习题:" in text and "teacher: (step 3)" in text
    assert "Evaluation: 1.00, fail (vetoed: role confusion)" in text
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "show", run_id, "--item", "guided-02", "--json"
    )
    document = json.loads(out)
    assert [m["role"] for m in document["messages"]][:3] == ["opening", "teacher", "student"]
    assert document["evaluation"]["vetoed"] is True and document["task"]["ended"] == "keyword"
    code, out, err = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--item", "nope")
    assert code != 0 and "no dialogue 'nope'" in " ".join(err.split())
    code, out, err = run_cli(monkeypatch, capsys, "bench", "export", run_id, str(tmp_path / "x"))
    assert code == 0, err
    lines = (tmp_path / "x" / "dialogues.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["task"]["sample_id"] for line in lines] == ["guided-01", "guided-02"]
    table = (tmp_path / "x" / "evaluation_guided.csv").read_text("utf-8").splitlines()
    assert table == [
        "task_id,role_consistency,guidance,accuracy,encouragement,avg",
        "guided-01,1,1,1,1,1", "guided-02,1,1,1,1,1", "Avg,1,1,1,1,1",
    ]  # fmt: skip
