"""ELBench's judge defaults to the paper's (issue 29 §4): ``bench estimate``, ``bench run`` and
``bench sweep`` need no ``--judge`` for ELBench, the Python API fills it in as they do, and the
estimate says, before the run, when another judge (or the paper's verdict-only) puts the run
on a leaderboard board of its own. Other benchmarks keep asking for a judge. Offline: the
tests' OpenRouter is a closed port; ELBench's data is read from the reference copy (skipped
when absent)."""

from __future__ import annotations

import json

import pytest

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.sources.elbench_registry import load_registry
from sweepbench.bench.start import prepare
from sweepbench.leaderboard.published import load_published
from sweepbench.models.openrouter import model_id
from tests.bench.helpers import elbench_root
from tests.helpers import run_cli

DATA = elbench_root()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="the ELBench reference data is absent")
PAPER_JUDGE = "openrouter/qwen/qwen3-235b-a22b"
OTHER = "scripted/guess"
ELBENCH = ["elbench", "--data", str(DATA), "--preset", "quick", "--model", OTHER]
BOARD_NOTE = (
    f"Judge {OTHER} is not the paper's judge ({PAPER_JUDGE}): this run goes on its own board, "
    "not beside the published results."
)


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_declared_judge_is_the_published_results_judge() -> None:
    # the ELBench declaration names the judge; the published figures' board is that model's
    assert load_registry().models.judge == PAPER_JUDGE == model_id(load_published().judge)


@needs_data
def test_bench_estimate_elbench_needs_no_judge_and_uses_the_papers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, out, _err = run_cli(monkeypatch, capsys, "bench", "estimate", *ELBENCH, "--json")
    plan = json.loads(out)
    assert plan["config"]["judge"] == PAPER_JUDGE
    assert plan["errors"] == [] and not [n for n in plan["notes"] if "own board" in n]
    assert any(f"graded by {PAPER_JUDGE}" in line for line in plan["text"])
    # other benchmarks keep their behaviour: the sample has no judge of its own
    code, _out, err = run_cli(monkeypatch, capsys, "bench", "estimate", "sample", "--model", OTHER)
    assert code == 2 and "graded by a judge model but none is chosen" in _words(err)


@needs_data
def test_another_judge_is_said_to_go_on_its_own_board(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, _out, err = run_cli(monkeypatch, capsys, "bench", "estimate", *ELBENCH, "--judge", OTHER)
    assert BOARD_NOTE in _words(err)
    _code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "--model", OTHER, "--judge", OTHER
    )
    assert "own board" not in err  # only for a benchmark with published results


@needs_data
def test_the_papers_judge_verdict_only_is_said_to_go_on_its_own_board(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", *ELBENCH, "--decision-judge"
    )
    said = _words(err)
    assert f"Judge {PAPER_JUDGE} grading verdict only is not the paper's setup" in said
    assert "this run goes on its own board, not beside the published results." in said


@needs_data
def test_bench_run_says_the_board_before_the_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "elbench", "--data", str(DATA), "--tasks",
        "safety_answer", "--per-task", "1", "--model", OTHER, "--judge", OTHER, "--yes",
    )  # fmt: skip
    said = _words(err)
    assert BOARD_NOTE in said
    assert said.index(BOARD_NOTE) < said.index("Running")  # said before the run, not after
    assert code in (0, 1)  # it ran (a scripted judge's verdicts may not parse)


@needs_data
def test_bench_sweep_elbench_needs_no_judge(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, out, _err = run_cli(
        monkeypatch, capsys, "bench", "sweep", *ELBENCH, "--axis", "model", "--values",
        f"{OTHER},scripted/echo", "--estimate-only", "--json",
    )  # fmt: skip
    assert "none is chosen" not in out and PAPER_JUDGE in out


@needs_data
def test_the_python_api_fills_the_papers_judge_into_the_stored_request() -> None:
    request = BenchRequest(benchmark="elbench", data=DATA, preset="quick", models={"target": OTHER})
    prepared = prepare(request, None)
    assert prepared.plan.errors == ()
    assert prepared.plan.config.judge == PAPER_JUDGE
    assert prepared.request is not None and prepared.request.models["judge"] == PAPER_JUDGE
    chosen = prepare(request.model_copy(update={"models": {"target": OTHER, "judge": OTHER}}),
                     None)  # fmt: skip
    assert chosen.plan.config.judge == OTHER and BOARD_NOTE in chosen.plan.notes
