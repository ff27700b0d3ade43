"""``leaderboard publish RUN --to DEST`` and ``leaderboard pull SRC`` (issue 15, item 8): share
a stored run as a scrubbed bundle, and import others' bundles. :func:`register` adds both
commands to a Typer app."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from sweepbench.errors import UserError

NOT_A_TERMINAL = 2


def _configured(verb: str) -> str:
    """The configured shared leaderboard, or a UserError saying none is and how to give one."""
    from sweepbench.settings import SHARED_HINT, shared_place

    place = shared_place()
    if place is None:
        where = "--to DEST" if verb == "publish" else "SRC"
        raise UserError(
            f"No shared leaderboard is configured, so there is nowhere to {verb} by default: "
            f"pass {where}, or {SHARED_HINT}."
        )
    return place


def publish_command(
    run_id: Annotated[str, typer.Argument(help="The stored run to share (see bench runs).")],
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="A folder or an fsspec URL (memory://…, hf://datasets/OWNER/NAME, s3://…); "
            "default: the configured shared leaderboard (SWEEPBENCH_SHARED or [leaderboard] "
            "shared).",
        ),
    ] = None,
    answers: Annotated[
        bool, typer.Option("--answers/--no-answers", help="Include the answer texts (scrubbed).")
    ] = True,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Publish without asking.")] = False,
) -> None:
    """Write a run's scrubbed bundle (<run_id>.sweepbench.json) to a folder or URL, after
    showing exactly what it shares."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.leaderboard.bundle import build_bundle, bundle_name, summary, write_bundle
    from sweepbench.store import Store

    to = to or _configured("publish")
    with Store.open() as store:
        bundle = build_bundle(BenchStore(store), run_id, answers=answers)
    where = f"{to.rstrip('/')}/{bundle_name(bundle.run_id)}"
    typer.echo("This will be shared:")
    for line in summary(bundle, where).lines():
        typer.echo(f"  {line}")
    if not yes:
        if not sys.stdin.isatty():
            typer.echo(
                "Not published: confirmation needs a terminal; pass --yes to publish.", err=True
            )
            raise typer.Exit(NOT_A_TERMINAL)
        if not typer.confirm("Publish this run?", default=False):
            typer.echo("Not published.")
            raise typer.Exit(1)
    written = write_bundle(bundle, to)
    typer.echo(f"Published {bundle.run_id} to {written}")


def pull_command(
    source: Annotated[
        str | None,
        typer.Argument(
            help="A bundle file, a folder, or an fsspec URL; default: the configured shared "
            "leaderboard."
        ),
    ] = None,
) -> None:
    """Import run bundles (JSON only; validated, de-duplicated by run id, key-shaped ones
    refused); the runs show on the leaderboard as pulled."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.leaderboard.bundle_pull import pull
    from sweepbench.store import Store

    source = source or _configured("pull")
    with Store.open() as store:
        result = pull(BenchStore(store), source)
    for run_id in result.imported:
        typer.echo(f"Pulled {run_id}")
    for run_id in result.present:
        typer.echo(f"Skipped {run_id}: already present")
    for reason in result.skipped:
        typer.echo(reason, err=True)
    if not (result.imported or result.present or result.skipped):
        raise UserError(f"{source}: no run bundles (*.sweepbench.json) found")
    typer.echo(
        f"{len(result.imported)} pulled, {len(result.present)} already present, "
        f"{len(result.skipped)} skipped."
    )


def register(app: typer.Typer) -> None:
    """Add ``publish`` and ``pull`` to ``app``."""
    app.command("publish")(publish_command)
    app.command("pull")(pull_command)
