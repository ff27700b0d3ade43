"""Comparisons side by side (spec §17.8): task by task on the matched subset, by area with
partial areas, and the ``compare`` command on runs made in a test store."""

from __future__ import annotations

import json
import math
import sys

import pytest
import typer
from typer.testing import CliRunner

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.cli.leaderboard_compare import register
from sweepbench.errors import UserError
from sweepbench.leaderboard.compare import Entry, Layout, LayoutArea, compare
from sweepbench.leaderboard.published import TASK_FIGURES_MARK, TEACHING_MARK
from sweepbench.leaderboard.rows import REVISION_MARK
from sweepbench.store import Store
from tests.helpers import run_cli

GUESS = "scripted/guess"
ANSWER_A = "scripted/echo?text=ANSWER: A"

LAYOUT = Layout(
    (
        LayoutArea("math", "Math", ("t1", "t2")),
        LayoutArea("talk", "Talk", ("t3",)),
    )
)


def entries() -> list[Entry]:
    first = Entry(
        "run:one",
        "model-one",
        {"t1": 50.0, "t2": 70.0, "t3": 90.0},
        areas={"math": 62.0, "talk": 90.0},
        overall=76.0,
        layout=LAYOUT,
    )
    second = Entry("run:two", "model-two", {"t1": 40.0, "t3": 60.0}, layout=LAYOUT)
    published = Entry.published(
        "big",
        {"t1": 80.0, "t2": 20.0, "t3": 30.0, "t9": 1.0},
        areas={"math": 55.0, "talk": 31.0},
        overall=43.0,
        revised={"talk"},
    )
    return [first, second, published]


# ---------------------------------------------------------------- task by task


def test_task_rows_are_the_first_entrys_tasks_with_dashes_and_a_matched_mean() -> None:
    result = compare(entries(), by="task")
    assert result.header() == ["Task", "run:one", "run:two", "official:big"]
    assert result.rows() == [  # a published row's task figures: the revision's, marked †
        ["t1", "50.0", "40.0", "80.0 †"],
        ["t2", "70.0", "—", "20.0 †"],
        ["t3", "90.0", "60.0", "30.0 †"],
        ["Mean over 2 matched tasks", "70.0", "50.0", "55.0 †"],
    ]
    assert (result.matched, result.tasks) == (2, 3)
    assert result.note.startswith("2 of 3 tasks matched")
    assert result.notes == [result.note, TASK_FIGURES_MARK]
    assert TASK_FIGURES_MARK == (
        "† Task figures: 2026-06-08 revision, which does not add up to the final table."
    )
    # two runs alone: nothing marked, nothing to explain
    assert compare(entries()[:2]).notes == [compare(entries()[:2]).note]


def test_the_first_entry_decides_the_rows() -> None:
    first, second, published = entries()
    result = compare([published, first], by="task")
    assert [row[0] for row in result.rows()] == [
        "t1",
        "t2",
        "t3",
        "t9",
        "Mean over 3 matched tasks",
    ]
    assert result.rows()[3] == ["t9", "1.0 †", "—"]
    result = compare([second, first], by="task")
    assert [row[0] for row in result.rows()] == ["t1", "t3", "Mean over 2 matched tasks"]


def test_nothing_matched_gives_a_dash_mean() -> None:
    first = Entry("run:one", "one", {"t1": 50.0}, layout=LAYOUT)
    other = Entry("run:two", "two", {"t3": 10.0}, layout=LAYOUT)
    result = compare([first, other])
    assert result.rows()[-1] == ["Mean over 0 matched tasks", "—", "—"]
    assert result.matched == 0


# ---------------------------------------------------------------- by area


def test_area_rows_show_partial_where_an_entry_covers_only_some_tasks() -> None:
    result = compare(entries(), by="area")
    assert result.header() == ["Area", "run:one", "run:two", "official:big"]
    assert result.rows() == [  # a published row: its final figures, never its tasks' mean
        ["Math", "62.0", "partial (1/2)", "55.0"],
        ["Talk", "90.0", "60.0", "31.0 †"],
        ["Overall", "76.0", "partial (2/3)", "43.0"],
    ]
    assert result.notes == [result.note, REVISION_MARK]
    data = result.as_json()
    assert data["by"] == "area"
    assert data["marks"] == [REVISION_MARK]
    math_row = data["rows"][0]
    assert math_row["cells"][1] == {
        "score": None, "covered": 1, "of": 2, "text": "partial (1/2)", "mark": None,
    }  # fmt: skip
    assert data["rows"][1]["cells"][2]["mark"] == "†"


def test_a_published_row_never_makes_an_area_from_its_task_figures() -> None:
    """Task figures of another revision do not add up to the final table: a published row
    without a final figure for an area shows a dash, whatever tasks it covers, and one with
    final figures shows them even where its task figures are partial."""
    run = entries()[0]
    tasks_only = Entry.published("tasks-only", {"t1": 80.0, "t2": 20.0, "t3": 30.0})
    finals = Entry.published("finals", {"t1": 10.0}, areas={"math": 70.0, "talk": 90.0},
                             overall=80.0)  # fmt: skip
    result = compare([run, tasks_only, finals], by="area")
    assert result.rows() == [
        ["Math", "62.0", "—", "70.0"],
        ["Talk", "90.0", "—", "90.0"],
        ["Overall", "76.0", "—", "80.0"],
    ]
    assert result.notes[-1] == (
        "official:tasks-only is not in the final published table: it has task figures only "
        "(2026-06-08 revision), no area or overall figure."
    )


TEACHING_LAYOUT = Layout(
    (
        LayoutArea("math", "Math", ("t1", "t2")),
        LayoutArea("teach", "Teaching", ("guided",)),
    )
)


def test_a_runs_teaching_beside_a_published_one_is_marked() -> None:
    run = Entry("run:one", "model-one", {"t1": 50.0, "t2": 70.0, "guided": 40.0},
                areas={"math": 60.0, "teach": 40.0}, overall=50.0,
                layout=TEACHING_LAYOUT)  # fmt: skip
    published = Entry.published("big", {"t1": 80.0, "t2": 20.0, "guided": 0.0},
                                areas={"math": 50.0, "teach": 94.4}, overall=72.2,
                                teaching={"guided"})  # fmt: skip
    by_area = compare([run, published], by="area")
    assert by_area.rows() == [
        ["Math", "60.0", "50.0"],
        ["Teaching ‡", "40.0", "94.4"],
        ["Overall ‡", "50.0", "72.2"],
    ]
    assert by_area.notes == [by_area.note, TEACHING_MARK]
    assert [r["mark"] for r in by_area.as_json()["rows"]] == [None, "‡", "‡"]
    by_task = compare([run, published], by="task")
    assert [row[0] for row in by_task.rows()] == ["t1", "t2", "guided ‡",
                                                  "Mean over 3 matched tasks"]  # fmt: skip
    assert by_task.notes == [by_task.note, TASK_FIGURES_MARK, TEACHING_MARK]
    # published rows alone: no run's Teaching score stands beside them
    other = Entry.published("small", {"guided": 10.0}, areas={"teach": 50.0},
                            teaching={"guided"})  # fmt: skip
    alone = compare([published, other], by="area", layout=TEACHING_LAYOUT)
    assert [row[0] for row in alone.rows()] == ["Math", "Teaching", "Overall"]
    assert TEACHING_MARK not in alone.notes


def test_an_area_with_none_of_its_tasks_is_a_dash() -> None:
    first = Entry("run:one", "one", {"t1": 50.0, "t2": 10.0}, layout=LAYOUT)
    other = Entry("run:two", "two", {"t1": 20.0, "t2": 30.0, "t3": 5.0}, layout=LAYOUT)
    rows = compare([first, other], by="area").rows()
    assert rows == [
        ["Math", "30.0", "25.0"],
        ["Talk", "—", "5.0"],
        ["Overall", "partial (2/3)", "15.0"],
    ]


def test_refusals() -> None:
    first, second, published = entries()
    with pytest.raises(UserError, match="two or more"):
        compare([first])
    with pytest.raises(UserError, match="more than once"):
        compare([first, second, first])
    other = Entry.published("small", {"t1": 1.0})
    with pytest.raises(UserError, match="areas and tasks"):
        compare([published, other])
    assert compare([published, other], layout=LAYOUT).matched == 1


# ---------------------------------------------------------------- runs and the command


def make_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], model: str
) -> str:
    args = ("bench", "run", "sample", "-m", model, "--preset", "auto-checked", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    report = json.loads(out)
    assert code == 0, err
    return str(report["run_id"])


@pytest.fixture
def two_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    return make_run(monkeypatch, capsys, GUESS), make_run(monkeypatch, capsys, ANSWER_A)


def app() -> typer.Typer:
    made = typer.Typer()
    register(made)

    @made.command()
    def other() -> None:  # a second command, so that compare is a subcommand as in the app
        """Nothing."""

    return made


def invoke(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(app(), list(args))
    return result.exit_code, result.output, result.exception


def by_hand(run_a: str, run_b: str) -> tuple[int, float, int, int]:
    """n, B − A in points, b and c, straight from the stored outcomes (pass/fail tasks)."""
    with Store.open() as store:
        runs = BenchStore(store)
        a = {r["key"]: bool(r["passed"]) for r in runs.outcomes(run_a) if r["status"] == "scored"}
        b = {r["key"]: bool(r["passed"]) for r in runs.outcomes(run_b) if r["status"] == "scored"}
    shared = sorted(set(a) & set(b))
    worse = sum(1 for k in shared if a[k] and not b[k])
    better = sum(1 for k in shared if b[k] and not a[k])
    return len(shared), 100 * (better - worse) / len(shared), worse, better


def test_entry_of_a_record_has_its_scores_and_layout(two_runs: tuple[str, str]) -> None:
    guess, _ = two_runs
    with Store.open() as store:
        row = BenchStore(store).run(guess)
    assert row is not None and row.record is not None
    record = load_record(row.record)
    entry = Entry.of_record(record)
    assert entry.key == f"run:{guess}"
    assert entry.label == GUESS
    assert entry.tasks == {t: s.score for t, s in record.scores.tasks.items()}
    assert entry.layout is not None
    assert entry.layout.tasks == tuple(record.coverage.tasks)


def test_compare_two_runs_json_task_and_area(two_runs: tuple[str, str]) -> None:
    guess, answer_a = two_runs
    code, out, exc = invoke("compare", f"run:{guess}", answer_a, "--json")
    assert code == 0, exc
    data = json.loads(out)
    assert [e["key"] for e in data["entries"]] == [f"run:{guess}", f"run:{answer_a}"]
    assert data["paired"] is None
    tasks = [r for r in data["rows"] if r["kind"] == "task"]
    assert {r["key"] for r in tasks} == {"arithmetic", "multiple_choice", "instructions"}
    mean = data["rows"][-1]
    assert mean["kind"] == "mean"
    for column in (0, 1):
        scores = [r["cells"][column]["score"] for r in tasks]
        assert mean["cells"][column]["score"] == pytest.approx(sum(scores) / len(scores))
    assert data["matched"] == 3

    code, out, exc = invoke("compare", guess, answer_a, "--by", "area", "--json")
    assert code == 0, exc
    rows = {r["key"]: r for r in json.loads(out)["rows"]}
    # the judged task was left out of auto-checked runs: its area has none of its tasks, and
    # Overall is partial
    assert rows["judged"]["cells"][0]["text"] == "—"
    assert rows["overall"]["cells"][0]["text"] == "partial (3/4)"


def test_compare_paired_prints_the_table_and_the_sentence(two_runs: tuple[str, str]) -> None:
    guess, answer_a = two_runs
    n, diff, worse, better = by_hand(guess, answer_a)
    code, out, exc = invoke("compare", guess, answer_a, "--paired", "--json")
    assert code == 0, exc
    paired = json.loads(out)["paired"]
    assert paired["n"] == n
    assert paired["diff"] == pytest.approx(diff)
    assert (paired["discordant_b"], paired["discordant_c"]) == (worse, better)
    k, total = min(worse, better), worse + better
    assert paired["p_value"] == pytest.approx(
        min(1.0, 2 * sum(math.comb(total, i) for i in range(k + 1)) / 2**total)
    )
    assert paired["flips_share"] == pytest.approx(total / n)
    assert paired["low"] <= paired["diff"] <= paired["high"]

    code, out, exc = invoke("compare", guess, answer_a, "--paired")
    assert code == 0, exc
    flat = " ".join(out.split())
    assert "Task by task (matched subset)" in flat
    assert "3 of 3 tasks matched" in flat
    assert paired["sentence"] in flat
    # the same command twice: the same range (seed 0)
    _, again, _ = invoke("compare", guess, answer_a, "--paired", "--json")
    assert json.loads(again)["paired"] == paired


def test_compare_refusals(two_runs: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    guess, answer_a = two_runs
    cases = [
        (("compare", guess), "two or more"),
        (("compare", guess, "run:nope-such-run"), "no benchmark run"),
        (("compare", guess, answer_a, "--by", "skill"), "task or area"),
        (("compare", guess, answer_a, guess), "more than once"),
        (("compare", guess, "official:gpt-5.4", "--paired"), "exactly two runs"),
        (("compare", guess, answer_a, answer_a, "--paired"), "exactly two runs"),
        (("compare", guess, "official:no-such-model"), "no published model"),
        (("compare", guess, "run:"), "names no run"),
    ]
    for args, words in cases:
        code, _, exc = invoke(*args)
        assert code != 0
        assert isinstance(exc, UserError), (args, exc)
        assert words in str(exc), (args, str(exc))
    # without the published rows' module, official: keys are refused in one sentence
    monkeypatch.setitem(sys.modules, "sweepbench.leaderboard.published", None)
    _, _, exc = invoke("compare", guess, "official:gpt-5.4")
    assert isinstance(exc, UserError)
    assert "published rows are not available yet" in str(exc)


def test_compare_with_a_published_row(two_runs: tuple[str, str]) -> None:
    guess, _ = two_runs
    code, out, exc = invoke("compare", guess, "official:gpt-5.4", "--json")
    assert code == 0, exc
    data = json.loads(out)
    assert data["entries"][1]["key"] == "official:gpt-5.4"
    # the published rows are ELBench's tasks, the run is the sample benchmark's: none match
    assert data["matched"] == 0
