"""The board end to end (issue 15): a declared benchmark with full coverage (2 areas × 2
numeric tasks) run through ``sweepbench bench run`` by three scripted models with different
prices and accuracies, read back from the store as board rows, placed with the right
frontier, and a paired comparison of two of the runs that finds a real difference on 500
items and not on 20."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.bench.sources.declared import load_declared
from sweepbench.bench.storage import BenchStore
from sweepbench.leaderboard.board import Catalogue, CatalogueTask, build_board, takeaway
from sweepbench.leaderboard.rows import OVERALL
from sweepbench.leaderboard.sources import stored_run_rows
from sweepbench.settings import home
from sweepbench.stats.paired import ItemValue, item_values, paired_difference
from sweepbench.store import Store
from tests.bench.helpers import set_prices
from tests.bench.test_declared import declare, numeric_task, write_jsonl
from tests.helpers import cli

PATTERN = ["1", "1", "1", "2", "2", "3", "3", "3", "3", "3"]
"""References, cycled: answering 1 is right on 30%, 2 on 20%, 3 on 50% of every 10 items."""
ITEMS = 500
TASKS = [("a1", "alpha"), ("a2", "alpha"), ("b1", "beta"), ("b2", "beta")]

CHEAP = "scripted/lorem?text=1"
"""$0.50/1M, 30%: best value (the cheapest)."""
DOMINATED = "scripted/echo?text=2"
"""$1/1M, 20%: costs more and scores less than CHEAP."""
STRONG = "scripted/guess?text=3"
"""$4/1M, 50%: best value (the best score)."""


def _declaration(folder: Path) -> Path:
    per_task = ITEMS // len(TASKS)
    tasks = []
    for t, (task_id, area) in enumerate(TASKS):
        rows = [
            {"qid": f"{task_id}-{i:04d}", "question": f"Question {i}: which number?",
             "answer": PATTERN[(t * per_task + i) % len(PATTERN)], "topic": ""}
            for i in range(per_task)
        ]  # fmt: skip
        write_jsonl(folder / f"{task_id}.jsonl", rows)
        tasks.append(numeric_task(f"{task_id}.jsonl", id=task_id, area=area, name=task_id.upper()))
    return declare(folder, tasks, areas=["alpha", "beta"])


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path,
         model: str) -> str:  # fmt: skip
    code = cli(monkeypatch, "bench", "run", str(path), "-m", model, "--yes", "--json")
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return str(json.loads(captured.out)["run_id"])


def _catalogue(path: Path) -> Catalogue:
    benchmark = load_declared(path)
    return Catalogue(
        areas={a.key: a.label for a in benchmark.areas},
        tasks={
            t.id: CatalogueTask(area=t.area, auto=t.grading == "auto")
            for a in benchmark.areas
            for t in a.tasks
        },
    )


def _first(values: dict[str, ItemValue], n: int) -> dict[str, ItemValue]:
    """The first ``n`` items of the data in file order (task a1 first, then by row)."""
    return dict(sorted(values.items(), key=lambda kv: kv[0].split("::")[-1])[:n])


def test_three_runs_on_the_board_frontier_and_paired_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_prices(home(), {"scripted.lorem": ("0.5", "0.5"), "scripted.echo": (1, 1),
                        "scripted.guess": (4, 4)})  # fmt: skip
    path = _declaration(tmp_path)
    runs = {model: _run(monkeypatch, capsys, path, model) for model in (CHEAP, DOMINATED, STRONG)}
    catalogue = _catalogue(path)

    with Store.open() as store:
        bench = BenchStore(store)
        benchmark = {r.benchmark for r in bench.runs(limit=10)}
        assert len(benchmark) == 1
        loaded = stored_run_rows(bench, "core", benchmark=benchmark.pop())
        values = {m: item_values(bench.outcomes(r), []) for m, r in runs.items()}
    assert loaded.unreadable == [] and len(loaded.rows) == 3

    board = build_board(loaded.rows, judge="any judge", metric=OVERALL, scope="core",
                        catalogue=catalogue)  # fmt: skip
    assert board.incomplete == [] and board.no_price == []
    placed = {p.row.model: p for p in board.placed}
    assert set(placed) == {CHEAP, DOMINATED, STRONG}
    assert [p.row.model for p in board.placed] == [CHEAP, DOMINATED, STRONG]  # price order
    assert {m: p.price for m, p in placed.items()} == {
        CHEAP: Decimal("0.5"),
        DOMINATED: Decimal(1),
        STRONG: Decimal(4),
    }
    assert {m: round(p.score.score) for m, p in placed.items()} == {
        CHEAP: 30,
        DOMINATED: 20,
        STRONG: 50,
    }
    assert [p.row.model for p in board.best] == [CHEAP, STRONG]
    assert all(p.row.run_id == runs[m] for m, p in placed.items())
    # the same board from the command line: `sweepbench leaderboard --benchmark <declaration>`
    assert cli(monkeypatch, "leaderboard", "--benchmark", str(path), "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert [e["row"]["model"] for e in shown["placed"]] == [CHEAP, DOMINATED, STRONG]
    assert [e["row"]["model"] for e in shown["placed"] if e["best_value"]] == [CHEAP, STRONG]
    assert shown["takeaway"][0].startswith(f"Best value, cheapest first: {CHEAP}")
    lines = takeaway(board, catalogue, questions=ITEMS)
    assert lines[0].startswith(f"Best value, cheapest first: {CHEAP}")
    # an area is placed the same way, and on any other board too (every task is auto-checked)
    alpha = build_board(loaded.rows, judge="another", metric="alpha", scope="core",
                        catalogue=catalogue)  # fmt: skip
    assert [p.row.model for p in alpha.best] == [CHEAP, STRONG]

    full = paired_difference(values[CHEAP], values[STRONG], resamples=2000)
    assert full.n == ITEMS and round(full.diff) == 20
    assert full.real and full.p_value < 0.001
    few = paired_difference(_first(values[CHEAP], 20), _first(values[STRONG], 20),
                            resamples=2000)  # fmt: skip
    assert few.n == 20 and round(few.diff) == 20
    assert not few.real and few.p_value > 0.05


def test_a_declared_benchmarks_scope_note_says_nothing_of_published_ranges() -> None:
    from sweepbench.leaderboard.board import scope_note

    assert scope_note("core", 40, regional=0, published=False) == "Scored on 40 questions."
    assert "Published" not in scope_note("core", 40, regional=1, published=False)
    assert "the one region-specific set." in scope_note("core", 40, regional=1, published=False)
    assert "Published 95% ranges" in scope_note("core", 2481)  # ELBench's board, as before
