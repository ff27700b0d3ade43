"""A sweep as one self-contained HTML file: settings, estimate, status line and the cells side
by side, with no script, font or stylesheet from the network (it opens offline, from disk).

A sculpture cell shows its .glb in 3D: the page carries the .glb as a ``data:`` URL and, once,
the ``<model-viewer>`` script the web app ships (``web/components/model-viewer.min.js``, three.js
inside), inlined — no CDN."""

from __future__ import annotations

import base64
import re
from decimal import Decimal
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from sweepbench.money.prices import format_usd
from sweepbench.sweeps.timing import serial_clause

CAUTIONS = (
    "Counts are crude proxies for quality: a longer answer is not a better one. Read the cells.",
    "These are single samples unless repeats were run: output varies from run to run; "
    "differences smaller than the spread are noise.",
    "Costs are local estimates, not a bill: they ignore cache-write premiums and discounts. "
    "The provider's invoice is the real figure.",
)

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#1b1f24}
h1{font-size:20px;margin:0 0 4px} .dim{color:#667085} .grid{display:grid;gap:12px;
grid-template-columns:repeat(auto-fill,minmax(320px,1fr))} .cell{border:1px solid #d0d5dd;
border-radius:8px;padding:10px;background:#fff} .badges span{display:inline-block;
font-size:12px;border-radius:10px;padding:1px 8px;margin:0 4px 4px 0;background:#eef2f6}
.badges .bad{background:#fee4e2;color:#b42318} .badges .warn{background:#fef0c7;color:#93370d}
pre{white-space:pre-wrap;word-break:break-word;background:#f8fafc;padding:8px;border-radius:6px;
max-height:420px;overflow:auto;font:12px/1.4 ui-monospace,Menlo,monospace} table{border-collapse:
collapse} td{padding:2px 10px 2px 0;vertical-align:top} ul{padding-left:18px}
.art svg{width:100%;height:auto;max-height:420px;background:#fff}
model-viewer{display:block;width:100%;height:320px;background:#f8fafc;border-radius:6px}
"""
VIEWER = "web/components/model-viewer.min.js"
"""The standalone ``<model-viewer>`` bundle, under the package (the one the web app serves)."""
_END_TAG = re.compile(r"</(script)", re.IGNORECASE)


@cache
def viewer_script() -> str:
    """The ``<model-viewer>`` script, safe inside ``<script>…</script>`` (read from the package
    files directly: importing the web layer would load Dash)."""
    text = resources.files("sweepbench").joinpath(VIEWER).read_text(encoding="utf-8")
    return _END_TAG.sub(r"<\\/\1", text)


def _usd(value: str | None) -> str:
    return format_usd(None if value is None else Decimal(value))


def _cell(sample: dict[str, Any]) -> str:
    usage = sample["usage"]
    state = sample["status"]
    badges = [f"<span>{escape(sample['label'])}</span>"]
    if sample.get("repeat"):
        badges.append(f"<span>sample {sample['repeat'] + 1}</span>")
    css = {"failed": "bad", "stopped": "warn"}.get(state, "")
    badges.append(f'<span class="{css}">{escape(state)}</span>')
    badges.append(f"<span>{sample['wall_s']:.1f}s</span>")
    badges.append(f"<span>~{escape(_usd(sample['cost_usd']))}</span>")
    grade = sample.get("grade")
    if grade:
        badges.append(_grade_badge(grade))
    detail = [f"{usage['output_tokens']:,} out / {usage['input_tokens']:,} in"]
    if sample.get("truncated"):
        detail.append(f"TRUNCATED at {sample['max_tokens']:,} tokens")
    elif sample.get("stop_reason") not in (None, "end"):
        detail.append(f"stop={sample['stop_reason']}")
    if sample.get("effort_ignored"):
        detail.append("effort not accepted")
    if sample.get("error"):
        detail.append(escape(str(sample["error"])))
    metrics = sample.get("metrics") or {}
    numbers = " · ".join(
        f"{escape(str(k))} {escape(_number(v))}" for k, v in metrics.items() if _scalar(v)
    )
    if sample.get("reason"):
        detail.append(escape(str(sample["reason"])))
    if grade and grade.get("reason"):
        detail.append(f"judge: {escape(str(grade['reason']))}")
    notes = sample.get("notes") or []
    if notes:
        detail.append(f"{len(notes)} adjusted")
    files = sample.get("files") or {}
    if "svg" in files:
        view = base64.b64decode(files["svg"]).decode("utf-8", "replace")
        view = f'<div class="art">{_strip_xml_header(view)}</div>'
    elif "glb" in files:
        url = f"data:model/gltf-binary;base64,{escape(files['glb'])}"
        number = sample["cell"] + 1
        view = (
            f'<model-viewer src="{url}" alt="{escape(f"the sculpture of cell {number}")}" '
            'camera-controls environment-image="neutral" exposure="1.1" shadow-intensity="1" '
            'shadow-softness="0.7"></model-viewer>'
            f'<a download="cell{number}.glb" href="{url}">download the .glb</a>'
        )
    else:
        view = f"<pre>{escape(sample.get('text') or '')}</pre>"
    note_list = "".join(f"<li>{escape(str(n))}</li>" for n in notes[:50])
    return (
        f'<div class="cell"><div class="badges">{"".join(badges)}</div>'
        f'<div class="dim">{" · ".join(detail)}</div>'
        f'<div class="dim">{numbers}</div>{view}'
        f"{f'<details><summary>notes</summary><ul>{note_list}</ul></details>' if notes else ''}"
        "</div>"
    )


def _grade_badge(grade: dict[str, Any]) -> str:
    """The judge's score as a badge, or what kept it from giving one."""
    if grade.get("status") == "graded" and grade.get("score") is not None:
        css = "" if grade.get("passed") else "warn"
        return f'<span class="{css}">score {float(grade["score"]):.2f}</span>'
    words = {"unparseable": "unreadable verdict", "failed": "judge failed", "not_run": "not graded"}
    status = str(grade.get("status", ""))
    return f'<span class="bad">{escape(words.get(status, status))}</span>'


def _judging(document: dict[str, Any]) -> str:
    """Who graded the cells, against what, at what cost, and with repeats each cell's verdict
    against the best (paired by repeat number); nothing without a judge."""
    judge = document.get("judge")
    if not judge:
        return ""
    against = (
        f"rubric: {judge['rubric']}" if judge.get("rubric") else f"reference: {judge['reference']}"
    )
    cost = _usd(document["totals"].get("judge_cost_usd"))
    rows = [
        f"<tr><td>Judge</td><td>{escape(judge['model'])} · ~{escape(cost)} for grading</td></tr>",
        f"<tr><td></td><td><pre>{escape(against)}</pre></td></tr>",
    ]
    comparison = document.get("comparison") or {}
    if comparison.get("error"):
        rows.append(f"<tr><td>Compared</td><td>{escape(str(comparison['error']))}</td></tr>")
    elif comparison:
        best = escape(str(comparison["best"]))
        rows.append(f"<tr><td>Best cell</td><td>{best} (repeats paired by repeat number)</td></tr>")
        for item in comparison.get("comparisons", []):
            rows.append(
                f"<tr><td>{escape(str(item['label']))}</td>"
                f"<td>{escape(str(item['sentence']))}</td></tr>"
            )
    return f"<h2>Grading</h2><table>{''.join(rows)}</table>"


def _scalar(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _strip_xml_header(svg: str) -> str:
    """An SVG document's root element, for inlining into HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else escape(svg)


def render_html(document: dict[str, Any]) -> str:
    """The HTML page of a stored sweep document."""
    held = ", ".join(f"{escape(str(k))}={escape(str(v))}" for k, v in document["held"].items())
    totals = document["totals"]
    cells = document["cells"]
    ok = sum(1 for c in cells if c["status"] == "done")
    status = (
        f"{ok}/{len(cells)} calls in {document['wall_s']:.1f}s wall clock"
        f"{serial_clause(document)} · "
        f"{totals['output_tokens']:,} tokens out · ~{_usd(totals['cost_usd'])} total"
    )
    notes = "".join(f"<li>{escape(n)}</li>" for n in document.get("notes", []))
    cautions = "".join(f"<li>{escape(c)}</li>" for c in CAUTIONS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>sweepbench sweep {escape(document["id"][:8])}</title><style>{STYLE}</style></head>
<body>
<h1>Sweep {escape(document["id"][:8])} · varying {escape(document["axis"])}</h1>
<div class="dim">{escape(document["created"])} · task {escape(document["kind"])} ·
held {held} · {document["repeats"]} sample(s) per cell</div>
<h2>Prompt</h2><pre>{escape(document["prompt"])}</pre>
<table><tr><td>Estimate</td><td>{escape(document["estimate"]["line"])}</td></tr>
<tr><td>Status</td><td>{escape(status)}</td></tr></table>
{f"<ul class='dim'>{notes}</ul>" if notes else ""}
{_judging(document)}
<h2>Cells</h2><div class="grid">{"".join(_cell(c) for c in cells)}</div>
<h2>Read with care</h2><ul class="dim">{cautions}</ul>
{_viewer(cells)}</body></html>
"""


def _viewer(cells: list[dict[str, Any]]) -> str:
    """The inlined ``<model-viewer>`` script when a cell has a .glb to show, else nothing."""
    if not any("glb" in (cell.get("files") or {}) for cell in cells):
        return ""
    return f"<script>{viewer_script()}</script>\n"
