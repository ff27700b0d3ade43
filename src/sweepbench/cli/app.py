"""Typer app: argument parsing and rendering only; the work happens in the layers below.

Errors reach the user as one clear sentence at this edge, never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Annotated

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from sweepbench.errors import ProviderError, SweepbenchError, UserError

if TYPE_CHECKING:
    from typer._click import Command, Context  # typer's own click (the types TyperGroup uses)
    from typer.core import TyperOption


LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    # command name → (its module under sweepbench.cli, the line ``sweepbench --help`` shows)
    "models": (
        "models",
        "Every known model: provider, available now, effort levels, limits and prices.",
    ),
    "generate": (
        "generate",
        "Stream one answer to the terminal; end with tokens, cost, stop reason and timings.",
    ),
    "keys": (
        "keys",
        "Which providers are usable now; for OpenRouter, the free key check (valid? credit?).",
    ),
    "spend": ("spend", "Today's spend, reservations in flight, what is left, and the call window."),
    "config": ("config", "The settings in effect and where each came from (keys: set or unset)."),
    "sweep": (
        "sweep",
        "Run one prompt under several settings at once, priced before anything is spent.",
    ),
    "serve": (
        "serve",
        "Open the web app (sweeps, benchmarks, the leaderboard). Bound to another address\n"
        "than loopback, runs that spend money need the token in SWEEPBENCH_TOKEN.",
    ),
    "bench": (
        "bench",
        "Benchmarks: whole question sets, estimated first, resumable, scored with intervals.",
    ),
    "sweeps": ("sweep", "Stored sweeps: list, show, export."),
    "db": ("db", "The store: its URL and schema version; apply pending migrations."),
    "leaderboard": (
        "leaderboard",
        "The leaderboard: published ELBench results and your runs, by price and score.",
    ),
}
"""Every command, registered one way: its module under ``sweepbench.cli`` has ``register(app)``,
which adds the module's command functions (``app.command(NAME)(function)``, or a group), and
loads only when the command runs (or its own ``--help``), so that ``sweepbench --help`` need not
import the benchmarks, sweeps and web layers. ``tests/test_imports.py`` checks these lines
against the commands' own help."""


class HelpWithoutPydantic(TyperGroup):
    """A group whose ``--help`` flag reads as False when not given, not None: Typer coerces a
    parameter's non-bool value through a pydantic adapter it builds first, so a None here made
    ``sweepbench bench run --help`` import pydantic (~50 ms) for the groups it passes through
    (``tests/test_imports.py`` checks that it does not)."""

    def get_help_option(self, ctx: Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.default = False
        return option


class LazyGroup(HelpWithoutPydantic):
    """The top-level group: lists :data:`LAZY_COMMANDS` from their help lines and imports a
    command's module when the command is resolved to run."""

    lazy_commands: dict[str, tuple[str, str]] = LAZY_COMMANDS
    """Its commands: name → (the module under ``sweepbench.cli`` that registers it, its help
    line); ``cli.bench.BenchGroup`` has ``bench``'s."""

    def list_commands(self, ctx: Context) -> list[str]:
        lazy = self.lazy_commands
        eager = [name for name in super().list_commands(ctx) if name not in lazy]
        return [*eager, *lazy]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy_commands:
            # Only listings see this stand-in; resolve_command loads the real command first.
            return TyperCommand(cmd_name, help=self.lazy_commands[cmd_name][1])
        return command

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        lazy = self.lazy_commands
        if args and args[0] not in self.commands:
            if args[0] in lazy:
                self.load(lazy[args[0]][0])
            else:  # not a command: load them all, so that "did you mean" knows every name
                for module_name in dict.fromkeys(module for module, _ in lazy.values()):
                    self.load(module_name)
        return super().resolve_command(ctx, args)

    def load(self, module_name: str) -> None:
        """Import ``sweepbench.cli.<module_name>`` and add the commands it registers."""
        module = importlib.import_module(f"sweepbench.cli.{module_name}")
        commands = typer.Typer()
        module.register(commands)
        for name, command in typer.main.get_group(commands).commands.items():
            self.add_command(command, name)


app = typer.Typer(
    name="sweepbench",
    cls=LazyGroup,
    help="What do you give up by turning the knob down? Sweeps and benchmarks for LLMs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
err = Console(stderr=True)
out = Console()


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            shown = version("sweepbench")
        except PackageNotFoundError:  # run from a source tree that was never installed
            shown = "unknown (not installed)"
        typer.echo(f"sweepbench {shown}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """What do you give up by turning the knob down? Sweeps and benchmarks for LLMs."""


def main() -> None:
    """Console-script entry point: run the app, turning our errors into one sentence (one
    line, soft-wrapped: a path in it is never broken by a newline Rich would insert)."""
    from sweepbench.cli.validate import check_arguments

    try:
        check_arguments(sys.argv[1:])  # before any command reads text it cannot keep
        app()
    except UserError as exc:
        err.print(f"[red]error:[/red] {_sentence(exc)}", soft_wrap=True)
        raise SystemExit(2) from None
    except ProviderError as exc:
        err.print(f"[red]provider error:[/red] {_sentence(exc)}", soft_wrap=True)
        raise SystemExit(1) from None
    except SweepbenchError as exc:
        err.print(f"[red]error:[/red] {_sentence(exc)}", soft_wrap=True)
        raise SystemExit(1) from None


def _sentence(exc: SweepbenchError) -> str:
    """The error as shown: secrets scrubbed, Rich markup escaped."""
    from sweepbench.settings import scrub

    return escape(scrub(str(exc)))
