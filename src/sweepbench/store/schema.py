"""The current shape of the store: SQLAlchemy Core tables that queries are written against.

Migrations (``migrations.py``) create and alter these tables; they keep their own frozen copy
of each version's DDL, so this module always describes the newest schema only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine

metadata = sa.MetaData()


class UtcDateTime(sa.types.TypeDecorator[datetime]):
    """A timezone-aware UTC instant.

    SQLite has no timestamp type: there it is fixed-width ISO-8601 text
    (``2025-01-31T12:00:00.000000+00:00``), so text order is time order. Other databases get
    ``TIMESTAMP WITH TIME ZONE``. Naive datetimes are refused rather than guessed at.
    """

    impl = sa.String(32)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """Text on SQLite, a real timestamp elsewhere."""
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.String(32))
        return dialect.type_descriptor(sa.DateTime(timezone=True))

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        """Normalise to UTC; ISO text on SQLite."""
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"refusing to store a naive datetime: {value!r}")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.isoformat(timespec="microseconds")
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        """Parse back to an aware UTC datetime."""
        if value is None:
            return None
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
        if not isinstance(moment, datetime):
            raise TypeError(f"expected a datetime from the database, got {value!r}")
        if moment.tzinfo is None:  # a driver that drops the zone: we only ever store UTC
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)


class ExactDecimal(sa.types.TypeDecorator[Decimal]):
    """A ``Decimal`` that round-trips exactly (money).

    PostgreSQL gets an unconstrained ``NUMERIC``; everything else (SQLite, whose numeric
    affinity would turn it into a float) stores the decimal's string form.
    """

    impl = sa.String(64)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        """``NUMERIC`` on PostgreSQL, text elsewhere."""
        if dialect.name == "postgresql":
            return dialect.type_descriptor(sa.Numeric(asdecimal=True))
        return dialect.type_descriptor(sa.String(64))

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> Any:
        """Refuse floats and non-finite values; text unless PostgreSQL."""
        if value is None:
            return None
        if not isinstance(value, Decimal):
            raise TypeError(f"money must be a Decimal, got {type(value).__name__}: {value!r}")
        if not value.is_finite():
            raise ValueError(f"refusing to store a non-finite amount: {value!r}")
        return value if dialect.name == "postgresql" else str(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        """Back to ``Decimal``."""
        if value is None:
            return None
        return value if isinstance(value, Decimal) else Decimal(str(value))


schema_migrations = sa.Table(
    "schema_migrations",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("applied_at", UtcDateTime, nullable=False),
)
"""One row per applied migration."""

calls = sa.Table(
    "calls",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime, nullable=True),
    sa.Column("model", sa.String(300), nullable=False),
    sa.Column("provider", sa.String(100), nullable=False),
    sa.Column("role", sa.String(40), nullable=False, server_default="generate"),
    sa.Column("run_id", sa.String(120), nullable=True),
    sa.Column("request_json", sa.Text, nullable=False),
    sa.Column("text", sa.Text, nullable=False, server_default=""),
    sa.Column("reasoning", sa.Text, nullable=False, server_default=""),
    sa.Column("stop_reason", sa.String(20), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("error_kind", sa.String(40), nullable=True),
    sa.Column("provider_reason", sa.String(100), nullable=True),
    sa.Column("input_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("output_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("reasoning_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("cache_read_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("cache_write_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("cost_usd", ExactDecimal, nullable=True),
    sa.Column("price_source", sa.String(200), nullable=True),
    sa.Column("ttft_s", sa.Float, nullable=True),
    sa.Column("wall_s", sa.Float, nullable=True),
    sa.Column("attempt", sa.Integer, nullable=False, server_default=sa.text("1")),
    sa.Column("item_key", sa.String(500), nullable=True),
    sa.Index("ix_calls_created_at", "created_at"),
    sa.Index("ix_calls_run_id", "run_id"),
)
"""One row per model call, written when it starts and completed when it finishes."""

call_events = sa.Table(
    "call_events",
    metadata,
    sa.Column(
        "call_id",
        sa.String(32),
        sa.ForeignKey("calls.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("t_s", sa.Float, nullable=False),
)
"""The stream of a call: ``data`` is JSON text (a string for text/reasoning deltas)."""

spend_reservations = sa.Table(
    "spend_reservations",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("run_id", sa.String(120), nullable=False),
    sa.Column("call_id", sa.String(32), nullable=True),
    sa.Column("model", sa.String(300), nullable=False),
    sa.Column("role", sa.String(40), nullable=False, server_default="sweep"),
    sa.Column("admitted_at", UtcDateTime, nullable=False),
    sa.Column("day", sa.String(10), nullable=False),
    sa.Column("reserved_micro", sa.BigInteger, nullable=False),
    sa.Column("settled_micro", sa.BigInteger, nullable=True),
    sa.Column("settled_at", UtcDateTime, nullable=True),
    sa.Column("state", sa.String(10), nullable=False, server_default="reserved"),
    sa.Column("free", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("kind", sa.String(10), nullable=False, server_default="call"),
    sa.Column("overrun", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("worker", sa.String(120), nullable=True),
    sa.Column("used_micro", sa.BigInteger, nullable=True),
    sa.Index("ix_spend_reservations_run_id", "run_id"),
    sa.Index("ix_spend_reservations_day", "day"),
    sa.Index("ix_spend_reservations_admitted_at", "admitted_at"),
    sa.Index("ix_spend_reservations_state", "state"),
    sa.Index("ix_spend_reservations_worker", "worker"),
)
"""One row per held amount (the spend ledger): ``kind="call"`` is one call reserved at its worst
case, ``kind="lease"`` covers a benchmark worker's next calls; settled at the actual cost when
the call (or the lease's calls) end. ``overrun`` flags a settlement above its reservation (a real
charge is recorded as it is, never hidden). ``worker`` is the process holding it (see
``workers``): a dead worker's open holds are settled as soon as it is known dead. ``used_micro``
is what a lease's finished calls have cost so far. Money in integer micro-dollars; ``day`` is
the UTC date of admission, the day the spend counts against."""

spend_totals = sa.Table(
    "spend_totals",
    metadata,
    sa.Column("scope", sa.String(200), primary_key=True),
    sa.Column("settled_micro", sa.BigInteger, nullable=False, server_default=sa.text("0")),
    sa.Column("since", UtcDateTime, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
    sa.Column("cap_micro", sa.BigInteger, nullable=True),
)
"""Settled spend that survives the purge of old reservations, by scope: ``all`` (the lifetime
ceiling), ``run:<run_id>`` and ``run:<run_id>:role:<role>`` (a run's limits across
resumptions and processes). ``cap_micro`` is the scope's limit (None: no limit)."""

workers = sa.Table(
    "workers",
    metadata,
    sa.Column("id", sa.String(120), primary_key=True),
    sa.Column("host", sa.String(255), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("started_at", UtcDateTime, nullable=False),
    sa.Column("heartbeat_at", UtcDateTime, nullable=False),
    sa.Column("stopped_at", UtcDateTime, nullable=True),
)
"""Processes that make model calls: a heartbeat every few seconds, so another process can tell
a live worker from a dead one (same host: by its pid at once; elsewhere: by a silent
heartbeat) and settle what a dead one held."""

sweeps = sa.Table(
    "sweeps",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("finished_at", UtcDateTime, nullable=True),
    sa.Column("task", sa.String(40), nullable=False),
    sa.Column("axis", sa.String(40), nullable=False),
    sa.Column("prompt", sa.Text, nullable=False),
    sa.Column("status", sa.String(40), nullable=False),
    sa.Column("cells", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("wall_s", sa.Float, nullable=True),
    sa.Column("serial_s", sa.Float, nullable=True),
    sa.Column("cost_usd", ExactDecimal, nullable=True),
    sa.Column("document", sa.Text, nullable=False),
    sa.Column("worker", sa.String(120), nullable=True),
    sa.Index("ix_sweeps_created_at", "created_at"),
)
"""Sweep history: the whole stored document per sweep (format ``sweepbench-sweep`` v1)."""


bench_runs = sa.Table(
    "bench_runs",
    metadata,
    sa.Column("id", sa.String(120), primary_key=True),
    sa.Column("config_hash", sa.String(64), nullable=False),
    sa.Column("benchmark", sa.String(120), nullable=False),
    sa.Column("model", sa.String(300), nullable=False),
    sa.Column("judge", sa.String(300), nullable=True),
    sa.Column("status", sa.String(40), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
    sa.Column("items", sa.Integer, nullable=False),
    sa.Column("settings", sa.Text, nullable=False),
    sa.Column("record", sa.Text, nullable=True),
    sa.Index("ix_bench_runs_hash", "config_hash"),
)

bench_answers = sa.Table(
    "bench_answers",
    metadata,
    sa.Column("run_id", sa.String(120), primary_key=True),
    sa.Column("key", sa.String(500), primary_key=True),
    sa.Column("task", sa.String(120), nullable=False),
    sa.Column("dimension", sa.String(200), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),  # scored | failed
    sa.Column("answer", sa.Text, nullable=True),
    sa.Column("stop_reason", sa.String(20), nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("passed", sa.Boolean, nullable=True),
    sa.Column("result", sa.String(40), nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("judge", sa.String(300), nullable=True),
    sa.Column("score_metadata", sa.Text, nullable=True),
    sa.Column("error_type", sa.String(60), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("raw_judge", sa.Text, nullable=True),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("input_tokens", sa.Integer, nullable=False),
    sa.Column("output_tokens", sa.Integer, nullable=False),
    sa.Column("reasoning_tokens", sa.Integer, nullable=False),
    sa.Column("latency_ms", sa.Integer, nullable=True),
    sa.Column("retries", sa.Text, nullable=True),
    sa.Column("updated_at", UtcDateTime, nullable=False),
)

bench_spend = sa.Table(
    "bench_spend",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(120), nullable=False),
    sa.Column("key", sa.String(500), nullable=False),
    sa.Column("role", sa.String(20), nullable=False),  # target | judge
    sa.Column("model", sa.String(300), nullable=False),
    sa.Column("input_tokens", sa.Integer, nullable=False),
    sa.Column("output_tokens", sa.Integer, nullable=False),
    sa.Column("reasoning_tokens", sa.Integer, nullable=False),
    sa.Column("micro_usd", sa.BigInteger, nullable=True),  # None: the model has no price
    sa.Column("source", sa.String(20), nullable=False),  # reported | computed | unpriced
    sa.Column("at", UtcDateTime, nullable=False),
    sa.Index("ix_bench_spend_run", "run_id"),
)

bench_turns = sa.Table(
    "bench_turns",
    metadata,
    sa.Column("run_id", sa.String(120), primary_key=True),
    sa.Column("key", sa.String(500), primary_key=True),
    sa.Column("turn", sa.Integer, primary_key=True),  # 0-based, in dialogue order
    sa.Column("speaker", sa.String(20), nullable=False),  # opening | teacher | student
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("reasoning", sa.Text, nullable=False),
    sa.Column("usage", sa.Text, nullable=True),  # JSON: the turn's call's tokens
    sa.Column("at", UtcDateTime, nullable=False),
    # the reply as written when an inline </think> was split off it (m011)
    sa.Column("raw", sa.Text, nullable=True),
)
"""Teaching dialogues, one row per finished turn (written with the turn's ``calls`` row)."""

bench_sweeps = sa.Table(
    "bench_sweeps",
    metadata,
    sa.Column("id", sa.String(160), primary_key=True),
    sa.Column("sweep_hash", sa.String(64), nullable=False),  # the settings' config hashes, in order
    sa.Column("benchmark", sa.String(120), nullable=False),
    sa.Column("axis", sa.String(40), nullable=False),
    sa.Column("created_at", UtcDateTime, nullable=False),
    sa.Column("updated_at", UtcDateTime, nullable=False),
    sa.Column("settings", sa.Text, nullable=False),  # JSON: held, the settings, their runs, limits
    sa.Index("ix_bench_sweeps_hash", "sweep_hash"),
)
"""Benchmark sweeps: one question set under several settings, each setting an ordinary run."""

bench_claims = sa.Table(
    "bench_claims",
    metadata,
    sa.Column("run_id", sa.String(120), primary_key=True),
    sa.Column("key", sa.String(500), primary_key=True),
    sa.Column("position", sa.Integer, nullable=False),  # the plan's order
    sa.Column("worker", sa.String(120), nullable=True),  # None: free to claim
    sa.Column("claimed_at", UtcDateTime, nullable=True),
    sa.Index("ix_bench_claims_free", "run_id", "worker", "position"),
)
"""The items of a run still to answer, each free or claimed by one worker (workers table)."""

rate_events = sa.Table(
    "rate_events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scope", sa.String(300), nullable=False),  # the model's id (provider/model)
    sa.Column("at", sa.Float, nullable=False),  # seconds since the epoch, the sender's clock
    sa.Column("tokens", sa.Integer, nullable=False),
    sa.Index("ix_rate_events_scope_at", "scope", "at"),
)
"""Requests sent in the last minute per model by workers sharing rate limits (one window for
every process and machine of a shared run); rows older than a minute are deleted as they go."""

bench_reports = sa.Table(
    "bench_reports",
    metadata,
    sa.Column("run_id", sa.String(120), primary_key=True),
    sa.Column("answers", sa.Integer, nullable=False),  # the stamp: how many answers were scored
    sa.Column("last_answer_at", sa.String(40), nullable=True),  # and the newest one's time
    sa.Column("resamples", sa.Integer, nullable=False),
    sa.Column("document", sa.Text, nullable=False),  # JSON: the summary, counts, error types
)
"""A run's scores as computed when its session ended (the summary with its bootstrap ranges),
so showing a finished run of 100,000 answers reads one row instead of every answer; valid while
the run's answers are the ones it was computed from (same count, same newest answer)."""
