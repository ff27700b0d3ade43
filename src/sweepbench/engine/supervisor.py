"""The supervisor: hosts runs in the background of a long-lived process (the web app) on one
event loop thread, so a run keeps going whatever the request that started it does next. Sweeps
use it today, benchmarks next. Pages read a run's progress from the store (or, while this
process runs it, from the run's own event subscription), never from another process's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any


class Supervisor:
    """One background event loop for the life of the process."""

    def __init__(self, name: str = "sweepbench-runs") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()
        self._closed = False

    def submit(self, run: Coroutine[Any, Any, Any]) -> Future[Any]:
        """Start ``run`` on the background loop; returns its future. The run starts in an
        empty context: a task copies the context it is created in, so one started from a web
        request would otherwise keep that request (its body, the web framework's callback
        state) alive for as long as the run or any timer it set."""
        if self._closed:
            run.close()
            raise RuntimeError("the supervisor is closed")
        return contextvars.Context().run(asyncio.run_coroutine_threadsafe, run, self._loop)

    def call(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the background loop soon (a Stop, from any thread)."""
        self._loop.call_soon_threadsafe(callback)

    def close(self, timeout: float = 5.0) -> None:
        """End the loop (stop the runs first: this does not wait for them)."""
        if self._closed:
            return
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        with contextlib.suppress(RuntimeError):
            self._loop.close()
