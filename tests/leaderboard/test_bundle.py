"""``leaderboard publish`` and ``leaderboard pull`` (issue 15, item 8): scrubbed, versioned run
bundles written to a folder or an fsspec URL (``memory://`` here: no network), and imported
again — validated, de-duplicated, key-shaped ones refused without echoing the key."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from sweepbench.bench.record import load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import UserError
from sweepbench.leaderboard.bundle import SUFFIX, RunBundle, file_system, key_shaped
from sweepbench.leaderboard.bundle_pull import parse_bundle
from sweepbench.leaderboard.sources import stored_run_rows
from sweepbench.store import Store
from tests.helpers import run_cli
from tests.leaderboard.helpers import store_answered_golden_run

ANSWER_A = "scripted/echo?text=ANSWER: A"
KEY = "-".join(("sk", "test", "PlaceholderKey" + "0123456789abcd"))
"""A key-shaped placeholder, made at run time so no key-shaped text sits in the source: the
scrubber knows it once OPENAI_API_KEY holds it."""
FOREIGN_KEY = "-".join(("sk", "live", "ForeignKey" + "9876543210zyxwvu"))


@pytest.fixture(autouse=True)
def _clean_memory() -> Iterator[None]:
    fs, _ = file_system("memory://")
    yield
    if fs.exists("/published"):
        fs.rm("/published", recursive=True)


def make_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], model: str = ANSWER_A
) -> str:
    args = ("bench", "run", "sample", "-m", model, "--preset", "auto-checked", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    return str(json.loads(out)["run_id"])


def fresh_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    """Another user's machine: a new, empty home and store."""
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / name))


def bundle_file(folder: Path) -> Path:
    (found,) = folder.glob(f"*{SUFFIX}")
    return found


# ---------------------------------------------------------------- publish


def test_publish_to_a_folder_prints_what_is_shared_and_writes_a_valid_bundle(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys)
    dest = tmp_path / "out"
    code, out, err = run_cli(
        monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", str(dest), "--yes"
    )
    assert code == 0, err
    path = dest / f"{run_id}{SUFFIX}"
    bundle = RunBundle.model_validate_json(path.read_text("utf-8"))
    assert bundle.format == "sweepbench-run-bundle" and bundle.version == 1
    assert bundle.run_id == run_id and bundle.answers_included
    assert bundle.answers and all(a.answer == "ANSWER: A" for a in bundle.answers)
    assert bundle.tasks == bundle.record.scores.tasks and bundle.catalogue
    assert "This will be shared:" in out
    for expected in (f"Run:          {run_id}", f"Model:        {ANSWER_A}",
                     "Judge:        none", f"Answers:      {len(bundle.answers)} (",
                     "Answer texts: included (scrubbed)", f"Destination:  {path}",
                     f"Published {run_id} to {path}"):  # fmt: skip
        assert expected in out, expected


def test_publish_to_memory_and_without_answers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = make_run(monkeypatch, capsys)
    code, out, err = run_cli(
        monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", "memory://published",
        "--no-answers", "--yes",
    )  # fmt: skip
    assert code == 0, err
    assert "Answer texts: left out (--no-answers)" in out
    fs, _ = file_system("memory://")
    text = fs.cat_file(f"/published/{run_id}{SUFFIX}").decode("utf-8")
    bundle = RunBundle.model_validate_json(text)
    assert not bundle.answers_included and bundle.answers
    assert all(a.answer is None for a in bundle.answers)
    assert "ANSWER: A" not in text.split('"answers"', 1)[1].split('"tasks"', 1)[0]


def test_publish_without_yes_off_a_terminal_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys)
    dest = tmp_path / "out"
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to",
                             str(dest))  # fmt: skip
    assert code == 2
    assert "This will be shared:" in out and "--yes" in err
    assert not dest.exists()


def test_publish_asks_on_a_terminal_and_a_no_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys)
    asked: list[str] = []

    def answer(text: str, default: bool = False) -> bool:
        asked.append(text)
        return len(asked) > 1  # no the first time, yes the second

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(typer, "confirm", answer)
    dest = tmp_path / "out"
    args = ("leaderboard", "publish", run_id, "--to", str(dest))
    code, out, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 1 and "Not published." in out and not dest.exists()
    code, out, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 0 and asked == ["Publish this run?"] * 2
    assert (dest / f"{run_id}{SUFFIX}").is_file()


def test_unknown_run_and_unknown_protocol_are_one_sentence_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", "nope", "--to", "x",
                           "--yes")  # fmt: skip
    assert code != 0 and "no benchmark run 'nope'" in err
    with pytest.raises(UserError, match="not a file system fsspec knows"):
        file_system("nosuchproto://a/b")
    fs, path = file_system("hf://datasets/OWNER/NAME")  # huggingface_hub's, unconnected
    assert type(fs).__name__ == "HfFileSystem" and path == "datasets/OWNER/NAME"
    try:
        import s3fs  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        with pytest.raises(UserError, match=r"need the s3fs package \(pip install s3fs\)"):
            file_system("s3://bucket/folder")


def test_a_key_in_an_answer_and_the_model_id_is_scrubbed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys, f"scripted/echo?text={KEY}")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # now the scrubber knows it
    dest = tmp_path / "out"
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to",
                             str(dest), "--yes")  # fmt: skip
    assert code == 0, err
    text = bundle_file(dest).read_text("utf-8")
    assert KEY not in text and KEY not in out and KEY not in err
    bundle = RunBundle.model_validate_json(text)
    assert bundle.answers and all(a.answer == "[redacted]" for a in bundle.answers)
    assert bundle.record.roles["target"].model == "scripted/echo?text=[redacted]"
    assert KEY not in bundle_file(dest).name


def test_a_bundle_that_would_keep_a_key_is_not_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys, f"scripted/echo?text={FOREIGN_KEY}")
    dest = tmp_path / "out"  # the scrubber does not know this key, but it is key-shaped
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to",
                             str(dest), "--yes")  # fmt: skip
    assert code != 0 and "key-shaped" in err
    assert FOREIGN_KEY not in out + err and not dest.exists()


# ---------------------------------------------------------------- pull


def test_pull_round_trip_de_duplicates_and_shows_in_bench_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys)
    dest = tmp_path / "out"
    run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", str(dest), "--yes")
    fresh_store(monkeypatch, tmp_path, "other")
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull", str(dest))
    assert code == 0, err
    assert f"Pulled {run_id}" in out and "1 pulled, 0 already present, 0 skipped." in out
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    (listed,) = json.loads(out)
    assert listed["run_id"] == run_id and listed["model"] == ANSWER_A and listed["scored"] > 0
    with Store.open() as store:
        bench = BenchStore(store)
        row = bench.run(run_id)
        assert row is not None and row.record is not None
        assert row.settings["source"] == "pulled" and row.settings["pulled_from"].endswith(SUFFIX)
        assert row.config_hash != load_record(row.record).settings.hash
        assert all(a["answer"] == "ANSWER: A" for a in bench.answers(run_id))
    code, out, err = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--json")
    assert code == 0, err
    code, out, _ = run_cli(monkeypatch, capsys, "leaderboard", "pull", str(bundle_file(dest)))
    assert code == 0 and f"Skipped {run_id}: already present" in out
    assert "0 pulled, 1 already present" in out


def test_a_pulled_elbench_run_is_on_its_judges_board(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = store_answered_golden_run(as_elbench=True)
    code, _, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to",
                           "memory://published", "--yes")  # fmt: skip
    assert code == 0, err
    fresh_store(monkeypatch, tmp_path, "other")
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull", "memory://published")
    assert code == 0, err
    assert f"Pulled {run_id}" in out
    args = ("leaderboard", "--board", "openai/gpt-5-mini", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    assert json.loads(out)["incomplete_runs"] == [run_id]
    with Store.open() as store:
        loaded = stored_run_rows(BenchStore(store), "core")
    assert [r.run_id for r in loaded.rows] == [run_id]
    assert loaded.pulled == {run_id: f"memory://published/{run_id}{SUFFIX}"}
    [row] = loaded.rows  # the board says where a pulled run came from
    assert row.pulled_from == loaded.pulled[run_id] and row.label == f"Pulled run {run_id}"


def test_pull_skips_malformed_bundles_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / f"broken{SUFFIX}").write_text("{not json", "utf-8")
    (folder / f"other{SUFFIX}").write_text('{"format": "something-else"}', "utf-8")
    (folder / f"empty{SUFFIX}").write_text(
        '{"format": "sweepbench-run-bundle", "version": 1}', "utf-8"
    )
    (folder / f"future{SUFFIX}").write_text(
        '{"format": "sweepbench-run-bundle", "version": 9}', "utf-8"
    )
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull", str(folder))
    assert code == 0
    assert "0 pulled, 0 already present, 4 skipped." in out
    lines = err.strip().splitlines()
    assert len(lines) == 4
    assert any(f"broken{SUFFIX}: skipped, not JSON" in line for line in lines)
    assert any(f"other{SUFFIX}: skipped, not a sweepbench run bundle" in line for line in lines)
    assert any(f"empty{SUFFIX}: skipped, not a valid run bundle" in line for line in lines)
    assert any(f"future{SUFFIX}: skipped, bundle version 9" in line for line in lines)


def test_pull_refuses_a_key_shaped_bundle_without_echoing_the_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_id = make_run(monkeypatch, capsys)
    dest = tmp_path / "out"
    run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", str(dest), "--yes")
    path = bundle_file(dest)
    path.write_text(path.read_text("utf-8").replace("ANSWER: A", FOREIGN_KEY, 1), "utf-8")
    fresh_store(monkeypatch, tmp_path, "other")
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull", str(path))
    assert code == 0
    assert f"{path}: refused, it holds something key-shaped" in err
    assert FOREIGN_KEY not in out + err
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    assert json.loads(out) == []


def test_key_shapes() -> None:
    assert key_shaped(f"the key is {FOREIGN_KEY}", [])
    assert key_shaped("hf_" + "a1" * 20, []) and key_shaped("AKIA" + "A" * 16, [])
    assert not key_shaped("sk-" + "x" * 32, [])  # a placeholder
    assert not key_shaped("ANSWER: A, the task-by-task figures", [])
    assert key_shaped("a known value 12345678", ["known value 12345678"])
    assert isinstance(parse_bundle("x.json", b"\xff"), str)
