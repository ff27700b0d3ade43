"""Benchmark runs in the store: the run row, one answer row per item, and the spend lines.

Answers and spend are written together in one transaction per batch (:meth:`BenchStore.write`),
so an answer is never stored without its cost, nor a cost without its answer. A retried item's
row is replaced (its key is the primary key within a run), so an item is never stored twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pydantic_core
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from sweepbench.money.ceilings import micro_to_usd, usd_to_micro
from sweepbench.store import Store
from sweepbench.store.engine import writer
from sweepbench.store.schema import bench_answers, bench_runs, bench_spend

RUN_STATES = ("running", "completed", "completed_with_errors", "paused_budget", "interrupted")


def _now() -> datetime:
    return datetime.now(UTC)


def _json(value: Any) -> str:
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

    def values(self, run_id: str, now: datetime) -> dict[str, Any]:
        """The row as stored."""
        row = {k: v for k, v in self.__dict__.items()}
        row["score_metadata"] = None if self.score_metadata is None else _json(self.score_metadata)
        return {**row, "run_id": run_id, "updated_at": now}


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


def _run_row(row: Any) -> RunRow:
    data = dict(row._mapping)
    data["settings"] = json.loads(data["settings"])
    return RunRow(**data)


class BenchStore:
    """Benchmark tables of a :class:`Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._writer = writer(store.engine)

    # -- runs --------------------------------------------------------------------------------

    def create_run(self, run: RunRow) -> None:
        """Insert a new run row."""
        with self._writer.begin() as conn:
            conn.execute(
                bench_runs.insert().values({**run.__dict__, "settings": _json(run.settings)})
            )

    def set_status(
        self, run_id: str, status: str, reason: str | None = None, **settings: Any
    ) -> None:
        """Record a run's status (and the reason it stopped); ``settings`` are merged into its
        stored settings (the limits last used, say)."""
        if status not in RUN_STATES:
            raise ValueError(f"unknown run status {status!r}")
        with self._writer.begin() as conn:
            values: dict[str, Any] = {"status": status, "reason": reason, "updated_at": _now()}
            if settings:
                stored = conn.scalar(
                    sa.select(bench_runs.c.settings).where(bench_runs.c.id == run_id)
                )
                merged = {**json.loads(stored or "{}"), **settings}
                values["settings"] = _json(merged)
            conn.execute(bench_runs.update().where(bench_runs.c.id == run_id).values(values))

    def run(self, run_id: str) -> RunRow | None:
        """A run by id (a unique prefix works too)."""
        with self.store.engine.connect() as conn:
            row = conn.execute(sa.select(bench_runs).where(bench_runs.c.id == run_id)).first()
            if row is None:
                rows = conn.execute(
                    sa.select(bench_runs).where(bench_runs.c.id.startswith(run_id, autoescape=True))
                ).fetchall()
                row = rows[0] if len(rows) == 1 else None
        return None if row is None else _run_row(row)

    def runs(self, limit: int = 50) -> list[RunRow]:
        """The newest runs first."""
        query = sa.select(bench_runs).order_by(bench_runs.c.created_at.desc()).limit(limit)
        with self.store.engine.connect() as conn:
            return [_run_row(r) for r in conn.execute(query)]

    def resumable(self, config_hash: str, *, include_completed: bool = False) -> RunRow | None:
        """The newest run with these settings that has not completed (or any, when
        ``include_completed``)."""
        query = (
            sa.select(bench_runs)
            .where(bench_runs.c.config_hash == config_hash)
            .order_by(bench_runs.c.created_at.desc())
        )
        if not include_completed:
            query = query.where(bench_runs.c.status != "completed")
        with self.store.engine.connect() as conn:
            row = conn.execute(query.limit(1)).first()
        return None if row is None else _run_row(row)

    def delete_run(self, run_id: str) -> None:
        """Delete a run with its answers and spend lines."""
        with self._writer.begin() as conn:
            for table in (bench_answers, bench_spend):
                conn.execute(table.delete().where(table.c.run_id == run_id))
            conn.execute(bench_runs.delete().where(bench_runs.c.id == run_id))

    # -- answers and spend -------------------------------------------------------------------

    def write(self, run_id: str, answers: Sequence[AnswerRow], spend: Sequence[SpendLine]) -> None:
        """Store a batch of answers (replacing earlier rows of the same keys) and their spend
        lines, in one transaction."""
        if not answers and not spend:
            return
        now = _now()
        with self._writer.begin() as conn:
            if conn.dialect.name == "sqlite":
                _write_sqlite(conn, run_id, now, answers, spend)
            else:
                _write_portable(conn, run_id, now, answers, spend)
            conn.execute(
                bench_runs.update().where(bench_runs.c.id == run_id).values(updated_at=now)
            )

    def statuses(self, run_id: str) -> dict[str, str]:
        """Every stored key of a run with its status (``scored`` or ``failed``)."""
        query = sa.select(bench_answers.c.key, bench_answers.c.status).where(
            bench_answers.c.run_id == run_id
        )
        with self.store.engine.connect() as conn:
            return {key: status for key, status in conn.execute(query)}

    def answers(self, run_id: str, *, status: str | None = None) -> Iterator[dict[str, Any]]:
        """A run's answer rows as dicts (``score_metadata`` parsed)."""
        query = sa.select(bench_answers).where(bench_answers.c.run_id == run_id)
        if status is not None:
            query = query.where(bench_answers.c.status == status)
        with self.store.engine.connect() as conn:
            for row in conn.execute(query.order_by(bench_answers.c.task, bench_answers.c.key)):
                data = dict(row._mapping)
                meta = data.get("score_metadata")
                data["score_metadata"] = json.loads(meta) if meta else None
                yield data

    def failed_answers(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The failed rows of a run by key (their answers are kept for re-grading)."""
        return {row["key"]: row for row in self.answers(run_id, status="failed")}

    def spent(self, run_id: str) -> dict[str, Decimal]:
        """What each role of a run has spent so far, across every session (unpriced calls
        count $0 here; the run reports them)."""
        query = (
            sa.select(bench_spend.c.role, sa.func.coalesce(sa.func.sum(bench_spend.c.micro_usd), 0))
            .where(bench_spend.c.run_id == run_id)
            .group_by(bench_spend.c.role)
        )
        with self.store.engine.connect() as conn:
            return {role: micro_to_usd(int(total)) for role, total in conn.execute(query)}

    def spend_lines(self, run_id: str) -> Iterator[dict[str, Any]]:
        """A run's spend lines in order, money as a decimal string."""
        query = (
            sa.select(bench_spend).where(bench_spend.c.run_id == run_id).order_by(bench_spend.c.id)
        )
        with self.store.engine.connect() as conn:
            for row in conn.execute(query):
                data = dict(row._mapping)
                micro = data.pop("micro_usd")
                data["usd"] = None if micro is None else str(micro_to_usd(micro))
                data.pop("id")
                yield data


_ANSWER_COLUMNS = [c.name for c in bench_answers.columns]
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


def _spend_micro(line: SpendLine) -> int | None:
    return None if line.usd is None else usd_to_micro(line.usd, up=True)


def _write_sqlite(
    conn: Connection,
    run_id: str,
    now: datetime,
    answers: Sequence[AnswerRow],
    spend: Sequence[SpendLine],
) -> None:
    """The fast path: plain ``executemany`` of tuples (thousands of rows a second matter
    when a scripted or local model answers instantly). Same rows as the portable path."""
    stamp = now.isoformat(timespec="microseconds")  # UtcDateTime's SQLite form
    if answers:
        rows = []
        for a in answers:
            values = a.values(run_id, now)
            values["updated_at"] = stamp
            rows.append(tuple(values[c] for c in _ANSWER_COLUMNS))
        conn.exec_driver_sql(_UPSERT_SQLITE, rows)
    if spend:
        conn.exec_driver_sql(
            _SPEND_SQLITE,
            [
                (run_id, s.key, s.role, s.model, s.input_tokens, s.output_tokens,
                 s.reasoning_tokens, _spend_micro(s), s.source, stamp)
                for s in spend
            ],
        )  # fmt: skip


def _write_portable(
    conn: Connection,
    run_id: str,
    now: datetime,
    answers: Sequence[AnswerRow],
    spend: Sequence[SpendLine],
) -> None:
    """SQLAlchemy Core (PostgreSQL)."""
    if answers:
        rows = [a.values(run_id, now) for a in answers]
        insert = postgresql.insert(bench_answers)
        update = {c: insert.excluded[c] for c in rows[0] if c not in ("run_id", "key")}
        conn.execute(
            insert.on_conflict_do_update(index_elements=["run_id", "key"], set_=update), rows
        )
    if spend:
        conn.execute(
            bench_spend.insert(),
            [
                {**{k: v for k, v in s.__dict__.items() if k != "usd"}, "run_id": run_id,
                 "micro_usd": _spend_micro(s), "at": now}
                for s in spend
            ],
        )  # fmt: skip
