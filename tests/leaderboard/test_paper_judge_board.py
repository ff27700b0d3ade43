"""A run graded by ELBench's default judge — the paper's, called through OpenRouter
(``openrouter/qwen/qwen3-235b-a22b``) — stands on the published results' board, not on a board
of its own (issue 29 §4: the estimate promises it; only another judge gets its own board)."""

from __future__ import annotations

import json

from sweepbench.bench.record import load_record
from sweepbench.leaderboard.board import board_keys
from sweepbench.leaderboard.published import PAPER_JUDGE
from sweepbench.leaderboard.rows import judge_key, run_row
from tests.leaderboard.helpers import elbench_record

THROUGH_OPENROUTER = f"openrouter/{PAPER_JUDGE}"


def test_the_papers_judge_through_openrouter_is_the_published_board() -> None:
    assert judge_key(THROUGH_OPENROUTER, decision=False) == PAPER_JUDGE
    assert judge_key(THROUGH_OPENROUTER, decision=True) == f"{PAPER_JUDGE} (decision)"
    data = elbench_record({}).model_dump(mode="json")
    data["roles"]["judge"]["model"] = THROUGH_OPENROUTER
    data["prices"][THROUGH_OPENROUTER] = data["prices"].pop(PAPER_JUDGE)
    row = run_row(load_record(json.dumps(data)))
    assert row.judge == PAPER_JUDGE
    assert board_keys([row]) == [PAPER_JUDGE]  # no second board for the same judge
