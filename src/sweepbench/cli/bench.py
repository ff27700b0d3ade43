"""``sweepbench bench list|estimate|run|stop|sweep|runs|sweeps|show|export|rescore``: parsing
and rendering only (the rules are in ``sweepbench.bench``; each job has its module: ``bench_list``,
``bench_run``, ``bench_stop``, ``bench_sweep``, ``bench_show``, ``bench_rescore``, and
``bench_options`` for what they share). Each module is imported only when one of its commands
runs or shows its help, as the top-level commands are (``cli.app.LazyGroup``): ``bench run``
does not load the scorers, the sweeps or the listing."""

from __future__ import annotations

import typer

from sweepbench.cli.app import LazyGroup

BENCH_COMMANDS: dict[str, tuple[str, str]] = {
    "list": (
        "bench_list",
        "The benchmarks and their tasks: area, items, grading and whether each can run.",
    ),
    "estimate": (
        "bench_run",
        "Price a run without calling any model: every problem at once, low and high per role.",
    ),
    "run": (
        "bench_run",
        "Run a benchmark: estimate, confirm, answer and score every item, store as it goes.",
    ),
    "stop": ("bench_stop", "Stop a running benchmark run, wherever it runs; its answers are kept."),
    "runs": ("bench_show", "Stored benchmark runs, newest first."),
    "show": ("bench_show", "A run's outcome and scores: per area and task, with 95% intervals."),
    "export": (
        "bench_show",
        "Write a run's answers, failures and spend as JSONL and its summary as CSV and JSON.",
    ),
    "rescore": (
        "bench_rescore",
        "Grade a stored run's answers again by another scoring version, into a new run (no model\n"
        "calls; judged answers keep their verdicts; the original run is left as it is).",
    ),
    "sweep": (
        "bench_sweep",
        "Sweep a benchmark: the same questions under several settings, compared on the same items.",
    ),
    "sweeps": ("bench_sweep", "Stored benchmark sweeps: list, show, export, stop."),
}
"""``bench``'s commands in listing order: name → (its module under ``sweepbench.cli``, which
has ``register(app)``; the line ``bench --help`` shows, the command's own first paragraph —
``tests/test_imports.py`` checks them)."""


class BenchGroup(LazyGroup):
    """``sweepbench bench``: lists :data:`BENCH_COMMANDS` and imports one's module to run it."""

    lazy_commands = BENCH_COMMANDS


bench = typer.Typer(
    name="bench",
    cls=BenchGroup,
    help="Benchmarks: whole question sets, estimated first, resumable, scored with intervals.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add ``sweepbench bench …``."""
    app.add_typer(bench)
