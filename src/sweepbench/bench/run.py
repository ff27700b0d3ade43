"""The benchmark runner: answer every planned item, score it, store it as it completes.

Every call — answer, second try, grade — goes through the engine's :class:`Executor`, which holds
its worst case in the shared ledger (a lease per run, role and model), takes the provider's and
model's concurrency and rate limits, records it as a ``calls`` row, scrubs it, times it out and
retries it. This module decides *which* calls to make:

- **Workers**: a fixed pool takes items in order; a choice answer without an extractable letter
  gets one format reminder, a math answer cut by the limit one request for the boxed answer
  (spec §10.3).
- **Money**: the run's limits (total and per role, spec §7) are ledger scopes set at start; a call
  whose worst case no longer fits is refused and the run ends ``paused_budget`` with the
  refusal, which names the limit. Calls in flight finish.
- **Quota**: an out-of-credit or rejected-key error stops new calls (the rest are skipped, not
  failed) and ends the run ``interrupted``.
- **Control**: ``stop()`` (Ctrl-C) ends the session ``interrupted``, keeping every finished
  answer; so does a stop request recorded in the store by another process or machine
  (``sweepbench bench stop``), which the writer looks for at least every :data:`STOP_CHECK_S`.
- **Storage**: answers, scores, spend lines, the calls rows and the settlement of finished leases
  go to the store in group commits, so a crash loses at most the answers of one commit; a
  resumed run answers exactly the items not stored. The run's record is written at the end.
- **Resume** (see :mod:`.resume`): a run is identified by the hash of its settings; running the
  same settings again continues the newest unfinished run (claimed atomically: never by two
  sessions); ``retry_failed`` re-runs only the items that errored (a judge failure is
  re-graded without asking the model again).

One item's calls and the answer row they end in are :mod:`.run_items`; how a session is recorded
at its start and end, :mod:`.run_session`; what a run reports, :mod:`.run_progress`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection

from sweepbench.bench.claims import ClaimedItems, ItemClaims
from sweepbench.bench.dialogue.bench_item import RETRY_DELAY_S
from sweepbench.bench.dialogue.storage import StoredTurn, write_turns
from sweepbench.bench.items import Item, Task
from sweepbench.bench.plan import run_id_for
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run_config import Limits
from sweepbench.bench.run_items import ItemAnswering, StopRun
from sweepbench.bench.run_liveness import release_run, run_is_live
from sweepbench.bench.run_progress import Progress, RunOutcome
from sweepbench.bench.run_session import SessionRecording
from sweepbench.bench.storage import BenchStore, stop_reason
from sweepbench.bench.storage_rows import AnswerRow, SpendLine
from sweepbench.engine import BatchedRecorder, CallOutcome, CallSpec, Executor, LeaseHolds
from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.retry import RetryPolicy
from sweepbench.errors import UserError
from sweepbench.models.base import GenerateSettings, Request, Result
from sweepbench.models.routes import DEFAULT_ROUTE, RoutePolicy
from sweepbench.money.ledger import Ledger, SpendRefused
from sweepbench.roles import Role, label
from sweepbench.store import Store
from sweepbench.store.workers import this_worker as store_worker

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest

log = logging.getLogger(__name__)

HEARTBEAT_S = 15.0
"""A running run's row is touched at least this often, so that another process can tell a
live run (do not resume it twice) from one whose worker died."""
STOP_CHECK_S = 1.0
"""A running run looks for a stop request recorded in the store (``sweepbench bench stop``, from
any process or machine) at least this often, and at most every :data:`STOP_POLL_S` between
group commits: one read of its row by its key."""
STOP_POLL_S = 0.25
WRITE_BATCH = 512
"""Answers waiting to be written after which a worker lets the writer run (an instantly
answering model never yields to the event loop on its own)."""
CLAIM_BATCH = 16
"""Items a worker of a shared run (``--workers``) claims first, and at least, at a time; a
fast worker claims more (:class:`~sweepbench.bench.claims.ClaimSizes`)."""


class BenchRunner(ItemAnswering, SessionRecording):
    """Runs one session of a prepared run. ``await runner.run()`` returns the outcome;
    ``runner.stop()`` (from a signal handler or another task) ends it early, keeping every
    finished answer."""

    @classmethod
    def for_request(
        cls, prepared: PreparedRun, store: Store, request: BenchRequest, **options: Any
    ) -> BenchRunner:
        """The runner of a prepared request, with the request's concurrency, unpriced-model
        acceptance and rate limits (every surface starts a run this way); ``options`` are
        the constructor's others (``shared``, ``on_started``, …)."""
        return cls(
            prepared, store, concurrency=request.concurrency,
            accept_unpriced=request.accept_unpriced,
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm), route=request.route,
            **options,
        )  # fmt: skip

    def __init__(
        self,
        prepared: PreparedRun,
        store: Store,
        *,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
        accept_unpriced: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
        seed: int | None = None,
        rate_limits: RateLimits | None = None,
        dialogue_retry_delay_s: float = RETRY_DELAY_S,
        call_limits: CallLimits | None = None,
        sweep_id: str | None = None,
        shared: bool = False,
        claim_batch: int = CLAIM_BATCH,
        on_started: Callable[[str], None] | None = None,
        route: RoutePolicy = DEFAULT_ROUTE,
    ) -> None:
        """``call_limits``: per-provider concurrency and rate limits shared with other runs
        (the settings of a benchmark sweep); ``sweep_id``: the sweep this run is a setting of,
        kept in its settings; ``shared``: the run's items are claimed in the store in batches of
        ``claim_batch`` (:mod:`.claims`), so other processes may work on the same run at once
        (``--workers``; a live shared run with these settings is joined); ``on_started(run_id)``
        is called once the run is recorded and its items queued (to start more workers);
        ``route``: how OpenRouter models' calls are routed among their hosts."""
        plan = prepared.plan
        if not plan.ok:
            problems = (*plan.errors, *plan.blocked, *plan.limit_problems)
            raise UserError("This run can't start yet: " + "; ".join(problems))
        if plan.needs_price_ack and not accept_unpriced:
            raise UserError(next(n for n in plan.notes if n.startswith("No cost estimate")))
        if not 1 <= concurrency <= 1000:
            raise UserError(f"concurrency must be between 1 and 1000, not {concurrency}")
        self.prepared = prepared
        self.plan = plan
        self.store = store
        self.runs = BenchStore(store)
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.on_progress = on_progress
        self.ledger = Ledger(store)
        self._holds = LeaseHolds(self.ledger)
        self._recorder = BatchedRecorder(store)
        self.executor = Executor(
            store,
            ledger=self.ledger,
            holds=self._holds,
            recorder=self._recorder,
            retry=self.retry,
            concurrency=concurrency,
            rate_limits=rate_limits,
            seed=seed,
            limits=call_limits
            if call_limits is not None or not shared
            else CallLimits(concurrency, rate_limits, shared_in=store.engine),
            route=route,
        )  # a shared run's rate limits hold for all its workers together
        self.sweep_id = sweep_id
        self.shared = shared
        self._claim_batch = max(1, claim_batch)
        self._on_started = on_started
        self._claims: ItemClaims | None = None
        self._claimed_items: ClaimedItems[Item] | None = None
        previous = prepared.previous
        self._joining = bool(
            shared and previous is not None and previous.settings.get("claims")
            and run_is_live(previous)
        )  # fmt: skip
        self._tasks: dict[str, Task] = {t.id: t for t in plan.tasks}
        self._limits: Limits = plan.limits
        self._spent: dict[str, Decimal] = {r.role: r.spent for r in plan.roles}
        self._stopping = False
        self._claimed = False
        self._stop_status: tuple[str, str] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._pending_answers: list[AnswerRow] = []
        self._pending_spend: list[SpendLine] = []
        self._pending_turns: list[StoredTurn] = []
        self._dialogue_retry_delay_s = dialogue_retry_delay_s
        self._wake = asyncio.Event()
        self._writer_done = False
        self._retries: dict[str, list[dict[str, Any]]] = {}
        self._answer_settings = GenerateSettings(
            max_tokens=plan.config.max_tokens,
            effort=plan.config.effort,
            temperature=plan.config.temperature,
        )
        previous = prepared.previous
        started = datetime.now(UTC)
        self.run_id = previous.id if previous else self._new_run_id(started)
        self._created = started
        self.progress = Progress(
            run_id=self.run_id,
            total=len(plan.items),
            spent=sum(self._spent.values(), Decimal(0)),
            limit=plan.limits.total,
            resumed=previous is not None,
        )

    def _new_run_id(self, started: datetime) -> str:
        base = run_id_for(self.plan.config, started.strftime("%Y%m%d-%H%M%S"))
        run_id, n = base, 1
        while self.runs.exists(run_id):
            n += 1
            run_id = f"{base}-{n}"
        return run_id

    # -- control -----------------------------------------------------------------------------

    def stop(self, reason: str = "stopped early by you") -> None:
        """Stop: no new calls, calls in flight cancelled, finished answers kept."""
        self._halt("interrupted", reason)
        for worker in self._workers:
            worker.cancel()

    def _cancel_others(self) -> None:
        """Cancel every other worker's call in flight (each is settled at what it produced,
        and its item asked again when the run continues)."""
        current = asyncio.current_task()
        for worker in self._workers:
            if worker is not current:
                worker.cancel()

    def _halt(self, status: str, reason: str) -> None:
        """No new calls from now on; the first reason given is the one reported."""
        if self._stop_status is None:
            self._stop_status = (status, reason)
        self._stopping = True

    # -- the run -----------------------------------------------------------------------------

    async def run(self) -> RunOutcome:
        """Run the session to its end and return how it ended."""
        started = time.perf_counter()
        try:
            self._record_start()
        except BaseException:
            if self._claimed:
                release_run(self.run_id)
            raise
        items = list(self.plan.items)
        queue_index = 0
        by_key = {item.key: item for item in items} if self.shared else {}
        worker_id = store_worker(self.store.engine) if self.shared else ""
        if self.shared:
            self._claims = ItemClaims(self.store, self.run_id)
            self._claimed_items = ClaimedItems(self._claims, worker_id, by_key, self._claim_batch)
            if not self._joining:  # the session's first worker queues what is left to answer;
                self._claims.clear()  # a joining one only claims (its own snapshot of what
                self._claims.enqueue(list(by_key))  # is left may already be out of date)
        if self._on_started is not None:
            self._on_started(self.run_id)

        def next_item() -> Item | None:
            nonlocal queue_index
            if self._stopping:
                return None
            if self._claimed_items is not None:  # shared: the next items no other worker holds
                return self._claimed_items.next()
            if queue_index >= len(items):
                return None
            item = items[queue_index]
            queue_index += 1
            return item

        async def worker() -> None:
            while (item := next_item()) is not None:
                if len(self._pending_answers) >= WRITE_BATCH:
                    await asyncio.sleep(0)  # let the writer take a batch while we go on
                try:
                    await self._process(item)
                except StopRun as stop:
                    self._halt(stop.status, stop.reason)
                    if stop.status == "paused_budget":  # no waiting on calls in flight
                        self._cancel_others()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a bug or bad data in one item never stops the run
                    log.exception("item %s failed unexpectedly", item.key)
                    self._queue(
                        self._failure(item, "internal_error", f"{type(exc).__name__}: {exc}")
                    )

        writer = asyncio.create_task(self._writer())
        self._workers = [
            asyncio.create_task(worker()) for _ in range(min(self.concurrency, max(len(items), 1)))
        ]
        try:
            await asyncio.gather(*self._workers, return_exceptions=True)
        finally:
            self._holds.close_all()  # every lease settles with the last batch
            self._writer_done = True
            self._wake.set()
            await writer
            self._flush()
            await self.executor.aclose()
            if self._claims is not None:  # what this worker claimed and did not answer
                self._claims.release(worker_id)
        try:
            return self._finish(time.perf_counter() - started)
        finally:
            release_run(self.run_id)
            self._claimed = False

    # -- calls and money ---------------------------------------------------------------------

    async def _call(
        self, role: Role, request: Request, key: str, retry: RetryPolicy | None = None
    ) -> tuple[Result, int]:
        """One call through the engine (its retries included); returns the last result and the
        attempts made. Raises StopRun when the run must stop: a ceiling or limit refused the
        call's hold (the refusal names it), or the key is out of credit or refused."""
        if self._stopping:
            raise StopRun(*(self._stop_status or ("interrupted", "stopped")))
        spec = CallSpec(request, role, run_id=self.run_id, key=key, retry=retry)
        try:
            outcome = await self.executor.execute(spec)
        except SpendRefused as refused:
            raise StopRun("paused_budget", str(refused)) from None
        self._account(role, request.model, outcome, key)
        if outcome.halt is not None:
            raise StopRun("interrupted", outcome.halt)
        if outcome.stopped_at_limit:  # the item is asked again when the run continues
            raise StopRun(
                "paused_budget",
                f"the {label(role)}'s answer was stopped at the limit: what is left held only "
                "part of its worst case, and the answer went past it (it is asked again when "
                "the run continues with more money)",
            )
        return outcome.result, outcome.attempts

    def _account(self, role: Role, model: str, outcome: CallOutcome, key: str) -> None:
        """Count a call's cost against its role and queue its spend line (the ledger itself
        settles through the leases, in the same group commit)."""
        if outcome.retries:
            self._retries.setdefault(key, []).extend(outcome.retries)
        usd = outcome.cost_usd
        if usd is not None:
            self._spent[role] = self._spent.get(role, Decimal(0)) + usd
            self.progress.spent += usd
        if usd != 0:  # a $0 call (local, scripted) has no money to account for
            source = outcome.price_source or ""
            kind = (
                "unpriced"
                if usd is None
                else "reported"
                if source.startswith("reported")
                else "computed"
            )
            self._pending_spend.append(
                SpendLine(key, role, model, outcome.input_tokens, outcome.output_tokens,
                          outcome.reasoning_tokens, usd, kind)
            )  # fmt: skip

    # -- group commit ------------------------------------------------------------------------

    async def _writer(self) -> None:
        """Write whatever finished, one transaction at a time. On the event loop's own thread:
        a batch takes milliseconds, and a writer thread competing with busy workers for the
        GIL was measured ~50× slower per row (it waits for the GIL after every row)."""
        beat = checked = time.monotonic()
        while True:
            with contextlib.suppress(TimeoutError):  # a heartbeat while nothing finishes
                await asyncio.wait_for(self._wake.wait(), min(HEARTBEAT_S, STOP_CHECK_S))
            self._wake.clear()
            pending = self._pending_answers or self._pending_spend or self._pending_turns
            if pending or self._recorder.pending:
                self._flush()
                beat = time.monotonic()
                await asyncio.sleep(0)  # workers go on between batches
            elif not self._writer_done and time.monotonic() - beat >= HEARTBEAT_S:
                self.runs.touch(self.run_id)
                beat = time.monotonic()
            if not self._writer_done and time.monotonic() - checked >= STOP_POLL_S:
                checked = time.monotonic()
                self._check_stop_request()
            waiting = self._pending_answers or self._pending_spend or self._pending_turns
            if self._writer_done and not waiting:
                return

    def _check_stop_request(self) -> None:
        """Stop as Ctrl-C does when another process recorded a stop request for this run."""
        if self._stopping:
            return
        try:
            request = self.runs.stop_request(self.run_id)
        except Exception:  # a failed read never stops the run: the next check tries again
            log.warning("could not read the stop request of run %s", self.run_id, exc_info=True)
            return
        if request is not None:
            self.stop(stop_reason(request))

    def _flush(self) -> None:
        """Write what is waiting — answers, spend lines, the calls' rows and the settlement of
        every lease whose calls have ended — in one transaction."""
        answers, spend = self._pending_answers, self._pending_spend
        turns = self._pending_turns
        self._pending_answers, self._pending_spend, self._pending_turns = [], [], []

        def calls_and_money(conn: Connection) -> None:
            self._recorder.write_in(conn)
            write_turns(conn, self.run_id, turns)
            self._holds.settle_in(conn)
            if self._claims is not None:  # answered: off the queue, in the answers' commit
                self._claims.finish(conn, (a.key for a in answers))
            if self._claimed_items is not None and not self._stopping:
                self._claimed_items.top_up(conn)  # more claims under the same write lock

        try:
            self.runs.write(self.run_id, answers, spend, also=calls_and_money)
        except BaseException:
            if self._claimed_items is not None:
                self._claimed_items.rolled_back()
            raise
        if self._claimed_items is not None:
            self._claimed_items.committed()
