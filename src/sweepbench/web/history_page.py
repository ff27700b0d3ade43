"""The History page: sweeps run here, newest first; each reopens on the Sweep page (live if it
is still running) or can be deleted (spec sweeps.md §18.2)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import dash_mantine_components as dmc
from dash import ALL, Dash, Input, Output, ctx, dcc, html, no_update

from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from sweepbench.sweeps.history import delete_sweep, list_sweeps
from sweepbench.web.defaults import kinds_offered

LIMIT = 100


def when(moment: datetime) -> str:
    """A sweep's start as the list shows it: in UTC, and saying so (the server cannot know the
    visitor's zone)."""
    utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%d %H:%M UTC")


def _rows(store: Store) -> list[Any]:
    rows = []
    for s in list_sweeps(store, LIMIT):
        excerpt = s.prompt if len(s.prompt) <= 60 else s.prompt[:59] + "…"
        rows.append(
            html.Tr(
                [
                    html.Td(when(s.created_at)),
                    html.Td(kinds_offered().get(s.kind, s.kind)),
                    html.Td(s.axis),
                    html.Td(str(s.cells)),
                    html.Td(f"~{format_usd(s.cost_usd)}"),
                    html.Td(s.status),
                    html.Td(excerpt),
                    html.Td(
                        dmc.Group(
                            [
                                dcc.Link("Open", href=f"/?sweep={s.id}", id=f"open-{s.id}"),
                                dmc.Button(
                                    "Delete",
                                    id={"type": "delete-sweep", "id": s.id},
                                    size="compact-xs",
                                    color="red",
                                    variant="subtle",
                                ),
                            ],
                            gap="xs",
                        )
                    ),
                ],
                id=f"row-{s.id}",
            )
        )
    return rows


def _table(store: Store) -> Any:
    rows = _rows(store)
    if not rows:
        return dmc.Text("No sweeps yet. Run one on the Sweep page.", c="dimmed")
    head = html.Thead(
        html.Tr(
            [
                html.Th(h)
                for h in ("started", "kind", "axis", "cells", "cost", "status", "prompt", "")
            ]
        )
    )
    table = dmc.Table([head, html.Tbody(rows)], striped=True, highlightOnHover=True)
    return dmc.TableScrollContainer(table, minWidth=720)  # a phone scrolls the table, not the page


def layout(store: Store) -> Any:
    """The list, read when the page is viewed."""
    return dmc.Stack([dmc.Title("History", order=2), html.Div(_table(store), id="history-table")])


def register(app: Dash, store: Store) -> None:
    """Add the delete callback."""

    @app.callback(
        Output("history-table", "children"),
        Input({"type": "delete-sweep", "id": ALL}, "n_clicks"),
        prevent_initial_call=True,
    )
    def on_delete(clicks: list[int | None]) -> Any:
        """Delete the sweep whose button was pressed, then redraw the list."""
        trigger = ctx.triggered_id
        if not isinstance(trigger, dict) or not any(clicks):
            return no_update
        delete_sweep(store, str(trigger["id"]))
        return _table(store)
