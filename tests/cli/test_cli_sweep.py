"""``sweepbench sweep`` and ``sweepbench sweeps`` end to end."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers import cli


@pytest.mark.local_model
def test_local_budget_sweep_marks_the_small_cell_truncated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        monkeypatch,
        "sweep",
        "Write a short poem about the sea.",
        "--axis",
        "max_tokens",
        "--values",
        "16,64",
        "--json",
    )
    data = json.loads(capsys.readouterr().out)
    small, large = data["cells"]
    assert small["max_tokens"] == 16 and small["stop_reason"] == "max_tokens"
    assert small["truncated"] is True and small["usage"]["output_tokens"] == 16
    assert small["model"] == "local/smollm2-135m" and small["cost_usd"] == "0"
    assert large["usage"]["output_tokens"] > 16
    assert code == 1  # a truncated cell is not "all ok"
    assert data["wall_s"] > 0 and data["serial_s"] > 0  # both figures are reported


def test_estimate_only_needs_no_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        monkeypatch,
        "sweep",
        "hello",
        "--axis",
        "effort",
        "--values",
        "low,high",
        "--model",
        "anthropic/claude-opus-5",
        "--max-tokens",
        "24,000",
        "--estimate-only",
        "--json",
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["effort"] for c in data["cells"]] == ["low", "high"]
    assert data["estimate"]["ceiling_usd"] is not None


def test_refusal_exits_2_and_spends_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        monkeypatch,
        "sweep",
        "hi",
        "--axis",
        "effort",
        "--values",
        "low,high",
        "--model",
        "anthropic/claude-haiku-4-5",
    )
    assert code == 2
    assert "does not accept the effort parameter" in capsys.readouterr().err


def test_spending_needs_confirmation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 1\n")
    args = [
        "sweep",
        "a b c",
        "--axis",
        "max_tokens",
        "--values",
        "2,10",
        "--model",
        "scripted/echo",
    ]
    assert cli(monkeypatch, *args) == 2
    assert "--yes" in capsys.readouterr().err
    assert cli(monkeypatch, *args, "--yes", "--json") == 1  # the 2-token cell is truncated
    data = json.loads(capsys.readouterr().out)
    assert Decimal(data["cost_usd"]) > 0


def test_sweeps_list_show_export(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        cli(
            monkeypatch,
            "sweep",
            "x y z",
            "--axis",
            "model",
            "--values",
            "scripted/echo,scripted/lorem?words=5",
            "--json",
        )
        == 0
    )
    sweep_id = json.loads(capsys.readouterr().out)["id"]
    assert cli(monkeypatch, "sweeps", "list", "--json") == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["id"] == sweep_id and row["cells"] == 2
    assert cli(monkeypatch, "sweeps", "show", sweep_id[:7]) == 0
    assert "Lorem ipsum" in capsys.readouterr().out
    out_json, out_html = tmp_path / "s.json", tmp_path / "s.html"
    assert (
        cli(
            monkeypatch,
            "sweeps",
            "export",
            sweep_id,
            "--json",
            str(out_json),
            "--html",
            str(out_html),
        )
        == 0
    )
    assert json.loads(out_json.read_text())["id"] == sweep_id
    assert "<!doctype html>" in out_html.read_text()
    folder = tmp_path / "cells"
    assert cli(monkeypatch, "sweeps", "export", sweep_id, "--artifacts", str(folder)) == 0
    assert (folder / "cell1.txt").read_text() == "x y z"
    assert (folder / "cell2.txt").read_text().startswith("Lorem ipsum")
    assert cli(monkeypatch, "sweeps", "show", "ffffffff") == 2
