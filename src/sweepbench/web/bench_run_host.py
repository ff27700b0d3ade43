"""Benchmark runs started from the Run a benchmark page, hosted on the app's background loop
(:attr:`WebContext.supervisor`): a run goes on when its tab closes, and the page reads its
progress from the store.

A visitor's key reaches only that run's calls: the run's coroutine holds it in a
:func:`~sweepbench.settings.run_keys` block (the supervisor starts each run in an empty
context, and the tasks the run creates inherit the block's), and while the block lasts the key
is on the scrubber's list. It is never written, logged or sent back; when the run ends the
block ends and the key is dropped.

A run started with ``publish_to`` (the visitor ticked "Add my results to the shared
leaderboard") publishes its scrubbed bundle there when it ends, still inside that block, so
the key is on the scrubber's list and the bundle code refuses anything key-shaped. A publish
that fails is said (scrubbed) and never touches the run.

The host remembers the last :data:`KEEP_ENDED` ended runs (how publishing went, an error);
an older one is read from the store as a run started by another process is.

At most ``SWEEPBENCH_MAX_HOSTED_RUNS`` runs (default 1) go on at once on one host; a later
start waits in a queue, in order, and the page says how many runs are ahead of it. A queued
run is only memory: its runner is built (so its id is known and a refusal is said at once)
but nothing is recorded, and its key stays in the waiting coroutine's own ``run_keys`` block.
Stop on a queued run removes it: it never starts, records, spends or answers, and its key is
wiped. Runs started by other processes (the CLI) are not counted; Stop on one of them records
a stop request in the store, which that run's session sees within about a second."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_liveness import run_is_live
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import STOP_VIA_PAGE, BenchStore
from sweepbench.engine.supervisor import Supervisor
from sweepbench.errors import UserError
from sweepbench.settings import run_keys, scrub
from sweepbench.store import Store
from sweepbench.variables import MAX_HOSTED_RUNS
from sweepbench.web.context import WebContext

KEEP_ENDED = 64
"""Ended runs this host remembers (what became of publishing them, their error), newest kept;
older ones are read from the store like runs started by another process."""
START_WAIT_S = 15.0
"""How long a start waits for its run to be recorded (its id known) before answering."""
MAX_HOSTED_ENV = MAX_HOSTED_RUNS.name
DEFAULT_MAX_HOSTED = MAX_HOSTED_RUNS.default

log = logging.getLogger(__name__)


def max_hosted_runs() -> int:
    """How many runs one host runs at once (``SWEEPBENCH_MAX_HOSTED_RUNS``, a whole number of
    at least 1; unset: 1). A bad value is warned about and the default used."""
    return MAX_HOSTED_RUNS.value()


@dataclass
class HostedRun:
    """One run this process hosts."""

    run_id: str
    resumed: bool
    runner: BenchRunner | None = None
    outcome: RunOutcome | None = None
    error: str | None = None
    """Why the run could not go on (scrubbed), when it ended on an error."""
    done: threading.Event = field(default_factory=threading.Event)
    publish_to: str | None = None
    """The shared place the visitor chose to publish to; None: they opted out."""
    published: str | None = None
    """Where the run's bundle was written, once it was."""
    publish_error: str | None = None
    """Why publishing failed (scrubbed); the run itself is kept as it is."""
    config_hash: str = ""
    queued: bool = False
    """Waiting for a free place on the host (nothing recorded yet)."""
    removed: bool = False
    """Stopped while queued: it never started."""
    slot: asyncio.Event = field(default_factory=asyncio.Event)
    """Set on the host's loop when the run may start (or was removed)."""


@dataclass(frozen=True)
class Progress:
    """A run's progress as the store has it (spec §8.2)."""

    scored: int
    failed: int
    spent: Decimal
    limit: Decimal | None
    running: bool
    resumed: bool


class BenchRunHost:
    """The runs started from one app's page."""

    def __init__(self, store: Store, supervisor: Supervisor) -> None:
        self.store = store
        self.supervisor = supervisor
        self._runs: dict[str, HostedRun] = {}
        self._lock = threading.Lock()
        self.max_runs = max_hosted_runs()
        self._running = 0
        """Runs holding a place (started, or admitted and about to)."""
        self._waiting: list[HostedRun] = []
        """Queued runs, first in first out."""

    def start(
        self,
        prepared: PreparedRun,
        request: BenchRequest,
        keys: Mapping[str, str],
        *,
        publish_to: str | None = None,
    ) -> HostedRun:
        """Start ``prepared`` in the background with ``keys`` (provider → key) for its calls
        only; returns once the run is recorded (UserError: it could not start). With
        ``publish_to`` (a folder or an fsspec URL) the run's bundle is published there when
        the run ends."""
        config_hash = prepared.plan.config.hash
        with self._lock:
            busy = next(
                (r.run_id for r in self._runs.values()
                 if not r.done.is_set() and r.config_hash == config_hash),
                None,
            )  # fmt: skip
        if busy is not None:
            raise UserError(
                f"A run with these settings is already running or queued here ({busy}): "
                f"open /benchmarks?run={busy} to watch it."
            )
        started = threading.Event()
        box: dict[str, Any] = {}
        held = dict(keys)  # the coroutine's own copy: the caller drops its reference

        async def host() -> None:
            with run_keys(held):
                try:
                    runner = BenchRunner.for_request(prepared, self.store, request)
                except Exception as exc:  # refused by the runner: say why, scrubbed
                    held.clear()
                    box["error"] = scrub(str(exc))
                    started.set()
                    return
                hosted = HostedRun(
                    runner.run_id, runner.progress.resumed, runner, publish_to=publish_to,
                    config_hash=config_hash,
                )  # fmt: skip
                with self._lock:
                    self._runs.pop(hosted.run_id, None)  # a continued run: newest last
                    self._runs[hosted.run_id] = hosted
                    self._forget_ended()
                    if self._running < self.max_runs and not self._waiting:
                        self._running += 1
                    else:
                        hosted.queued = True
                        self._waiting.append(hosted)
                box["hosted"] = hosted
                started.set()
                holds_place = False
                try:
                    if hosted.queued:
                        await hosted.slot.wait()
                    if hosted.removed:  # stopped while queued: never started
                        await runner.executor.aclose()
                        return
                    holds_place = True
                    try:
                        hosted.outcome = await runner.run()
                    except Exception as exc:  # e.g. another session holds these settings
                        hosted.error = scrub(f"{exc}")
                    if hosted.outcome is not None and publish_to is not None:
                        await self._publish(hosted, publish_to)
                finally:
                    held.clear()
                    hosted.runner = None
                    if holds_place or not hosted.removed:
                        self._release(hosted)
                    hosted.done.set()

        self.supervisor.submit(host())
        if not started.wait(START_WAIT_S):
            raise UserError("the run did not start in time; open the page again to see it")
        if "error" in box:
            raise UserError(box["error"])
        hosted: HostedRun = box["hosted"]
        return hosted

    def _forget_ended(self) -> None:
        """Keep at most :data:`KEEP_ENDED` ended runs (the oldest go; the store has them), so
        a long-lived server does not hold every run it ever hosted. Called with the lock."""
        ended = [run_id for run_id, r in self._runs.items() if r.done.is_set()]
        for run_id in ended[: max(len(ended) - KEEP_ENDED, 0)]:
            del self._runs[run_id]

    def _release(self, hosted: HostedRun) -> None:
        """Give up ``hosted``'s place (on the host's loop) and start the next queued runs."""
        with self._lock:
            if hosted in self._waiting:  # cancelled while it waited
                self._waiting.remove(hosted)
                return
            self._running = max(0, self._running - 1)
            admitted = []
            while self._running < self.max_runs and self._waiting:
                job = self._waiting.pop(0)
                job.queued = False
                self._running += 1
                admitted.append(job)
        for job in admitted:
            job.slot.set()

    def ahead(self, run_id: str) -> int | None:
        """How many runs are ahead of a queued run (the runs going on here and those queued
        before it); None when it is not queued."""
        with self._lock:
            for index, job in enumerate(self._waiting):
                if job.run_id == run_id:
                    return self._running + index
        return None

    async def _publish(self, hosted: HostedRun, destination: str) -> None:
        """Publish an ended run (in a worker thread, which runs in a copy of this context:
        the run's key is still on the scrubber's list); a failure is kept, scrubbed."""
        try:
            hosted.published = await asyncio.to_thread(self.publish, hosted.run_id, destination)
        except Exception as exc:  # said on the page; the run is kept as it is
            hosted.publish_error = scrub(f"{exc}")

    def publish(self, run_id: str, destination: str) -> str:
        """Write the run's scrubbed bundle (answer texts included, spec §12) under
        ``destination``; the file's path or URL. UserError when it cannot be built or
        written (a bundle holding anything key-shaped never is)."""
        from sweepbench.leaderboard.bundle import build_bundle, write_bundle

        bundle = build_bundle(BenchStore(self.store), run_id, answers=True)
        return write_bundle(bundle, destination)

    def hosted(self, run_id: str) -> HostedRun | None:
        """The run this process hosts under ``run_id``."""
        with self._lock:
            return self._runs.get(run_id)

    def live(self) -> list[str]:
        """The ids of the runs going on here now, newest last."""
        with self._lock:
            return [r.run_id for r in self._runs.values() if not r.done.is_set()]

    def latest(self) -> str | None:
        """The newest run started here (live or not)."""
        with self._lock:
            return next(reversed(self._runs), None) if self._runs else None

    def stop(self, run_id: str) -> bool:
        """Ask a live run to stop (finished answers kept), or take a queued one out of the
        queue (it never starts; its key is wiped); a run live in another process is asked
        through the store. False when it is not running anywhere."""
        with self._lock:
            queued = next((j for j in self._waiting if j.run_id == run_id), None)
            if queued is not None:
                self._waiting.remove(queued)
                queued.queued = False
                queued.removed = True
        if queued is not None:
            self.supervisor.call(queued.slot.set)
            return True
        hosted = self.hosted(run_id)
        runner = hosted.runner if hosted is not None else None
        if runner is None:
            return self._stop_elsewhere(run_id)
        self.supervisor.call(runner.stop)
        return True

    def _stop_elsewhere(self, run_id: str) -> bool:
        """A run not hosted here but live in another process (the CLI, another app, another
        machine): record a stop request in the store, which its session sees within about a
        second (as ``sweepbench bench stop`` does). False when it is not running anywhere."""
        try:
            asked = BenchStore(self.store).request_stop(run_id, via=STOP_VIA_PAGE)
        except UserError:  # an ambiguous id: nothing to stop
            return False
        return asked is not None and asked[1]

    def stop_all(self, timeout: float) -> None:
        """The app is closing: take every queued run out (never started, keys wiped), stop
        every live one (finished answers kept, leases settled) and wait up to ``timeout``
        seconds for them to end."""
        with self._lock:
            waiting = list(self._waiting)
            live = [r for r in self._runs.values() if not r.done.is_set()]
        for job in waiting:
            self.stop(job.run_id)
        for hosted in live:
            self.stop(hosted.run_id)
        deadline = time.monotonic() + timeout
        for hosted in live:
            hosted.done.wait(max(deadline - time.monotonic(), 0.0))

    def progress(self, run_id: str) -> Progress | None:
        """The run's progress from the store (None: no such run). A run hosted here that has
        left the queue but not yet written its row is running, with nothing done yet: the
        page polls it from the moment Run is pressed and never takes it for a missing run."""
        runs = BenchStore(self.store)
        run = runs.run(run_id)
        if run is None:
            hosted = self.hosted(run_id)
            if hosted is None or hosted.done.is_set():
                return None
            return Progress(0, 0, Decimal(0), None, running=True, resumed=hosted.resumed)
        statuses = runs.statuses(run_id)
        scored = sum(1 for s in statuses.values() if s == "scored")
        failed = sum(1 for s in statuses.values() if s == "failed")
        spent = sum(runs.spent(run_id).values(), Decimal(0))
        total = (run.settings.get("limits") or {}).get("total")
        hosted = self.hosted(run_id)
        live = hosted is not None and not hosted.done.is_set()
        if hosted is None:  # started by another process (or before a restart): its heartbeat
            live = run_is_live(run)
        return Progress(
            scored=scored,
            failed=failed,
            spent=spent,
            limit=None if total in (None, "") else Decimal(str(total)),
            running=live,
            resumed=bool(hosted and hosted.resumed),
        )


_HOSTS: weakref.WeakKeyDictionary[Supervisor, BenchRunHost] = weakref.WeakKeyDictionary()
_HOSTS_LOCK = threading.Lock()


def host_for(context: WebContext) -> BenchRunHost:
    """The one host of an app (keyed by its background loop: nothing global is shared
    between apps); closing the app stops its runs (:meth:`BenchRunHost.stop_all`)."""
    with _HOSTS_LOCK:
        host = _HOSTS.get(context.supervisor)
        if host is None:
            host = _HOSTS[context.supervisor] = BenchRunHost(context.store, context.supervisor)
            context.on_close(host.stop_all)
        return host
