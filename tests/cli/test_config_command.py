"""``sweepbench config`` (issue 28 §4): every setting in effect and where it came from; a key
or token only ever as set / unset; a table that fits 80 columns without cutting a name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sweepbench.variables import VARIABLES
from tests.helpers import planted_key, run_cli

SECRET = "some-secret"


def _json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = run_cli(monkeypatch, capsys, "config", "--json")
    assert code == 0, err
    rows = json.loads(out)["settings"]
    return {row["setting"]: row for row in rows}


def test_every_variable_is_shown_with_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "2.5")
    monkeypatch.delenv("SWEEPBENCH_CALLS_PER_HOUR", raising=False)
    rows = _json(monkeypatch, capsys)
    assert set(VARIABLES) <= set(rows)
    assert rows["SWEEPBENCH_DAILY_USD"] | {"meaning": ""} == {
        "setting": "SWEEPBENCH_DAILY_USD", "value": "2.5", "source": "environment",
        "meaning": "", "secret": False, "problem": None,
    }  # fmt: skip
    assert (
        rows["SWEEPBENCH_CALLS_PER_HOUR"]["value"],
        rows["SWEEPBENCH_CALLS_PER_HOUR"]["source"],
    ) == ("40", "default")
    assert rows["SWEEPBENCH_HOME"] == rows["SWEEPBENCH_HOME"] | {
        "value": str(isolated_home), "source": "environment",
    }  # fmt: skip
    assert rows["SWEEPBENCH_DB"]["value"] == f"sqlite:///{isolated_home / 'sweepbench.db'}"
    assert rows["models.toml"]["value"].endswith("(no file)")


def test_a_secret_is_shown_as_set_never_its_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key, endpoint_key = planted_key("config"), planted_key("endpoint")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[keys]\nanthropic = "{key}"\n'
        f'[endpoints.box]\nbase_url = "http://user:hunter2pass@box:8000/v1"\n'
        f'api_key = "{endpoint_key}"\n',
        "utf-8",
    )
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(config))
    monkeypatch.setenv("SWEEPBENCH_TOKEN", SECRET)
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", SECRET + "-2")
    monkeypatch.setenv("SWEEPBENCH_DB", "postgresql+psycopg://bench:dbpass-xyz@db/sweepbench")
    monkeypatch.setenv("OPENAI_API_KEY", planted_key("openai"))
    code, text, err = run_cli(monkeypatch, capsys, "config")
    assert code == 0, err
    rows = _json(monkeypatch, capsys)
    _, as_json, _ = run_cli(monkeypatch, capsys, "config", "--json")
    for out in (text, as_json):
        for hidden in (SECRET, key, endpoint_key, "hunter2pass", "dbpass-xyz", "sk-openai"):
            assert hidden not in out
    assert rows["SWEEPBENCH_TOKEN"]["value"] == "set" and rows["SWEEPBENCH_TOKEN"]["secret"]
    assert rows["SWEEPBENCH_COMPATIBLE_API_KEY"]["value"] == "set"
    assert rows["SWEEPBENCH_DB"]["value"] == "postgresql+psycopg://bench:***@db/sweepbench"
    assert rows["anthropic key"] | {"meaning": ""} == {
        "setting": "anthropic key", "value": "set", "source": f"config.toml ({config}) [keys]",
        "meaning": "", "secret": True, "problem": None,
    }  # fmt: skip
    assert (rows["openai key"]["value"], rows["openai key"]["source"]) == (
        "set",
        "environment (OPENAI_API_KEY)",
    )
    assert rows["openrouter key"]["value"] == "unset"
    assert rows["[endpoints.box]"]["value"] == "http://user:***@box:8000/v1 (a key: set)"


def test_the_config_file_and_models_toml_are_shown_as_sources(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[leaderboard]\nshared = "board"\n', "utf-8")
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(config))
    monkeypatch.delenv("SWEEPBENCH_SHARED", raising=False)
    isolated_home.mkdir(parents=True, exist_ok=True)
    models = isolated_home / "models.toml"
    models.write_text("[openai.mine]\nprice_in = 1\nprice_out = 2\n", "utf-8")
    rows = _json(monkeypatch, capsys)
    assert rows["SWEEPBENCH_SHARED"]["value"] == str(tmp_path / "board")
    assert rows["SWEEPBENCH_SHARED"]["source"] == f"config.toml ({config}) [leaderboard] shared"
    assert rows["SWEEPBENCH_CONFIG"]["source"] == "environment"
    assert rows["models.toml"]["value"] == f"{models} (1 model)"
    assert rows["openai/mine"]["source"] == f"models.toml ({models})"
    assert rows["openai/mine"]["value"] == "price_in = 1, price_out = 2"
    monkeypatch.setenv("SWEEPBENCH_SHARED", str(tmp_path / "elsewhere"))
    assert _json(monkeypatch, capsys)["SWEEPBENCH_SHARED"]["source"] == "environment"


def test_a_bad_value_is_shown_with_its_problem_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_TTL", "abc")
    config = tmp_path / "config.toml"
    config.write_text("[leaderbord]\n", "utf-8")
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(config))
    rows = _json(monkeypatch, capsys)
    ttl = rows["SWEEPBENCH_OPENROUTER_TTL"]
    assert (ttl["value"], ttl["source"]) == ("86400 (a day)", "default")
    assert ttl["problem"] == "SWEEPBENCH_OPENROUTER_TTL='abc' is not a number ≥ 0"
    assert "did you mean 'leaderboard'" in rows["config.toml"]["problem"]
    code, out, err = run_cli(monkeypatch, capsys, "config")
    assert code == 0 and "Traceback" not in out + err
    said = "SWEEPBENCH_OPENROUTER_TTL='abc' is not a number ≥ 0"
    assert said.replace(" ", "") in _column(out, 3).replace(" ", "")  # folded at spaces


def test_the_table_fits_80_columns_and_folds_long_paths(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    home = tmp_path / ("a-rather-long-folder-name-" * 4) / "home"
    monkeypatch.setenv("SWEEPBENCH_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli(monkeypatch, capsys, "config")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in out
    assert str(home) in _column(out, 2)  # the home folder's path, folded over lines, not cut
    assert all(name in out for name in VARIABLES)  # the names whole: their column fits them


def _column(table: str, number: int) -> str:
    """The text of a rendered table's column ``number`` (from 1), its folded lines joined."""
    rows = [line.split("│") for line in table.splitlines() if line.count("│") == 4]
    return "".join(row[number].strip() for row in rows)
