"""Board rules on small made-up boards (spec §17.2–§17.7): membership, completeness, prices,
the frontier with ties, unpriced models, filters and the takeaway."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.bench.record import load_record
from sweepbench.leaderboard.board import (
    Catalogue,
    CatalogueTask,
    Filters,
    board_keys,
    build_board,
    on_board,
    price_of,
    takeaway,
)
from sweepbench.leaderboard.published import PAPER_JUDGE
from sweepbench.leaderboard.rows import BoardRow, MetricScore, RowPrice, run_row
from sweepbench.stats.frontier import Point, frontier

GOLDEN = Path(__file__).resolve().parents[1] / "bench/golden/run_record_v1.json"
CATALOGUE = Catalogue(
    areas={"know": "Knowledge", "safe": "Safety"},
    tasks={
        "math": CatalogueTask(area="know", auto=True),
        "exam": CatalogueTask(area="know", auto=True, region_specific=True),
        "refuse": CatalogueTask(area="safe", auto=False),
    },
)
J = "judge/one"


def row(
    name: str,
    score: float,
    price_in: str | None,
    *,
    price_out: str | None = None,
    source: str = "published",
    judge: str | None = PAPER_JUDGE,
    complete: bool = True,
    low: float | None = None,
    high: float | None = None,
    size: float | None = None,
    spent: str | None = None,
    day: int = 1,
    run_id: str | None = None,
) -> BoardRow:
    scores = {
        m: MetricScore(score=score, low=low, high=high, complete=complete)
        for m in ("overall", "know", "safe", "task:math")
    }
    price = None
    if price_in is not None:
        out = Decimal(price_out if price_out is not None else price_in)
        price = RowPrice(input_per_million=Decimal(price_in), output_per_million=out, source="t")
    return BoardRow(
        model=name, model_id=name, source=source,  # type: ignore[arg-type]
        run_id=run_id or (f"{name}-{day}" if source == "run" else None), judge=judge,
        scope="core", scores=scores, price=price, size_b=size,
        measured_usd=None if spent is None else Decimal(spent),
        created_at=datetime(2026, 1, day, tzinfo=UTC) if source == "run" else None,
    )  # fmt: skip


def board(rows: list[BoardRow], **kwargs: object) -> list[tuple[str, bool]]:
    b = build_board(rows, catalogue=CATALOGUE, scope="core", **{"judge": PAPER_JUDGE,
                    "metric": "overall", **kwargs})  # type: ignore[arg-type]  # fmt: skip
    return [(p.row.model, p.best) for p in b.placed]


def test_frontier_with_ties() -> None:
    pts = [Point("a", Decimal(1), 80), Point("b", Decimal(1), 80), Point("c", Decimal(2), 80),
           Point("d", Decimal(3), 90), Point("e", Decimal(1), 70)]  # fmt: skip
    assert [p.key for p in frontier(pts)] == ["a", "b", "d"]
    assert frontier([]) == []


def test_price_measures() -> None:
    r = row("m", 50, "1", price_out="5")
    assert price_of(r, "blended") == Decimal(2)
    assert price_of(r, "input") == Decimal(1)
    assert price_of(r, "output") == Decimal(5)
    assert price_of(r, "measured") is None  # published models are not placed on it
    assert price_of(row("u", 50, None), "blended") is None


def test_unpriced_models_are_listed_not_placed_at_zero() -> None:
    rows = [row("cheap", 60, "1"), row("free-looking", 99, None)]
    b = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core", catalogue=CATALOGUE)
    assert [p.row.model for p in b.placed] == ["cheap"]
    assert [r.model for r in b.no_price] == ["free-looking"]
    text = takeaway(b, CATALOGUE, questions=10)
    assert "Not placed: no price: free-looking." in text


def test_board_membership_judge_or_all_automatic() -> None:
    other = row("x", 70, "1", source="run", judge=J)
    assert on_board(other, J, "overall", CATALOGUE)
    assert not on_board(other, PAPER_JUDGE, "overall", CATALOGUE)
    assert not on_board(other, PAPER_JUDGE, "safe", CATALOGUE)
    assert on_board(other, PAPER_JUDGE, "know", CATALOGUE)  # every task checked automatically
    assert on_board(other, PAPER_JUDGE, "task:math", CATALOGUE)
    assert board([other]) == []
    assert board([other], metric="know") == [("x", True)]
    assert board_keys([other, row("p", 1, "1")]) == [PAPER_JUDGE, J]


def test_completeness_and_newest_complete_run_per_model() -> None:
    rows = [
        row("m", 90, "1", source="run", complete=False, day=5),
        row("m", 60, "1", source="run", day=2, spent="2"),
        row("m", 70, "1", source="run", day=3, spent="4"),
    ]
    b = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core", catalogue=CATALOGUE)
    assert [(p.row.run_id, p.score.score) for p in b.placed] == [("m-3", 70)]
    assert len(b.incomplete) == 1
    measured = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core",
                           catalogue=CATALOGUE, measure="measured")  # fmt: skip
    assert measured.placed[0].price == Decimal(3)  # spent ÷ runs


def test_filters() -> None:
    rows = [row("small", 60, "1", size=7), row("big", 80, "2", size=400), row("closed", 85, "3"),
            row("dear", 90, "50"), row("unpriced", 95, None)]  # fmt: skip
    assert [m for m, _ in board(rows)] == ["small", "big", "closed", "dear"]
    assert [m for m, _ in board(rows, filters=Filters(max_price=Decimal(10)))] == [
        "small", "big", "closed"]  # fmt: skip
    assert [m for m, _ in board(rows, filters=Filters(max_size_b=100))] == [
        "small", "closed", "dear"]  # fmt: skip
    only_disclosed = Filters(include_undisclosed=False)
    hidden = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core",
                         catalogue=CATALOGUE, filters=only_disclosed)  # fmt: skip
    assert [p.row.model for p in hidden.placed] == ["small", "big"]
    assert hidden.hidden == 3
    assert "The filters hid 3 model(s)." in takeaway(hidden, CATALOGUE, questions=10)


def test_takeaway_frontier_overlap_and_scope() -> None:
    rows = [row("a", 60, "1", low=55, high=65), row("b", 63, "2", low=58, high=68),
            row("c", 90, "3", low=85, high=95)]  # fmt: skip
    b = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core", catalogue=CATALOGUE)
    lines = takeaway(b, CATALOGUE, questions=2481)
    assert (
        lines[0] == "Best value, cheapest first: a ($1.00, 60.0), b ($2.00, 63.0), c ($3.00, 90.0)."
    )
    assert "The order between a and b could flip on a re-run." in lines
    assert not any("between b and c" in line for line in lines)
    assert any(line.startswith("Scored on 2,481 questions, without") for line in lines)
    assert lines[-1].startswith("Price: $/1M tokens, blended 3:1")


def test_unknown_metric_is_refused() -> None:
    with pytest.raises(ValueError, match="no task"):
        board([], metric="task:exam")  # region-specific: not in core scope


def test_run_row_from_a_stored_record() -> None:
    record = load_record(GOLDEN.read_text("utf-8"))
    r = run_row(record)
    assert r.source == "run" and r.run_id == record.run_id
    assert r.judge == "openai/gpt-5-mini"
    assert r.model == "openrouter/deepseek/deepseek-v4-flash"
    assert set(r.scores) >= {"overall", "arithmetic", "task:arithmetic"}
    assert r.measured_usd == record.spent_usd
    assert r.scores["overall"].complete == (
        record.coverage.overall.complete and not record.coverage.overall.failed
    )


def test_judge_keys() -> None:
    from sweepbench.leaderboard.rows import judge_key

    assert judge_key("a/j", decision=False) == "a/j"
    assert judge_key("a/j", decision=True) == "a/j (decision)"
    assert judge_key("a/j", decision=False, rule_scored=True) == "a/j (rule-scored)"
    assert judge_key(None, decision=False) is None
    assert judge_key(None, decision=False, rule_scored=True) == "rule-scored"


def test_a_rule_scored_run_gets_its_own_board() -> None:
    data = load_record(GOLDEN.read_text("utf-8")).model_dump(mode="json")
    data["scoring"]["rule_scored"] = True
    r = run_row(load_record(data))
    assert r.judge == "openai/gpt-5-mini (rule-scored)"


def test_the_measured_view_places_what_was_not_measured_at_its_listed_price() -> None:
    """On the measured view a published model (and a run whose spend is unknown) is placed at
    its listed blended price, marked §, the takeaway saying so; a run's own spend stays its
    price, and a row with neither is still not placed (issue 29 §4)."""
    from sweepbench.leaderboard.board import LISTED_MARK, LISTED_NOTE, placed_price

    published, unmeasured = row("pub", 80, "1", price_out="5"), row("run-u", 70, "2", source="run")
    measured = row("run-m", 75, "9", source="run", spent="0.5")
    assert placed_price(published, "measured") == (Decimal(2), True)
    assert placed_price(measured, "measured") == (Decimal("0.5"), False)
    assert placed_price(published, "output") == (Decimal(5), False)
    rows = [published, unmeasured, measured, row("nothing", 90, None)]
    b = build_board(rows, judge=PAPER_JUDGE, metric="overall", scope="core",
                    catalogue=CATALOGUE, measure="measured")  # fmt: skip
    assert [(p.row.model, p.price, p.listed) for p in b.placed] == [
        ("run-m", Decimal("0.5"), False), ("pub", Decimal(2), True),
        ("run-u", Decimal(2), True)]  # fmt: skip
    assert [r.model for r in b.no_price] == ["nothing"]
    lines = takeaway(b, CATALOGUE, questions=10)
    assert LISTED_NOTE in lines and f"pub ($2.00 {LISTED_MARK}, 80.0)" in lines[0]
    assert lines[-1] == "Price: measured cost of a full run (USD), from the runs' own spend; § " \
        "listed prices from t."  # fmt: skip


def test_the_price_limit_is_on_the_boards_measure() -> None:
    """``Filters.max_price`` limits the price the board places a row at (output on the output
    measure), not the blended one."""
    r = row("m", 50, "1", price_out="5")  # blended 2, output 5
    limit = Filters(max_price=Decimal(3))
    assert not limit.hides(r) and not limit.hides(r, "blended") and not limit.hides(r, "input")
    assert limit.hides(r, "output")
    assert board([r], measure="output", filters=limit) == []
    assert board([r], measure="input", filters=limit) == [("m", True)]


def test_a_task_metric_is_labelled_by_the_tasks_name() -> None:
    named = Catalogue(areas={"know": "Knowledge"},
                      tasks={"mmlu_pro": CatalogueTask(area="know", auto=True, name="MMLU-Pro"),
                             "bare": CatalogueTask(area="know", auto=True)})  # fmt: skip
    assert named.metric_label("task:mmlu_pro") == "MMLU-Pro"
    assert named.metric_label("task:bare") == "bare"
    assert named.metric_label("know") == "Knowledge" and named.metric_label("overall") == "Overall"
