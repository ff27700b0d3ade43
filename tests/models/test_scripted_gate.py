"""The scripted model's gate (``gate=NAME``, ``gate_after=K``, ``gate_at=T``): calls wait for a
file, so a test waits for a state instead of racing the clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sweepbench import Request, TextDelta, UserError
from sweepbench.models import collect, resolve, scripted
from sweepbench.models.scripted import gate_path


def _call(model_id: str) -> asyncio.Task[object]:
    model = resolve(model_id)
    return asyncio.ensure_future(collect(model, Request.simple(model_id, "one two three")))


async def _spin(turns: int = 20) -> None:
    """Let the event loop run every ready task a number of times (no clock involved)."""
    for _ in range(turns):
        await asyncio.sleep(0)


async def test_a_call_waits_at_a_shut_gate_until_its_file_exists(isolated_home: Path) -> None:
    path = gate_path("go")
    assert path == isolated_home / "gates" / "go"
    call = _call("scripted/echo?gate=go")
    await asyncio.sleep(3 * scripted.GATE_POLL_S)  # several looks at the gate: still shut
    assert not call.done()
    path.parent.mkdir(parents=True)
    path.touch()
    result = await asyncio.wait_for(call, 120)  # a state wait: it ends once the call does
    assert result.text == "one two three"  # type: ignore[attr-defined]


async def test_gate_after_lets_the_first_calls_of_a_process_through(isolated_home: Path) -> None:
    model_id = "scripted/echo?gate=later&gate_after=2"
    first = await collect(resolve(model_id), Request.simple(model_id, "a"))
    second = await collect(resolve(model_id), Request.simple(model_id, "b"))
    assert (first.text, second.text) == ("a", "b")  # neither waited: no file was ever made
    third = _call(model_id)
    await asyncio.sleep(3 * scripted.GATE_POLL_S)
    assert not third.done()
    third.cancel()  # a stop reaches a call waiting at the gate
    await _spin()
    assert third.cancelled()


async def test_gate_at_streams_the_first_tokens_then_waits(isolated_home: Path) -> None:
    model = resolve("scripted/echo?gate=mid&gate_at=2")
    seen: list[str] = []
    two = asyncio.Event()

    async def read() -> None:
        async for event in model.stream(Request.simple("m", "one two three four")):
            if isinstance(event, TextDelta):
                seen.append(event.text)
                if len(seen) == 2:
                    two.set()

    reading = asyncio.ensure_future(read())
    await asyncio.wait_for(two.wait(), 120)  # the first two tokens come at once
    await asyncio.sleep(3 * scripted.GATE_POLL_S)  # several looks at the gate: still shut
    assert len(seen) == 2 and not reading.done()
    gate_path("mid").parent.mkdir(parents=True)
    gate_path("mid").touch()
    await asyncio.wait_for(reading, 120)
    assert "".join(seen).split() == ["one", "two", "three", "four"]


async def test_a_gate_that_never_opens_fails_the_call(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted, "GATE_MAX_S", 0.0)
    result = await collect(resolve("scripted/echo?gate=never"), Request.simple("m", "x"))
    assert result.stop_reason == "error" and result.error is not None
    assert "gate 'never' did not open" in str(result.error)


@pytest.mark.parametrize(
    ("model_id", "message"),
    [
        ("scripted/echo?gate=../escape", "not a plain name"),
        ("scripted/echo?gate=/etc/passwd", "not a plain name"),
        ("scripted/echo?gate_after=3", "gate_after needs gate"),
        ("scripted/echo?gate_at=3", "gate_at needs gate"),
        ("scripted/echo?gate=go&gate_after=-1", "out of range"),
    ],
)
def test_a_gate_is_a_plain_name_under_the_home(model_id: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        resolve(model_id)
