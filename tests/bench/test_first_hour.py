"""Benchmarks in the first hour (issue 13, item 16): ``scripted/guess`` answers the sample's
arithmetic in the format it asks for, a judged row's reason never contradicts its result, and
the estimate of a run on free models says nothing about credit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.items import JudgeSpec
from sweepbench.bench.scoring.judge import parse_verdict
from sweepbench.bench.scoring.text import last_number
from sweepbench.bench.storage import BenchStore
from sweepbench.models.base import Request
from sweepbench.models.scripted import guess
from sweepbench.store import Store
from tests.helpers import cli

PASS_FAIL = JudgeSpec(rubric="r", positive_label="pass", negative_label="fail")
CONTRARY_JUDGE = 'scripted/echo?text={"judge_result":"fail","score":0.5,"judge_reason":"pass"}'
"""A judge like the bundled small model: the verdict fail, the word "pass" as its reason."""


def flat(text: str) -> str:
    return " ".join(text.split())


def bench_rows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> list[dict[str, Any]]:
    """``sweepbench bench run sample ARGS --json`` (it must finish), then its answer rows."""
    code = cli(monkeypatch, "bench", "run", "sample", *args, "--yes", "--json")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    run_id = json.loads(captured.out)["run_id"]
    with Store.open() as store:
        return list(BenchStore(store).answers(run_id))


def test_guess_answers_the_sample_arithmetic_with_a_final_number() -> None:
    arithmetic = load_benchmark("sample").task("arithmetic")
    assert arithmetic.items
    for item in arithmetic.items:
        answer = guess(Request.simple("scripted/guess", item.prompt))
        assert answer != "This is a scripted answer."
        last = answer.splitlines()[-1]
        assert last.isdigit(), answer  # "write only the final number on the last line"
        parsed = last_number(answer)
        assert parsed is not None and parsed.value == int(last)


def test_the_sample_arithmetic_rows_of_guess_hold_a_number(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = bench_rows(monkeypatch, capsys, "--tasks", "arithmetic", "--model", "scripted/guess")
    assert len(rows) == 12
    for row in rows:
        assert row["status"] == "scored"
        assert row["reason"] != "No number in the response."
        assert row["score_metadata"].get("format_valid", True) is True
        assert row["score_metadata"]["extracted"] is not None


def test_a_judged_row_never_gives_a_verdict_word_against_its_result(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = bench_rows(
        monkeypatch, capsys, "--tasks", "explain", "--model", "scripted/guess",
        "--judge", CONTRARY_JUDGE,
    )  # fmt: skip
    assert len(rows) == 8
    for row in rows:
        assert (row["result"], row["passed"], row["score"]) == ("fail", False, 0.5)
        assert row["reason"] != "pass"
        assert row["reason"].startswith("Verdict fail (score 0.5)")


@pytest.mark.parametrize("word", ["pass", "PASS.", "fail", "passed"])
def test_a_reason_that_is_only_a_verdict_word_says_the_verdict(word: str) -> None:
    text = json.dumps({"judge_result": "fail", "score": 0.2, "judge_reason": word})
    score = parse_verdict(text, PASS_FAIL)
    assert score is not None and score.result == "fail"
    assert score.reason.startswith("Verdict fail (score 0.2); the judge gave no reason")


def test_a_real_reason_is_kept_as_written() -> None:
    text = json.dumps({"judge_result": "fail", "score": 0.2, "judge_reason": "pass rate is low"})
    score = parse_verdict(text, PASS_FAIL)
    assert score is not None and score.reason == "pass rate is low"
    none = parse_verdict('{"judge_result": "pass", "score": 1}', PASS_FAIL)
    assert none is not None and none.reason == ""


def test_the_estimate_for_free_models_says_nothing_about_credit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("bench", "estimate", "sample", "--model", "scripted/guess", "--judge", "scripted/guess")
    code = cli(monkeypatch, *args)
    err = flat(capsys.readouterr().err)
    assert code == 0, err
    assert "credit" not in err
    assert "No spending limit is needed: every model here is free, so nothing is spent." in err


def test_the_estimate_for_a_keyed_model_still_warns_about_credit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-anthropic-key-0123456789")
    args = ("bench", "estimate", "sample", "--preset", "auto-checked")
    code = cli(monkeypatch, *args, "--model", "anthropic/claude-haiku-4-5")
    err = flat(capsys.readouterr().err)
    assert code == 0, err
    assert "the run continues until it finishes or the key runs out of credit" in err


def test_the_outcome_heading_and_body_read_as_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "Finished  40 answers" (two spaces, no stop) read as a blemish: heading, full stop, body
    assert cli(monkeypatch, "bench", "run", "sample", "-m", "scripted/guess", "--preset",
               "auto", "--yes") == 0  # fmt: skip
    out = " ".join(capsys.readouterr().out.split("\n"))
    assert "Finished. " in out and "Finished  " not in out


def test_a_run_missing_a_tasks_data_says_which_task_not_n_of_n(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "a partial run (1,981 of 1,981 questions in scope)" read as a contradiction: the questions
    # that loaded are all selected, and a task whose data is missing makes it partial
    from tests.bench.test_declared import ROWS, declare, numeric_task, write_jsonl

    write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = declare(tmp_path, [numeric_task(), numeric_task("gone.jsonl", id="lost", name="Lost")])
    assert cli(monkeypatch, "bench", "estimate", str(path), "-m", "scripted/echo") == 0
    captured = capsys.readouterr()
    said = " ".join((captured.out + captured.err).split())
    assert "lost could not be loaded" in said and "3 of 3 questions" not in said
