"""Engines for the store: any SQLAlchemy URL, with SQLite tuned for several writers.

On SQLite every connection gets WAL (readers never block the writer), foreign keys, and a busy
timeout (a second writer waits instead of failing). SQLAlchemy, not the ``sqlite3`` module,
emits ``BEGIN``, so a write transaction can be ``BEGIN IMMEDIATE``: it takes the write lock up
front, which is what lets read-then-write transactions (the spend ledger) from several
processes queue on the busy timeout instead of failing with ``database is locked``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from sweepbench.errors import UserError

BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another one before giving up."""

WRITE_OPTION = "sweepbench_write"
"""Execution option that marks a connection's transactions as writes (``BEGIN IMMEDIATE``)."""


def is_memory(url: URL) -> bool:
    """True for an in-memory SQLite database (tests)."""
    return url.get_backend_name() == "sqlite" and (
        url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
    )


def create_engine(url: str | URL) -> Engine:
    """An engine for ``url``; creates the folder of a SQLite file. Raises UserError for a bad
    URL or a missing driver."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise UserError(f"not a database URL: {url!r}") from exc
    kwargs: dict[str, Any] = {}
    sqlite = parsed.get_backend_name() == "sqlite"
    if sqlite and is_memory(parsed):
        # One shared connection, or every thread would see its own empty database.
        kwargs.update(poolclass=StaticPool, connect_args={"check_same_thread": False})
    elif sqlite:
        database = parsed.database or ""
        try:
            if not database.startswith("file:"):
                Path(database).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the folder of the store {database}: {exc}") from exc
    else:
        kwargs["pool_pre_ping"] = True
    try:
        engine = sa.create_engine(parsed, **kwargs)
    except (ModuleNotFoundError, NoSuchModuleError) as exc:
        hint = " (pip install 'sweepbench[postgres]')" if "postgres" in parsed.drivername else ""
        raise UserError(f"no database driver for {parsed.drivername}{hint}: {exc}") from exc
    if sqlite:
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def writer(engine: Engine) -> Engine:
    """The same engine (same pool) whose transactions take the write lock up front."""
    return engine.execution_options(**{WRITE_OPTION: True})


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    # Let SQLAlchemy emit BEGIN (see _sqlite_begin); sqlite3 still commits and rolls back.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        # In WAL mode NORMAL cannot corrupt the database and survives a process crash; only
        # an OS crash or power cut may lose the last commits. FULL would fsync every commit.
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    immediate = conn.get_execution_options().get(WRITE_OPTION, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
