"""The rows of a benchmark run, as values: the run (:class:`RunRow`), an item's outcome
(:class:`AnswerRow`) and a call's cost (:class:`SpendLine`); and how a batch of answers and spend
lines is written in the caller's transaction (the driver's own ``executemany`` on SQLite,
SQLAlchemy Core elsewhere). :class:`.storage.BenchStore` reads and writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import pydantic_core
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from sweepbench.money.ceilings import usd_to_micro
from sweepbench.store.schema import bench_answers, bench_spend


def json_text(value: Any) -> str:
    """A value as the JSON text a row stores."""
    return pydantic_core.to_json(value).decode("utf-8")


@dataclass
class AnswerRow:
    """One item's outcome: scored (``status="scored"``) or failed (``status="failed"``)."""

    key: str
    task: str
    dimension: str
    status: str
    answer: str | None = None
    stop_reason: str | None = None
    score: float | None = None
    passed: bool | None = None
    result: str | None = None
    reason: str | None = None
    judge: str | None = None
    score_metadata: dict[str, Any] | None = None
    error_type: str | None = None
    error: str | None = None
    raw_judge: str | None = None
    attempts: int = 1
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_ms: int | None = None
    retries: list[dict[str, Any]] | None = None
    """Every retry of the item's calls: attempt, role, wait, error type and message."""

    def row(self, run_id: str, stamp: Any) -> tuple[Any, ...]:
        """The row as a tuple in the table's column order (the SQLite fast path)."""
        meta = None if self.score_metadata is None else json_text(self.score_metadata)
        return (
            run_id, self.key, self.task, self.dimension, self.status, self.answer,
            self.stop_reason, self.score, self.passed, self.result, self.reason, self.judge,
            meta, self.error_type, self.error, self.raw_judge, self.attempts, self.input_tokens,
            self.output_tokens, self.reasoning_tokens, self.latency_ms,
            None if not self.retries else json_text(self.retries), stamp,
        )  # fmt: skip

    def values(self, run_id: str, now: datetime) -> dict[str, Any]:
        """The row as stored, by column name."""
        return dict(zip(_ANSWER_COLUMNS, self.row(run_id, now), strict=True))


@dataclass(frozen=True)
class SpendLine:
    """One model call's cost, by role (``target`` or ``judge``)."""

    key: str
    role: str
    model: str
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    usd: Decimal | None
    source: str
    """``reported`` (the provider's own figure), ``computed`` (tokens × price) or ``unpriced``."""

    def values(self, run_id: str, at: Any) -> dict[str, Any]:
        """The row as stored, in the table's column order (money in micro-dollars)."""
        micro = None if self.usd is None else usd_to_micro(self.usd, up=True)
        return {
            "run_id": run_id, "key": self.key, "role": self.role, "model": self.model,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens, "micro_usd": micro,
            "source": self.source, "at": at,
        }  # fmt: skip


@dataclass
class RunRow:
    """A stored run."""

    id: str
    config_hash: str
    benchmark: str
    model: str
    judge: str | None
    status: str
    reason: str | None
    created_at: datetime
    updated_at: datetime
    items: int
    settings: dict[str, Any] = field(default_factory=dict)
    record: str | None = None
    """The run's stored record (``bench.record.RunRecord`` as JSON), once a session ended."""


_ANSWER_COLUMNS = [c.name for c in bench_answers.columns]
assert _ANSWER_COLUMNS[:2] == ["run_id", "key"] and _ANSWER_COLUMNS[-1] == "updated_at"
_SPEND_COLUMNS = [c.name for c in bench_spend.columns if c.name != "id"]
_UPSERT_SQLITE = (
    f"INSERT INTO bench_answers ({', '.join(_ANSWER_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _ANSWER_COLUMNS)}) "
    "ON CONFLICT (run_id, key) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _ANSWER_COLUMNS if c not in ("run_id", "key"))
)
_SPEND_SQLITE = (
    f"INSERT INTO bench_spend ({', '.join(_SPEND_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _SPEND_COLUMNS)})"
)


def write_sqlite(
    conn: Connection,
    run_id: str,
    now: datetime,
    answers: Sequence[AnswerRow],
    spend: Sequence[SpendLine],
) -> None:
    """The fast path: the driver's own ``executemany`` over tuples, inside the transaction
    SQLAlchemy opened (thousands of rows a second matter when a scripted or local model
    answers instantly). Writes exactly the rows of the portable path."""
    stamp = now.isoformat(timespec="microseconds")  # UtcDateTime's SQLite form
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        if answers:
            cursor.executemany(_UPSERT_SQLITE, [a.row(run_id, stamp) for a in answers])
        if spend:
            cursor.executemany(
                _SPEND_SQLITE, [tuple(s.values(run_id, stamp).values()) for s in spend]
            )
    finally:
        cursor.close()


def write_portable(
    conn: Connection,
    run_id: str,
    now: datetime,
    answers: Sequence[AnswerRow],
    spend: Sequence[SpendLine],
) -> None:
    """SQLAlchemy Core: PostgreSQL (and SQLite, where tests compare it with the fast path)."""
    if answers:
        rows = [a.values(run_id, now) for a in answers]
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        insert = dialect.insert(bench_answers)
        update = {c: insert.excluded[c] for c in rows[0] if c not in ("run_id", "key")}
        conn.execute(
            insert.on_conflict_do_update(index_elements=["run_id", "key"], set_=update), rows
        )
    if spend:
        conn.execute(bench_spend.insert(), [s.values(run_id, now) for s in spend])
