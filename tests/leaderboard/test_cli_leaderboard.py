"""``sweepbench leaderboard``: the board, its JSON, the published tables and refusals."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

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


def _board(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["leaderboard", *args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _prices(placed: dict[str, Any]) -> tuple[Decimal, Decimal]:
    row = placed["row"]["price"]
    return Decimal(row["input_per_million"]), Decimal(row["output_per_million"])


@pytest.mark.parametrize("measure", ["output", "input"])
def test_max_price_filters_on_the_chosen_measure(measure: str) -> None:
    """``--max-price`` with ``--price output`` (or input) is a limit on that price, not on the
    blended one (issue 29 §4): a limit between a model's blended and its output price hides it
    on the output measure and keeps it on the input one."""
    unfiltered = _board("--price", measure)
    # the highest blended price of a model whose output price is above it: the limit
    limit, name = max(
        ((3 * i + o) / 4, p["row"]["model"])
        for p in unfiltered["placed"]
        for i, o in [_prices(p)]
        if (3 * i + o) / 4 < o
    )
    data = _board("--price", measure, "--max-price", str(limit))
    placed = {p["row"]["model"]: Decimal(p["price"]) for p in data["placed"]}
    assert placed and all(price <= limit for price in placed.values())
    assert (name in placed) == (measure == "input")
    kept = {p["row"]["model"] for p in unfiltered["placed"] if Decimal(p["price"]) <= limit}
    assert set(placed) == kept
    assert data["price_measure"] == measure


def test_the_measured_view_places_published_models_at_their_listed_price() -> None:
    """Nothing is measured for a published model: on ``--price measured`` it is placed at its
    listed blended price, marked § with the legend, not listed as having no price."""
    blended = _board()
    data = _board("--price", "measured")
    listed = {p["row"]["model"]: p["price"] for p in blended["placed"]}
    assert {p["row"]["model"]: p["price"] for p in data["placed"]} == listed
    assert all(p["listed_price"] for p in data["placed"])
    assert data["not_placed_no_price"] == blended["not_placed_no_price"]
    from sweepbench.leaderboard.board import LISTED_NOTE

    assert LISTED_NOTE in data["takeaway"]
    assert "§ listed prices from" in data["takeaway"][-1]
    table = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["leaderboard", "--price", "measured"])
    assert table.exit_code == 0, table.output
    assert "§" in table.output and "Listed price: nothing measured" in table.output
