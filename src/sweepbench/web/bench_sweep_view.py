"""What the Benchmark sweep page shows of one sweep: each setting's progress (live from its
runner while this process runs it, else as stored), the settings table and the paired verdicts
(``bench.sweeps.result``, the same rows and words as ``bench sweeps show``), the settings on a
score-against-price chart, a link into each setting's run, every area's and task's score
under each setting (``breakdown_rows``, as ``bench sweeps show --detail``) and the files
``bench sweeps export`` writes, to download."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import dash_mantine_components as dmc
from dash import dcc, html

from sweepbench.bench.results import format_money
from sweepbench.bench.run_progress import Progress
from sweepbench.bench.sweeps.result import (
    SETTINGS_COLUMNS,
    STATUS_WORDS,
    BenchSweepResult,
    SettingResult,
    breakdown_rows,
    load_sweep,
    settings_table_rows,
)
from sweepbench.errors import UserError
from sweepbench.web.bench_sweep_live import LiveSweep
from sweepbench.web.context import WebContext

DOWNLOADS = (
    ("json", "sweep.json", "Sweep (JSON)"),
    ("settings", "settings.csv", "Settings (CSV)"),
    ("comparisons", "comparisons.csv", "Comparisons (CSV)"),
)
"""Download button id suffix (``bs-dl-…``), the file ``BenchSweepResult.export`` writes, the
button's label."""
RUN_PAGE = "/benchmarks"
"""The Run a benchmark page; ``?run=ID`` opens one run's results."""
OUTCOME_WORDS = {
    "completed": ("Finished: every setting answered every selected item.", "green"),
    "completed_with_errors": (
        "Finished with errors: some answers failed; Run again retries what is left.",
        "yellow",
    ),
    "paused_budget": (
        "Paused at its limit: every answer is kept; raise the limit and Run again to continue.",
        "yellow",
    ),
    "interrupted": (
        "Stopped early: every answer is kept; Run the same sweep again to continue it.",
        "yellow",
    ),
}


@dataclass(frozen=True)
class SweepView:
    """One render of a sweep."""

    progress: Any
    results: Any
    figure: dict[str, Any] | None
    """The chart (None: nothing scored yet)."""
    status: str
    colour: str
    running: bool


def run_link(run_id: str) -> str:
    """Where a setting's results are read (the Run a benchmark page)."""
    return f"{RUN_PAGE}?run={quote(run_id, safe='')}"


def sweep_view(context: WebContext, live: LiveSweep | None, sweep_id: str) -> SweepView:
    """The sweep as it stands: live counters while it runs here, the store's otherwise."""
    # whether it runs is read before the store: a sweep that ends between the two reads is
    # shown as running once more, never as finished with what the store had mid-run
    running = live is not None and not live.done
    try:
        result: BenchSweepResult | None = load_sweep(context.store, sweep_id)
    except UserError:
        result = None  # not stored yet (a run saves it before its first call), or unknown
    if live is None and result is None:
        return SweepView(_missing(sweep_id), [], None, "No such sweep.", "red", False)
    progress = _progress(live, result)
    # the table, chart and verdicts once the session ends: mid-run every setting reads as
    # stopped early, and a verdict on part of the items is not the sweep's
    final = None if running else result
    results = [] if final is None else _results(final)
    figure = None if final is None else score_price_figure(final)
    status, colour = _status(live, result, running)
    return SweepView(progress, results, figure, status, colour, running)


def _status(
    live: LiveSweep | None, result: BenchSweepResult | None, running: bool
) -> tuple[str, str]:
    if live is not None:
        problem = live.problem()
        if problem:
            return f"The sweep failed: {problem}", "red"
        if running:
            if live.stopping:
                return "Stopping every setting (answers are kept)…", "yellow"
            n = len(live.runner.plan.settings)
            return (
                f"Running {n} settings at once ({live.runner.sweep_id}); it goes on if you "
                "close this tab.",
                "gray",
            )
        outcome = live.outcome()
        if outcome is not None:
            return OUTCOME_WORDS.get(outcome.status, (f"Ended: {outcome.status}.", "gray"))
    assert result is not None
    sweep = result.sweep
    held = ", ".join(f"{k} {v}" for k, v in sweep.held.items())
    return (
        f"Stored sweep {sweep.id} of {sweep.benchmark}, varying {sweep.axis}; held: {held}.",
        "gray",
    )


def _progress(live: LiveSweep | None, result: BenchSweepResult | None) -> Any:
    """One row per setting: a bar and its counters."""
    rows: list[Any] = []
    if live is not None:
        settings = live.runner.plan.settings
        for index, (setting, p) in enumerate(zip(settings, live.runner.progress, strict=True)):
            rows.append(_live_row(index, setting.label, p))
    elif result is not None:
        for index, s in enumerate(result.settings):
            rows.append(_stored_row(index, s))
    return dmc.Stack(rows, gap=6)


def _live_row(index: int, label: str, p: Progress | None) -> Any:
    if p is None:
        return _row(index, label, 100, "nothing left to run: every item was answered before", 0, 0)
    share = 100 * p.done / p.total if p.total else 100
    errors = f" · {p.failed:,} failed" if p.failed else ""
    text = (
        f"{p.done:,}/{p.total:,} answered · {p.scored:,} scored{errors} · {format_money(p.spent)}"
    )
    return _row(index, label, share, text, p.done, p.total)


def _stored_row(index: int, s: SettingResult) -> Any:
    status = STATUS_WORDS.get(s.status, s.status.replace("_", " "))
    errors = f" · {s.failed:,} failed" if s.failed else ""
    text = f"{s.scored:,} scored{errors} · {format_money(s.spent)} · {status}"
    done = s.scored + s.failed
    return _row(index, s.label, 100 if s.status == "completed" else 0, text, done, done)


def _row(index: int, label: str, share: float, text: str, done: int, total: int) -> Any:
    attrs: dict[str, Any] = {"data-done": str(done), "data-total": str(total)}
    return html.Div(
        [
            dmc.Group(
                [dmc.Text(label, size="sm", fw=500), dmc.Text(text, size="sm", c="dimmed")],
                justify="space-between",
            ),
            dmc.Progress(value=share, size="sm"),
        ],
        id=f"bs-progress-{index}",
        **attrs,
    )


def _results(result: BenchSweepResult) -> list[Any]:
    """The settings table (with a link into each setting's run) and the verdicts in words."""
    head = dmc.TableThead(dmc.TableTr([dmc.TableTh(c) for c in (*SETTINGS_COLUMNS, "results")]))
    body = []
    for index, (setting, cells) in enumerate(
        zip(result.settings, settings_table_rows(result), strict=True)
    ):
        link: Any = (
            dcc.Link("open", href=run_link(setting.run_id), id=f"bs-run-link-{index}")
            if setting.run_id
            else "–"
        )
        body.append(dmc.TableTr([*(dmc.TableTd(c) for c in cells), dmc.TableTd(link)]))
    table = dmc.TableScrollContainer(
        dmc.Table([head, dmc.TableTbody(body)], striped=True, id="bs-table"), minWidth=700
    )
    caption = dmc.Text(
        "vs best: the paired difference in points (95% range); * detectable", size="xs",
        c="dimmed",
    )  # fmt: skip
    verdicts = dmc.Stack(
        [dmc.Text(line, size="sm") for line in result.lines()], gap=4, id="bs-verdicts"
    )
    buttons = [  # every button, always: the download callback waits for all its inputs
        dmc.Button(label, id=f"bs-dl-{suffix}", variant="light", size="xs")
        for suffix, _name, label in DOWNLOADS
    ]
    downloads = dmc.Group(buttons, id="bs-downloads", gap="xs", mt="sm")
    return [table, caption, verdicts, _breakdown(result), downloads]


def _breakdown(result: BenchSweepResult) -> Any:
    """Every area's and task's score under each setting, folded away."""
    header, rows = breakdown_rows(result)
    head = dmc.TableThead(dmc.TableTr([dmc.TableTh(c) for c in header]))
    body = dmc.TableTbody([dmc.TableTr([dmc.TableTd(c) for c in row]) for row in rows])
    table = dmc.TableScrollContainer(
        dmc.Table([head, body], striped=True, id="bs-breakdown"), minWidth=700
    )
    note = dmc.Text("0–100, with the 95% range", size="xs", c="dimmed")
    return dmc.Accordion(
        dmc.AccordionItem(
            [
                dmc.AccordionControl(html.Span("Scores per area and task", id="bs-breakdown-open")),
                dmc.AccordionPanel([table, note]),
            ],
            value="breakdown",
        ),
        mt="sm",
    )


def export_file(context: WebContext, sweep_id: str, name: str) -> bytes | None:
    """One file of what ``BenchSweepResult.export`` writes for the sweep, byte for byte (None:
    no such sweep, or it writes no such file)."""
    try:
        result = load_sweep(context.store, sweep_id)
    except UserError:
        return None
    with tempfile.TemporaryDirectory(prefix="sweepbench-sweep-export-") as folder:
        for path in result.export(Path(folder)):
            if path.name == name:
                return path.read_bytes()
    return None


def score_price_figure(result: BenchSweepResult) -> dict[str, Any] | None:
    """The settings' scores (with their 95% ranges) against what each spent, the best-value
    settings marked (None: no setting has a score yet)."""
    scored = [s for s in result.settings if s.overall is not None]
    if not scored:
        return None
    frontier = set()
    if result.comparison is not None:
        frontier = {s.label for s in result.comparison.settings if s.on_frontier}

    def trace(points: list[SettingResult], name: str, symbol: str) -> dict[str, Any]:
        low = [s.overall - s.overall_ci95[0] if s.overall_ci95 and s.overall is not None else 0
               for s in points]  # fmt: skip
        high = [s.overall_ci95[1] - s.overall if s.overall_ci95 and s.overall is not None else 0
                for s in points]  # fmt: skip
        return {
            "type": "scatter",
            "mode": "markers+text",
            "name": name,
            "x": [float(s.spent) for s in points],
            "y": [s.overall for s in points],
            "text": [s.label for s in points],
            "textposition": "middle right",
            "cliponaxis": False,
            "marker": {"size": 11, "symbol": symbol},
            "error_y": {"type": "data", "symmetric": False, "array": high, "arrayminus": low},
            "hovertext": [
                f"{s.label}<br>score {s.overall:.1f}<br>spent {format_money(s.spent)}"
                for s in points
            ],
            "hoverinfo": "text",
        }

    best = [s for s in scored if s.label in frontier]
    rest = [s for s in scored if s.label not in frontier]
    data = [trace(points, name, symbol) for points, name, symbol in (
        (best, "Best value", "star"), (rest, "Settings", "circle"),
    ) if points]  # fmt: skip
    return {
        "data": data,
        "layout": {
            "xaxis": {"title": {"text": "spent (USD)"}, "rangemode": "nonnegative"},
            "yaxis": {"title": {"text": "score (0–100, 95% range)"}},
            "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
            "height": 380,
            "legend": {"orientation": "h"},
        },
    }


def _missing(sweep_id: str) -> Any:
    return dmc.Alert(
        f"There is no benchmark sweep {sweep_id!r} on this server: it may have been deleted, "
        "or the link is cut short.",
        title="Sweep not found",
        color="yellow",
        id="bs-missing",
    )
