"""``sweepbench leaderboard``: the board, its JSON, the published tables and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sweepbench.cli.app import app
from tests.leaderboard.helpers import store_golden_run


def test_leaderboard_alone_prints_the_default_board() -> None:
    result = CliRunner().invoke(app, ["leaderboard"])
    assert result.exit_code == 0, result.output
    assert "qwen/qwen3-235b-a22b" in result.output
    assert "★" in result.output
    assert "Not placed: no price" in result.output
    assert "without the two region-specific sets" in result.output


def test_json_board_places_priced_published_models_with_a_frontier() -> None:
    result = CliRunner().invoke(app, ["leaderboard", "--scope", "paper", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["board"] == "qwen/qwen3-235b-a22b" and data["scope"] == "paper"
    assert len(data["placed"]) + len(data["not_placed_no_price"]) == 9
    assert any(p["best_value"] for p in data["placed"])
    prices = [float(p["price"]) for p in data["placed"]]
    assert prices == sorted(prices)
    assert "Doubao-Seed-2.0-Pro" in data["not_placed_no_price"]
    assert data["takeaway"][-2].startswith("Paper's original scoring: all 2,939 questions")


def test_filters_hide_models() -> None:
    result = CliRunner().invoke(
        app, ["leaderboard", "--max-price", "2", "--no-undisclosed", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["placed"] == []
    assert data["hidden_by_filters"] == 9


def test_a_stored_incomplete_run_is_listed_on_its_judges_board_not_placed() -> None:
    run_id = store_golden_run()
    result = CliRunner().invoke(app, ["leaderboard", "--board", "openai/gpt-5-mini", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["incomplete_runs"] == [run_id]
    assert data["boards"] == ["qwen/qwen3-235b-a22b", "openai/gpt-5-mini"]
    assert all(p["row"]["source"] == "published" for p in data["placed"]) or not data["placed"]


def test_published_tables() -> None:
    runner = CliRunner(env={"COLUMNS": "200"})
    result = runner.invoke(app, ["leaderboard", "published"])
    assert result.exit_code == 0, result.output
    assert "DeepSeek-V4-Flash" in result.output and "83.7" in result.output
    tasks = runner.invoke(app, ["leaderboard", "published", "--tasks", "gpt-5.4"])
    assert tasks.exit_code == 0, tasks.output
    assert "mmlu_pro" in tasks.output and "2026-06-08" in tasks.output
    missing = runner.invoke(app, ["leaderboard", "published", "--tasks", "nobody"])
    assert missing.exit_code != 0


def test_bad_options_are_refused() -> None:
    runner = CliRunner()
    for args in (["--focus", "bogus"], ["--scope", "wide"], ["--price", "cheap"],
                 ["--focus", "task:nothing"], ["--board", "nobody/judge"]):  # fmt: skip
        result = runner.invoke(app, ["leaderboard", *args])
        assert result.exit_code != 0, args


def test_chart_is_one_offline_html_file(tmp_path: Path) -> None:
    import re

    path = tmp_path / "board.html"
    result = CliRunner().invoke(app, ["leaderboard", "--chart", str(path)])
    assert result.exit_code == 0, result.output
    html = path.read_text("utf-8")
    assert "DeepSeek-V4-Flash" in html and "Best value" in html
    assert '"type":"log"' in html.replace(" ", "")
    assert re.search(r"<script[^>]*\bsrc\s*=", html) is None  # plotly.js is inlined
    assert re.search(r"""import\(\s*['"]https?://""", html) is None


def test_compare_is_a_leaderboard_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import run_cli

    code, out, _ = run_cli(monkeypatch, capsys, "leaderboard", "compare", "--help")
    assert code == 0 and "--paired" in out
