"""Dialogue turns in the store (``bench_turns``): written in the runner's group commit with
the ``calls`` row of the call that made them, read back when a run resumes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.bench.dialogue.turns import Turn
from sweepbench.store import Store
from sweepbench.store.schema import bench_turns


@dataclass(frozen=True)
class StoredTurn:
    """A turn waiting to be written: which item, its index in the dialogue, the turn."""

    key: str
    index: int
    turn: Turn


def write_turns(conn: Connection, run_id: str, turns: Sequence[StoredTurn]) -> None:
    """Insert turns (a turn stored before, by a session that crashed after writing it, is
    replaced: its index names it)."""
    if not turns:
        return
    now = datetime.now(UTC)
    keys = {(t.key, t.index) for t in turns}
    for key, index in keys:
        conn.execute(
            bench_turns.delete().where(
                bench_turns.c.run_id == run_id,
                bench_turns.c.key == key,
                bench_turns.c.turn == index,
            )
        )
    conn.execute(
        bench_turns.insert(),
        [
            {
                "run_id": run_id, "key": t.key, "turn": t.index, "speaker": t.turn.speaker,
                "content": t.turn.content, "reasoning": t.turn.reasoning,
                "usage": json.dumps(t.turn.usage) if t.turn.usage else None, "at": now,
                "raw": t.turn.raw or None,
            }
            for t in turns
        ],
    )  # fmt: skip


def read_turns(store: Store, run_id: str, key: str) -> list[Turn]:
    """An item's stored turns, in order (empty when its dialogue has not started)."""
    query = (
        sa.select(bench_turns)
        .where(bench_turns.c.run_id == run_id, bench_turns.c.key == key)
        .order_by(bench_turns.c.turn)
    )
    with store.engine.connect() as conn:
        rows = conn.execute(query).all()
    turns: list[Turn] = []
    for row in rows:
        if row.turn != len(turns):  # a gap: keep only the unbroken start of the dialogue
            break
        usage = json.loads(row.usage) if row.usage else {}
        stored = {"role": row.speaker, "content": row.content, "reasoning": row.reasoning,
                  "usage_metadata": usage, "raw": row.raw or ""}  # fmt: skip
        turns.append(Turn.from_json(stored))
    return turns


def dialogue_keys(store: Store, run_id: str) -> list[str]:
    """The items of a run that have stored turns, in key order."""
    query = (
        sa.select(bench_turns.c.key)
        .where(bench_turns.c.run_id == run_id)
        .distinct()
        .order_by(bench_turns.c.key)
    )
    with store.engine.connect() as conn:
        return [str(key) for key in conn.scalars(query)]
