"""Judge-scored single-prompt sweeps (issue 16, item 4): a judge model grades each cell's
output into a score with its reason and cost, priced in the estimate and admitted with the
sweep; failures are kept as failures; repeats are compared cell against best, paired by repeat
number."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

import sweepbench.sweeps as sweeps
from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.sweeps.history import list_sweeps, load_sweep
from sweepbench.sweeps.judge import ANSWER_BYTES_PER_TOKEN, cut_answer
from sweepbench.sweeps.plan import build_plan
from tests.bench.helpers import set_prices
from tests.helpers import run_cli

CELLS = "scripted/lorem"
JUDGE = "scripted/guess"
RUBRIC = "Names three prime numbers."
BASE = ("sweep", "Name three primes.", "--axis", "max_tokens", "--values", "16,64", "--model")


def _sweep_args(*extra: str) -> tuple[str, ...]:
    return (*BASE, CELLS, *extra)


def _calls() -> list[str]:
    with Store.open() as store:
        return [c.role for c in store.list_calls(limit=None)]


# -- grading stored and shown --------------------------------------------------------------------


def test_each_cell_is_graded_and_the_grade_is_stored_and_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, *_sweep_args("--judge", JUDGE, "--rubric", RUBRIC))
    assert code in (0, 1)  # the 16-token cell is truncated
    assert "score" in err and "graded by scripted/guess" in err and "a guess" in err
    assert sorted(_calls()) == ["judge", "judge", "sweep", "sweep"]  # one grade per sample
    with Store.open() as store:
        [summary] = list_sweeps(store)
        document = load_sweep(store, summary.id)
    assert document["judge"]["model"] == JUDGE and document["judge"]["rubric"] == RUBRIC
    for cell in document["cells"]:
        grade = cell["grade"]
        assert grade["status"] == "graded" and 0 <= grade["score"] <= 1
        assert grade["reason"] and grade["cost_usd"] == "0" and grade["call_id"]
        assert cell["text"]  # the output is kept beside its grade
    assert document["totals"]["judge_cost_usd"] == "0"

    code, _, err = run_cli(monkeypatch, capsys, "sweeps", "show", summary.id)
    assert code == 0
    code, out, _ = run_cli(monkeypatch, capsys, "sweeps", "show", summary.id)
    assert "graded by scripted/guess" in out and "score " in out


def test_the_json_result_and_the_exports_carry_the_grades(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = _sweep_args("--judge", JUDGE, "--reference", "2, 3 and 5", "--json")
    _, out, _ = run_cli(monkeypatch, capsys, *args)
    data = json.loads(out)
    assert data["judge"]["reference"] == "2, 3 and 5" and data["judge"]["rubric"] is None
    assert all(cell["grade"]["status"] == "graded" for cell in data["cells"])
    html_file, json_file = tmp_path / "sweep.html", tmp_path / "sweep.json"
    code, _, _ = run_cli(
        monkeypatch, capsys, "sweeps", "export", data["id"], "--html", str(html_file),
        "--json", str(json_file),
    )  # fmt: skip
    assert code == 0
    exported = json.loads(json_file.read_text("utf-8"))
    assert [c["grade"]["score"] for c in exported["cells"]] == [
        c["grade"]["score"] for c in data["cells"]
    ]
    page = html_file.read_text("utf-8")
    assert "score" in page and "scripted/guess" in page


def test_the_estimate_prices_the_grading(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    set_prices(isolated_home, {"scripted.guess": (1, 2)})
    plain = sweeps.estimate("Name three primes.", "max_tokens", [16, 64], model=CELLS)
    judged = sweeps.estimate(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=RUBRIC
    )
    assert plain.ceiling == 0 and judged.ceiling is not None and judged.ceiling > 0
    assert judged.judge_ceiling == judged.ceiling  # the cells are free, the judge is not
    # the worst case: the judge prompt with the answer at its whole budget, the judge's budget
    cell = judged.cells[1]
    assert cell.judge is not None and cell.judge.hold is not None
    assert cell.judge.hold * 1_000_000 >= 64 * ANSWER_BYTES_PER_TOKEN * 1 + 1024 * 2
    assert "Graded by scripted/guess" in judged.line()
    code, out, _ = run_cli(
        monkeypatch, capsys, *_sweep_args("--judge", JUDGE, "--rubric", RUBRIC,
                                          "--estimate-only", "--json"),
    )  # fmt: skip
    assert code == 0 and json.loads(out)["judge_ceiling_usd"] == str(judged.judge_ceiling)
    assert _calls() == []


def test_a_long_answer_is_cut_to_what_the_judge_was_priced_for() -> None:
    assert cut_answer("abc", 3) == ("abc", False)
    text, cut = cut_answer("aé€b", 4)  # cut at a character boundary
    assert cut and text == "aé" and len(text.encode()) <= 4


# -- money: refused before any call --------------------------------------------------------------


def test_a_judge_worst_case_over_the_daily_ceiling_is_refused_before_any_call(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    set_prices(isolated_home, {"scripted.guess": (100, 100)})  # USD per million tokens
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.05")
    code, _, err = run_cli(
        monkeypatch, capsys, *_sweep_args("--judge", JUDGE, "--rubric", RUBRIC, "--yes")
    )
    assert code == 2 and "refused" in err and "SWEEPBENCH_DAILY_USD" in err
    assert _calls() == []  # not one call: not the free cells either
    with Store.open() as store:
        assert list_sweeps(store) == []
    with pytest.raises(Exception, match="SWEEPBENCH_DAILY_USD"):  # the Python API refuses too
        sweeps.sweep(
            "Name three primes.", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=RUBRIC
        )
    assert _calls() == []


def test_the_judge_limit_is_its_own(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    set_prices(isolated_home, {"scripted.guess": (1, 1)})
    code, _, err = run_cli(
        monkeypatch, capsys,
        *_sweep_args("--judge", JUDGE, "--rubric", RUBRIC, "--yes", "--limit-judge", "0.000001"),
    )  # fmt: skip
    assert code == 2 and "refused" in err and "judge" in err
    assert _calls() == []
    code, _, err = run_cli(
        monkeypatch, capsys,
        *_sweep_args("--judge", JUDGE, "--rubric", RUBRIC, "--yes", "--limit-judge", "1"),
    )  # fmt: skip
    assert code in (0, 1) and sorted(_calls()) == ["judge", "judge", "sweep", "sweep"]
    code, _, err = run_cli(monkeypatch, capsys, *_sweep_args("--limit-judge", "1"))
    assert code == 2 and "--limit-judge needs --judge" in err
    code, _, err = run_cli(
        monkeypatch, capsys, *_sweep_args("--judge", JUDGE, "--rubric", "r", "--limit-judge", "x")
    )
    assert code == 2 and "--limit-judge x: not a dollar amount" in err


# -- failures are data ---------------------------------------------------------------------------


def test_an_unparseable_verdict_is_stored_as_such_and_the_output_kept() -> None:
    result = sweeps.sweep(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS,
        judge="scripted/echo?text=I%20think%20it%20is%20fine", rubric=RUBRIC,
    )  # fmt: skip
    for sample in result.samples:
        assert sample.status == "done" and sample.result is not None and sample.result.text
        assert sample.grade is not None and sample.grade.status == "unparseable"
        assert sample.grade.score is None and sample.grade.raw == "I think it is fine"
    with Store.open() as store:
        document = load_sweep(store, result.id)
    assert [c["grade"]["status"] for c in document["cells"]] == ["unparseable"] * 2
    assert all(c["grade"]["score"] is None for c in document["cells"])


def test_a_failed_judge_is_stored_as_a_failure_and_the_output_kept() -> None:
    result = sweeps.sweep(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS,
        judge="scripted/echo?fail=400", rubric=RUBRIC,
    )  # fmt: skip
    for sample in result.samples:
        assert sample.status == "done" and sample.result is not None and sample.result.text
        assert sample.grade is not None and sample.grade.status == "failed"
        assert sample.grade.score is None and "judge failed" in sample.grade.reason


# -- repeats: the paired comparison ---------------------------------------------------------------


def test_repeats_compare_every_cell_with_the_best_paired_by_repeat(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = sweeps.sweep(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS, repeats=3,
        judge=JUDGE, rubric=RUBRIC,
    )  # fmt: skip
    comparison = result.comparison
    assert comparison is not None and comparison["paired_by"] == "repeat number"
    labels = [cell.label for cell in result.plan.cells]
    assert comparison["best"] in labels
    assert [s["n"] for s in comparison["settings"]] == [3, 3]  # sample-0..2 of each cell
    [other] = comparison["comparisons"]
    assert other["best_label"] == comparison["best"] and other["sentence"]
    with Store.open() as store:
        assert load_sweep(store, result.id)["comparison"] == comparison
    args = _sweep_args("--repeats", "2", "--judge", JUDGE, "--rubric", RUBRIC)
    _, _, err = run_cli(monkeypatch, capsys, *args)
    assert "best cell:" in err and "vs best:" in err
    _, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    assert json.loads(out)["comparison"]["comparisons"][0]["sentence"]


def test_one_sample_per_cell_has_no_comparison() -> None:
    result = sweeps.sweep(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=RUBRIC
    )
    assert result.comparison is None


# -- the judge's arguments -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--rubric", "r"), "a rubric needs a judge model"),
        (("--reference", "r"), "a reference needs a judge model"),
        (("--judge", JUDGE), "the judge needs a rubric (--rubric TEXT|FILE) or a reference"),
        (("--judge", JUDGE, "--rubric", "a", "--reference", "b"), "not both"),
        (("--judge", JUDGE, "--rubric", "  "), "the rubric is empty"),
        (("--judge", "scripted/nope", "--rubric", "r"), "unknown scripted model"),
    ],
)
def test_judge_argument_errors_are_refused_clearly(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    message: str,
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, *_sweep_args(*extra))
    assert code == 2 and "refused" in err
    assert message in " ".join(err.split())
    assert _calls() == []


def test_a_rubric_or_reference_file_is_read(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Names three primes, each below 10.\n", "utf-8")
    plan = build_plan("p", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=str(rubric))
    assert plan.judge is not None and plan.judge.rubric == "Names three primes, each below 10.\n"
    plan = build_plan("p", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, reference="2 3 5")
    assert plan.judge is not None and plan.judge.reference == "2 3 5"  # not a file: the text
    empty = tmp_path / "empty.txt"
    empty.write_text("", "utf-8")
    plan = build_plan("p", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=str(empty))
    assert plan.judge is None and "the rubric is empty" in plan.refusals[-1].message
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    plan = build_plan("p", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, reference=str(binary))
    assert "is not UTF-8 text" in plan.refusals[-1].message
    with pytest.raises(UserError, match="not both"):
        sweeps.sweep("p", "max_tokens", [16], model=CELLS, judge=JUDGE, rubric="a", reference="b")


def test_the_judge_calls_are_held_under_role_judge(isolated_home: Path) -> None:
    set_prices(isolated_home, {"scripted.guess": (1, 1)})
    result = sweeps.sweep(
        "Name three primes.", "max_tokens", [16, 64], model=CELLS, judge=JUDGE, rubric=RUBRIC,
        judge_limit_usd=Decimal("1"),
    )  # fmt: skip
    assert all(s.grade is not None and s.grade.status == "graded" for s in result.samples)
    costs = [s.grade.cost_usd for s in result.samples if s.grade]
    assert all(c is not None and c > 0 for c in costs)
    assert result.judge_cost_usd == sum(c for c in costs if c is not None)
    from sweepbench.money.ledger import Ledger

    assert result.judge_cost_usd is not None
    with Store.open() as store:
        spent = Ledger(store).role_spent(result.id, "judge")
        assert abs(spent - result.judge_cost_usd) <= Decimal("0.00001")  # micro-dollars
        assert Ledger(store).role_spent(result.id, "sweep") == 0  # the cells were free


def test_cells_with_the_same_label_are_still_compared() -> None:
    models = ["scripted/lorem?tps=1000", "scripted/lorem?tps=2000"]
    result = sweeps.sweep(
        "Name three primes.", "model", models, repeats=2, effort="none", judge=JUDGE, rubric=RUBRIC
    )
    assert result.plan.cells[0].label == result.plan.cells[1].label
    assert result.comparison is not None and "error" not in result.comparison
    assert result.comparison["best"].endswith("(cell 1)")
