"""Sweeps running in the background of a long-lived process (the web app), with their live
state kept from the runner's own event subscription.

A surface starts a sweep with :meth:`SweepRunner.start` — admission happens there, in the
caller's thread, so a refusal is immediate — and the calls then run on one background event
loop, where they keep running whatever the caller does next (a browser tab may close). Any
thread reads a sweep's state with :func:`SweepRunner.view`: the live state while this process
runs it, the stored document otherwise (another process's sweep, or one that has finished), so
nothing is ever read from another process's memory.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sweepbench.engine.supervisor import Supervisor
from sweepbench.errors import UserError
from sweepbench.models.base import Event, ReasoningDelta, TextDelta, UsageEvent
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.sweeps.history import load_sweep, sample_document, sweep_header, sweep_status
from sweepbench.sweeps.plan import Plan
from sweepbench.sweeps.results import Sample, SweepEvent, SweepResult
from sweepbench.sweeps.run import MAX_RUN_SECONDS, Sweep

KEEP_FINISHED = 32
"""Finished sweeps kept in memory (their final state is in the store regardless)."""
RUNS_PER_VISITOR = 3
"""Sweeps one visitor may have running at once on a shared server (off loopback)."""


@dataclass
class LiveSample:
    """What a sample has produced so far, from its events."""

    items: list[dict[str, Any]] = field(default_factory=list)
    emitted: list[float] = field(default_factory=list)
    """When each item was parsed (``time.time()``), for latency measurements."""
    chunks: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    deltas: int = 0
    """Text and reasoning deltas so far (about one token each)."""
    reasoning_deltas: int = 0
    """The reasoning deltas among them."""
    input_tokens: int = 0
    """Prompt tokens, once the provider has reported them (0 until then)."""

    @property
    def text(self) -> str:
        """The answer so far."""
        return "".join(self.chunks)

    @property
    def reasoning(self) -> str:
        """The visible reasoning so far."""
        return "".join(self.thinking)

    def add(self, event: Event | None) -> None:
        """Fold one model event in: text, reasoning, or a usage report."""
        if isinstance(event, TextDelta):
            self.chunks.append(event.text)
            self.deltas += 1
        elif isinstance(event, ReasoningDelta):
            self.thinking.append(event.text)
            self.deltas += 1
            self.reasoning_deltas += 1
        elif isinstance(event, UsageEvent):
            self.input_tokens = event.usage.input_tokens


class LiveSweep:
    """One sweep run by this process: the runner's handle and the state its events built."""

    def __init__(self, sweep: Sweep, visitor: str | None = None) -> None:
        """Subscribe to ``sweep``'s events (replacing any other subscriber)."""
        self.sweep = sweep
        self.visitor = visitor
        """Who started it on a shared server (their address), for the per-visitor limit."""
        sweep.on_event = self.on_event
        self.samples: dict[tuple[int, int], LiveSample] = {
            (s.cell.index, s.repeat): LiveSample() for s in sweep.samples
        }
        self.version = 0
        """Bumped on every event: a reader that saw this version has seen everything."""
        self.done = False
        self.error: str | None = None
        """Why the run as a whole failed (a refusal raised after admission, a crash)."""
        self.changed = threading.Condition()
        self._input_estimates = {c.cell.index: c.call.input_tokens for c in sweep.estimate.cells}

    @property
    def id(self) -> str:
        """The sweep's id (its row in the store)."""
        return self.sweep.id

    @property
    def result(self) -> SweepResult:
        """The runner's result object, filled in as calls end."""
        return self.sweep.result

    def on_event(self, event: SweepEvent) -> None:
        """The sweep's subscriber (runs on the background loop)."""
        with self.changed:
            live = self.samples[(event.cell_index, event.repeat)]
            if event.items:
                live.items.extend(event.items)
                live.emitted.extend([time.time()] * len(event.items))
            live.add(event.event)
            self._bump()

    def finish(self, error: str | None = None) -> None:
        """Mark the run over (also after a crash)."""
        with self.changed:
            self.done, self.error = True, error
            self._bump()

    def _bump(self) -> None:
        self.version += 1
        self.changed.notify_all()

    def wait(self, version: int, timeout: float) -> int:
        """Block until the state is newer than ``version`` (or ``timeout`` s); the version."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version or self.done, timeout)
            return self.version

    def wait_done(self, timeout: float) -> bool:
        """Block until the run is over (or ``timeout`` s); whether it is."""
        with self.changed:
            return self.changed.wait_for(lambda: self.done, timeout)

    def view(self) -> dict[str, Any]:
        """The sweep as a plain document: the stored format's fields (without binary files)
        plus, per sample, ``items`` (elements or parts so far), ``text``, ``reasoning``,
        ``deltas`` and ``reasoning_deltas`` (tokens so far), ``input_estimate`` (the prompt's
        tokens as estimated, until the provider reports them), and ``ran_at_once`` (whether
        any two calls overlapped)."""
        result = self.result
        with self.changed:
            version, done, error = self.version, self.done, self.error
            samples = [self._sample_view(s) for s in result.samples]
        cost = result.cost_usd
        wall = result.wall_s if done else _elapsed(result.samples)
        return {
            **sweep_header(result),
            "status": _status(result, done, error),
            "stopped": result.stopped or self.sweep.stopping,
            "wall_s": wall,
            "serial_s": result.serial_s,
            "ran_at_once": result.ran_at_once,
            "totals": {"cost_usd": None if cost is None else str(cost)},
            "cells": samples,
            "live": not done,
            "version": version,
            "error": error,
        }

    def _sample_view(self, sample: Sample) -> dict[str, Any]:
        live = self.samples[(sample.cell.index, sample.repeat)]
        document = sample_document(sample, with_files=False)
        document["reasoning"] = sample.result.reasoning if sample.result else live.reasoning
        if sample.result is None:  # still streaming: what the events brought so far
            document["text"] = live.text
            document["usage"]["input_tokens"] = live.input_tokens
        if sample.outcome is None or not document.get("artifact"):
            document["items"] = list(live.items)
        else:
            document["items"] = artifact_items(document["artifact"])
        document["deltas"] = live.deltas
        document["reasoning_deltas"] = live.reasoning_deltas
        document["input_estimate"] = self._input_estimates.get(sample.cell.index, 0)
        document["has_glb"] = bool(sample.outcome and "glb" in sample.outcome.files)
        return document


def artifact_items(artifact: dict[str, Any]) -> list[dict[str, Any]]:
    """The items a viewer shows from a finished artifact: drawing elements or parts."""
    for key in ("elements", "parts"):
        items = artifact.get(key)
        if isinstance(items, list):
            return [i for i in items if isinstance(i, dict)]
    return []


def _elapsed(samples: list[Sample]) -> float:
    starts = [s.started for s in samples if s.started is not None]
    return time.perf_counter() - min(starts) if starts else 0.0


def _status(result: SweepResult, done: bool, error: str | None) -> str:
    if error:
        return "failed"
    return sweep_status(result) if done else "running"


ABANDONED_AFTER_S = MAX_RUN_SECONDS + 300
"""A stored sweep still "running" this long after it started has lost its worker (spec §9.3)."""


def stored_view(document: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """A stored sweep document in the shape of :meth:`LiveSweep.view`. A sweep stored as
    running is live (another process may run it) until it is older than the longest run; then
    it is shown as failed: "worker stopped unexpectedly"."""
    view = dict(document)
    cells = []
    for sample in document.get("cells", []):
        cell = {k: v for k, v in sample.items() if k != "files"}
        cell["items"] = artifact_items(sample.get("artifact") or {})
        cell["deltas"] = cell["reasoning_deltas"] = 0
        cell["has_glb"] = "glb" in (sample.get("files") or {})
        cells.append(cell)
    view["cells"] = cells
    view["live"] = document.get("status") == "running"
    view["version"] = -1
    view["error"] = None
    started = datetime.fromisoformat(document["created"])
    age = ((now or datetime.now(UTC)) - started).total_seconds()
    if document.get("status") == "interrupted":
        view["error"] = "interrupted: the process running it stopped; finished cells are kept"
    elif view["live"] and age > ABANDONED_AFTER_S:
        view["live"], view["status"] = False, "failed"
        view["error"] = "worker stopped unexpectedly"
    return view


class SweepRunner:
    """Runs sweeps on one background event loop for the life of the process."""

    def __init__(self, store: Store, supervisor: Supervisor | None = None) -> None:
        self.store = store
        self.ledger = Ledger(store)
        self._sweeps: dict[str, LiveSweep] = {}
        self._lock = threading.Lock()
        self._owns_supervisor = supervisor is None  # a shared one is closed by its owner
        self._supervisor = supervisor or Supervisor("sweepbench-sweeps")

    def start(
        self,
        plan: Plan,
        *,
        run_limit_usd: Decimal | None = None,
        visitor: str | None = None,
        per_visitor: int = RUNS_PER_VISITOR,
    ) -> LiveSweep:
        """Admit the plan now (raises UserError / BudgetExceeded) and run it in the
        background. ``visitor`` (a shared server's caller, by address) may have at most
        ``per_visitor`` sweeps running at once; None: no such limit (loopback, the CLI)."""
        sweep = Sweep(plan, store=self.store, ledger=self.ledger, run_limit_usd=run_limit_usd)
        live = LiveSweep(sweep, visitor)
        with self._lock:  # counted and admitted under one lock: two clicks cannot both pass
            if visitor is not None:
                mine = sum(1 for s in self._sweeps.values() if s.visitor == visitor and not s.done)
                if mine >= per_visitor:
                    raise UserError(
                        f"you already have {mine} sweep(s) running on this shared server, the "
                        f"most one visitor may run at once; stop one or wait for it to finish"
                    )
            sweep.admit()
            self._sweeps[live.id] = live
            self._forget_old()
        self._supervisor.submit(self._run(live))
        return live

    async def _run(self, live: LiveSweep) -> None:
        try:
            await live.sweep.run()
        except Exception as exc:  # kept for the page; the store has the sweep's last state
            live.finish(f"{type(exc).__name__}: {exc}")
        else:
            live.finish()

    def get(self, sweep_id: str) -> LiveSweep | None:
        """A sweep this process runs or ran recently."""
        with self._lock:
            return self._sweeps.get(sweep_id)

    def view(self, sweep_id: str) -> dict[str, Any]:
        """The sweep's state: live when this process runs it, else the stored document."""
        live = self.get(sweep_id)
        if live is not None:
            return live.view()
        return stored_view(load_sweep(self.store, sweep_id))

    def stop(self, sweep_id: str) -> int:
        """Stop all of one sweep's calls; the number of calls that were not done yet."""
        live = self.get(sweep_id)
        if live is None or live.done:
            return 0
        pending = sum(1 for s in live.sweep.samples if s.status in ("queued", "running"))
        live.sweep.stopping = True
        self._supervisor.call(live.sweep.stop_all)
        return pending

    def file(self, sweep_id: str, position: int, ext: str) -> bytes | None:
        """A binary rendering (``glb``) of the ``position``-th sample, live or stored."""
        live = self.get(sweep_id)
        if live is not None:
            samples = live.result.samples
            if not 0 <= position < len(samples):
                return None
            outcome = samples[position].outcome
            return None if outcome is None else outcome.files.get(ext)
        cells = load_sweep(self.store, sweep_id).get("cells", [])
        if not 0 <= position < len(cells):
            return None
        data = (cells[position].get("files") or {}).get(ext)
        return None if data is None else base64.b64decode(data)

    def recent(self) -> list[LiveSweep]:
        """The sweeps this process holds, oldest first."""
        with self._lock:
            return list(self._sweeps.values())

    def running(self) -> Iterator[LiveSweep]:
        """Sweeps still running here."""
        return (s for s in self.recent() if not s.done)

    def close(self, timeout: float = 5.0) -> None:
        """Stop every running sweep, wait for them to settle, and end the loop when it is this
        runner's own (a supervisor passed in is closed by whoever made it)."""
        for live in list(self.running()):
            self.stop(live.id)
        deadline = time.monotonic() + timeout
        for live in list(self.running()):
            live.wait_done(max(deadline - time.monotonic(), 0.0))
        if self._owns_supervisor:
            self._supervisor.close(timeout)

    def _forget_old(self) -> None:
        finished = [k for k, v in self._sweeps.items() if v.done]
        for key in finished[: max(len(finished) - KEEP_FINISHED, 0)]:
            del self._sweeps[key]
