"""The cells of the Sweep page as components, and what each tick changes in them.

The grid is built once per sweep (fresh canvases: a new drawing never appears over the last
sweep's scene); each tick then only updates props — element lists only for cells whose count
changed since the last tick, and a cell's words (its "Thinking" block and, for text, the
answer) only when they grew, so a quiet cell costs nothing on the wire. Every card has a
``cell-text`` block above its answer: the model's visible reasoning, collapsible, and for
text sweeps the answer itself."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc
from dash import Patch, html, no_update

from sweepbench.artifacts import page_facts
from sweepbench.errors import SweepbenchError
from sweepbench.sweeps.live import SweepRunner
from sweepbench.web import cells
from sweepbench.web.components import ExcalidrawCanvas, SculptureViewer

CANVAS_HEIGHT = 340
VIEWER_HEIGHT = 300
THINKING_HEIGHT = 160
PRE_STYLE = {"whiteSpace": "pre-wrap", "fontSize": "13px", "margin": 0}
THINKING = "thinking"
"""The value of a cell's "Thinking" accordion item."""


def _columns(n: int) -> int:
    return {1: 1, 2: 2, 3: 3, 4: 2}.get(n, 3)


def glb_url(sweep_id: str, position: int, version: int | str) -> str:
    """Where the app serves a sample's .glb (``version`` busts the browser's cache)."""
    return f"/_sweepbench/sweeps/{sweep_id}/{position}.glb?v={version}"


def _card(view: dict[str, Any], index: int) -> Any:
    kind = view["kind"]
    viewer = page_facts(kind).viewer
    first = cells.cell_samples(view, index)[0]
    key = {"index": index}
    body: list[Any] = [
        dmc.Group(id={"type": "cell-badges", **key}, gap=4, children=[]),
        dmc.Text(id={"type": "cell-blend", **key}, size="sm", fw=600, c="violet"),
        dmc.Text(id={"type": "cell-detail", **key}, size="xs", c="dimmed"),
        dmc.Text(id={"type": "cell-problem", **key}, size="xs", c="orange"),
        dmc.Text(id={"type": "cell-spread", **key}, size="xs", c="dimmed"),
    ]
    if viewer == "model":
        body.append(dmc.Text(id={"type": "cell-progress", **key}, size="sm"))
    words_style = (
        {"maxHeight": f"{CANVAS_HEIGHT}px", "overflow": "auto"} if viewer == "text" else {}
    )
    body.append(html.Div(id={"type": "cell-text", **key}, style=words_style))
    if viewer == "canvas":
        body.append(
            ExcalidrawCanvas(id={"type": "canvas", **key}, elements=[], height=CANVAS_HEIGHT)
        )
    elif viewer == "model":
        body.append(SculptureViewer(id={"type": "viewer", **key}, src="", height=VIEWER_HEIGHT))
    return dmc.Card(
        withBorder=True,
        padding="sm",
        id={"type": "cell", **key},
        **{"data-model": first["model"]},
        children=dmc.Stack(gap=4, children=body),
    )


def cell_grid(view: dict[str, Any]) -> Any:
    """One card per cell, in axis order."""
    indexes = cells.cell_indexes(view)
    return dmc.SimpleGrid(
        cols=_columns(len(indexes)), children=[_card(view, i) for i in indexes], id="cell-grid"
    )


def thinking_block(sample: dict[str, Any]) -> Any:
    """The model's visible reasoning as a collapsed "Thinking" block (None without any). An
    accordion, not an ``html.Details``: the renderer rebuilds a block whose children change,
    and only a component that tells the page it was opened (its ``value``) is rebuilt open."""
    reasoning = sample.get("reasoning") or ""
    if not reasoning:
        return None
    scroll = {"maxHeight": f"{THINKING_HEIGHT}px", "overflow": "auto", "color": "gray"}
    return dmc.Accordion(
        className="cell-thinking",
        chevronPosition="left",
        variant="default",
        children=[
            dmc.AccordionItem(
                value=THINKING,
                children=[
                    dmc.AccordionControl(cells.thinking_summary(sample), fz="sm", py=2),
                    dmc.AccordionPanel(html.Pre(reasoning, style={**PRE_STYLE, **scroll})),
                ],
            )
        ],
    )


def words(sample: dict[str, Any], kind: str) -> list[Any]:
    """What goes in a card's ``cell-text`` block: the thinking block, then (text sweeps) the
    answer so far."""
    block = thinking_block(sample)
    out: list[Any] = [] if block is None else [block]
    if page_facts(kind).viewer == "text":
        out.append(html.Pre(sample.get("text") or "", className="cell-answer", style=PRE_STYLE))
    return out


def _words_state(sample: dict[str, Any], kind: str) -> list[Any]:
    """What the words block shows: whether it has a thinking block, then what changes in it
    (to skip a tick that changed nothing, and to patch rather than rebuild one that grew)."""
    reasoning = sample.get("reasoning") or ""
    text = len(sample.get("text") or "") if page_facts(kind).viewer == "text" else 0
    return [bool(reasoning), text, len(reasoning), cells.thinking_summary(sample)]


def words_update(sample: dict[str, Any], kind: str, before: list[Any] | None) -> Any:
    """The ``cell-text`` children for this tick: ``no_update`` when nothing changed; the
    whole block when its shape changed (a thinking block appeared); else a :class:`Patch` of
    the texts alone, which leaves what the page itself set in the block untouched: a
    "Thinking" block the reader opened stays open while it grows."""
    now = _words_state(sample, kind)
    if before == now:
        return no_update
    if before is None or before[0] != now[0]:
        return words(sample, kind)
    patch = Patch()
    at = 0
    if now[0]:  # Accordion > AccordionItem > [AccordionControl, AccordionPanel > Pre]
        item = patch[0]["props"]["children"][0]["props"]["children"]
        item[0]["props"]["children"] = cells.thinking_summary(sample)
        item[1]["props"]["children"]["props"]["children"] = sample.get("reasoning") or ""
        at = 1
    if page_facts(kind).viewer == "text":
        patch[at]["props"]["children"] = sample.get("text") or ""
    return patch


def _position(view: dict[str, Any], index: int, repeat: int = 0) -> int:
    for position, sample in enumerate(view["cells"]):
        if sample["cell"] == index and sample["repeat"] == repeat:
            return position
    return 0


def tick_outputs(
    runner: SweepRunner,
    sweep_id: str | None,
    seen: dict[str, Any],
    canvas_ids: list[dict[str, Any]],
    viewer_ids: list[dict[str, Any]],
    text_ids: list[dict[str, Any]],
    badge_ids: list[dict[str, Any]],
) -> tuple[Any, ...]:
    """The on_tick callback's outputs (see sweep_page.register for their order)."""
    n_badges, n_canvas, n_viewer, n_text = (
        len(badge_ids),
        len(canvas_ids),
        len(viewer_ids),
        len(text_ids),
    )
    try:
        view = runner.view(sweep_id) if sweep_id else None
    except SweepbenchError:
        view = None
    if view is None:
        nothing = [no_update]
        return (
            nothing * n_badges,
            nothing * n_badges,
            nothing * n_badges,
            nothing * n_badges,
            nothing * n_badges,
            nothing * n_canvas,
            nothing * n_canvas,
            nothing * n_viewer,
            nothing * n_viewer,
            nothing * n_text,
            no_update,
            no_update,
            True,
            False,
            True,
            False,
            False,
            False,
            no_update,
        )
    kind = view["kind"]
    live = bool(view.get("live"))
    new_seen = dict(seen)

    per_cell = {i: cells.cell_samples(view, i) for i in cells.cell_indexes(view)}
    judged = bool(view.get("judge"))

    def badge_row(index: int) -> list[Any]:
        samples = per_cell.get(index) or []
        if not samples:
            return []
        return [
            dmc.Badge(text, color=colour, variant="light", size="sm")
            for text, colour in cells.badges(samples, kind, judged=judged)
        ]

    def first(index: int) -> dict[str, Any] | None:
        samples = per_cell.get(index)
        return samples[0] if samples else None

    badges_out = [badge_row(b["index"]) for b in badge_ids]
    blends = page_facts(kind).viewer == "model"
    blend_out = [
        cells.blend_line(per_cell.get(b["index"], [])) if blends else "" for b in badge_ids
    ]
    detail_out = [cells.detail_line(s, kind) if (s := first(b["index"])) else "" for b in badge_ids]
    problem_out = [cells.problem(s) if (s := first(b["index"])) else "" for b in badge_ids]
    spread_out = [
        " · ".join(
            part
            for part in (
                cells.spread_text(per_cell.get(b["index"], []), kind),
                cells.grade_text(per_cell.get(b["index"], [])),
            )
            if part
        )
        for b in badge_ids
    ]

    elements_out: list[Any] = []
    final_out: list[Any] = []
    for c in canvas_ids:
        sample = first(c["index"])
        if sample is None:
            elements_out.append(no_update)
            final_out.append(no_update)
            continue
        done = sample["status"] not in ("queued", "running")
        state = [len(sample["items"]), done]
        key = f"canvas-{c['index']}"
        if new_seen.get(key) == state:
            elements_out.append(no_update)
            final_out.append(no_update)
        else:
            new_seen[key] = state
            elements_out.append(sample["items"])
            final_out.append(done)

    src_out: list[Any] = []
    progress_out: list[Any] = []
    for v in viewer_ids:
        index = v["index"]
        sample = first(index)
        if sample is None:
            src_out.append(no_update)
            progress_out.append(no_update)
            continue
        progress_out.append(cells.progress_line(sample))
        key = f"viewer-{index}"
        if sample.get("has_glb") and new_seen.get(key) != "glb":
            new_seen[key] = "glb"
            src_out.append(glb_url(view["id"], _position(view, index), view.get("version", 0)))
        else:
            src_out.append(no_update)

    text_out: list[Any] = []
    for t in text_ids:
        sample = first(t["index"])
        if sample is None:
            text_out.append(no_update)
            continue
        key = f"words-{t['index']}"
        text_out.append(words_update(sample, kind, new_seen.get(key)))
        new_seen[key] = _words_state(sample, kind)
    status_text, colour = cells.status_line(view)
    return (
        badges_out,
        blend_out,
        detail_out,
        problem_out,
        spread_out,
        elements_out,
        final_out,
        src_out,
        progress_out,
        text_out,
        status_text,
        colour,
        not live,
        live,
        not live or bool(view.get("stopped")),
        live,
        live,
        live,
        new_seen,
    )
