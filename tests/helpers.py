"""Small helpers shared by test modules."""

from __future__ import annotations

import sys
import uuid

import pytest
import sqlalchemy as sa

from sweepbench.cli import main
from sweepbench.store import Store


def planted_key(label: str = "planted") -> str:
    """A key-shaped secret made when the test runs (never a key-like literal in a tracked
    file): a provider prefix, ``label`` and 32 random hex digits."""
    return f"sk-{label}-{uuid.uuid4().hex}"


def cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``sweepbench ARGS`` in-process through the real entry point; return the exit code."""
    monkeypatch.setattr(sys, "argv", ["sweepbench", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """``sweepbench ARGS`` in-process: exit code, stdout, stderr."""
    code = cli(monkeypatch, *args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def store_texts(store: Store) -> dict[str, list[str]]:
    """Every text (and bytes) value of every table of the store, by table."""
    cells: dict[str, list[str]] = {}
    engine = store.engine
    metadata = sa.MetaData()
    metadata.reflect(engine)
    with engine.connect() as conn:
        for name, table in metadata.tables.items():
            found = cells.setdefault(name, [])
            for row in conn.execute(sa.select(table)):
                for value in row:
                    if isinstance(value, bytes):
                        found.append(value.decode("utf-8", "replace"))
                    elif isinstance(value, str):
                        found.append(value)
    return cells
