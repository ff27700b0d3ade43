"""Comparisons with the published results (issue 25, section 3): published rows compare by
area with the final figures the board shows, their task figures carry the 2026-06-08
revision's mark, two published results compare from the CLI alone, and a run's Teaching score
beside a published one is marked as another measurement — in ``compare``, on the board and
under the published tables."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from sweepbench.cli.app import app
from sweepbench.errors import UserError
from sweepbench.leaderboard.published import (
    TASK_FIGURES_MARK,
    TEACHING_MARK,
    TEACHING_PROVENANCE,
    load_published,
)
from sweepbench.leaderboard.rows import REVISION_MARK
from tests.leaderboard.helpers import elbench_record, store_record

TEACHING_AREA = "基本教育"
FLASH, GPT = "official:deepseek-v4-flash", "official:gpt-5.4"


def invoke(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner(env={"COLUMNS": "220"}).invoke(app, ["leaderboard", *args])
    return result.exit_code, result.output, result.exception


def compared(*args: str) -> dict[str, Any]:
    code, out, exc = invoke("compare", *args, "--json")
    assert code == 0, (out, exc)
    data: dict[str, Any] = json.loads(out)
    return data


def flat(text: str) -> str:
    return " ".join(text.split())


def cells(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The cells of the row ``key`` (an area key, a task id, ``overall``)."""
    rows: list[dict[str, Any]] = data["rows"]
    return next(r["cells"] for r in rows if r["key"] == key)


def board_overall(scope: str) -> dict[str, float]:
    """Each published model's overall figure on the default board of ``scope``."""
    code, out, exc = invoke("--scope", scope, "--json")
    assert code == 0, (out, exc)
    placed = json.loads(out)["placed"]
    return {p["row"]["model"]: p["score"]["score"] for p in placed}


def test_two_published_results_compare_by_area_from_the_cli_with_the_final_figures() -> None:
    snapshot = load_published()
    flash, gpt = snapshot.model("deepseek-v4-flash"), snapshot.model("gpt-5.4")
    assert flash is not None and gpt is not None
    data = compared(FLASH, GPT, "--by", "area")
    assert data["scope"] == "core" and [e["source"] for e in data["entries"]] == ["published"] * 2
    teaching = [c["score"] for c in cells(data, TEACHING_AREA)]
    # the final table's Teaching figures (84.9, 94.4), not the revision's (68.3, 56.2)
    assert teaching == pytest.approx([flash.areas[TEACHING_AREA].score,
                                      gpt.areas[TEACHING_AREA].score])  # fmt: skip
    assert [round(t, 1) for t in teaching] == [84.9, 94.4]
    overall = [c["score"] for c in cells(data, "overall")]
    board = board_overall("core")
    assert overall == pytest.approx([board["DeepSeek-V4-Flash"], board["GPT-5.4"]])
    assert round(overall[0], 1) == 82.5
    # DeepSeek-V4-Flash's core Knowledge area cannot be reconstructed from the final figures:
    # marked, as on the board, and so is the overall made with it
    assert cells(data, "通用模型")[0]["text"].endswith("†")
    assert cells(data, "overall")[0]["text"] == "82.5 †"
    assert data["marks"] == [REVISION_MARK]

    code, out, exc = invoke("compare", FLASH, GPT, "--by", "area")
    assert code == 0, (out, exc)
    text = flat(out)
    assert "Teaching │ 84.9 │ 94.4" in text and "Overall │ 82.5 † │ 86.3" in text
    assert "68.3" not in text and "56.2" not in text
    assert flat(REVISION_MARK) in text

    paper = compared(FLASH, GPT, "--by", "area", "--scope", "paper")
    final = [c["text"] for c in cells(paper, "overall")]
    assert final == [f"{flash.overall.score:.1f}", f"{gpt.overall.score:.1f}"]  # type: ignore[union-attr]
    assert final == ["83.7", "83.1"] and paper["marks"] == []


def test_published_task_figures_are_the_revisions_and_marked() -> None:
    data = compared(FLASH, GPT)
    tasks = [r for r in data["rows"] if r["kind"] == "task"]
    assert tasks and all(c["mark"] == "†" for r in tasks for c in r["cells"])
    assert [c["text"] for c in cells(data, "guided")] == ["40.0 †", "0.0 †"]
    assert "ceval" not in {r["key"] for r in tasks}  # core scope: no region-specific set
    assert data["marks"] == [TASK_FIGURES_MARK]
    code, out, exc = invoke("compare", FLASH, GPT)
    assert code == 0, (out, exc)
    assert "† Task figures: 2026-06-08 revision, which does not add up to the final table." in (
        flat(out)
    )


def test_a_runs_teaching_beside_a_published_one_is_marked_in_compare() -> None:
    run_id = store_record(elbench_record({"guided": 20.0}))
    data = compared(f"run:{run_id}", GPT, "--by", "area")
    marks = {r["key"]: r["mark"] for r in data["rows"]}
    assert marks[TEACHING_AREA] == "‡" and marks["overall"] == "‡"
    assert marks["安全可信"] is None
    assert data["marks"] == [TEACHING_MARK]
    code, out, exc = invoke("compare", run_id, GPT, "--by", "area")
    assert code == 0, (out, exc)
    text = flat(out)
    assert "Teaching ‡ │ 40.0 │ 94.4" in text
    assert flat(TEACHING_MARK) in text
    by_task = compared(run_id, GPT)
    assert {r["key"] for r in by_task["rows"] if r["mark"] == "‡"} == {
        "knowledge", "question", "cross", "guided",
    }  # fmt: skip
    assert by_task["marks"] == [TASK_FIGURES_MARK, TEACHING_MARK]


def test_a_run_compares_with_published_results_in_its_own_scope() -> None:
    run_id = store_record(elbench_record({}))
    assert compared(run_id, GPT, "--by", "area")["scope"] == "core"
    code, _, exc = invoke("compare", run_id, GPT, "--scope", "paper")
    assert code != 0 and isinstance(exc, UserError)
    assert "scored in core scope" in str(exc)
    code, _, exc = invoke("compare", FLASH, GPT, "--scope", "wide")
    assert isinstance(exc, UserError) and "core or paper" in str(exc)


def test_the_board_says_what_the_published_teaching_figure_is_made_of_beside_a_run() -> None:
    code, out, _ = invoke("--json")
    assert code == 0
    assert TEACHING_PROVENANCE not in json.loads(out)["takeaway"]  # published rows alone
    store_record(elbench_record({}))
    for focus, said in (("overall", True), ("teaching", True), ("task:guided", True),
                        ("safety", False)):  # fmt: skip
        code, out, exc = invoke("--focus", focus, "--json")
        assert code == 0, (out, exc)
        assert (TEACHING_PROVENANCE in json.loads(out)["takeaway"]) is said, focus
    code, out, _ = invoke()
    assert flat(TEACHING_PROVENANCE) in flat(out)


def test_the_published_tables_say_what_the_teaching_figure_is_made_of() -> None:
    code, out, exc = invoke("published")
    assert code == 0, (out, exc)
    assert flat(TEACHING_PROVENANCE) in flat(out)
    assert "per-dialogue re-judge" in TEACHING_PROVENANCE
    assert "not in ELBench's repository" in TEACHING_PROVENANCE


# ---------------------------------------------------------------- bench show of a run


def _report(benchmark_id: str, task_ids: tuple[str, ...]) -> Any:
    """bench show's report of a finished run of ``benchmark_id`` with one scored answer on
    each of ``task_ids`` (an auto task ``mmlu_pro`` and ELBench's teaching tasks)."""
    from datetime import UTC, datetime
    from decimal import Decimal

    from sweepbench.bench.items import Area, Benchmark, Item, Task
    from sweepbench.bench.report import RunReport
    from sweepbench.bench.results import ScoredAnswer, summarise
    from sweepbench.bench.storage_rows import RunRow

    def task(task_id: str) -> Task:
        runtime = task_id != "mmlu_pro"
        item = Item(key=f"{task_id}::1", sample_id="1", task=task_id, dimension="default",
                    prompt="?")  # fmt: skip
        return Task(id=task_id, area=TEACHING_AREA if runtime else "通用模型", name=task_id,
                    grading="runtime" if runtime else "auto",
                    scorer="runtime" if runtime else "choice", items=(item,))  # fmt: skip

    tasks = [task(t) for t in task_ids]
    areas = tuple(
        Area(key, key, tuple(t for t in tasks if t.area == key))
        for key in ("通用模型", TEACHING_AREA)
        if any(t.area == key for t in tasks)
    )
    benchmark = Benchmark(benchmark_id, benchmark_id, areas)
    answers = [ScoredAnswer(t, "default", 1.0, True) for t in task_ids]
    summary = summarise(benchmark, answers, scope="core", selected_tasks=task_ids, bootstrap=0)
    now = datetime.now(UTC)
    run = RunRow(id="r1", config_hash="0" * 64, benchmark=benchmark_id, model="m", judge=None,
                 status="completed", reason=None, created_at=now, updated_at=now,
                 items=len(task_ids))  # fmt: skip
    return RunReport(run=run, benchmark=benchmark, summary=summary, scored=len(task_ids),
                     errors=0, spent=Decimal(0), spent_by_role={}, error_types={},
                     rows=None)  # fmt: skip


def test_bench_show_of_an_elbench_run_with_teaching_tasks_says_it_is_another_measurement() -> None:
    from sweepbench.bench.results import TEACHING_NOTE

    taught = _report("elbench", ("mmlu_pro", "guided"))
    footer = taught.footer_lines()
    assert footer[0].startswith("Scores on the questions that ran: 通用模型 100.0")
    assert footer[0].endswith(TEACHING_NOTE)
    assert "runtime evaluator" in TEACHING_NOTE and "per-dialogue re-judge" in TEACHING_NOTE
    assert sum(TEACHING_NOTE in line for line in footer) == 1
    # no Teaching task, or not ELBench (no published Teaching figure): no note
    assert not any(
        TEACHING_NOTE in line for line in _report("elbench", ("mmlu_pro",)).footer_lines()
    )
    assert not any(TEACHING_NOTE in line for line in _report("sample", ("guided",)).footer_lines())
