"""Typer app: argument parsing and rendering only; the work happens in the layers below.

Errors reach the user as one clear sentence at this edge, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from sweepbench.errors import ProviderError, SweepbenchError, UserError

if TYPE_CHECKING:
    from typer._click import Command, Context  # typer's own click (the types TyperGroup uses)

    from sweepbench.models import ModelInfo
    from sweepbench.money.prices import Price

LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    # command name → (its module under sweepbench.cli, the line ``sweepbench --help`` shows)
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
"""The commands whose modules load only when the command runs (or its own ``--help``), so
that ``sweepbench --help`` and the commands above need not import the benchmarks, sweeps and
web layers. Each module has ``register(app)``; ``tests/test_imports.py`` checks these lines
against the commands' own help."""


class LazyGroup(TyperGroup):
    """The top-level group: lists :data:`LAZY_COMMANDS` from their help lines and imports a
    command's module when the command is resolved to run."""

    def list_commands(self, ctx: Context) -> list[str]:
        eager = [name for name in super().list_commands(ctx) if name not in LAZY_COMMANDS]
        return [*eager, *LAZY_COMMANDS]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in LAZY_COMMANDS:
            # Only listings see this stand-in; resolve_command loads the real command first.
            return TyperCommand(cmd_name, help=LAZY_COMMANDS[cmd_name][1])
        return command

    def resolve_command(
        self, ctx: Context, args: list[str]
    ) -> tuple[str | None, Command | None, list[str]]:
        if args and args[0] not in self.commands:
            if args[0] in LAZY_COMMANDS:
                self.load(LAZY_COMMANDS[args[0]][0])
            else:  # not a command: load them all, so that "did you mean" knows every name
                for module_name in dict.fromkeys(module for module, _ in LAZY_COMMANDS.values()):
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


def _model_row(info: ModelInfo, available: dict[str, bool]) -> dict[str, Any]:
    from sweepbench.money.prices import price_for

    price: Price | None = price_for(info)
    return {
        "id": info.id,
        "label": info.label,
        "provider": info.provider,
        "available": available.get(info.provider, False),
        "effort_levels": info.supported_efforts() if info.effort_capable else [],
        "default_effort": info.default_effort,
        "max_output_tokens": info.max_output_tokens,
        "price_in_per_mtok": None if price is None else str(price.input),
        "price_out_per_mtok": None if price is None else str(price.output),
        "price_source": "no price on file" if price is None else price.source,
    }


@app.command()
def models(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array, for scripts.")] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Fetch OpenRouter's catalogue now.")
    ] = False,
) -> None:
    """Every known model: provider, available now, effort levels, limits and prices."""
    from rich.table import Table
    from rich.text import Text

    from sweepbench.models import listed_models
    from sweepbench.models.registry import provider_status, providers

    statuses = {name: provider_status(name) for name in providers()}
    available = {name: status.available for name, status in statuses.items()}
    rows = [_model_row(info, available) for info in listed_models(refresh=refresh)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="Models", show_lines=False)
    for column in ("id", "available", "effort", "max out", "$ in / 1M", "$ out / 1M", "source"):
        table.add_column(
            column,
            justify="right" if column.startswith(("$", "max")) else "left",
            no_wrap=column == "id",
        )
    for row in rows:  # ids and sources come from catalogues: text, never Rich markup
        table.add_row(
            Text(row["id"]),
            "yes" if row["available"] else "no",
            ", ".join(row["effort_levels"]) or "–",
            f"{row['max_output_tokens']:,}" if row["max_output_tokens"] else "–",
            "–" if row["price_in_per_mtok"] is None else f"${row['price_in_per_mtok']}",
            "–" if row["price_out_per_mtok"] is None else f"${row['price_out_per_mtok']}",
            Text(row["price_source"]),
        )
    out.print(table)
    missing = [s for s in statuses.values() if not s.available]
    for status in missing:
        err.print(f"[dim]{escape(status.name)}: unavailable — {escape(status.reason)}[/dim]")


@app.command()
def generate(
    model: Annotated[str, typer.Argument(help="provider/model, e.g. local/smollm2-135m")],
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    system: Annotated[str | None, typer.Option("--system", help="System prompt.")] = None,
    max_tokens: Annotated[
        str | None, typer.Option("--max-tokens", help="Output budget (64000 or 64k).")
    ] = None,
    effort: Annotated[
        str | None, typer.Option("--effort", help="none, low, medium, high, xhigh, max")
    ] = None,
    temperature: Annotated[float | None, typer.Option("--temperature")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")] = (
        False
    ),
) -> None:
    """Stream one answer to the terminal; end with tokens, cost, stop reason and timings.

    Ctrl-C stops generation and still prints what was produced."""
    import asyncio

    from sweepbench.cli.generate import scrubbed_printer
    from sweepbench.cli.validate import check_prompt, read_budget
    from sweepbench.engine.signals import stop_on_signals
    from sweepbench.generation import Generation, generation_request
    from sweepbench.models import TextDelta
    from sweepbench.money.prices import format_usd
    from sweepbench.settings import scrub, secret_values
    from sweepbench.store import Store

    check_prompt(prompt)
    request, note = generation_request(
        model,
        prompt,
        system=system,
        max_tokens=None if max_tokens is None else read_budget(max_tokens),
        effort=effort,
        temperature=temperature,
    )
    if note and not as_json:
        err.print(f"[yellow]note:[/yellow] {escape(note)}")
    with Store.open() as store:
        generation = Generation(store, request)  # an unknown model fails here, before traffic
        call = generation.call

        def write(text: str) -> None:
            sys.stdout.write(text)
            sys.stdout.flush()

        printer = scrubbed_printer(write, secret_values())  # no key reaches the terminal

        def show(event: object) -> None:
            if not as_json and isinstance(event, TextDelta):
                printer.print(event.text)

        async def main() -> None:
            try:
                with stop_on_signals(generation.cancel):  # Ctrl-C or SIGTERM
                    await generation.run(show)
            finally:
                printer.close()  # what was held back in case a key was split across deltas

        asyncio.run(main())
    result = call.result
    usage = result.usage
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "model": result.model,
                    "text": result.text,
                    "stop_reason": result.stop_reason,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                        "reasoning_tokens": usage.reasoning_tokens,
                        "cache_read_tokens": usage.cache_read_tokens,
                        "estimated": result.usage_estimated,
                    },
                    "cost_usd": None if call.cost_usd is None else str(call.cost_usd),
                    "price_source": call.price_source,
                    "ttft_s": result.ttft_s,
                    "wall_s": round(result.wall_s, 4),
                    "error": str(result.error) if result.error else None,
                    "call_id": call.call_id,
                },
                ensure_ascii=False,
            )
        )
    else:
        if result.text and not result.text.endswith("\n"):
            sys.stdout.write("\n")
        ttft = "–" if result.ttft_s is None else f"{result.ttft_s:.2f} s"
        reasoning = f" (reasoning {usage.reasoning_tokens:,})" if usage.reasoning_tokens else ""
        if result.usage_estimated:
            reasoning += " (estimated: the stream stopped before the provider reported usage)"
        truncated = (
            f" · TRUNCATED at {usage.output_tokens:,} tokens"
            if result.stop_reason == "max_tokens"
            else ""
        )
        err.print(
            f"[dim]tokens in {usage.input_tokens:,} · out {usage.output_tokens:,}{reasoning} · "
            f"cost {format_usd(call.cost_usd)} · stop {result.stop_reason}{truncated} · "
            f"first token {ttft} · wall {result.wall_s:.2f} s[/dim]"
        )
    if result.error is not None:
        err.print(f"[red]error:[/red] {escape(scrub(str(result.error)))}", soft_wrap=True)
        raise typer.Exit(1)
    if result.stop_reason == "cancelled":
        raise typer.Exit(130)


@app.command()
def keys() -> None:
    """Which providers are usable now; for OpenRouter, the free key check (valid? credit?)."""
    from sweepbench.models.openrouter import check_key
    from sweepbench.models.providers import credit_reporters
    from sweepbench.models.registry import provider_status, providers
    from sweepbench.money.prices import format_usd

    for name in providers():
        status = provider_status(name)
        # a reason names the config's [keys] table: text, never Rich markup
        reason = escape(status.reason)
        mark = "[green]ready[/green]" if status.available else f"[yellow]{reason}[/yellow]"
        out.print(f"{escape(name):<12} {mark}", highlight=False)
    for reporter in credit_reporters():  # OpenRouter's, whose /key check_key asks
        if not provider_status(reporter.name).available:
            continue
        key = check_key()
        if not key.valid:
            why = escape(key.message or "no reason given")
            out.print(f"{reporter.name} key: [red]rejected[/red] ({why})")
        else:
            left = "unlimited" if key.limit is None else format_usd(key.limit_remaining)
            out.print(f"{reporter.name} key: valid · used {format_usd(key.usage)} · left {left}")


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
