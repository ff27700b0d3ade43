"""``sweepbench bench list|estimate|run|stop|sweep|runs|sweeps|show|export|rescore``: parsing
and rendering only (the rules are in ``sweepbench.bench``; each job has its module: ``bench_list``,
``bench_run``, ``bench_stop``, ``bench_sweep``, ``bench_show``, and ``bench_options`` for what
they share)."""

from __future__ import annotations

import typer

from sweepbench.cli.bench_list import list_command
from sweepbench.cli.bench_rescore import rescore_command
from sweepbench.cli.bench_run import estimate_command, run_command
from sweepbench.cli.bench_show import export_command, runs_command, show_command
from sweepbench.cli.bench_stop import stop_command, sweep_stop_command
from sweepbench.cli.bench_sweep import sweep_command, sweeps

bench = typer.Typer(
    name="bench",
    help="Benchmarks: whole question sets, estimated first, resumable, scored with intervals.",
    no_args_is_help=True,
)
bench.command("list")(list_command)
bench.command("estimate")(estimate_command)
bench.command("run")(run_command)
bench.command("stop")(stop_command)
bench.command("runs")(runs_command)
bench.command("show")(show_command)
bench.command("export")(export_command)
bench.command("rescore")(rescore_command)
bench.command("sweep")(sweep_command)
sweeps.command("stop")(sweep_stop_command)
bench.add_typer(sweeps)


def register(app: typer.Typer) -> None:
    """Add ``sweepbench bench …``."""
    app.add_typer(bench)
