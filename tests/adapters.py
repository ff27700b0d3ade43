"""Helpers shared by the adapter tests: run a call through the public path."""

from __future__ import annotations

from typing import Any

from sweepbench import Request, Result, TextDelta
from sweepbench.models import collect, resolve  # a bare adapter: these tests are of adapters
from sweepbench.models.routes import RoutePolicy
from tests.servers import FakeServer


async def run(
    model_id: str, prompt: str = "Hello?", *, route: RoutePolicy | None = None, **settings: Any
) -> Result:
    """Resolve (its calls routed so: ``models.registry.resolve``), stream to the end, close
    the adapter."""
    model = resolve(model_id, route=route)
    try:
        return await collect(model, Request.simple(model_id, prompt, **settings))
    finally:
        await model.aclose()


async def cancel_after(model_id: str, srv: FakeServer, deltas: int = 3) -> int:
    """Read a few text deltas of a slow stream, close it, and return how many were read;
    the caller checks that the server saw the disconnect."""
    srv.slow(chunks=400, delay=0.02)
    model = resolve(model_id)
    stream = model.stream(Request.simple(model_id, "Tell me a long story"))
    got = 0
    try:
        async for event in stream:
            got += isinstance(event, TextDelta)
            if got >= deltas:
                break
    finally:
        await stream.aclose()
        await model.aclose()
    return got
