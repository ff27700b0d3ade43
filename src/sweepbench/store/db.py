"""The :class:`Store`: the one source of truth for calls (and later runs, results and spend).

Synchronous on purpose: every method is one short transaction, so async callers either run it
in a thread (``asyncio.to_thread``) or accept the brief block. A ``Store`` holds no state besides
its engine and may be shared between threads.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

import pydantic_core
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError, OperationalError

from sweepbench import settings
from sweepbench.errors import DataError, UserError
from sweepbench.store.engine import create_engine, writer
from sweepbench.store.migrations import applied_versions, apply_migrations
from sweepbench.store.records import CallEnd, CallRecord, CallStart, CallTiming, EventRecord
from sweepbench.store.schema import call_events, calls


def _now() -> datetime:
    return datetime.now(UTC)


def _json(value: Any) -> str:
    # pydantic's encoder also takes Decimal, datetime, dataclasses and models.
    return pydantic_core.to_json(value).decode("utf-8")


class Store:
    """Calls and their events in a SQL database. Open with :meth:`Store.open`."""

    def __init__(self, engine: Engine) -> None:
        """Wrap an engine whose database is already migrated (see :meth:`open`)."""
        self.engine = engine
        """The SQLAlchemy engine, for layers that add their own tables."""
        self._writer = writer(engine)

    @classmethod
    def open(cls, url: str | None = None) -> Store:
        """Open the store at ``url`` (default: ``SWEEPBENCH_DB`` or the SQLite file under
        ``SWEEPBENCH_HOME``) and apply any pending migrations."""
        engine = create_engine(url or settings.database_url())
        try:
            apply_migrations(engine)
        except OperationalError as exc:
            engine.dispose()
            where = engine.url.render_as_string(hide_password=True)
            raise UserError(f"cannot open the store at {where}: {exc.orig}") from exc
        except BaseException:
            engine.dispose()
            raise
        return cls(engine)

    @property
    def url(self) -> str:
        """The database URL, password hidden (for messages)."""
        return self.engine.url.render_as_string(hide_password=True)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    def begin(self) -> AbstractContextManager[Connection]:
        """A write transaction: commits on success, rolls back on error. On SQLite it takes the
        write lock at once (``BEGIN IMMEDIATE``), so read-then-write logic is safe across
        processes."""
        return self._writer.begin()

    def schema_version(self) -> int:
        """The newest migration applied to this database."""
        with self.engine.connect() as conn:
            return max(applied_versions(conn), default=0)

    def start_call(self, call: CallStart, *, created_at: datetime | None = None) -> str:
        """Record a call that is starting; return its id. Written at once, so a crash mid-call
        leaves an unfinished row behind."""
        call_id = uuid.uuid4().hex
        with self.begin() as conn:
            conn.execute(calls.insert().values(**self._start_values(call_id, call, created_at)))
        return call_id

    def finish_call(
        self,
        call_id: str,
        end: CallEnd,
        *,
        finished_at: datetime | None = None,
        attempt: int = 1,
    ) -> None:
        """Record how a started call ended. A call finishes once; UserError otherwise."""
        with self.begin() as conn:
            result = conn.execute(
                calls.update()
                .where(calls.c.id == call_id, calls.c.finished_at.is_(None))
                .values(finished_at=finished_at or _now(), attempt=attempt, **end.model_dump())
            )
            if result.rowcount == 0:
                exists = conn.scalar(sa.select(calls.c.id).where(calls.c.id == call_id))
                if exists is None:
                    raise UserError(f"no call with id {call_id!r}")
                raise UserError(f"call {call_id} has already finished")

    def record_call(
        self,
        start: CallStart,
        end: CallEnd,
        *,
        created_at: datetime | None = None,
        finished_at: datetime | None = None,
    ) -> str:
        """Record a whole call at once; return its id. Without ``created_at`` the start is
        ``finished_at - wall_s`` (or ``finished_at`` when ``wall_s`` is unknown)."""
        finished_at = finished_at or _now()
        if created_at is None:
            created_at = finished_at - timedelta(seconds=end.wall_s or 0.0)
        call_id = uuid.uuid4().hex
        values = self._start_values(call_id, start, created_at)
        values.update(finished_at=finished_at, **end.model_dump())
        with self.begin() as conn:
            conn.execute(calls.insert().values(**values))
        return call_id

    def append_events(self, call_id: str, events: Sequence[EventRecord]) -> None:
        """Store a batch of a call's events in one transaction. ``seq`` must be new for the
        call; DataError for a duplicate ``seq`` or an unknown call."""
        if not events:
            return
        rows = [
            {"call_id": call_id, "seq": e.seq, "kind": e.kind, "data": _json(e.data), "t_s": e.t_s}
            for e in events
        ]
        try:
            with self.begin() as conn:
                conn.execute(call_events.insert(), rows)
        except IntegrityError as exc:
            raise DataError(
                f"cannot store events for call {call_id!r} "
                f"(unknown call, or a seq stored twice): {exc.orig}"
            ) from exc

    def get_call(self, call_id: str) -> CallRecord:
        """The call with this id, or with the one id that starts with it (like git).
        UserError when none or several match."""
        key = call_id.strip().lower()
        if not key:
            raise UserError("a call id cannot be empty")
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(calls).where(calls.c.id == key)).one_or_none()
            if row is not None:
                return _to_record(row)
            rows = conn.execute(
                sa.select(calls).where(calls.c.id.startswith(key, autoescape=True)).limit(2)
            ).all()
        if not rows:
            raise UserError(f"no call with id {call_id!r}")
        if len(rows) > 1:
            raise UserError(f"call id {call_id!r} is ambiguous; give more of it")
        return _to_record(rows[0])

    def list_calls(
        self, limit: int | None = 20, model: str | None = None, run_id: str | None = None
    ) -> list[CallRecord]:
        """The newest calls first, optionally only one model's (full id) or one run's;
        ``limit=None`` for all."""
        query = sa.select(calls).order_by(calls.c.created_at.desc(), calls.c.id.desc())
        if model is not None:
            query = query.where(calls.c.model == model)
        if run_id is not None:
            query = query.where(calls.c.run_id == run_id)
        if limit is not None:
            query = query.limit(max(limit, 0))
        with self.engine.connect() as conn:
            return [_to_record(row) for row in conn.execute(query)]

    def anomalous_calls(self, since: datetime, limit: int = 10) -> tuple[int, list[CallRecord]]:
        """Calls since ``since`` whose reply was not believed (impossible usage or cost,
        settled at their reservation): how many, and the newest ``limit`` of them."""
        anomalous = sa.and_(calls.c.created_at >= since, calls.c.price_source.like("anomaly:%"))
        count = sa.select(sa.func.count()).select_from(calls).where(anomalous)
        newest = (
            sa.select(calls)
            .where(anomalous)
            .order_by(calls.c.created_at.desc(), calls.c.id.desc())
            .limit(max(limit, 0))
        )
        with self.engine.connect() as conn:
            total = int(conn.scalar(count) or 0)
            return total, [_to_record(row) for row in conn.execute(newest)]

    def call_timings(self, model: str, limit: int = 200) -> list[CallTiming]:
        """How long ``model``'s calls took, newest first (up to ``limit``): only calls that
        finished normally (the answer ended, or the budget did) with output and both times
        recorded. Reads four columns, never a call's texts."""
        query = (
            sa.select(calls.c.ttft_s, calls.c.wall_s, calls.c.output_tokens)
            .where(
                calls.c.model == model,
                calls.c.stop_reason.in_(("end", "max_tokens")),
                calls.c.ttft_s.is_not(None),
                calls.c.wall_s.is_not(None),
                calls.c.output_tokens > 0,
            )
            .order_by(calls.c.created_at.desc(), calls.c.id.desc())
            .limit(max(limit, 0))
        )
        with self.engine.connect() as conn:
            return [CallTiming(r.ttft_s, r.wall_s, r.output_tokens) for r in conn.execute(query)]

    def events(self, call_id: str) -> list[EventRecord]:
        """A call's events in ``seq`` order (empty for an unknown id)."""
        query = (
            sa.select(call_events.c.seq, call_events.c.kind, call_events.c.data, call_events.c.t_s)
            .where(call_events.c.call_id == call_id)
            .order_by(call_events.c.seq)
        )
        with self.engine.connect() as conn:
            return [
                EventRecord(seq=r.seq, kind=r.kind, data=json.loads(r.data), t_s=r.t_s)
                for r in conn.execute(query)
            ]

    def start_call_row(self, start: dict[str, Any]) -> str:
        """Record a call that is starting from plain values — ``model``, ``provider``,
        ``role``, ``run_id``, ``item_key`` and ``request_json`` (JSON text) — as the engine
        makes them; return its id. Written at once (see :meth:`start_call`)."""
        call_id = uuid.uuid4().hex
        values = {"id": call_id, "created_at": _now(), **start}
        with self.begin() as conn:
            conn.execute(calls.insert().values(**values))
        return call_id

    def insert_calls(self, conn: Connection, rows: Sequence[CallRow]) -> None:
        """Insert whole ``calls`` rows (tuples in :data:`CALL_COLUMNS` order, the times as
        seconds since the epoch) inside the caller's transaction, in one statement: a
        benchmark's group commit. On SQLite through the driver's own ``executemany`` (SQLAlchemy
        Core's per-row processing was measured 3× slower for thousands of rows), the times
        turned into the store's text with the second's part made once per second."""
        if not rows:
            return
        if conn.dialect.name != "sqlite":
            conn.execute(
                calls.insert(),
                [
                    {
                        **dict(zip(CALL_COLUMNS, row, strict=True)),
                        "created_at": datetime.fromtimestamp(row[1], UTC),
                        "finished_at": datetime.fromtimestamp(row[2], UTC),
                    }
                    for row in rows
                ],
            )
            return
        values = []
        second, prefix = -1, ""  # the text of the date and time of day, once per second
        for row in rows:
            created, finished = row[1], row[2]
            if int(created // 1) != second:
                second = int(created // 1)
                prefix = _second_text(second)
            created_text = f"{prefix}.{int((created - second) * 1_000_000):06d}+00:00"
            if int(finished // 1) == second:
                finished_text = f"{prefix}.{int((finished - second) * 1_000_000):06d}+00:00"
            else:  # a call across a second
                finished_text = _stamp_text(finished)
            cost = row[19]
            values.append((
                row[0], created_text, finished_text, *row[3:19],
                None if cost is None else str(cost), *row[20:],
            ))  # fmt: skip
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.executemany(_INSERT_CALLS, values)
        finally:
            cursor.close()

    @staticmethod
    def _start_values(call_id: str, call: CallStart, created_at: datetime | None) -> dict[str, Any]:
        return {
            "id": call_id,
            "created_at": created_at or _now(),
            "model": call.model,
            "provider": call.provider,
            "role": call.role,
            "run_id": call.run_id,
            "item_key": call.item_key,
            "request_json": _json(call.request),
        }


CALL_COLUMNS = (
    "id", "created_at", "finished_at", "model", "provider", "role", "run_id", "request_json",
    "text", "reasoning", "stop_reason", "error", "error_kind", "provider_reason",
    "input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
    "cache_write_tokens", "cost_usd", "price_source", "ttft_s", "wall_s", "attempt", "item_key",
)  # fmt: skip
"""The columns of a whole ``calls`` row as :meth:`Store.insert_calls` takes it."""
CallRow = tuple[Any, ...]
"""A whole ``calls`` row: values in :data:`CALL_COLUMNS` order; ``created_at`` and
``finished_at`` in seconds since the epoch, ``cost_usd`` a ``Decimal`` or None."""
_INSERT_CALLS = (
    f"INSERT INTO calls ({', '.join(CALL_COLUMNS)}) VALUES ({', '.join('?' for _ in CALL_COLUMNS)})"
)


def _second_text(second: int) -> str:
    """The date and time of day of ``second`` since the epoch, as ``UtcDateTime`` stores it on
    SQLite (without the fraction and the zone)."""
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _stamp_text(moment: float) -> str:
    """``moment`` (seconds since the epoch) as ``UtcDateTime``'s SQLite text
    (``2025-01-31T12:00:00.000000+00:00``; the fraction is below 1 s by more than a float's
    error at today's epoch, so it never rounds up to a whole second)."""
    second = int(moment // 1)
    return f"{_second_text(second)}.{int((moment - second) * 1_000_000):06d}+00:00"


def _to_record(row: Row[Any]) -> CallRecord:
    # Only the record's fields: later migrations may add columns that later layers read.
    mapping = row._mapping
    data = {name: mapping[name] for name in CallRecord.model_fields if name != "request"}
    data["request"] = json.loads(mapping["request_json"])
    return CallRecord.model_validate(data)
