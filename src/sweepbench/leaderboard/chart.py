"""The board as a chart (spec §17.2): one offline HTML file with plotly.js inlined — x the
price (log scale), y the score, published models and your runs with distinct markers, hover
text (model, source, score, price, 95% range), and the best-value frontier as a step line. A
price on the measured view that is a listed price (nothing measured) is marked § on the point
and said in its hover text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sweepbench.leaderboard.board import LISTED_MARK, MEASURE_LABELS, Board, Placed
from sweepbench.safe_files import write_file_atomically


def _hover(p: Placed) -> str:
    source = p.row.label
    text = f"{p.row.model}<br>{source}<br>score {p.score.score:.1f}<br>price ${p.price:,.4f}"
    if p.listed:
        text += f" {LISTED_MARK} listed price: nothing measured"
    if p.score.low is not None and p.score.high is not None:
        text += f"<br>95% range {p.score.low:.1f}–{p.score.high:.1f}"
    if p.best:
        text += "<br>★ best value"
    return text


def chart_figure(board: Board, *, title: str) -> Any:
    """The chart as a Plotly figure (``plotly.graph_objects.Figure``): the published models
    and the runs as distinct markers, the best-value frontier as a step line."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]

    figure = go.Figure()
    for source, symbol, name in (
        ("published", "circle", "Published"),
        ("run", "diamond", "Your runs"),
    ):
        points = [p for p in board.placed if p.row.source == source and p.price > 0]
        if not points:
            continue
        figure.add_trace(
            go.Scatter(
                x=[float(p.price) for p in points],
                y=[p.score.score for p in points],
                mode="markers+text",
                name=name,
                text=[p.row.model + p.mark for p in points],
                textposition="top center",
                hovertext=[_hover(p) for p in points],
                hoverinfo="text",
                marker={"symbol": symbol, "size": 11},
            )
        )
    best = [p for p in board.best if p.price > 0]
    if best:
        figure.add_trace(
            go.Scatter(
                x=[float(p.price) for p in best],
                y=[p.score.score for p in best],
                mode="lines",
                line={"shape": "hv", "dash": "dot"},
                name="Best value",
                hoverinfo="skip",
            )
        )
    figure.update_layout(
        title=title,
        xaxis={"type": "log", "title": MEASURE_LABELS[board.measure]},
        yaxis={"title": "Score (0–100)", "range": [0, 100]},
        template="plotly_white",
    )
    return figure


def chart_html(board: Board, *, title: str) -> str:
    """The chart as one self-contained HTML page (no script loaded from the network)."""
    html: str = chart_figure(board, title=title).to_html(
        include_plotlyjs=True, full_html=True, include_mathjax=False
    )
    return html


def write_chart(board: Board, path: Path, *, title: str) -> None:
    """Write :func:`chart_html` to ``path``, whole or not at all (a file there is replaced
    only once the new one is complete). FileRefused saying why when nothing was written: the
    folder does not exist, or the name is taken by something other than a regular file (a
    folder, a device such as ``/dev/full``, a link)."""
    html = chart_html(board, title=title).encode("utf-8")
    write_file_atomically(path.parent, path.name, html)
