"""``sweepbench keys``: which providers can be called now, and for OpenRouter the free key
check (valid? credit left?)."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

out = Console()


def keys_command() -> None:
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


def register(app: typer.Typer) -> None:
    """Add ``keys``."""
    app.command("keys")(keys_command)
