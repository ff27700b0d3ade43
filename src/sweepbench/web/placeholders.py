"""Pages that later issues build, saying what is coming (not fake pages)."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc

COMING = {
    "/leaderboard": (
        "Leaderboard",
        "Published results beside your own runs, a score-vs-price Pareto frontier, one board "
        "per judge, and side-by-side comparisons. This page is not built yet; until it is, "
        "compare settings side by side on the Sweep page.",
    ),
    "/benchmarks": (
        "Run a benchmark",
        "Whole question sets, estimated low/high before running, per-role spending limits, "
        "resumable, scored by area and task with confidence intervals. They run from the "
        "command line today — `sweepbench bench estimate sample`, then `sweepbench bench run "
        "sample --model … --judge …` (see docs/benchmarks.md); this page follows.",
    ),
}


def layout(path: str) -> Any:
    """A short notice of what the page will do."""
    title, text = COMING[path]
    return dmc.Stack(
        [dmc.Title(title, order=2), dmc.Alert(text, title="Not built yet", color="gray")]
    )
