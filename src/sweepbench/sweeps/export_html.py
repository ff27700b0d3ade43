"""A sweep as one self-contained HTML file: settings, estimate, status line and the cells side
by side, with no script, font or stylesheet from the network (it opens offline)."""

from __future__ import annotations

from decimal import Decimal
from html import escape
from typing import Any

from sweepbench.money.prices import format_usd

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
"""


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
    detail = [f"{usage['output_tokens']:,} out / {usage['input_tokens']:,} in"]
    if sample.get("truncated"):
        detail.append(f"TRUNCATED at {sample['max_tokens']:,} tokens")
    elif sample.get("stop_reason") not in (None, "end"):
        detail.append(f"stop={sample['stop_reason']}")
    if sample.get("effort_ignored"):
        detail.append("effort not accepted")
    if sample.get("error"):
        detail.append(escape(str(sample["error"])))
    body = escape(sample.get("text") or "")
    return (
        f'<div class="cell"><div class="badges">{"".join(badges)}</div>'
        f'<div class="dim">{" · ".join(detail)}</div><pre>{body}</pre></div>'
    )


def render_html(document: dict[str, Any]) -> str:
    """The HTML page of a stored sweep document."""
    held = ", ".join(f"{escape(str(k))}={escape(str(v))}" for k, v in document["held"].items())
    totals = document["totals"]
    cells = document["cells"]
    ok = sum(1 for c in cells if c["status"] == "done")
    status = (
        f"{ok}/{len(cells)} calls in {document['wall_s']:.1f}s wall clock "
        f"(≈{document['serial_s']:.1f}s if run one at a time) · "
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
<h2>Cells</h2><div class="grid">{"".join(_cell(c) for c in cells)}</div>
<h2>Read with care</h2><ul class="dim">{cautions}</ul>
</body></html>
"""
