"""The benchmark sweeps this app is running: each one's runner, hosted on the app's background
loop (:attr:`WebContext.supervisor`), so a sweep goes on when the tab that started it closes.

One registry per app (keyed by its supervisor, nothing global across apps): the Benchmark
sweep page finds a running sweep's live counters here, and a stored sweep (finished, or run by
another process) in the store; only the last :data:`KEEP_ENDED` ended sweeps stay here. Stop
on a sweep run by another process records a stop request for each of its settings' runs in the
store (as ``sweepbench bench sweeps stop`` does)."""

from __future__ import annotations

import contextlib
import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from sweepbench.bench.storage import STOP_VIA_PAGE
from sweepbench.bench.sweeps.run import BenchSweepRunner, SweepOutcome, request_sweep_stop
from sweepbench.engine.supervisor import Supervisor
from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.web.context import WebContext

KEEP_ENDED = 8
"""Ended sweeps a registry keeps (each holds its runner: its plan, benchmark and outcomes);
older ones are read from the store, as a sweep run by another process is."""


@dataclass
class LiveSweep:
    """One sweep started from a page in this process."""

    runner: BenchSweepRunner
    future: Future[Any]
    stopping: bool = False

    @property
    def done(self) -> bool:
        """Its session ended (finished, stopped, paused at a limit or failed)."""
        return self.future.done()

    def outcome(self) -> SweepOutcome | None:
        """How it ended (None: still running, or it failed: see :meth:`problem`)."""
        if not self.future.done() or self.future.exception() is not None:
            return None
        result = self.future.result()
        return result if isinstance(result, SweepOutcome) else None

    def problem(self) -> str | None:
        """Why the session failed, if it raised."""
        if not self.future.done():
            return None
        error = self.future.exception()
        return None if error is None else f"{type(error).__name__}: {error}"


class LiveSweeps:
    """The sweeps one app hosts, by sweep id."""

    def __init__(self, supervisor: Supervisor, store: Store | None = None) -> None:
        """``store``: where a sweep run by another process is asked to stop."""
        self.supervisor = supervisor
        self.store = store
        self._lock = threading.Lock()
        self._live: dict[str, LiveSweep] = {}

    def start(self, runner: BenchSweepRunner) -> LiveSweep:
        """Host ``runner.run()`` on the background loop; UserError when this sweep is running
        already (the same settings continue the same sweep)."""
        with self._lock:
            current = self._live.get(runner.sweep_id)
            if current is not None and not current.done:
                raise UserError(f"sweep {runner.sweep_id} is running already")
            live = LiveSweep(runner, self.supervisor.submit(runner.run()))
            self._live.pop(runner.sweep_id, None)  # newest last
            self._live[runner.sweep_id] = live
            self._forget_ended()
            return live

    def _forget_ended(self) -> None:
        """Keep at most :data:`KEEP_ENDED` ended sweeps (the oldest go; the store has them).
        Called with the lock."""
        ended = [sweep_id for sweep_id, live in self._live.items() if live.done]
        for sweep_id in ended[: max(len(ended) - KEEP_ENDED, 0)]:
            del self._live[sweep_id]

    def get(self, sweep_id: str | None) -> LiveSweep | None:
        """The sweep hosted here under ``sweep_id`` (None: not started in this process)."""
        if not sweep_id:
            return None
        with self._lock:
            return self._live.get(sweep_id)

    def stop(self, sweep_id: str | None) -> bool:
        """Stop every setting of a running sweep (answers kept): hosted here, directly; run by
        another process, through a stop request in the store. False when none runs."""
        live = self.get(sweep_id)
        if live is None or live.done:
            return self._stop_elsewhere(sweep_id)
        live.stopping = True
        self.supervisor.call(live.runner.stop)
        return True

    def _stop_elsewhere(self, sweep_id: str | None) -> bool:
        if not sweep_id or self.store is None:
            return False
        try:
            asked = request_sweep_stop(self.store, sweep_id, via=STOP_VIA_PAGE)
        except UserError:
            return False
        return asked is not None and any(recorded for _run, recorded in asked)

    def stop_all(self, timeout: float) -> None:
        """Stop every running sweep and wait up to ``timeout`` seconds for them to settle (the
        app is closing: their answers are kept and the same sweep continues later)."""
        with self._lock:
            running = [live for live in self._live.values() if not live.done]
        for live in running:
            live.stopping = True
            self.supervisor.call(live.runner.stop)
        for live in running:
            with contextlib.suppress(Exception):
                live.future.result(timeout=timeout)


_REGISTRIES: weakref.WeakKeyDictionary[Supervisor, LiveSweeps] = weakref.WeakKeyDictionary()
_REGISTRIES_LOCK = threading.Lock()


def live_sweeps(context: WebContext) -> LiveSweeps:
    """The registry of ``context``'s app (one per supervisor, made on first use)."""
    with _REGISTRIES_LOCK:
        found = _REGISTRIES.get(context.supervisor)
        if found is None:
            found = _REGISTRIES[context.supervisor] = LiveSweeps(context.supervisor, context.store)
            context.on_close(found.stop_all)
        return found
