"""``sweepbench bench stop RUN`` and ``sweepbench bench sweeps stop SWEEP``: stop a run (or every
setting's run of a sweep) from any process or machine that reaches the store. The request is
recorded in the store (:meth:`BenchStore.request_stop`); the run's own session sees it within
about a second and stops as Ctrl-C does: no new calls, calls in flight cancelled, finished
answers kept, status ``interrupted``. Running the same command again continues it.

Exit status: 0 when the request was recorded for a live run (with ``--wait``: once it stopped),
1 when the run is not running (or ``--wait`` ran out of time), 2 for an unknown id."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from sweepbench.cli.bench_options import err, out
from sweepbench.cli.bench_show import STATUS_WORDS

if TYPE_CHECKING:
    from sweepbench.bench.storage import BenchStore
    from sweepbench.bench.storage_rows import RunRow

POLL_S = 0.2

WaitOpt = Annotated[
    bool, typer.Option("--wait", help="Wait until the run has stopped and print its outcome.")
]
TimeoutOpt = Annotated[
    float,
    typer.Option("--timeout", min=0.0, help="With --wait: give up after this many seconds."),
]


def _words(run: RunRow) -> str:
    from sweepbench.bench.run_liveness import run_is_live

    if run.status == "running" and not run_is_live(run):
        return "stopped unexpectedly"
    return STATUS_WORDS.get(run.status, run.status)


def _asked(run: RunRow) -> str:
    worker = run.settings.get("worker") or {}
    return f"process {worker.get('pid')} on {worker.get('host')}"


def _wait(runs: BenchStore, run_ids: Sequence[str], timeout: float) -> list[RunRow] | None:
    """The runs once none of them is live any more (None: still live after ``timeout``)."""
    from sweepbench.bench.run_liveness import run_is_live

    deadline = time.monotonic() + timeout
    while True:
        found = [runs.run(run_id) for run_id in run_ids]
        rows = [row for row in found if row is not None]
        if not any(run_is_live(row) for row in rows):
            return rows
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_S)


def _outcome(runs: BenchStore, run: RunRow) -> str:
    statuses = runs.statuses(run.id).values()
    scored = sum(1 for s in statuses if s == "scored")
    errors = len(statuses) - scored
    why = f" ({run.reason})" if run.reason else ""
    again = " Run the same command again to continue it." if run.status != "completed" else ""
    return (
        f"Run {run.id} {_words(run)}{why}: {scored:,} of {run.items:,} answers scored, "
        f"{errors:,} with errors, every finished answer kept.{again}"
    )


def _finish_wait(runs: BenchStore, run_ids: Sequence[str], timeout: float) -> None:
    ended = _wait(runs, run_ids, timeout)
    if ended is None:
        err.print(
            f"[red]Still running after {timeout:g} s[/red]; the request stays recorded.",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    for row in ended:
        out.print(escape(_outcome(runs, row)), highlight=False, soft_wrap=True)


def stop_command(
    run_id: Annotated[str, typer.Argument(help="A run id (or a unique prefix).")],
    wait: WaitOpt = False,
    timeout: TimeoutOpt = 60.0,
) -> None:
    """Stop a running benchmark run, wherever it runs; its answers are kept."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.store import Store

    with Store.open() as store:
        runs = BenchStore(store)
        asked = runs.request_stop(run_id)
        if asked is None:
            err.print(f"[red]error:[/red] no benchmark run {escape(run_id)!r}", soft_wrap=True)
            raise typer.Exit(2)
        run, recorded = asked
        if not recorded:
            err.print(
                f"Run {escape(run.id)} is not running: it {escape(_is(run))}.", soft_wrap=True
            )
            raise typer.Exit(1)
        out.print(
            f"Asked {escape(_asked(run))} to stop run {escape(run.id)} (finished answers are "
            "kept).",
            highlight=False,
            soft_wrap=True,
        )
        if wait:
            _finish_wait(runs, [run.id], timeout)


def sweep_stop_command(
    sweep_id: Annotated[str, typer.Argument(help="A sweep id.")],
    wait: WaitOpt = False,
    timeout: TimeoutOpt = 60.0,
) -> None:
    """Stop every setting's run of a running benchmark sweep, wherever it runs."""
    from sweepbench.bench.storage import BenchStore
    from sweepbench.bench.sweeps.run import request_sweep_stop
    from sweepbench.store import Store

    with Store.open() as store:
        asked = request_sweep_stop(store, sweep_id)
        if asked is None:
            err.print(f"[red]error:[/red] no benchmark sweep {escape(sweep_id)!r}", soft_wrap=True)
            raise typer.Exit(2)
        live = [run for run, recorded in asked if recorded]
        if not live:
            states = ", ".join(f"{r.id} {_is(r)}" for r, _ in asked) or "no run started yet"
            err.print(
                f"Sweep {escape(sweep_id)} is not running ({escape(states)}).", soft_wrap=True
            )
            raise typer.Exit(1)
        for run in live:
            out.print(
                f"Asked {escape(_asked(run))} to stop run {escape(run.id)}.",
                highlight=False,
                soft_wrap=True,
            )
        if wait:
            _finish_wait(BenchStore(store), [run.id for run in live], timeout)


def _is(run: RunRow) -> str:
    return f"is {_words(run)}"


def register(app: typer.Typer) -> None:
    """Add ``bench stop`` (loaded by ``cli.bench.BENCH_COMMANDS``; ``bench sweeps stop`` is
    ``bench_sweep``'s)."""
    app.command("stop")(stop_command)
