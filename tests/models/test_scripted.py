"""The scripted model: deterministic output, budgets, faults, cancellation."""

from __future__ import annotations

import asyncio

import pytest

from sweepbench import ErrorKind, Request, TextDelta, UserError
from sweepbench.models import collect, resolve
from sweepbench.models.scripted import ScriptedModel


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


async def test_token_rate_and_first_token_latency(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []  # what the model waits, asked of the clock (nothing is timed)
    real_sleep = asyncio.sleep

    async def sleep(delay: float, result: object = None) -> object:
        if delay > 0:
            waits.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    result = await run("scripted/lorem?words=10&tps=100&ttft=0.2")
    assert result.ttft_s is not None and len(result.text.split()) == 10
    assert waits == [0.2] + [0.01] * 10  # the first-token wait, then 10 tokens at 100/s


async def test_closing_the_stream_closes_the_adapter_at_once() -> None:
    """Model.stream closes the adapter's own generator when its caller closes the stream, so
    an adapter's ``finally`` (which closes the provider connection) runs now, not at GC."""
    closed: list[int] = []

    class Tracked(ScriptedModel):
        async def _stream(self, request: Request, effort: str | None):  # type: ignore[no-untyped-def]
            sent = 0
            try:
                async for event in super()._stream(request, effort):
                    sent += isinstance(event, TextDelta)
                    yield event
            finally:
                closed.append(sent)

    model = Tracked(resolve("scripted/lorem?words=1000&tps=200").info)
    stream = model.stream(Request.simple(model.id, "x"))
    async for event in stream:
        if isinstance(event, TextDelta) and event.text.strip() == "dolor":
            break
    await stream.aclose()
    assert closed == [3]  # closed right away, after exactly the three words delivered


def test_unknown_options_and_models_are_user_errors() -> None:
    with pytest.raises(UserError, match="unknown option"):
        resolve("scripted/echo?speed=9")
    with pytest.raises(UserError, match="scripted/echo"):
        resolve("scripted/nonesuch")
    with pytest.raises(UserError, match="not a number"):
        resolve("scripted/echo?tps=fast")


async def test_demo_models_answer_with_a_packaged_artifact() -> None:
    import json

    request = Request.simple("scripted/sketch?tps=0", "anything", max_tokens=5000)
    sketch = await collect(resolve("scripted/sketch?tps=0"), request)
    assert len(json.loads(sketch.text)["elements"]) == 23
    request = Request.simple("scripted/sculpt?tps=0", "anything", max_tokens=5000)
    sculpt = await collect(resolve("scripted/sculpt?tps=0"), request)
    assert len(json.loads(sculpt.text)["parts"]) == 5
    assert resolve("scripted/sketch").tps == 120  # type: ignore[attr-defined]


def test_an_unknown_fixture_names_the_known_ones() -> None:
    with pytest.raises(UserError, match="known: brazier, diagram"):
        resolve("scripted/echo?fixture=nonesuch")


async def test_guess_answers_in_the_benchmark_format() -> None:
    import json

    english = "Which planet is red?\nA) Venus\nB) Mars\nC) Jupiter\nD) Saturn\nANSWER: [LETTER]"
    first = (await run("scripted/guess", english)).text
    assert first.startswith("ANSWER: ") and first[-1] in "ABCD"
    assert (await run("scripted/guess", english)).text == first  # deterministic
    chinese = (
        "哪个最好？A.甲。B.乙。C.丙。\n\n[Answer Format]\n最后一行必须严格是：答案：[LETTER(S)]"
    )
    assert (await run("scripted/guess", chinese)).text[:3] == "答案："
    assert (await run("scripted/guess", chinese)).text[-1] in "ABC"
    boxed = (await run("scripted/guess", "What is 2+2? Put the answer in \\boxed{}.")).text
    assert boxed.startswith("The answer is \\boxed{") and boxed.endswith("}.")
    assert (await run("scripted/guess", "Explain rain.")).text == "This is a scripted answer."
    schema = {"type": "object", "properties": {
        "judge_result": {"type": "string", "enum": ["safe", "unsafe"]},
        "score": {"type": "number"}, "judge_reason": {"type": "string"}}}  # fmt: skip
    verdict = json.loads((await run("scripted/guess", "grade", response_format=schema)).text)
    assert verdict["judge_result"] in ("safe", "unsafe")
    assert verdict["score"] == (1.0 if verdict["judge_result"] == "safe" else 0.0)
    decision = {"type": "object", "properties": {"judge_result": {"enum": ["pass", "fail"]}}}
    only = json.loads((await run("scripted/guess", "grade", response_format=decision)).text)
    assert set(only) == {"judge_result"}


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("words=300000000", "words='300000000' is out of range"),
        ("words=-1", "out of range"),
        ("words=2.5", "not a whole number"),
        ("ttft=1e9", "ttft='1e9' is out of range: it must be between 0 and 60"),
        ("ttft=nan", "out of range"),
        ("ttft=inf", "out of range"),
        ("tps=-3", "out of range"),
        ("tps=0.001", "too slow"),
        ("retry_after=1e12", "out of range"),
        ("disconnect_after=99999999999", "out of range"),
    ],
)
def test_numeric_options_are_bounded_before_anything_runs(option: str, message: str) -> None:
    # a free model has no price to bound what it costs the machine: its options are bounded
    from sweepbench.models.registry import model_info

    for ask in (model_info, resolve):  # refused before anything is built or run
        with pytest.raises(UserError, match=message):
            ask(f"scripted/lorem?{option}")


async def test_options_at_their_bounds_still_run() -> None:
    result = await run("scripted/lorem?words=100000&tps=0&ttft=0", max_tokens=50)
    assert result.usage.output_tokens == 50 and result.stop_reason == "max_tokens"
