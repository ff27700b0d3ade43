"""``sweepbench models``: every known model, its provider, whether it can be called now, its
effort levels, limits and prices."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sweepbench.models import ModelInfo
    from sweepbench.money.prices import Price

err = Console(stderr=True)
out = Console()


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


def models_command(
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


def register(app: typer.Typer) -> None:
    """Add ``models``."""
    app.command("models")(models_command)
