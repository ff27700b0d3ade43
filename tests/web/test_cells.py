"""Badges, detail lines and the status line, from plain sweep documents (spec §11, §12)."""

from __future__ import annotations

from typing import Any

from sweepbench.web import cells


def _sample(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cell": 0,
        "repeat": 0,
        "label": "effort=low · 8,000 tok",
        "model": "scripted/sketch",
        "status": "done",
        "stop_reason": "end",
        "truncated": False,
        "max_tokens": 8000,
        "usage": {"input_tokens": 1489, "output_tokens": 12345},
        "cost_usd": "0.0123",
        "wall_s": 12.4,
        "items": [{}] * 23,
        "metrics": {},
        "effort_ignored": False,
        "reason": "",
    }
    base.update(fields)
    return base


def test_badges_in_the_spec_order() -> None:
    texts = [t for t, _ in cells.badges([_sample()], "excalidraw")]
    assert texts == ["effort=low · 8,000 tok", "23 elements", "12s", "done", "~$0.01"]


def test_running_cells_show_the_working_state_and_no_cost_yet() -> None:
    running = _sample(status="running", cost_usd=None, items=[{}])
    texts = [t for t, _ in cells.badges([running], "excalidraw")]
    assert texts[1] == "1 element" and "drawing…" in texts and not texts[-1].startswith("~$")
    assert "building…" in [t for t, _ in cells.badges([running], "sculpture")]


def test_sculpture_badges_palette_and_blend_line() -> None:
    metrics = {"palette": 3, "blend_text": "4/4 joints blend (100%)", "triangles": 1728, "kb": 53}
    sample = _sample(items=[{}] * 5, metrics=metrics)
    texts = [t for t, _ in cells.badges([sample], "sculpture")]
    assert "5 parts" in texts and "3 colours" in texts
    assert cells.blend_line([sample]) == "4/4 joints blend (100%)"
    assert cells.detail_line(sample, "sculpture") == (
        "12,345 out / 1,489 in · 1,728 triangles · 53 KB"
    )


def test_detail_line_truncation_abnormal_stop_and_ignored_effort() -> None:
    truncated = _sample(truncated=True, stop_reason="max_tokens", effort_ignored=True)
    assert cells.detail_line(truncated, "excalidraw") == (
        "12,345 out / 1,489 in · TRUNCATED at 8,000 tokens · effort not accepted"
    )
    refused = _sample(stop_reason="refusal")
    assert "stop=refusal" in cells.detail_line(refused, "text")
    stopped = _sample(status="stopped", stop_reason="cancelled", reason="stopped")
    assert "stop=" not in cells.detail_line(stopped, "text")
    assert cells.problem(stopped) == ""  # the badge says it


def test_a_failed_cell_is_red_and_says_why() -> None:
    failed = _sample(status="failed", error="ProviderError: scripted rate limit", cost_usd="0")
    badges = cells.badges([failed], "text")
    assert badges[0][1] == "red" and ("failed", "red") in badges
    assert cells.problem(failed) == "ProviderError: scripted rate limit"


def test_repeats_show_mean_and_spread() -> None:
    samples = [
        _sample(repeat=0, items=[{}] * 24, wall_s=10.0),
        _sample(repeat=1, items=[{}] * 27, wall_s=12.0),
        _sample(repeat=2, items=[{}] * 31, wall_s=14.0),
    ]
    texts = [t for t, _ in cells.badges(samples, "excalidraw")]
    assert "27.3 elements" in texts and "14s" in texts  # mean size; they ran at once
    assert cells.spread_text(samples, "excalidraw").startswith("3 samples: elements 27 ± 4 (24–31)")


def _view(samples: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    view = {
        "kind": "excalidraw",
        "axis": "effort",
        "cells": samples,
        "wall_s": 12.5,
        "serial_s": 24.9,
        "totals": {"cost_usd": "0.0246"},
        "live": False,
    }
    view.update(fields)
    return view


def test_status_line_finished_running_and_stopped() -> None:
    two = [_sample(cell=0), _sample(cell=1, label="effort=high · 8,000 tok")]
    text, colour = cells.status_line(_view(two))
    assert text == (
        "2/2 variants in 12.5s wall clock (≈24.9s if run one at a time) · 46 elements · "
        "~$0.02 total"
    )
    assert colour == "green"
    running = [_sample(cell=0), _sample(cell=1, status="running", items=[{}] * 4)]
    text, _ = cells.status_line(_view(running, live=True))
    assert text == "Drawing… 1/2 variants finished · 27 elements so far (12s)"
    stopped = [_sample(cell=0, status="stopped"), _sample(cell=1, status="stopped")]
    text, colour = cells.status_line(_view(stopped, stopped=True))
    assert text.startswith("Stopped 2 variants. What was drawn is kept") and colour == "red"
    some = [_sample(cell=0), _sample(cell=1, truncated=True)]
    assert cells.status_line(_view(some))[1] == "yellow"


# -- issue 13: queued cells, honest times, reasoning, wording -----------------------------------


def test_a_queued_cell_says_queued_and_why() -> None:
    local = _sample(model="local/smollm2-135m", status="queued", cost_usd=None, wall_s=0.0)
    texts = [t for t, _ in cells.badges([local], "text")]
    assert "queued" in texts and "writing…" not in texts and "0s" not in texts
    assert cells.detail_line(local, "text") == "queued: local calls run one at a time"
    remote = _sample(model="anthropic/claude-opus-5", status="queued")
    assert cells.detail_line(remote, "text") == "queued: waiting for a free slot"
    assert cells.progress_line(local) == "queued: local calls run one at a time"


def test_a_running_cell_counts_its_thinking_and_estimates_its_prompt() -> None:
    running = _sample(status="running", usage={}, deltas=12, reasoning_deltas=10)
    running["input_estimate"] = 1489
    assert cells.detail_line(running, "text") == "12 out (10 thinking) / ~1,489 in"
    silent = _sample(status="running", usage={}, deltas=0, input_estimate=1489)
    assert cells.detail_line(silent, "text") == "waiting for the first token · ~1,489 in"
    assert cells.thinking_summary(running) == "Thinking… 10 tokens"
    done = _sample(usage={"input_tokens": 9, "output_tokens": 30, "reasoning_tokens": 1})
    assert cells.detail_line(done, "text") == "30 out (1 thinking) / 9 in"
    assert cells.thinking_summary(done) == "Thinking · 1 token"


def test_samples_of_a_local_cell_add_up_and_remote_ones_overlap() -> None:
    local = [_sample(model="local/smollm2-135m", repeat=r, wall_s=2.0) for r in range(3)]
    assert "6s" in [t for t, _ in cells.badges(local, "text")]
    remote = [_sample(model="anthropic/claude-opus-5", repeat=r, wall_s=2.4) for r in range(3)]
    assert "2s" in [t for t, _ in cells.badges(remote, "text")]  # not 7 s against a 2.4 s wall


def test_the_serial_figure_only_when_calls_overlapped() -> None:
    two = [_sample(cell=0), _sample(cell=1, label="effort=high · 8,000 tok")]
    assert "if run one at a time" not in cells.status_line(_view(two, ran_at_once=False))[0]
    assert "(≈24.9s if run one at a time)" in cells.status_line(_view(two, ran_at_once=True))[0]
    local = [_sample(cell=i, model="local/smollm2-135m") for i in range(2)]
    old = _view(local, wall_s=7.7, serial_s=12.0)  # stored before the view said (no key)
    assert "if run one at a time" not in cells.status_line(old)[0]


def test_the_stopped_line_says_what_the_kind_kept() -> None:
    stopped = [_sample(cell=0, status="stopped")]
    text, _ = cells.status_line(_view(stopped, kind="text", stopped=True))
    assert text.startswith("Stopped 1 variant. What was written is kept;")
    assert "drawn" not in text
    text, _ = cells.status_line(_view(stopped, kind="sculpture", stopped=True))
    assert text.startswith("Stopped 1 variant. What was built is kept;")


def test_the_sculpture_progress_line_counts_and_says_what_is_partial() -> None:
    running = _sample(status="running", items=[{}], deltas=40)
    assert cells.progress_line(running).endswith("40 tokens so far · 1 part")
    partial = _sample(status="stopped", items=[{}] * 3, partial=True)
    assert cells.progress_line(partial) == "partial sculpture: the 3 parts that arrived are shown"
    assert cells.progress_line(_sample()) == ""
    one = [_sample(status="running", items=[{}], deltas=40)]
    text, _ = cells.status_line(_view(one, kind="sculpture", live=True))
    assert "· 1 part so far" in text


def test_a_growing_thinking_block_is_patched_not_rebuilt() -> None:
    from dash import Patch, no_update

    from sweepbench.web.cell_cards import _words_state, words_update

    sample = _sample(status="running", text="", reasoning="step1 ", reasoning_deltas=1)
    first = words_update(sample, "text", None)
    assert isinstance(first, list) and len(first) == 2  # the thinking block, the answer
    seen = _words_state(sample, "text")
    assert words_update(sample, "text", seen) is no_update
    grown = {**sample, "reasoning": "step1 step2 ", "reasoning_deltas": 2}
    assert isinstance(words_update(grown, "text", seen), Patch)
    plain = _sample(status="running", text="Lorem", reasoning="")
    assert [type(c).__name__ for c in words_update(plain, "text", None)] == ["Pre"]


def test_a_full_context_is_not_called_a_truncation() -> None:
    full = _sample(truncated=True, stop_reason="max_tokens", provider_reason="context_full")
    line = cells.detail_line(full, "text")
    assert "CONTEXT FULL" in line and "TRUNCATED" not in line
