"""``sweepbench bench list|estimate|run|runs|show|export`` end to end, offline, on scripted
models (the store lives under the per-test ``SWEEPBENCH_HOME``)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.storage import BenchStore
from sweepbench.money.ledger import Ledger
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from tests.bench.helpers import calls_of, set_prices
from tests.helpers import run_cli

ANSWER_B = "scripted/echo?text=ANSWER: B"
PASS_JUDGE = 'scripted/echo?text={"judge_result":"pass","score":1,"judge_reason":"ok"}'
PRICED = "anthropic/claude-haiku-4-5"
FAKE_KEY = "fake-anthropic-key-0123456789"


def flat(text: str) -> str:
    """Text with rich's line wrapping undone (every run of whitespace one space)."""
    return " ".join(text.split())


def stored_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, Any]]:
    """``sweepbench bench runs --json``, parsed (it must succeed)."""
    code, out, err = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    assert code == 0, err
    runs: list[dict[str, Any]] = json.loads(out)
    return runs


def sample_tasks() -> dict[str, Any]:
    """The sample benchmark's tasks by id (the source of truth the CLI must agree with)."""
    return {t.id: t for t in load_benchmark("sample").tasks}


@pytest.fixture
def priced_echo(isolated_home: Path) -> None:
    """scripted/echo at $1 per 1M input tokens and $2 per 1M output tokens (the operator's
    models.toml): a $0 call leaves no spend line, a priced one must."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 2\n")


@pytest.fixture
def no_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is not a terminal (as in CI or a pipe)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


# -- list --------------------------------------------------------------------------------------


def test_list_shows_the_sample_tasks_and_json_agrees(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = sample_tasks()
    code, out, err = run_cli(monkeypatch, capsys, "bench", "list")
    assert code == 0, err
    for task_id in tasks:
        assert task_id in out
    assert "--preset quick" in out and "--preset auto" in out
    assert "--data" in flat(err)  # ELBench's data is not shipped: say how to list it
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "list", "--json")
    assert code == 0
    data = json.loads(out)
    assert [b["id"] for b in data] == ["sample"]
    listed = {t["task"]: t for t in data[0]["tasks"]}
    assert set(listed) == set(tasks)
    for task_id, task in tasks.items():
        assert listed[task_id]["items"] == len(task.items) > 0
        assert listed[task_id]["grading"] == task.grading
        assert listed[task_id]["state"] == "ready"
    gradings = {t["grading"] for t in listed.values()}
    assert {"auto", "judge"} <= gradings  # the other tests rely on both kinds
    assert set(data[0]["presets"]) == {"quick", "auto", "full"}


def test_list_elbench_without_data_names_the_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "bench", "list", "elbench")
    assert code == 2
    assert "--data" in flat(err) and out == ""


def test_unknown_benchmark_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "bench", "estimate", "nope", "-m", ANSWER_B)
    assert code == 2
    assert "unknown benchmark 'nope'" in flat(err)


# -- estimate ----------------------------------------------------------------------------------


def test_estimate_auto_checked_counts_only_automatic_tasks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = sample_tasks()
    auto = sum(len(t.items) for t in tasks.values() if t.grading == "auto")
    args = ("bench", "estimate", "sample", "--model", "scripted/echo?text=42",
            "--preset", "auto-checked")  # fmt: skip
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert f"{auto} questions for scripted/echo?text=42." in flat(err)
    assert "checked automatically" in flat(err)
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    assert code == 0
    plan = json.loads(out)
    assert plan["questions"] == auto and plan["judged"] == 0
    assert plan["errors"] == [] and plan["limit_problems"] == []
    assert plan["per_task"] == {k: len(t.items) for k, t in tasks.items() if t.grading == "auto"}
    assert [r["role"] for r in plan["roles"]] == ["target"]
    assert plan["resumes"] is None


def test_estimate_refused_when_judged_tasks_have_no_judge(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    judged = sum(len(t.items) for t in sample_tasks().values() if t.grading == "judge")
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "--model", "scripted/echo?text=42"
    )
    assert code == 2
    text = flat(err)
    assert text.startswith("This run can't start yet:")
    assert f"{judged} answers are graded by a judge model" in text and "--judge" in text
    assert "--preset auto-checked" in text
    code, out, _ = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", "scripted/echo?text=42", "--json"
    )
    assert code == 2
    assert any("--judge" in e for e in json.loads(out)["errors"])


def test_estimate_with_a_limit_below_the_low_estimate_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    base = ("bench", "estimate", "sample", "--model", PRICED, "--preset", "auto-checked")
    code, out, err = run_cli(monkeypatch, capsys, *base, "--json")
    assert code == 0, err
    low = json.loads(out)["low_usd"]
    assert low is not None and float(low) > 0.000001
    code, _, err = run_cli(monkeypatch, capsys, *base, "--limit", "0.000001")
    assert code == 2
    text = flat(err)
    assert "Spending limit too low:" in text
    assert "The total limit ($0.000001) is below the lowest estimate" in text
    assert FAKE_KEY not in text
    code, _, err = run_cli(monkeypatch, capsys, *base, "--limit-target", "0.000001")
    assert code == 2 and "limit for the model under test" in flat(err)


def test_a_role_limit_given_as_role_equals_usd_refuses_like_its_alias(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    base = ("bench", "estimate", "sample", "--model", PRICED, "--judge", PRICED)
    code, out, err = run_cli(monkeypatch, capsys, *base, "--json")
    assert code == 0, err
    judge = next(r for r in json.loads(out)["roles"] if r["role"] == "judge")
    assert float(judge["low_usd"]) > 0.000001
    refusals = []
    for flags in (("--limit", "judge=0.000001"), ("--limit-judge", "0.000001")):
        code, _, err = run_cli(monkeypatch, capsys, *base, *flags)
        assert code == 2, flags
        text = flat(err)
        assert "Spending limit too low:" in text
        assert "The limit for the judge ($0.000001) is below its lowest estimate" in text
        refusals.append(text)
    assert refusals[0] == refusals[1]  # the same refusal, word for word
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", PRICED, "--judge", PRICED,
        "--limit", "judge=0.000001", "--yes",
    )  # fmt: skip
    assert code == 2 and "limit for the judge" in flat(err)
    assert stored_runs(monkeypatch, capsys) == []


def test_limits_total_and_per_role_together(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", ANSWER_B, "--judge",
        PASS_JUDGE, "--limit", "5", "--limit", "judge=1", "--limit-target", "2", "--json",
    )  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert plan["limits"] == {"total": "5", "roles": {"target": "2", "judge": "1"}}
    assert {r["role"]: r["limit_usd"] for r in plan["roles"]} == {"target": "2", "judge": "1"}
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", ANSWER_B, "--preset", "auto",
        "--limit", "judge=1", "--limit-judge", "2",
    )  # fmt: skip
    assert code == 2 and "limit for the judge is given twice" in flat(err)


def test_a_limit_for_an_unknown_role_names_the_allowed_ones(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", ANSWER_B, "--preset", "auto",
        "--limit", "boss=1", "--yes",
    )  # fmt: skip
    assert code == 2 and out == ""
    text = flat(err)
    assert "--limit boss=1: unknown role 'boss': use one of target, judge, student" in text
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", ANSWER_B, "--limit",
        "judge=abc",
    )  # fmt: skip
    assert code == 2 and "--limit judge=abc: not a dollar amount" in flat(err)


def test_estimate_rejects_a_limit_that_is_not_money(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in ("ten", "-1", "nan"):
        code, _, err = run_cli(
            monkeypatch, capsys, "bench", "estimate", "sample", "-m", ANSWER_B,
            "--preset", "auto", "--limit", bad,
        )  # fmt: skip
        assert code == 2, bad
        assert "--limit" in flat(err), bad


def test_estimate_of_a_model_without_a_key_says_it_cannot_be_called(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", PRICED, "--preset", "auto"
    )
    assert code == 2
    assert f"{PRICED} cannot be called" in flat(err)


# -- run, runs, show, export -------------------------------------------------------------------


def test_run_then_runs_show_export_and_run_again(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    priced_echo: None,
) -> None:
    tasks = sample_tasks()
    total = sum(len(t.items) for t in tasks.values())
    judged = sum(len(t.items) for t in tasks.values() if t.grading == "judge")
    run_args = ("bench", "run", "sample", "--model", ANSWER_B, "--judge", PASS_JUDGE, "--yes")
    run_code, out, err = run_cli(monkeypatch, capsys, *run_args)
    assert run_code in (0, 1), err
    assert f"{total} questions for {ANSWER_B}." in flat(err)  # the estimate comes first
    assert "mean score" in out and "95% range" in out  # the scores table
    assert f"{total} answers scored" in flat(out)

    (run,) = stored_runs(monkeypatch, capsys)
    assert (run["benchmark"], run["model"], run["judge"]) == ("sample", ANSWER_B, PASS_JUDGE)
    assert (run["items"], run["scored"], run["errors"]) == (total, total, 0)
    assert run_code == (0 if run["status"] == "completed" else 1)
    run_id = run["run_id"]

    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", run_id[:20], "--json")
    assert code == 0  # a unique prefix is enough
    report = json.loads(out)
    assert report["run_id"] == run_id and report["status"] == "completed"
    assert report["scored"] == total and report["errors"] == 0
    areas = {a.key for a in load_benchmark("sample").areas}
    assert set(report["areas"]) == areas
    assert sum(a["count"] for a in report["areas"].values()) == total
    assert set(report["tasks"]) == set(tasks)
    explain = [k for k, t in tasks.items() if t.grading == "judge"]
    assert all(report["tasks"][k]["pass_rate"] == 1.0 for k in explain)  # the judge passed all
    assert report["covers_scope"] is True
    spent = Decimal(report["spent_usd"])
    assert spent > 0
    assert spent == sum((Decimal(v) for v in report["spent_by_role"].values()), Decimal(0))
    assert set(report["spent_by_role"]) == {"target", "judge"}
    # the ledger settled what the run spent (`sweepbench spend`), and every call is logged
    code, out, _ = run_cli(monkeypatch, capsys, "spend", "--json")
    assert code == 0
    ledger = json.loads(out)
    assert Decimal(ledger["spent_today"]) == spent and ledger["open_reservations"] == 0
    with Store.open() as store:
        calls = calls_of(store, run_id)
        rows = list(BenchStore(store).answers(run_id))
        assert Ledger(store).run_spent(run_id) == spent
    assert sum(c.role == "target" for c in calls) == sum(r["attempts"] for r in rows)
    assert sum(c.role == "judge" for c in calls) == judged  # one grade per judged answer
    assert sum((c.cost_usd or Decimal(0) for c in calls), Decimal(0)) == spent

    code, out, err = run_cli(monkeypatch, capsys, "bench", "show", run_id)
    assert code == 0 and run_id in flat(out) and "Finished" in out

    export = tmp_path / "export"
    code, out, err = run_cli(monkeypatch, capsys, "bench", "export", run_id, str(export))
    assert code == 0, err
    names = {"answers.jsonl", "failures.jsonl", "spend.jsonl", "summary.csv", "summary.json"}
    assert {p.name for p in export.iterdir()} == names
    answers = (export / "answers.jsonl").read_text().splitlines()
    assert len(answers) == total
    assert len({json.loads(line)["key"] for line in answers}) == total
    sample = load_benchmark("sample")
    questions = {i.key: i for t in sample.tasks for i in t.items}
    for line in answers:  # each answer carries the question it answers
        row = json.loads(line)
        assert row["prompt"] == questions[row["key"]].prompt
        assert row["source_file"] == questions[row["key"]].source_file
    assert (export / "failures.jsonl").read_text() == ""
    spend = [json.loads(line) for line in (export / "spend.jsonl").read_text().splitlines()]
    target_keys = {s["key"] for s in spend if s["role"] == "target"}
    assert len(target_keys) == total  # every answer has its cost line
    assert sum(1 for s in spend if s["role"] == "judge") == judged
    assert sum((Decimal(s["usd"]) for s in spend), Decimal(0)) == spent
    assert json.loads((export / "summary.json").read_text())["run_id"] == run_id

    # the same command again: the run is finished, nothing is asked again
    code, out, err = run_cli(monkeypatch, capsys, *run_args)
    assert code == 0
    text = flat(err)
    assert "Nothing left to run" in text and run_id in text
    assert "Running" not in text
    assert [r["run_id"] for r in stored_runs(monkeypatch, capsys)] == [run_id]  # no second run

    # nothing failed, so there is nothing to retry
    code, out, err = run_cli(monkeypatch, capsys, *run_args, "--retry-failed")
    assert code == 2
    assert "nothing to retry" in flat(err)


def test_run_json_prints_only_the_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    auto = sum(len(t.items) for t in sample_tasks().values() if t.grading == "auto")
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", "scripted/echo?text=42",
        "--preset", "auto-checked", "--json",
    )  # fmt: skip
    report = json.loads(out)  # stdout is the JSON report alone
    assert err.strip() == ""  # no estimate, no progress bar
    assert code == (0 if report["status"] == "completed" else 1)
    assert report["scored"] + report["errors"] == auto
    assert report["judge"] is None
    assert report["covers_scope"] is False  # the judged task was left out


def test_a_run_that_spends_money_needs_yes_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_tty: None
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", PRICED, "--preset", "auto"
    )
    assert code == 2
    assert "confirm with --yes" in flat(err) and out == ""
    assert stored_runs(monkeypatch, capsys) == []  # refused before anything was stored or sent


class _Terminal(io.StringIO):
    """Standard input that says it is a terminal, with the user's typed reply."""

    def isatty(self) -> bool:
        return True


def test_at_a_terminal_the_run_asks_before_spending_and_no_means_no(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", PRICED, "--preset", "auto"
    )
    assert code == 2
    text = flat(err)
    assert "Spend up to $" in text and "Not confirmed; nothing was spent." in text
    assert stored_runs(monkeypatch, capsys) == []


def test_a_run_with_a_limit_too_low_is_refused_even_with_yes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", PRICED, "--preset", "auto",
        "--limit", "0.000001", "--yes",
    )  # fmt: skip
    assert code == 2
    assert "Spending limit too low" in flat(err)
    assert stored_runs(monkeypatch, capsys) == []


def test_retry_failed_without_any_earlier_run_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", ANSWER_B, "--preset", "auto",
        "--retry-failed", "--yes",
    )  # fmt: skip
    assert code == 2
    assert "no earlier run with these settings" in flat(err)


def test_concurrency_out_of_range_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "-m", ANSWER_B, "--concurrency", "0"
    )
    assert code == 2 and "--concurrency" in flat(err)


def test_show_of_an_unknown_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "bench", "show", "no-such-run")
    assert code == 2
    assert "no benchmark run 'no-such-run'" in flat(err)


# -- a declaration of the user's own -----------------------------------------------------------

DECLARATION = """\
id: mine
name: My bench
areas:
  - {key: maths, label: Maths}
tasks:
  - id: sums
    area: maths
    name: Sums
    data: sums.jsonl
    fields: {id: id, prompt: question, reference: answer}
    scorer: exact
"""


def test_a_declared_benchmark_runs_and_its_report_survives_the_file_going_away(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    declaration = folder / "mine.yaml"
    declaration.write_text(DECLARATION)
    rows = [{"id": f"s{i}", "question": f"What is {i} + {i}?", "answer": "42" if i % 3 == 0
             else str(2 * i)} for i in range(6)]  # fmt: skip
    (folder / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(declaration), "-m", "scripted/echo?text=42",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert (report["benchmark"], report["scored"], report["errors"]) == ("mine", 6, 0)
    assert report["tasks"]["sums"]["pass_rate"] == pytest.approx(2 / 6)  # s0 and s3 are 42
    assert report["tasks"]["sums"]["expected"] == 6
    assert report["note"] is None
    declaration.unlink()
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", report["run_id"], "--json")
    assert code == 0
    again = json.loads(out)  # the report stored when the run ended: nothing to reload
    assert again["scored"] == 6 and again["note"] is None
    assert again["tasks"]["sums"]["pass_rate"] == pytest.approx(2 / 6)
    assert again["tasks"]["sums"]["expected"] == 6

    from sweepbench.store import Store
    from sweepbench.store.schema import bench_reports

    with Store.open() as store, store.engine.begin() as conn:
        conn.execute(bench_reports.delete())  # no stored report: scored again from the answers
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", report["run_id"], "--json")
    assert code == 0
    again = json.loads(out)
    assert again["scored"] == 6
    assert again["tasks"]["sums"]["pass_rate"] == pytest.approx(2 / 6)
    assert "could not be reloaded" in again["note"]


# -- resuming and retrying ---------------------------------------------------------------------


def _stop_after(count: int, model: str) -> str:
    """Start the sample's automatically checked set in the home's store, stop it after
    ``count`` answers (as Ctrl-C would) and return its run id."""
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.run_config import Selection
    from sweepbench.store import Store
    from tests.bench.plans import prepare

    with Store.open() as store:
        prepared = prepare(
            load_benchmark("sample"), store, model=model, selection=Selection(preset="auto")
        )
        runner = BenchRunner(prepared, store, concurrency=1)

        def stop_early(progress: Any) -> None:
            if progress.done == count:
                runner.stop()

        runner.on_progress = stop_early
        outcome = asyncio.run(runner.run())
    assert outcome.status == "interrupted"
    return outcome.run_id


def test_the_same_command_continues_a_stopped_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    auto = sum(len(t.items) for t in sample_tasks().values() if t.grading == "auto")
    run_id = _stop_after(5, "scripted/echo?text=42")
    (stopped,) = stored_runs(monkeypatch, capsys)
    assert stopped["run_id"] == run_id and stopped["status"] == "interrupted"
    done = stopped["scored"]
    assert 5 <= done < auto
    args = ("bench", "run", "sample", "-m", "scripted/echo?text=42", "--preset", "auto")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    text = flat(err)
    assert f"{auto - done} questions for scripted/echo?text=42 ({done} already answered)." in text
    assert (
        f"An earlier run with these exact settings ({run_id}) stopped after {done} answers" in text
    )
    assert "picks up where it left off" in text
    assert f"Continuing {run_id[:24]}" in text  # the bar may cut the id short
    (finished,) = stored_runs(monkeypatch, capsys)  # continued, not a second run
    assert finished["run_id"] == run_id and finished["status"] == "completed"
    assert (finished["scored"], finished["errors"]) == (auto, 0)
    # --no-resume starts afresh even though a run with these settings exists
    code, out, err = run_cli(monkeypatch, capsys, *args, "--no-resume", "--json")
    assert code == 0, err
    fresh = json.loads(out)
    assert fresh["run_id"] != run_id and fresh["scored"] == auto
    assert len(stored_runs(monkeypatch, capsys)) == 2


def test_retry_failed_regrades_judge_failures_without_asking_the_model_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], priced_echo: None
) -> None:
    tasks = sample_tasks()
    total = sum(len(t.items) for t in tasks.values())
    judged = sum(len(t.items) for t in tasks.values() if t.grading == "judge")
    args = ("bench", "run", "sample", "-m", ANSWER_B, "--judge", "scripted/echo?text=nonsense",
            "--yes")  # fmt: skip
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 1  # finished with errors
    assert f"Errors: {judged} judge_unparseable. Retry only those with --retry-failed." in flat(out)
    (run,) = stored_runs(monkeypatch, capsys)
    assert (run["status"], run["scored"], run["errors"]) == (
        "completed_with_errors", total - judged, judged,
    )  # fmt: skip

    def spend_counts() -> Counter[str]:
        with Store.open() as store:
            lines = Counter(s["role"] for s in BenchStore(store).spend_lines(run["run_id"]))
            calls = Counter(c.role for c in calls_of(store, run["run_id"]))
        assert calls == lines  # every priced call is a calls row with its spend line
        return lines

    before = spend_counts()
    assert before["judge"] == 2 * judged  # an unparseable verdict is asked for once more
    code, out, err = run_cli(monkeypatch, capsys, *args, "--retry-failed")
    assert code == 1
    text = flat(err)
    assert f"{judged} questions for {ANSWER_B}" in text
    assert f"Continuing {run['run_id'][:24]}" in text  # the bar may cut the id short
    after = spend_counts()
    assert after["target"] == before["target"]  # the stored answers were graded again
    assert after["judge"] == before["judge"] + 2 * judged
    (again,) = stored_runs(monkeypatch, capsys)
    assert (again["run_id"], again["errors"]) == (run["run_id"], judged)


def _sums(folder: Path, count: int) -> Path:
    """The declaration above with ``count`` questions "What is i + i?"; returns its path."""
    folder.mkdir()
    (folder / "mine.yaml").write_text(DECLARATION)
    rows = [{"id": f"s{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}
            for i in range(count)]  # fmt: skip
    (folder / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "mine.yaml"


def test_a_priced_run_above_the_daily_ceiling_pauses_and_spend_shows_it(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.01")
    set_prices(isolated_home, {"scripted.echo": (50, 50)})
    # each call holds about $0.005 (its prompt at the token bound plus 6 tokens of answer):
    # about ten fit today's $0.01, not thirty
    args = ("bench", "run", str(_sums(tmp_path / "bench", 30)), "-m", "scripted/echo",
            "--max-tokens", "6", "--concurrency", "1", "--yes")  # fmt: skip
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 1, err  # paused
    (run,) = stored_runs(monkeypatch, capsys)
    assert run["status"] == "paused_budget" and 0 < run["scored"] < 30
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", run["run_id"], "--json")
    report = json.loads(out)
    assert "SWEEPBENCH_DAILY_USD" in report["reason"] and "today's $0.01" in report["reason"]
    spent = Decimal(report["spent_usd"])
    code, out, _ = run_cli(monkeypatch, capsys, "spend", "--json")
    ledger = json.loads(out)
    assert Decimal(ledger["spent_today"]) == spent > 0 and spent <= Decimal("0.01")
    assert ledger["overridden"] == ["SWEEPBENCH_DAILY_USD"] and ledger["open_reservations"] == 0
    code, out, _ = run_cli(monkeypatch, capsys, "spend")
    assert code == 0 and format_usd(spent) in out
    # the same command again today: refused at its first call, nothing more asked or spent
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 1
    (again,) = stored_runs(monkeypatch, capsys)
    assert (again["run_id"], again["status"], again["scored"]) == (
        run["run_id"], "paused_budget", run["scored"],
    )  # fmt: skip
    code, out, _ = run_cli(monkeypatch, capsys, "spend", "--json")
    assert Decimal(json.loads(out)["spent_today"]) == spent


def test_a_pause_at_the_daily_ceiling_names_it_in_the_printed_outcome(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.01")
    set_prices(isolated_home, {"scripted.echo": (50, 50)})
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(_sums(tmp_path / "bench", 30)), "-m",
        "scripted/echo", "--max-tokens", "6", "--concurrency", "1", "--yes",
    )  # fmt: skip
    assert code == 1
    assert "SWEEPBENCH_DAILY_USD" in flat(out + err)


def test_a_declaration_given_by_a_relative_path_reloads_from_anywhere(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "mine.yaml").write_text(DECLARATION)
    rows = [{"id": f"s{i}", "question": f"{i}?", "answer": "42"} for i in range(3)]
    (folder / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(folder)
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "mine.yaml", "-m", "scripted/echo?text=42", "--json"
    )
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--json")
    assert code == 0
    assert json.loads(out)["note"] is None  # the data was found again
