"""Numbered, append-only schema migrations, applied in order when the store opens.

Rules (so that every database ever created can be brought forward):

- a migration is a function ``mNNN_name(conn)`` decorated with :func:`migration`; numbers are
  consecutive and never reused;
- a migration that has shipped is never edited: add a new one instead;
- each migration builds its DDL from its own frozen table definitions (never from
  ``schema.py``, which describes only the newest shape);
- each runs in its own transaction together with its ``schema_migrations`` row, so it is
  applied entirely or not at all, and opening a database twice applies nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from sweepbench.errors import UserError
from sweepbench.store.engine import writer
from sweepbench.store.schema import ExactDecimal, UtcDateTime, schema_migrations

MigrationFn = Callable[[Connection], None]

# Any constant works; it only has to be the same in every process that migrates.
_PG_LOCK_KEY = 0x5357_4250  # "SWBP"


@dataclass(frozen=True)
class Migration:
    """One schema change: its number, its name and the function that applies it."""

    version: int
    name: str
    apply: MigrationFn


MIGRATIONS: list[Migration] = []
"""Every migration, in order; ``MIGRATIONS[i].version == i + 1``."""


def migration(fn: MigrationFn) -> MigrationFn:
    """Register ``mNNN_name`` as migration number NNN (must be the next number)."""
    match = re.fullmatch(r"m(\d{3})_(\w+)", fn.__name__)
    if not match:
        raise ValueError(f"a migration is named mNNN_name, not {fn.__name__!r}")
    version = int(match.group(1))
    if version != len(MIGRATIONS) + 1:
        raise ValueError(
            f"migration {fn.__name__} is out of order (expected {len(MIGRATIONS) + 1})"
        )
    MIGRATIONS.append(Migration(version, match.group(2), fn))
    return fn


def latest_version() -> int:
    """The schema version this code writes."""
    return len(MIGRATIONS)


def applied_versions(conn: Connection) -> set[int]:
    """Versions recorded in ``schema_migrations`` (empty for a new database)."""
    if not sa.inspect(conn).has_table(schema_migrations.name):
        return set()
    return set(conn.scalars(sa.select(schema_migrations.c.version)))


def apply_migrations(engine: Engine) -> list[int]:
    """Bring the database up to :func:`latest_version`; return the versions applied now.

    Safe to run from several processes at once: each migration holds the database's write
    lock (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on PostgreSQL) while it checks
    whether it is still needed.
    """
    with engine.connect() as conn:
        done = applied_versions(conn)
    newest = max(done, default=0)
    if newest > latest_version():
        raise UserError(
            f"the database is at schema version {newest}, newer than this sweepbench "
            f"understands ({latest_version()}); upgrade sweepbench"
        )
    if len(done) == latest_version():
        return []
    applied: list[int] = []
    for step in MIGRATIONS:
        if step.version in done:
            continue
        with writer(engine).begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
            schema_migrations.create(conn, checkfirst=True)
            if step.version in applied_versions(conn):  # another process got there first
                continue
            step.apply(conn)
            conn.execute(
                schema_migrations.insert().values(
                    version=step.version, name=step.name, applied_at=datetime.now(UTC)
                )
            )
        applied.append(step.version)
    return applied


@migration
def m001_calls(conn: Connection) -> None:
    """Model calls and their event streams."""
    md = sa.MetaData()
    sa.Table(
        "calls",
        md,
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("finished_at", UtcDateTime, nullable=True),
        sa.Column("model", sa.String(300), nullable=False),
        sa.Column("provider", sa.String(100), nullable=False),
        sa.Column("role", sa.String(40), nullable=False, server_default="generate"),
        sa.Column("run_id", sa.String(64), nullable=True),
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
        sa.Index("ix_calls_created_at", "created_at"),
        sa.Index("ix_calls_run_id", "run_id"),
    )
    sa.Table(
        "call_events",
        md,
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
    md.create_all(conn)


@migration
def m002_spend(conn: Connection) -> None:
    """The spend ledger: one reservation per admitted call, and settled totals that outlive
    the purge of old reservations."""
    md = sa.MetaData()
    sa.Table(
        "spend_reservations",
        md,
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("run_id", sa.String(64), nullable=False),
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
        sa.Index("ix_spend_reservations_run_id", "run_id"),
        sa.Index("ix_spend_reservations_day", "day"),
        sa.Index("ix_spend_reservations_admitted_at", "admitted_at"),
        sa.Index("ix_spend_reservations_state", "state"),
    )
    totals = sa.Table(
        "spend_totals",
        md,
        sa.Column("scope", sa.String(80), primary_key=True),
        sa.Column("settled_micro", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("since", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    md.create_all(conn)
    now = datetime.now(UTC)
    conn.execute(totals.insert().values(scope="all", settled_micro=0, since=now, updated_at=now))


@migration
def m003_sweeps(conn: Connection) -> None:
    """Sweep history: one row per sweep with its whole document (plan, estimate, cells); the
    cells' calls are rows of ``calls`` with ``run_id`` = the sweep id."""
    md = sa.MetaData()
    sa.Table(
        "sweeps",
        md,
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
        sa.Index("ix_sweeps_created_at", "created_at"),
    )
    md.create_all(conn)


def _bench_tables(md: sa.MetaData) -> None:
    """The benchmark tables as m004 created them."""
    sa.Table(
        "bench_runs",
        md,
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("benchmark", sa.String(120), nullable=False),
        sa.Column("model", sa.String(300), nullable=False),
        sa.Column("judge", sa.String(300), nullable=True),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
        sa.Column("items", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Index("ix_bench_runs_hash", "config_hash"),
    )
    sa.Table(
        "bench_answers",
        md,
        sa.Column("run_id", sa.String(120), primary_key=True),
        sa.Column("key", sa.String(500), primary_key=True),
        sa.Column("task", sa.String(120), nullable=False),
        sa.Column("dimension", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
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
        sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("1")),
        sa.Column("input_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("output_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("reasoning_tokens", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("latency_ms", sa.Integer, nullable=True),
        sa.Column("retries", sa.Text, nullable=True),
        sa.Column("updated_at", UtcDateTime, nullable=False),
    )
    sa.Table(
        "bench_spend",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(120), nullable=False),
        sa.Column("key", sa.String(500), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("model", sa.String(300), nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("reasoning_tokens", sa.Integer, nullable=False),
        sa.Column("micro_usd", sa.BigInteger, nullable=True),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("at", UtcDateTime, nullable=False),
        sa.Index("ix_bench_spend_run", "run_id"),
    )


@migration
def m004_bench(conn: Connection) -> None:
    """Benchmark runs: one row per run (its settings and status), one row per item answered
    (the answer, its score or its error; replaced when a failed item is retried), and an
    append-only spend line per model call, by role (model under test, judge)."""
    md = sa.MetaData()
    _bench_tables(md)
    md.create_all(conn)


@migration
def m005_engine(conn: Connection) -> None:
    """One engine for every call: ledger scopes with caps (per-run and per-run × role limits
    held by the ledger, so they bind every process), leases and overrun flags on reservations,
    the worker that holds each reservation, a registry of live workers (heartbeats), the
    worker of each sweep and benchmark run, and the benchmark run record."""
    add: list[tuple[str, sa.Column[Any]]] = [
        ("spend_totals", sa.Column("cap_micro", sa.BigInteger, nullable=True)),
        ("spend_reservations", sa.Column("kind", sa.String(10), nullable=False,
                                         server_default="call")),
        ("spend_reservations", sa.Column("overrun", sa.Boolean, nullable=False,
                                         server_default=sa.false())),
        ("spend_reservations", sa.Column("worker", sa.String(120), nullable=True)),
        ("spend_reservations", sa.Column("used_micro", sa.BigInteger, nullable=True)),
        ("sweeps", sa.Column("worker", sa.String(120), nullable=True)),
        ("bench_runs", sa.Column("record", sa.Text, nullable=True)),
        ("calls", sa.Column("attempt", sa.Integer, nullable=False, server_default=sa.text("1"))),
        ("calls", sa.Column("item_key", sa.String(500), nullable=True)),
    ]  # fmt: skip
    preparer = conn.dialect.identifier_preparer
    for table, column in add:
        ddl = sa.schema.CreateColumn(column).compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE {preparer.quote(table)} ADD COLUMN {ddl}"))
    conn.execute(
        sa.text("CREATE INDEX ix_spend_reservations_worker ON spend_reservations (worker)")
    )
    if conn.dialect.name == "postgresql":  # SQLite does not enforce VARCHAR lengths
        # benchmark run ids (120 characters) now name calls, reservations and scopes too
        for table, name, length in (
            ("calls", "run_id", 120),
            ("spend_reservations", "run_id", 120),
            ("spend_totals", "scope", 200),
        ):
            conn.execute(sa.text(f"ALTER TABLE {table} ALTER COLUMN {name} TYPE VARCHAR({length})"))
    md = sa.MetaData()
    sa.Table(
        "workers",
        md,
        sa.Column("id", sa.String(120), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", UtcDateTime, nullable=False),
        sa.Column("heartbeat_at", UtcDateTime, nullable=False),
        sa.Column("stopped_at", UtcDateTime, nullable=True),
    )
    md.create_all(conn)


@migration
def m006_dialogue_turns(conn: Connection) -> None:
    """Teaching dialogues stored turn by turn: one row per finished turn of a benchmark item
    (speaker, text, reasoning, usage), written in the group commit that stores the turn's
    ``calls`` row, so a resumed run continues a dialogue without paying again for its
    finished turns."""
    md = sa.MetaData()
    sa.Table(
        "bench_turns",
        md,
        sa.Column("run_id", sa.String(120), primary_key=True),
        sa.Column("key", sa.String(500), primary_key=True),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("speaker", sa.String(20), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("usage", sa.Text, nullable=True),
        sa.Column("at", UtcDateTime, nullable=False),
    )
    md.create_all(conn)


@migration
def m007_bench_sweeps(conn: Connection) -> None:
    """Benchmark sweeps (``bench sweep``): one row per sweep naming its axis, held settings and
    the ordinary benchmark run of each setting (found again by its settings hash), so running
    the same sweep again continues every setting."""
    md = sa.MetaData()
    sa.Table(
        "bench_sweeps",
        md,
        sa.Column("id", sa.String(160), primary_key=True),
        sa.Column("sweep_hash", sa.String(64), nullable=False),
        sa.Column("benchmark", sa.String(120), nullable=False),
        sa.Column("axis", sa.String(40), nullable=False),
        sa.Column("created_at", UtcDateTime, nullable=False),
        sa.Column("updated_at", UtcDateTime, nullable=False),
        sa.Column("settings", sa.Text, nullable=False),
        sa.Index("ix_bench_sweeps_hash", "sweep_hash"),
    )
    md.create_all(conn)


@migration
def m008_bench_claims(conn: Connection) -> None:
    """Items claimed in the store, so that several worker processes (or machines) can share
    one run: one row per item still to answer, free or held by a worker; a dead worker's
    claims are freed again, and an answered item's row goes in the commit of its answer."""
    md = sa.MetaData()
    sa.Table(
        "bench_claims",
        md,
        sa.Column("run_id", sa.String(120), primary_key=True),
        sa.Column("key", sa.String(500), primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("worker", sa.String(120), nullable=True),
        sa.Column("claimed_at", UtcDateTime, nullable=True),
        sa.Index("ix_bench_claims_free", "run_id", "worker", "position"),
    )
    md.create_all(conn)


@migration
def m009_rate_events(conn: Connection) -> None:
    """Rate limits shared by the workers of a run: the requests each model was sent in the
    last minute, counted in the store so that ten workers keep one limit between them."""
    md = sa.MetaData()
    sa.Table(
        "rate_events",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(300), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Index("ix_rate_events_scope_at", "scope", "at"),
    )
    md.create_all(conn)


@migration
def m010_bench_reports(conn: Connection) -> None:
    """A run's scores as computed when its session ended, with the stamp of the answers they
    were computed from, so ``bench show`` of a finished run reads one row, not every answer."""
    md = sa.MetaData()
    sa.Table(
        "bench_reports",
        md,
        sa.Column("run_id", sa.String(120), primary_key=True),
        sa.Column("answers", sa.Integer, nullable=False),
        sa.Column("last_answer_at", sa.String(40), nullable=True),
        sa.Column("resamples", sa.Integer, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
    )
    md.create_all(conn)


@migration
def m011_turn_raw_text(conn: Connection) -> None:
    """A dialogue turn keeps the reply as the model wrote it when its reasoning was split off
    at an inline ``</think>`` (ELBench sends earlier turns back from that text)."""
    column = sa.Column("raw", sa.Text, nullable=True)
    ddl = sa.schema.CreateColumn(column).compile(dialect=conn.dialect)
    table = conn.dialect.identifier_preparer.quote("bench_turns")
    conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {ddl}"))
