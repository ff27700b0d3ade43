"""The scripted model: deterministic output, budgets, faults, cancellation."""

from __future__ import annotations

import asyncio
import time

import pytest

from sweepbench import ErrorKind, Request, TextDelta, UserError, collect, resolve


async def run(model_id: str, prompt: str = "one two three four five", **settings: object):
    model = resolve(model_id)
    return await collect(model, Request.simple(model_id, prompt, **settings))


async def test_echo_repeats_the_prompt_with_usage() -> None:
    result = await run("scripted/echo")
    assert result.text == "one two three four five"
    assert result.stop_reason == "end"
    assert result.usage.input_tokens == 5
    assert result.usage.output_tokens == 5


async def test_budget_truncates_with_max_tokens() -> None:
    result = await run("scripted/lorem?words=50", max_tokens=7)
    assert result.stop_reason == "max_tokens"
    assert result.usage.output_tokens == 7
    assert len(result.text.split()) == 7


async def test_effort_adds_reasoning_that_counts_against_the_budget() -> None:
    low = await run("scripted/lorem?words=40", effort="low")
    high = await run("scripted/lorem?words=40", effort="high")
    assert low.usage.reasoning_tokens == 10
    assert high.usage.reasoning_tokens == 40
    assert high.usage.output_tokens == 80
    assert low.text == high.text


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, ErrorKind.RETRYABLE), (401, ErrorKind.AUTH), (402, ErrorKind.QUOTA)],
)
async def test_faults_end_the_stream_with_a_classified_error(status: int, kind: ErrorKind) -> None:
    result = await run(f"scripted/echo?fail={status}&retry_after=3")
    assert result.stop_reason == "error"
    assert result.error is not None
    assert result.error.kind is kind
    assert result.error.status == status
    assert result.error.retry_after == 3.0


async def test_disconnect_keeps_what_was_produced() -> None:
    result = await run("scripted/lorem?words=30&disconnect_after=4")
    assert result.stop_reason == "error"
    assert result.error is not None and result.error.retryable
    assert len(result.text.split()) == 4
    assert result.usage.output_tokens == 4


async def test_refusal() -> None:
    result = await run("scripted/echo?refuse=1")
    assert result.stop_reason == "refusal"
    assert result.text == ""


async def test_token_rate_and_first_token_latency() -> None:
    start = time.perf_counter()
    result = await run("scripted/lorem?words=10&tps=100&ttft=0.2")
    elapsed = time.perf_counter() - start
    assert result.ttft_s is not None and result.ttft_s >= 0.2
    assert elapsed >= 0.2 + 0.09  # 10 tokens at 100/s after the first-token wait


async def test_closing_the_stream_stops_generation() -> None:
    model = resolve("scripted/lorem?words=1000&tps=200")
    stream = model.stream(Request.simple(model.id, "x"))
    got = 0
    async for event in stream:
        got += isinstance(event, TextDelta)
        if got == 3:
            break
    await stream.aclose()
    await asyncio.sleep(0)
    assert got == 3


def test_unknown_options_and_models_are_user_errors() -> None:
    with pytest.raises(UserError, match="unknown option"):
        resolve("scripted/echo?speed=9")
    with pytest.raises(UserError, match="scripted/echo"):
        resolve("scripted/nonesuch")
    with pytest.raises(UserError, match="not a number"):
        resolve("scripted/echo?tps=fast")
