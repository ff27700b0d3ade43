"""The databases store-level tests run against: SQLite always, PostgreSQL when
``SWEEPBENCH_TEST_POSTGRES`` names one (its ``public`` schema is wiped before each test).

Under pytest-xdist each worker gets a database of its own on that cluster
(``<database>_<worker>``, e.g. ``sweepbench_gw1``, created on first use), so two workers never
wipe each other's schema; without xdist the named database itself is used."""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa


def _worker_database(url: str | None) -> str | None:
    """``url``, or under xdist the same cluster's database of this worker (created if new)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not url or not worker:
        return url
    base = sa.engine.make_url(url)
    name = f"{base.database}_{worker}"
    engine = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            found = conn.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
            ).first()
            if found is None:
                quoted = conn.dialect.identifier_preparer.quote(name)
                conn.exec_driver_sql(f"CREATE DATABASE {quoted}")
    finally:
        engine.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


PG_URL = _worker_database(os.environ.get("SWEEPBENCH_TEST_POSTGRES"))
BACKENDS = ["sqlite", "postgres"] if PG_URL else ["sqlite"]


def reset_postgres(url: str) -> None:
    """Drop and recreate the public schema."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    engine.dispose()


def backend_url(backend: str, sqlite_file: Path) -> str:
    """A fresh database of that backend: PostgreSQL reset, or a SQLite file."""
    if backend == "postgres" and PG_URL:
        reset_postgres(PG_URL)
        return PG_URL
    return f"sqlite:///{sqlite_file}"
