"""A shared folder cannot hurt, and cannot lie (issue 26, §4): ``leaderboard pull`` (and the
Leaderboard page's Refresh, through the same reader) reads regular files only, within a size
and a nesting bound, skipping each bad file with its reason and importing the rest; a pulled
bundle's scores are recomputed from its answers, so a forged one is refused with its reason;
``leaderboard publish`` never writes through a link. The hostile folders are built here:
links to ``/dev/zero`` and out of the folder, a FIFO, deep JSON, a sparse huge file, forged
bundles, a symlinked publish target."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.leaderboard import bundle_pull
from sweepbench.leaderboard.bundle import MAX_ANSWER_CHARS, SUFFIX, file_system
from sweepbench.leaderboard.bundle_pull import MAX_BYTES
from sweepbench.settings import SHARED_ENV
from sweepbench.store import Store
from sweepbench.web.leaderboard_data import pull_shared
from tests.helpers import run_cli
from tests.leaderboard.helpers import store_answered_golden_run, store_golden_run

needs_posix = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and /dev/zero")


@pytest.fixture(autouse=True)
def _clean_memory() -> Iterator[None]:
    fs, _ = file_system("memory://")
    yield
    if fs.exists("/hostile"):
        fs.rm("/hostile", recursive=True)


def publish(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], run_id: str, to: str
) -> tuple[int, str, str]:
    return run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", to, "--yes")


def honest_bundle(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: Path
) -> Path:
    """The golden run (answers behind its record, as the runner leaves it) published into
    ``folder``; the publisher's store is then left for an empty one (another machine)."""
    home = os.environ["SWEEPBENCH_HOME"]
    run_id = store_answered_golden_run(as_elbench=True)
    code, _, err = publish(monkeypatch, capsys, run_id, str(folder))
    assert code == 0, err
    monkeypatch.setenv("SWEEPBENCH_HOME", f"{home}-viewer")
    return folder / f"{run_id}{SUFFIX}"


def pull(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: Path | str
) -> tuple[str, list[str]]:
    """``leaderboard pull SOURCE`` (it must succeed): its output and its skip lines."""
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull", str(source))
    assert code == 0, err
    assert "Traceback" not in out + err
    return out, [" ".join(line.split()) for line in err.strip().splitlines() if line.strip()]


def stored_runs() -> list[str]:
    with Store.open() as store:
        return sorted(r.id for r in BenchStore(store).runs())


def forge(honest: Path, folder: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the honest bundle edited by ``edit`` (its JSON as a dict), in ``folder``."""
    data = json.loads(honest.read_text("utf-8"))
    edit(data)
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}{SUFFIX}"
    path.write_text(json.dumps(data), "utf-8")
    return path


def flat(text: str) -> str:
    """``text`` without any whitespace (the CLI's error lines wrap at the terminal's width,
    inside paths too)."""
    return "".join(text.split())


def line_about(lines: list[str], path: Path) -> str:
    (found,) = [line for line in lines if line.startswith(f"{path}:")]
    return found


# ---------------------------------------------------------------- files that hurt


@needs_posix
def test_a_folder_of_hostile_files_is_pulled_file_by_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    honest = honest_bundle(monkeypatch, capsys, shared)
    outside = tmp_path / "outside"
    outside.mkdir()
    valid_outside = outside / f"elsewhere{SUFFIX}"
    valid_outside.write_bytes(honest.read_bytes())
    zero = shared / f"zero{SUFFIX}"
    zero.symlink_to("/dev/zero")
    fifo = shared / f"pipe{SUFFIX}"
    os.mkfifo(fifo)
    deep = shared / f"deep{SUFFIX}"
    deep.write_text("[" * 200_000 + "]" * 200_000, "utf-8")
    out_link = shared / f"out{SUFFIX}"
    out_link.symlink_to(valid_outside)
    in_link = shared / f"alias{SUFFIX}"  # a link inside the folder is read (to a regular file)
    in_link.symlink_to(honest.name)
    folder = shared / f"folder{SUFFIX}"
    folder.mkdir()

    out, lines = pull(monkeypatch, capsys, shared)
    assert "1 pulled, 1 already present, 5 skipped." in out
    assert stored_runs() == [honest.name.removesuffix(SUFFIX)]
    assert len(lines) == 5
    assert line_about(lines, zero) == (
        f"{zero}: skipped, a symbolic link to /dev/zero, outside the folder (only files in it "
        "are read)"
    )
    assert line_about(lines, fifo) == f"{fifo}: skipped, a named pipe (FIFO), not a regular file"
    assert line_about(lines, deep) == (
        f"{deep}: skipped, not a run bundle (its JSON is nested deeper than 100 levels at line 1 "
        "column 101)"
    )
    assert line_about(lines, out_link).startswith(
        f"{out_link}: skipped, a symbolic link to {valid_outside.resolve()}, outside the folder"
    )
    assert line_about(lines, folder) == f"{folder}: skipped, a folder, not a regular file"


@needs_posix
def test_the_web_refresh_pulls_past_the_same_hostile_files(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    honest = honest_bundle(monkeypatch, capsys, shared)
    (shared / f"zero{SUFFIX}").symlink_to("/dev/zero")
    os.mkfifo(shared / f"pipe{SUFFIX}")
    (shared / f"deep{SUFFIX}").write_text("{" * 200_000, "utf-8")
    monkeypatch.setenv(SHARED_ENV, str(shared))
    with Store.open() as store:
        lines = pull_shared(store)
    assert lines is not None
    assert lines[0] == (
        f"Pulled from the shared leaderboard at {shared}: 1 added, 0 already here, 3 skipped."
    )
    assert any("a named pipe (FIFO), not a regular file" in line for line in lines[1:])
    assert any("a symbolic link to /dev/zero, outside the folder" in line for line in lines[1:])
    assert any("nested deeper than 100 levels" in line for line in lines[1:])
    assert stored_runs() == [honest.name.removesuffix(SUFFIX)]


@needs_posix
def test_a_fifo_or_a_device_named_as_the_source_is_refused_unread(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / f"pipe{SUFFIX}"
    os.mkfifo(fifo)
    out, lines = pull(monkeypatch, capsys, fifo)
    assert "0 pulled, 0 already present, 1 skipped." in out
    assert lines == [f"{fifo}: skipped, a named pipe (FIFO), not a regular file"]
    out, lines = pull(monkeypatch, capsys, "/dev/zero")
    assert lines == ["/dev/zero: skipped, a character device, not a regular file"]


def test_a_file_name_cannot_write_to_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / f"\x1b]0;owned\x07\x1b[2Jnew\nline{SUFFIX}").write_text("{not json", "utf-8")
    out, lines = pull(monkeypatch, capsys, shared)
    assert "0 pulled, 0 already present, 1 skipped." in out
    assert lines == [
        f"{shared}/\\x1b]0;owned\\x07\\x1b[2Jnew\\nline{SUFFIX}: skipped, not JSON (Expecting "
        "property name enclosed in double quotes)"
    ]


def test_a_file_beyond_the_size_bound_is_refused_unread(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    honest = honest_bundle(monkeypatch, capsys, shared)
    huge = shared / f"huge{SUFFIX}"
    with huge.open("wb") as handle:  # sparse: no disk used, nothing to read but zeros
        handle.truncate(MAX_BYTES + 1)
    out, lines = pull(monkeypatch, capsys, shared)
    assert "1 pulled, 0 already present, 1 skipped." in out
    assert lines == [
        f"{huge}: skipped, {MAX_BYTES + 1:,} bytes, more than the {MAX_BYTES:,} bytes allowed"
    ]

    monkeypatch.setattr(bundle_pull, "MAX_BYTES", 1000)  # the bound, lowered
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "third"))
    out, lines = pull(monkeypatch, capsys, honest)
    size = honest.stat().st_size
    assert lines == [f"{honest}: skipped, {size:,} bytes, more than the 1,000 bytes allowed"]
    assert stored_runs() == []


def test_an_answer_text_beyond_its_bound_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    honest = honest_bundle(monkeypatch, capsys, tmp_path / "shared")

    def long_answer(data: dict[str, Any]) -> None:
        data["answers"][0]["answer"] = "x" * (MAX_ANSWER_CHARS + 1)

    long = forge(honest, tmp_path / "forged", "long", long_answer)
    _, lines = pull(monkeypatch, capsys, long)
    assert lines == [
        f"{long}: skipped, not a valid run bundle (answers.0.answer: a text of "
        f"{MAX_ANSWER_CHARS + 1:,} characters, more than the {MAX_ANSWER_CHARS:,} a bundle's "
        "text may hold)"
    ]


def test_a_bad_file_at_a_url_is_skipped_and_the_rest_imported(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    honest = honest_bundle(monkeypatch, capsys, tmp_path / "shared")
    fs, _ = file_system("memory://")
    fs.pipe_file(f"/hostile/{honest.name}", honest.read_bytes())
    fs.pipe_file(f"/hostile/deep{SUFFIX}", b"[" * 200_000)
    fs.makedirs(f"/hostile/folder{SUFFIX}", exist_ok=True)
    fs.pipe_file(f"/hostile/folder{SUFFIX}/inner.json", b"{}")
    monkeypatch.setattr(bundle_pull, "MAX_BYTES", 300_000)  # the bound, lowered
    fs.pipe_file(f"/hostile/big{SUFFIX}", b" " * 300_001)
    out, lines = pull(monkeypatch, capsys, "memory://hostile")
    assert "1 pulled, 0 already present, 3 skipped." in out
    assert f"memory://hostile/folder{SUFFIX}: skipped, a directory, not a regular file" in lines
    assert any(line.startswith(f"memory://hostile/deep{SUFFIX}: skipped, not a run bundle (its")
               for line in lines)  # fmt: skip
    assert f"memory://hostile/big{SUFFIX}: skipped, 300,001 bytes, more than the 300,000 bytes " \
        "allowed" in lines  # fmt: skip


# ---------------------------------------------------------------- bundles that lie


def _all_failed_with_perfect_scores(data: dict[str, Any]) -> None:
    """The issue's forgery: every answer failed, and a record (consistent in itself) whose
    scores say 100 on 1,000,000 answers."""
    for answer in data["answers"]:
        answer.update(status="failed", score=None, passed=None, error_type="provider_error")
    record = data["record"]
    perfect = {"score": 100.0, "low": 99.0, "high": 100.0, "n": 1_000_000, "mean_score": 1.0,
               "pass_rate": 1.0}  # fmt: skip
    for part in record["scores"]["tasks"], record["scores"]["areas"]:
        for key in part:
            part[key] = dict(perfect)
    record["scores"]["overall"] = dict(perfect)
    data["tasks"] = record["scores"]["tasks"]
    failed = len(data["answers"])
    record["counts"] = {"scored": 0, "failed": failed, "errors_by_type": {"provider_error": failed},
                        "left_out": 0}  # fmt: skip
    coverage = record["coverage"]
    for part in [*coverage["tasks"].values(), *coverage["areas"].values(), coverage["overall"]]:
        part.update(scored=0, failed=part["selected"], unasked=0, complete=False)
    for area in coverage["areas"].values():
        area["tasks_scored"] = 0
    coverage["overall"]["all_areas_present"] = False


def _new_run(run_id: str) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["run_id"] = data["record"]["run_id"] = run_id

    return edit


def _then(*edits: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        for one in edits:
            one(data)

    return edit


def _in_the_future(data: dict[str, Any]) -> None:
    data["published_at"] = data["record"]["updated_at"] = "2099-01-01T00:00:00Z"


def _still_running(data: dict[str, Any]) -> None:
    data["record"]["status"] = "running"


def _impossible_answer_score(data: dict[str, Any]) -> None:
    data["answers"][0]["score"] = -1e308


def _impossible_mean_score(data: dict[str, Any]) -> None:
    data["record"]["scores"]["overall"]["mean_score"] = -1e308


def test_a_forged_bundle_is_refused_and_the_real_run_keeps_its_place(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    honest = honest_bundle(monkeypatch, capsys, shared)
    real_id = honest.name.removesuffix(SUFFIX)
    forged = forge(honest, shared, "forged", _then(
        _all_failed_with_perfect_scores, _new_run("forged-20990101-000000-00000000"),
    ))  # fmt: skip
    out, lines = pull(monkeypatch, capsys, shared)
    assert "1 pulled, 0 already present, 1 skipped." in out
    assert lines == [
        f"{forged}: refused, record.scores.tasks.arithmetic says 100.0 on 1,000,000 answers; "
        "its answers give no score there (no scored answer counts)"
    ]
    assert stored_runs() == [real_id]
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "--board", "openai/gpt-5-mini",
                             "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["incomplete_runs"] == [real_id]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (_in_the_future, "published_at (2099-01-01 00:00:00 UTC) is in the future (now "),
        (_still_running, "its record says the run is still running"),
        (_impossible_answer_score,
         "answers[0] ('arithmetic-00'): score -1e+308 is impossible for task 'arithmetic' "
         "(0 to 100)"),
        (_impossible_mean_score,
         "record.scores.overall.mean_score says -1e+308; its answers give 0.7894736842105263"),
    ],
    ids=["future", "running", "answer-score", "record-score"],
)  # fmt: skip
def test_a_bundle_the_answers_cannot_back_is_refused_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    edit: Callable[[dict[str, Any]], None],
    says: str,
) -> None:
    honest = honest_bundle(monkeypatch, capsys, tmp_path / "shared")
    forged = forge(honest, tmp_path / "forged", "forged", edit)
    out, lines = pull(monkeypatch, capsys, forged)
    assert "0 pulled, 0 already present, 1 skipped." in out
    [line] = lines
    assert line.startswith(f"{forged}: refused, {says}"), line
    assert stored_runs() == []


def test_the_same_content_under_a_new_run_id_is_one_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    honest = honest_bundle(monkeypatch, capsys, shared)
    real_id = honest.name.removesuffix(SUFFIX)
    copy = forge(honest, shared, "copy", _new_run("copy-of-the-run"))
    out, lines = pull(monkeypatch, capsys, shared)
    assert "1 pulled, 0 already present, 1 skipped." in out  # the copy sorts first: it is kept
    assert lines == [
        f"{honest}: skipped, run {real_id} is run copy-of-the-run (already here) under another "
        "run id: the same settings and answers"
    ]
    assert stored_runs() == ["copy-of-the-run"]
    out, lines = pull(monkeypatch, capsys, copy)  # pulled again: already here by its run id
    assert "0 pulled, 1 already present, 0 skipped." in out


def test_a_local_run_published_again_under_a_new_id_is_not_pulled_beside_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_answered_golden_run(as_elbench=True)
    shared = tmp_path / "shared"
    code, _, err = publish(monkeypatch, capsys, run_id, str(shared))
    assert code == 0, err
    copy = forge(shared / f"{run_id}{SUFFIX}", tmp_path / "copies", "copy", _new_run("copy-1"))
    _, lines = pull(monkeypatch, capsys, copy)  # into the store that holds the run itself
    assert lines == [
        f"{copy}: skipped, run copy-1 is run {run_id} (already here) under another run id: the "
        "same settings and answers"
    ]


def test_a_run_whose_record_its_answers_do_not_back_is_not_published(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_golden_run(as_elbench=True)  # a record with no answers or catalogue
    code, _, err = publish(monkeypatch, capsys, run_id, str(tmp_path / "shared"))
    assert code == 2
    assert flat(
        f"run {run_id} is not shared, since a pull would refuse its bundle: it holds no task "
        "catalogue (catalogue), so its scores cannot be recomputed"
    ) in flat(err)
    assert not (tmp_path / "shared").exists()


# ---------------------------------------------------------------- publishing


@needs_posix
def test_publish_never_writes_through_a_link_or_into_a_fifo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_answered_golden_run(as_elbench=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", "utf-8")
    target = shared / f"{run_id}{SUFFIX}"
    target.symlink_to(victim)
    code, _, err = publish(monkeypatch, capsys, run_id, str(shared))
    assert code == 2 and "Traceback" not in err
    assert flat(
        f"{target}: not published, the name is taken by a symbolic link, not a regular file, "
        "so nothing was written (remove it, or write elsewhere)"
    ) in flat(err)
    assert victim.read_text("utf-8") == "precious" and target.is_symlink()
    code, _, err = publish(monkeypatch, capsys, run_id, f"file://{shared}")  # the same rule
    assert code == 2 and flat("the name is taken by a symbolic link") in flat(err)
    assert victim.read_text("utf-8") == "precious"

    target.unlink()
    os.mkfifo(target)
    code, _, err = publish(monkeypatch, capsys, run_id, str(shared))
    assert code == 2 and flat("the name is taken by a named pipe (FIFO)") in flat(err)
    assert sorted(p.name for p in shared.iterdir()) == [target.name]  # no temporary file left


def test_publish_replaces_its_own_file_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_answered_golden_run(as_elbench=True)
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / f"{run_id}{SUFFIX}"
    target.write_text("an older bundle", "utf-8")
    target.chmod(0o640)
    code, _, err = publish(monkeypatch, capsys, run_id, str(shared))
    assert code == 0, err
    assert json.loads(target.read_text("utf-8"))["run_id"] == run_id
    assert target.stat().st_mode & 0o777 == 0o640  # the file it replaced kept its permissions
    assert sorted(p.name for p in shared.iterdir()) == [target.name]


def test_publish_to_a_url_refuses_a_name_that_is_not_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = store_answered_golden_run(as_elbench=True)
    fs, _ = file_system("memory://")
    fs.makedirs(f"/hostile/{run_id}{SUFFIX}", exist_ok=True)
    fs.pipe_file(f"/hostile/{run_id}{SUFFIX}/inside", b"kept")
    code, _, err = publish(monkeypatch, capsys, run_id, "memory://hostile")
    assert code == 2
    assert flat(
        f"memory://hostile/{run_id}{SUFFIX}: not published, the name is taken by a directory, "
        "not a regular file"
    ) in flat(err)
    assert fs.cat_file(f"/hostile/{run_id}{SUFFIX}/inside") == b"kept"


# ---------------------------------------------------------------- the board's options


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--max-price", "nan"), "--max-price must be a number of dollars, 0 or more, not nan"),
        (("--max-price", "1e999"), "--max-price must be a number of dollars, 0 or more, not inf"),
        (("--max-price", "-1"), "--max-price must be a number of dollars, 0 or more, not -1.0"),
        (("--max-size", "nan"), "--max-size must be a number of billions of parameters, 0 or "
                                "more, not nan"),
    ],
    ids=["price-nan", "price-inf", "price-negative", "size-nan"],
)  # fmt: skip
def test_an_impossible_filter_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, str],
    says: str,
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", *args)
    assert code == 2 and "Traceback" not in out + err
    assert flat(says) in flat(err)


@pytest.mark.parametrize("where", ["missing", "full", "folder"])
def test_a_chart_that_cannot_be_written_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str
) -> None:
    if where == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    path = {"missing": tmp_path / "nowhere" / "chart.html", "full": Path("/dev/full"),
            "folder": tmp_path}[where]  # fmt: skip
    says = {
        "missing": f"--chart {path}: the chart is not written: the folder {path.parent} does not "
                   "exist",
        "full": "--chart /dev/full: the chart is not written: the name is taken by a character "
                "device, not a regular file",
        "folder": f"--chart {path}: the chart is not written: the name is taken by a folder, not "
                  "a regular file",
    }[where]  # fmt: skip
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "--chart", str(path))
    assert code == 2 and "Traceback" not in out + err
    assert flat(says) in flat(err)


def test_a_chart_is_written_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    charts = tmp_path / "charts"
    charts.mkdir()
    path = charts / "chart.html"
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "--chart", str(path))
    assert code == 0, err
    assert "<html>" in path.read_text("utf-8") and flat(f"Chart written to {path}") in flat(out)
    assert [p.name for p in charts.iterdir()] == ["chart.html"]  # no temporary file left


def test_a_complete_answered_run_is_pulled_and_placed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_answered_golden_run(as_elbench=True, complete=True)
    code, _, err = publish(monkeypatch, capsys, run_id, str(tmp_path / "shared"))
    assert code == 0, err
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "viewer"))
    out, lines = pull(monkeypatch, capsys, tmp_path / "shared")
    assert f"Pulled {run_id}" in out and lines == []
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "--board", "openai/gpt-5-mini",
                             "--json")  # fmt: skip
    assert code == 0, err
    board = json.loads(out)
    assert board["incomplete_runs"] == []
    assert [p["row"]["run_id"] for p in board["placed"]] == [run_id]
