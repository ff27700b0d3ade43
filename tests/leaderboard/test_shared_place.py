"""The configured shared leaderboard (``SWEEPBENCH_SHARED`` or ``[leaderboard] shared`` in the
config file): ``leaderboard publish`` and ``leaderboard pull`` default to it (``--to`` and SRC
still win), say clearly when none is configured, and a bad value is a clear error. A tmp
folder is the shared place: no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.errors import UserError
from sweepbench.leaderboard.bundle import SUFFIX, RunBundle
from sweepbench.settings import SHARED_ENV, shared_place
from tests.helpers import run_cli
from tests.leaderboard.helpers import store_answered_golden_run


def _config(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(text, "utf-8")
    return path


def test_unset_is_none_and_the_env_wins_over_the_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, isolated_home: Path
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    assert shared_place() is None
    _config(isolated_home, "[leaderboard]\n")
    assert shared_place() is None
    _config(isolated_home, '[leaderboard]\nshared = "board"\n')
    assert shared_place() == str(isolated_home / "board")  # relative to the config's folder
    _config(isolated_home, '[leaderboard]\nshared = "memory://shared-board"\n')
    assert shared_place() == "memory://shared-board"
    monkeypatch.setenv(SHARED_ENV, str(tmp_path / "env-board"))
    assert shared_place() == str(tmp_path / "env-board")
    monkeypatch.setenv(SHARED_ENV, "  ")  # blank: as unset
    assert shared_place() == "memory://shared-board"


@pytest.mark.parametrize(
    ("env", "config", "says"),
    [
        ("s3://", None, "SWEEPBENCH_SHARED = 's3://' names no place after s3://"),
        ("1bad proto://x", None, "is not a URL (protocol://…) nor a folder path"),
        ("FILE", None, "is a file, not a folder"),
        (None, "[leaderboard]\nshared = 3\n", "[leaderboard] shared must be a text"),
        (None, '[leaderboard]\nshared = ""\n', "[leaderboard] shared is empty"),
        (None, 'leaderboard = "x"\n', "[leaderboard] must be a table"),
    ],
)
def test_a_bad_setting_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
    env: str | None,
    config: str | None,
    says: str,
) -> None:
    if env == "FILE":
        env = str(tmp_path / "a-file")
        Path(env).write_text("not a folder", "utf-8")
    if env is not None:
        monkeypatch.setenv(SHARED_ENV, env)
    else:
        monkeypatch.delenv(SHARED_ENV, raising=False)
    if config is not None:
        _config(isolated_home, config)
    with pytest.raises(UserError) as caught:
        shared_place()
    assert says in str(caught.value)
    code, _out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull")
    assert code != 0 and says.split(" ")[-1] in " ".join(err.split())


def test_publish_and_pull_default_to_the_configured_place(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    monkeypatch.setenv(SHARED_ENV, str(shared))
    run_id = store_answered_golden_run(as_elbench=True)
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--yes")
    assert code == 0, err
    path = shared / f"{run_id}{SUFFIX}"
    assert f"Destination:  {path}" in out and f"Published {run_id} to {path}" in out
    assert RunBundle.model_validate_json(path.read_text("utf-8")).run_id == run_id

    elsewhere = tmp_path / "elsewhere"  # --to still wins
    code, _out, err = run_cli(
        monkeypatch, capsys, "leaderboard", "publish", run_id, "--to", str(elsewhere), "--yes"
    )
    assert code == 0, err
    assert (elsewhere / path.name).is_file() and list(shared.iterdir()) == [path]

    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "other"))  # another machine
    code, out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull")
    assert code == 0, err
    assert f"Pulled {run_id}" in out and "1 pulled, 0 already present, 0 skipped." in out
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [run_id]


def test_publish_and_pull_say_when_no_place_is_configured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    run_id = store_answered_golden_run(as_elbench=True)
    code, _out, err = run_cli(monkeypatch, capsys, "leaderboard", "publish", run_id, "--yes")
    err = " ".join(err.split())
    assert code != 0 and "No shared leaderboard is configured" in err
    assert "pass --to DEST" in err and SHARED_ENV in err
    code, _out, err = run_cli(monkeypatch, capsys, "leaderboard", "pull")
    err = " ".join(err.split())
    assert code != 0 and "No shared leaderboard is configured" in err and "pass SRC" in err
