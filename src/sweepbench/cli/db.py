"""``sweepbench db status|upgrade``: which store this process uses and its schema version; bring
a (shared, e.g. PostgreSQL) store up to this version in one command (rendering only)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from sqlalchemy.exc import OperationalError

from sweepbench import settings
from sweepbench.errors import UserError
from sweepbench.store.engine import create_engine
from sweepbench.store.migrations import (
    MIGRATIONS,
    applied_versions,
    apply_migrations,
    latest_version,
)

out = Console(highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``sweepbench db …`` to ``app``."""
    db = typer.Typer(
        name="db",
        help="The store: its URL and schema version; apply pending migrations.",
        no_args_is_help=True,
    )
    db.command("status")(status)
    db.command("upgrade")(upgrade)
    app.add_typer(db)


def _url(url: str | None) -> str:
    return url or settings.database_url()


def status(
    url: Annotated[
        str | None, typer.Option("--url", help="A SQLAlchemy URL (default: SWEEPBENCH_DB).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """Which store this process uses (password hidden) and its schema version, without
    changing it. Exit 1 when migrations are pending."""
    engine = create_engine(_url(url))
    shown = engine.url.render_as_string(hide_password=True)
    try:
        with engine.connect() as conn:
            done = sorted(applied_versions(conn))
    except OperationalError as exc:
        raise UserError(f"cannot open the store at {shown}: {exc.orig}") from exc
    finally:
        engine.dispose()
    pending = [m.version for m in MIGRATIONS if m.version not in done]
    if as_json:
        typer.echo(json.dumps({"url": shown, "version": max(done, default=0),
                               "latest": latest_version(), "pending": pending}))  # fmt: skip
    else:
        out.print(f"store: {shown}", markup=False)
        out.print(f"schema version {max(done, default=0)} of {latest_version()}", markup=False)
        if pending:
            out.print(f"pending migrations: {', '.join(map(str, pending))} (sweepbench db upgrade)")
    if pending:
        raise typer.Exit(1)


def upgrade(
    url: Annotated[
        str | None, typer.Option("--url", help="A SQLAlchemy URL (default: SWEEPBENCH_DB).")
    ] = None,
) -> None:
    """Create the schema, or bring it up to this version (safe to run from several machines
    at once: each migration holds the database's lock). Every command also does this when it
    opens the store; this one does only that."""
    engine = create_engine(_url(url))
    try:
        try:
            applied = apply_migrations(engine)
        except OperationalError as exc:
            where = engine.url.render_as_string(hide_password=True)
            raise UserError(f"cannot open the store at {where}: {exc.orig}") from exc
        shown = engine.url.render_as_string(hide_password=True)
    finally:
        engine.dispose()
    done = f"applied {', '.join(map(str, applied))}" if applied else "nothing to apply"
    out.print(f"{shown}: schema version {latest_version()} ({done})", markup=False)
