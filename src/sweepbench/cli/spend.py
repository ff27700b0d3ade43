"""``sweepbench spend``: where this host stands against its spend ceilings (rendering only)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sweepbench.money.ledger import Ledger, SpendSummary
from sweepbench.money.prices import format_usd
from sweepbench.store import CallRecord, Store

CAVEAT = (
    "A blast-radius limit, not accounting: static prices, no cache-write premiums or "
    "discounts; a fresh store starts a fresh ledger."
)


def register(app: typer.Typer) -> None:
    """Add the ``spend`` command to ``app``."""
    app.command("spend")(spend)


def spend(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """Today's spend, reservations in flight, what is left, and the call window."""
    with Store.open() as store:
        summary = Ledger(store).summary()
        day = datetime.strptime(summary.day, "%Y-%m-%d").replace(tzinfo=UTC)
        count, anomalies = store.anomalous_calls(day)
    if as_json:
        document = summary.as_json()
        document["anomalies"] = {"today": count, "newest": [_anomaly_json(c) for c in anomalies]}
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    Console().print(_table(summary))
    if count:
        Console().print(_anomaly_table(count, anomalies))
    Console(stderr=True).print(f"[dim]{CAVEAT}[/dim]")


def _anomaly_json(call: CallRecord) -> dict[str, object]:
    return {
        "call_id": call.id, "at": call.created_at.isoformat(), "model": call.model,
        "provider": call.provider, "settled_usd": None if call.cost_usd is None
        else str(call.cost_usd), "why": call.price_source, "error": call.error,
    }  # fmt: skip


def _anomaly_table(count: int, anomalies: list[CallRecord]) -> Table:
    """Today's replies that were not believed: each settled at its reservation, with what
    the provider said beside it."""
    table = Table(
        title=f"[red]Replies not believed today ({count})[/red]: impossible usage or cost, "
        "each settled at its reservation, never above it"
    )
    for column in ("when (UTC)", "model", "settled at", "what the provider said"):
        table.add_column(column)
    for call in anomalies:
        said = (call.error or "").removeprefix("the reply was impossible: ")
        reported = (call.price_source or "").partition("; the provider reported ")[2]
        table.add_row(
            f"{call.created_at:%H:%M:%S}", call.model, format_usd(call.cost_usd),
            said + (f" (reported {reported})" if reported and reported not in said else ""),
        )  # fmt: skip
    return table


def _table(s: SpendSummary) -> Table:
    c = s.ceilings
    env = set(c.overridden)

    def mark(*names: str) -> str:
        return " (env)" if env.intersection(names) else ""

    table = Table(title=f"Spend on this host · {s.day} UTC", show_header=False)
    table.add_column("what")
    table.add_column("amount", justify="right")
    table.add_row("Spent today", format_usd(s.spent_today))
    table.add_row(f"Reserved by calls in flight ({s.open_reservations})", format_usd(s.reserved))
    table.add_row(
        f"Left today of {format_usd(c.daily_usd)}{mark('SWEEPBENCH_DAILY_USD')}",
        format_usd(s.remaining_today),
    )
    if c.total_usd is not None:
        table.add_row("Spent since the ledger began", format_usd(s.spent_total))
        table.add_row(
            f"Left of the {format_usd(c.total_usd)} lifetime ceiling{mark('SWEEPBENCH_TOTAL_USD')}",
            format_usd(s.remaining_total),
        )
    table.add_row(
        f"Paid sweep/generate calls in the last 60 min (of {c.calls_per_hour})"
        f"{mark('SWEEPBENCH_CALLS_PER_HOUR')}",
        f"{s.calls_in_window} · {s.calls_left} left",
    )
    if s.overruns:
        table.add_row(
            "[red]Charges above their reservation today[/red]",
            f"[red]{s.overruns}[/red] (recorded as charged; see the calls log)",
        )
    table.add_row("Set by environment", "\n".join(c.overridden) or "nothing")
    table.caption = s.allowance_text()
    return table
