"""The store: schema, migrations and transactions (SQLAlchemy Core). The lowest layer: it
imports only ``sweepbench.settings`` and ``sweepbench.errors``."""

from sweepbench.store.db import Store
from sweepbench.store.engine import create_engine
from sweepbench.store.migrations import MIGRATIONS, Migration, apply_migrations, latest_version
from sweepbench.store.records import (
    CallEnd,
    CallRecord,
    CallRole,
    CallStart,
    CallTiming,
    EventKind,
    EventRecord,
    StopReason,
)

__all__ = [
    "MIGRATIONS",
    "CallEnd",
    "CallRecord",
    "CallRole",
    "CallStart",
    "CallTiming",
    "EventKind",
    "EventRecord",
    "Migration",
    "StopReason",
    "Store",
    "apply_migrations",
    "create_engine",
    "latest_version",
]
