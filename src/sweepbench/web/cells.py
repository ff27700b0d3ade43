"""What a cell shows, from a sweep view (live or stored): its badges, its detail line, the
sculpture blend line, and the sweep's status line (spec sweeps.md §11, §12). Pure functions of
plain documents, so they are tested without a browser."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sweepbench.artifacts import page_facts
from sweepbench.models.providers import label as provider_label
from sweepbench.money.prices import format_usd
from sweepbench.sweeps.results import Spread, cell_status
from sweepbench.sweeps.timing import one_at_a_time, serial_clause

NORMAL_STOPS = ("end", "cancelled")
CONTEXT_FULL = "context_full"
"""The provider reason of a local call whose output filled the loaded context (models/local.py)."""
"""For an old stored sweep that does not say whether its calls overlapped: the serial figure
is shown when it is at least this many times the wall clock."""


def cell_samples(view: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """One cell's samples, in repeat order."""
    return [s for s in view["cells"] if s["cell"] == index]


def cell_indexes(view: dict[str, Any]) -> list[int]:
    """The cells of the view, in axis order."""
    return sorted({s["cell"] for s in view["cells"]})


def item_count(sample: dict[str, Any]) -> int:
    """Elements or parts so far (live), or in the finished artifact."""
    return len(sample.get("items") or [])


def _count(kind: str, n: float, digits: int = 0) -> str:
    nouns = page_facts(kind).nouns
    one, many = nouns if nouns else ("item", "items")
    return f"{n:,.{digits}f} {one if n == 1 else many}"


def _usd(value: str | None) -> str:
    return format_usd(None if value is None else Decimal(value))


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def queued_words(model: str) -> str:
    """Why a cell waits: its provider runs one call at a time, or has no free slot yet."""
    if one_at_a_time(model):
        return f"queued: {provider_label(model.split('/', 1)[0])} calls run one at a time"
    return "queued: waiting for a free slot"


def cell_seconds(samples: list[dict[str, Any]]) -> float:
    """How long a cell took: its samples' times added up where they ran one after the other
    (a local model), else the longest (they ran at once)."""
    times = [float(s.get("wall_s") or 0) for s in samples]
    return sum(times) if one_at_a_time(samples[0]["model"]) else max(times)


def cell_state(samples: list[dict[str, Any]], kind: str) -> str:
    """The state badge, by the sweeps' one rule (:func:`sweepbench.sweeps.results.cell_status`):
    queued, drawing…/building…/writing… (running), interrupted, stopped, failed or done."""
    state = cell_status(s["status"] for s in samples)
    return page_facts(kind).working if state == "running" else state


def badges(
    samples: list[dict[str, Any]], kind: str, *, judged: bool = False
) -> list[tuple[str, str]]:
    """(text, colour) of each badge, in the spec's order: label, size, palette, time (none
    while queued), state, cost, and with a judge (``judged``) the score. With several samples,
    sizes and scores are means, costs are sums, and the time is the cell's
    (:func:`cell_seconds`)."""
    first = samples[0]
    failed = any(s["status"] == "failed" for s in samples)
    out = [(first["label"], "red" if failed else "blue")]
    if page_facts(kind).nouns:
        counts = [float(item_count(s)) for s in samples]
        mean = sum(counts) / len(counts)
        out.append((_count(kind, mean, 0 if mean.is_integer() else 1), "gray"))
    palettes = [p for s in samples if (p := (s.get("metrics") or {}).get("palette")) is not None]
    if palettes:  # a kind whose metrics count colours (sculptures)
        mean = sum(palettes) / len(palettes)
        colours = f"{mean:.1f}" if not float(mean).is_integer() else f"{mean:.0f}"
        out.append((f"{colours} colour{'s' if mean != 1 else ''}", "grape"))
    if any(s["status"] != "queued" for s in samples):
        out.append((f"{cell_seconds(samples):.0f}s", "gray"))
    state = cell_state(samples, kind)
    state_colours = {"stopped": "yellow", "interrupted": "yellow", "failed": "red", "done": "green"}
    colour = state_colours.get(state, "gray")
    out.append((state, colour))
    if all(s["status"] not in ("queued", "running") for s in samples):
        costs = [s.get("cost_usd") for s in samples]
        if all(c is not None for c in costs):
            total = sum((Decimal(c) for c in costs if c is not None), Decimal(0))
            out.append((f"~{format_usd(total)}", "teal"))
        else:
            out.append(("no price", "orange"))
    if judged:
        score = score_badge(samples)
        if score is not None:
            out.append(score)
    return out


GRADE_WORDS = {
    "unparseable": "unreadable verdict",
    "failed": "judge failed",
    "not_run": "not graded",
}
"""How a grade without a score is named on a badge."""


def score_badge(samples: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The judge's badge: "score 0.80" (the mean over graded samples, "n/k graded" when some
    were not), "grading…" while a finished sample waits for its grade, what kept the judge
    from scoring, or None while the cell runs."""
    grades = [s.get("grade") for s in samples]
    scores = [float(g["score"]) for g in grades if g and g.get("score") is not None]
    if scores:
        mean = sum(scores) / len(scores)
        some = f" ({len(scores)}/{len(samples)} graded)" if len(scores) < len(samples) else ""
        return f"score {mean:.2f}{some}", "green" if mean >= 0.5 else "yellow"
    if any(g is None and s["status"] == "done" for g, s in zip(grades, samples, strict=True)):
        return "grading…", "gray"
    statuses = [str(g.get("status")) for g in grades if g]
    if statuses:
        return GRADE_WORDS.get(statuses[0], statuses[0]), "red"
    return None


def grade_text(samples: list[dict[str, Any]]) -> str:
    """The judge's reason for the cell's first graded sample ("judge: …"), else why there is
    no grade; "" without one."""
    grades = [g for g in (s.get("grade") for s in samples) if g]
    if not grades:
        return ""
    graded = [g for g in grades if g.get("score") is not None]
    grade = graded[0] if graded else grades[0]
    return f"judge: {grade.get('reason') or '(no reason)'}"


def blend_line(samples: list[dict[str, Any]]) -> str:
    """The sculpture's highlighted line: "k/n joints blend (p%)" or "N parts, no joints"."""
    texts = [s["metrics"].get("blend_text") for s in samples if s.get("metrics")]
    return str(texts[0]) if texts and texts[0] else ""


def tokens_field(sample: dict[str, Any]) -> str:
    """ "1,234 out (200 thinking) / 1,489 in": while running, the tokens received so far and
    the prompt as estimated ("~") until the provider reports it; "waiting for the first
    token" before any arrived."""
    usage = sample.get("usage") or {}
    out = int(usage.get("output_tokens") or 0)
    thinking = int(usage.get("reasoning_tokens") or 0)
    prompt = f"{int(usage.get('input_tokens') or 0):,} in"
    if sample["status"] == "running":
        if not out:
            out, thinking = int(sample.get("deltas") or 0), int(sample.get("reasoning_deltas") or 0)
        if not usage.get("input_tokens"):
            prompt = f"~{int(sample.get('input_estimate') or 0):,} in"
        if not out:
            return f"waiting for the first token · {prompt}"
    thought = f" ({thinking:,} thinking)" if thinking else ""
    return f"{out:,} out{thought} / {prompt}"


def thinking_summary(sample: dict[str, Any]) -> str:
    """The reasoning block's title: "Thinking… 120 tokens" while it streams, then
    "Thinking · 120 tokens"."""
    usage = sample.get("usage") or {}
    if sample["status"] == "running":
        return f"Thinking… {_plural(int(sample.get('reasoning_deltas') or 0), 'token')}"
    count = int(usage.get("reasoning_tokens") or sample.get("reasoning_deltas") or 0)
    return f"Thinking · {_plural(count, 'token')}" if count else "Thinking"


def progress_line(sample: dict[str, Any]) -> str:
    """The sculpture's line under its badges: queued, asking…, or what a partial one shows."""
    parts = _plural(item_count(sample), "part")
    if sample["status"] == "queued":
        return queued_words(sample["model"])
    if sample["status"] == "running":
        tokens = _plural(int(sample.get("deltas") or 0), "token")
        return f"asking {sample['model']}… {tokens} so far · {parts}"
    if sample.get("partial"):
        return f"partial sculpture: the {parts} that arrived are shown"
    return ""


def detail_line(sample: dict[str, Any], kind: str) -> str:
    """The small dimmed line (spec §11.2), fields joined with " · "; a queued cell says why it
    waits."""
    if sample["status"] == "queued":
        return queued_words(sample["model"])
    fields = [tokens_field(sample)]
    stop = sample.get("stop_reason")
    if sample.get("provider_reason") == CONTEXT_FULL:
        fields.append("CONTEXT FULL (raising max tokens won't help)")
    elif sample.get("truncated"):
        fields.append(f"TRUNCATED at {sample['max_tokens']:,} tokens")
    elif stop and stop not in NORMAL_STOPS:
        fields.append(f"stop={stop}")
    metrics = sample.get("metrics") or {}
    if "triangles" in metrics:  # a kind that builds a mesh (sculptures)
        fields.append(f"{metrics.get('triangles', 0):,} triangles")
        fields.append(f"{metrics.get('kb', 0):,} KB")
        if metrics.get("clamped"):
            fields.append(f"{metrics['clamped']} clamped")
    if sample.get("effort_ignored"):
        fields.append("effort not accepted")
    return " · ".join(fields)


def problem(sample: dict[str, Any]) -> str:
    """Why the artifact is not whole (error text or the outcome's reason), else ""."""
    if sample["status"] == "failed":
        return str(sample.get("error") or sample.get("reason") or "failed")
    if sample["status"] in ("queued", "running"):
        return ""
    reason = str(sample.get("reason") or "")
    return "" if reason == sample["status"] else reason  # the state badge says it already


def spread_text(samples: list[dict[str, Any]], kind: str) -> str:
    """With repeats: the mean and spread of the cell's numbers ("elements 27 ± 3 (24–31)")."""
    finished = [s for s in samples if s["status"] not in ("queued", "running")]
    if len(finished) < 2:
        return ""
    parts = []
    nouns = page_facts(kind).nouns
    if nouns:
        counts = Spread.of([float(item_count(s)) for s in finished])
        parts.append(f"{nouns[1]} {counts.text()}")
    outs = Spread.of([float((s.get("usage") or {}).get("output_tokens") or 0) for s in finished])
    parts.append(f"tokens out {outs.text()}")
    seconds = Spread.of([float(s.get("wall_s") or 0) for s in finished])
    parts.append(f"seconds {seconds.text(1)}")
    return f"{len(finished)} samples: " + " · ".join(parts)


def status_line(view: dict[str, Any]) -> tuple[str, str]:
    """The status line and its colour (spec §12)."""
    kind, samples = view["kind"], view["cells"]
    n = len(cell_indexes(view))
    items = sum(item_count(s) for s in samples if s["repeat"] == 0)
    elapsed = float(view.get("wall_s") or 0)
    counted = f" · {_count(kind, items)}" if page_facts(kind).nouns else ""
    if view.get("error"):
        return f"The sweep stopped with an error: {view['error']}", "red"
    if view.get("live"):
        finished = sum(
            1
            for i in cell_indexes(view)
            if all(s["status"] not in ("queued", "running") for s in cell_samples(view, i))
        )
        if view.get("stopped"):
            return "Stopping every cell…", "yellow"
        verb = page_facts(kind).verb
        so_far = f"{counted} so far" if counted else ""
        return f"{verb}… {finished}/{n} variants finished{so_far} ({elapsed:.0f}s)", "gray"
    ok_cells = [
        i
        for i in cell_indexes(view)
        if all(s["status"] == "done" and not s.get("truncated") for s in cell_samples(view, i))
    ]
    stopped = [
        i for i in cell_indexes(view) if cell_state(cell_samples(view, i), kind) == "stopped"
    ]
    cost = _usd(view.get("totals", {}).get("cost_usd"))
    text = (
        f"{len(ok_cells)}/{n} variants in {elapsed:.1f}s wall clock{serial_clause(view)}"
        f"{counted} · ~{cost} total"
    )
    if stopped:
        text = (
            f"Stopped {_plural(len(stopped), 'variant')}. {page_facts(kind).kept}; no "
            f"further tokens are being generated. {text}"
        )
    if view.get("axis") == "model" and any(s.get("effort_ignored") for s in samples):
        text += " · effort not sent to models that reject it"
    colour = "green" if len(ok_cells) == n else ("red" if not ok_cells else "yellow")
    return text, colour
