"""The databases store-level tests run against: SQLite always, PostgreSQL when
``SWEEPBENCH_TEST_POSTGRES`` names one (its ``public`` schema is wiped before each test)."""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa

PG_URL = os.environ.get("SWEEPBENCH_TEST_POSTGRES")
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
