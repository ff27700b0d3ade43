"""What the Sweep page shows besides its controls and cells: the cautions and help under the
cells, the spend warning, one alert per kind of refusal, and the answer to a link naming no
sweep here."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc
from dash import dcc

from sweepbench.axes.cells import Refusal

CAUTIONS = [
    "Element and part counts are crude proxies for quality: a busier drawing or sculpture is "
    "not a better one. Look at the viewers.",
    "These are single samples. Output varies from run to run; repeat (samples per cell) before "
    "trusting a small difference.",
    "Costs are local estimates, not a bill. They ignore cache-write premiums and discounts.",
]
AXIS_HELP = (
    "Effort is thinking depth, largely a cost and latency control. Max tokens bounds thinking "
    "and answer together: a quality dial with a cliff. Model is the only cross-provider axis, "
    "compared at matched budget and effort. Prompt version changes only the product's own "
    "instructions, so a difference is the prompt's."
)
SPEND_WARNING = (
    "Each variant is a separate paid model call. The estimate updates as you change the matrix "
    "— check it before running. This host also enforces a call limit and a spend ceiling."
)


def _severity_colour(severity: str) -> str:
    return {"info": "blue", "warning": "yellow"}.get(severity, "red")


SEVERITY_ORDER = ("info", "warning", "error")


def refusal_alerts(refusals: tuple[Refusal, ...] | list[Refusal]) -> list[Any]:
    """One alert per kind of refusal (``refusal-CODE``): two models without a key, or two
    unknown ids, are one alert with a line each, not the same alert twice."""
    grouped: dict[str, list[Refusal]] = {}
    for refusal in refusals:
        grouped.setdefault(refusal.code, []).append(refusal)
    alerts: list[Any] = []
    for code, group in grouped.items():
        worst = max((r.severity for r in group), key=_severity_rank)
        messages = list(dict.fromkeys(r.message for r in group))
        body: Any = messages[0] if len(messages) == 1 else [dmc.Text(m) for m in messages]
        alerts.append(dmc.Alert(body, color=_severity_colour(worst), id=f"refusal-{code}"))
    return alerts


def _severity_rank(severity: str) -> int:
    return SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else len(SEVERITY_ORDER)


def missing_sweep(sweep_id: str) -> Any:
    """The page's answer to a link naming no sweep here (the web's words, not a command)."""
    return dmc.Alert(
        [
            dmc.Text(
                f"There is no sweep {sweep_id!r} on this server: it may have been deleted, or "
                "the link is cut short."
            ),
            dcc.Link("Pick one from History", href="/history", id="missing-sweep-history"),
        ],
        title="Sweep not found",
        color="yellow",
        id="missing-sweep",
    )
