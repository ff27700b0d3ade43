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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection

from sweepbench.bench.answers import Answer, from_result, verdict_schema
from sweepbench.bench.claims import ItemClaims
from sweepbench.bench.dialogue.bench_item import RETRY_DELAY_S, Taught, teach
from sweepbench.bench.dialogue.flow import DialogueRole
from sweepbench.bench.dialogue.scenario import Scenario, is_dialogue, scenario_for
from sweepbench.bench.dialogue.storage import StoredTurn, read_turns, write_turns
from sweepbench.bench.dialogue.turns import Turn
from sweepbench.bench.followups import second_try
from sweepbench.bench.items import Item, Task
from sweepbench.bench.plan import Limits, run_id_for
from sweepbench.bench.record import dump_record
from sweepbench.bench.record_build import build_record
from sweepbench.bench.report import catalogue_json, session_report
from sweepbench.bench.resume import JUDGE_ERRORS, PreparedRun
from sweepbench.bench.scoring import format_checker, score_answer
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.judge import JUDGE_MAX_TOKENS, judge_messages, parse_verdict
from sweepbench.bench.storage import (
    AnswerRow,
    BenchStore,
    RunRow,
    SpendLine,
    release_run,
    run_is_live,
    stop_reason,
    this_worker,
)
from sweepbench.engine import BatchedRecorder, CallOutcome, CallSpec, Executor, LeaseHolds
from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.retry import RetryPolicy, error_type
from sweepbench.errors import DataError, SweepbenchError, UserError
from sweepbench.models.base import GenerateSettings, Message, Request, Result
from sweepbench.money.ledger import Ledger, SpendRefused
from sweepbench.roles import BENCH_ROLES, Role, label
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
CLAIM_BATCH = 16
"""Items a worker of a shared run claims at a time (``--workers``)."""
"""Answers waiting to be written after which a worker lets the writer run (an instantly
answering model never yields to the event loop on its own)."""


@dataclass
class Progress:
    """Live counters of a run (read by the CLI's progress bar)."""

    run_id: str
    total: int
    """Items this session will try."""
    scored: int = 0
    failed: int = 0
    spent: Decimal = Decimal(0)
    """Spent by the whole run (earlier sessions included)."""
    limit: Decimal | None = None
    resumed: bool = False

    @property
    def done(self) -> int:
        """Items finished this session, scored or failed."""
        return self.scored + self.failed


@dataclass(frozen=True)
class RunOutcome:
    """How a session of a run ended."""

    run_id: str
    status: str
    """``completed``, ``completed_with_errors``, ``paused_budget`` or ``interrupted``."""
    reason: str | None
    scored: int
    """Items scored in the whole run."""
    errors: int
    """Items whose latest attempt failed (they can be retried)."""
    spent: Decimal
    spent_by_role: dict[str, Decimal]
    session_scored: int
    session_failed: int
    wall_s: float
    resumed: bool


class _Stop(Exception):
    """Raised inside a worker when the run must stop making calls."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class BenchRunner:
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
            rate_limits=RateLimits(rpm=request.rpm, tpm=request.tpm), **options,
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
    ) -> None:
        """``call_limits``: per-provider concurrency and rate limits shared with other runs
        (the settings of a benchmark sweep); ``sweep_id``: the sweep this run is a setting of,
        kept in its settings; ``shared``: the run's items are claimed in the store in batches of
        ``claim_batch`` (:mod:`.claims`), so other processes may work on the same run at once
        (``--workers``; a live shared run with these settings is joined); ``on_started(run_id)``
        is called once the run is recorded and its items queued (to start more workers)."""
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
        )  # a shared run's rate limits hold for all its workers together
        self.sweep_id = sweep_id
        self.shared = shared
        self._claim_batch = max(1, claim_batch)
        self._on_started = on_started
        self._claims: ItemClaims | None = None
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
        claimed: list[Item] = []
        worker_id = store_worker(self.store.engine) if self.shared else ""
        if self.shared:
            self._claims = ItemClaims(self.store, self.run_id)
            if not self._joining:  # the session's first worker queues what is left to answer;
                self._claims.clear()  # a joining one only claims (its own snapshot of what
                self._claims.enqueue(list(by_key))  # is left may already be out of date)
        if self._on_started is not None:
            self._on_started(self.run_id)

        def next_item() -> Item | None:
            nonlocal queue_index
            if self._stopping:
                return None
            if self._claims is not None:  # shared: the next items no other worker holds
                if not claimed:
                    keys = self._claims.claim(worker_id, self._claim_batch)
                    unknown = [k for k in keys if k not in by_key]
                    if unknown:  # queued by a worker with another plan: give them back
                        self._claims.release(worker_id, unknown)
                    claimed.extend(by_key[k] for k in keys if k in by_key)
                return claimed.pop(0) if claimed else None
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
                except _Stop as stop:
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

    def _record_start(self) -> None:
        plan = self.plan
        settings = {
            "config": plan.config.as_json(),
            "selection": {
                "preset": plan.selection.preset, "scope": plan.selection.scope,
                "areas": list(plan.selection.areas), "tasks": list(plan.selection.tasks),
            },
            "limits": plan.limits.as_json(),
            "concurrency": self.concurrency,
            "benchmark_name": plan.benchmark.name,
            "benchmark_source": plan.benchmark.source,
            "allow_data_outside": plan.benchmark.data_outside,
            "selected": plan.selected,
            "catalogue": catalogue_json(plan.benchmark),
            "worker": this_worker(),
        }  # fmt: skip
        if self.sweep_id is not None:
            settings["sweep"] = self.sweep_id
        if self.shared:
            settings["claims"] = True
        if self._joining:
            self.runs.join_run(self.run_id)
        elif self.prepared.previous is None:
            self.run_id = self.runs.start_run(
                RunRow(
                    id=self.run_id,
                    config_hash=plan.config.hash,
                    benchmark=plan.benchmark.id,
                    model=plan.config.model,
                    judge=plan.config.judge,
                    status="running",
                    reason=None,
                    created_at=self._created,
                    updated_at=self._created,
                    items=plan.selected,
                    settings=settings,
                )
            )
        else:
            shared: dict[str, Any] = {"claims": True, "joined": []} if self.shared else {}
            self.runs.claim_run(
                self.run_id, limits=settings["limits"], concurrency=self.concurrency,
                worker=settings["worker"],
                benchmark_source=settings["benchmark_source"],  # the data may have moved
                **shared,
            )  # fmt: skip
        self._claimed = True
        self.progress.run_id = self.run_id
        # the run's limits live in the ledger, so every process spending for it is held to them
        limits = plan.limits
        roles: dict[str, Decimal] = {
            r: usd for r in BENCH_ROLES if (usd := limits.for_role(r)) is not None
        }
        self.ledger.set_limits(self.run_id, limits.total, roles)

    def _finish(self, wall_s: float) -> RunOutcome:
        if self.shared and not self.runs.leave_run(self.run_id):
            return self._still_shared(wall_s)  # other workers go on: the last one ends the run
        counts = self.runs.counts(self.run_id)  # one grouped count, not every key
        scored = counts.get("scored", 0)
        errors = sum(counts.values()) - scored
        unasked = self.plan.selected - scored - errors
        if self._stop_status is not None:
            status, reason = self._stop_status
        elif unasked > 0:  # --retry-failed retried the errors; these were never asked
            status = "interrupted"
            reason = f"{unasked} item(s) not asked yet: run without --retry-failed to answer them"
        elif errors:
            status, reason = "completed_with_errors", f"{errors} item(s) hit errors"
        else:
            status, reason = "completed", None
        spent = dict(self._spent)
        if self.shared:  # every worker's answers, and what the dead ones held is settled now
            self.ledger.reap_dead()
            spent = {**spent, **self.runs.spent(self.run_id)}
        stored = self.runs.run(self.run_id)
        before = float(stored.settings.get("wall_s", 0.0)) if stored is not None else 0.0
        self.runs.set_status(
            self.run_id, status, reason, spent=_money_json(spent), wall_s=round(before + wall_s, 3)
        )  # the wall time of every session that ended (one killed outright is not counted)
        self._write_record()
        return RunOutcome(
            run_id=self.run_id,
            status=status,
            reason=reason,
            scored=scored,
            errors=errors,
            spent=sum(spent.values(), Decimal(0)),
            spent_by_role=spent,
            session_scored=self.progress.scored,
            session_failed=self.progress.failed,
            wall_s=wall_s,
            resumed=self.prepared.previous is not None,
        )

    def _still_shared(self, wall_s: float) -> RunOutcome:
        """This worker's session of a shared run, ended while other workers go on."""
        counts = self.runs.counts(self.run_id)
        scored = counts.get("scored", 0)
        spent = dict(self._spent)
        return RunOutcome(
            run_id=self.run_id,
            status="running",
            reason="this worker is done; the run goes on in its other workers",
            scored=scored,
            errors=sum(counts.values()) - scored,
            spent=sum(spent.values(), Decimal(0)),
            spent_by_role=spent,
            session_scored=self.progress.scored,
            session_failed=self.progress.failed,
            wall_s=wall_s,
            resumed=self.prepared.previous is not None,
        )

    def _write_record(self) -> None:
        """Store the run's record (scores with intervals, coverage, spend by role, prices), so
        nothing later recomputes every answer's bootstrap to show it. A record that cannot be
        built is logged, never a failed run: the answers are what counts."""
        try:
            prices = self.executor.prices()
            report = session_report(self.store, self.run_id, self.plan.benchmark)
            record = build_record(report, self.plan, prices=prices)
            self.runs.set_record(self.run_id, dump_record(record))
        except Exception:
            log.exception("could not write the record of run %s", self.run_id)

    # -- one item ----------------------------------------------------------------------------

    async def _process(self, item: Item) -> None:
        task = self._tasks[item.task]
        if is_dialogue(task):
            await self._teach(task, item)
            return
        stored = self.prepared.regrade.get(item.key)
        if stored is not None:
            answer = Answer(
                text=stored["answer"], stop_reason=stored["stop_reason"] or "end",
                attempts=stored["attempts"], input_tokens=stored["input_tokens"],
                output_tokens=stored["output_tokens"],
                reasoning_tokens=stored["reasoning_tokens"], latency_ms=stored["latency_ms"] or 0,
            )  # fmt: skip
        else:
            answer = await self._answer(task, item)
        if answer.error is not None:
            self._queue(
                self._failure(item, error_type(answer.error), str(answer.error), answer=answer)
            )
            return
        if task.needs_judge:
            await self._judge(task, item, answer)
            return
        self._queue(self._auto_scored(task, item, answer))

    def _auto_scored(self, task: Task, item: Item, answer: Answer) -> AnswerRow:
        """The row of an answer checked by its task's rule (a scoring error is a failure)."""
        try:
            score = score_answer(task, item, answer.text)
        except SweepbenchError as exc:
            return self._failure(item, "scoring_error", str(exc), answer=answer)
        return self._scored(item, answer, score, judge=None)

    async def _answer(self, task: Task, item: Item) -> Answer:
        """Ask the model under test (with retries), then once more where spec §10.3 says so:
        a choice answer without a letter, or a math answer cut by the length limit."""
        config = self.plan.config
        messages = ((Message("system", item.system),) if item.system else ()) + (
            Message("user", item.prompt),
        )
        settings = self._answer_settings
        if item.sample:
            settings = replace(settings, sample=item.sample)
        request = Request(config.model, messages, settings)
        result, attempts = await self._call("target", request, item.key)
        answer = from_result(result, attempts, self._scrub)
        if answer.error is not None:
            return answer
        check = format_checker(task, item)
        if check is not None and not check(result.text):
            answer.format_valid = False
        second = second_try(task, item, messages, result, config.max_tokens, check)
        if second is None:
            return answer
        if settings.effort or settings.temperature is not None or settings.sample:
            # the follow-up is asked with the setting's own knobs, as the first try was
            knobs = replace(
                second.settings, effort=settings.effort, temperature=settings.temperature,
                sample=settings.sample,
            )  # fmt: skip
            second = replace(second, settings=knobs)
        try:
            retried, more = await self._call("target", second, item.key)
        except _Stop as stop:  # a limit or Stop between the tries: the paid answer stands
            self._halt(stop.status, stop.reason)
            return answer
        except asyncio.CancelledError:  # stopped during the second try: keep the first
            self._queue(self._auto_scored(task, item, answer))
            raise
        again = from_result(retried, attempts + more, self._scrub)
        if again.error is None and (check is None or check(again.text)):
            return again.after(answer)
        answer.attempts = again.attempts  # the first answer stands; both tries are counted
        return answer.after(again)

    async def _judge(self, task: Task, item: Item, answer: Answer) -> None:
        """Grade with the judge model; an unparseable verdict is retried once, then kept as a
        failure with the raw text (never a silent 0)."""
        config = self.plan.config
        assert config.judge is not None and task.judge is not None
        decision = config.decision_judge
        messages = judge_messages(task, item, answer.text, decision=decision)
        schema = verdict_schema(task, decision)
        request = Request(
            config.judge,
            messages,
            GenerateSettings(max_tokens=self._judge_max_tokens(), temperature=0.0,
                             response_format=schema),
        )  # fmt: skip
        raw = ""
        for _ in range(2):
            try:
                result, _attempts = await self._call("judge", request, item.key)
            except _Stop as stop:
                self._queue(self._failure(item, "judge_not_run", stop.reason, answer=answer))
                raise
            except asyncio.CancelledError:  # stopped while grading: keep the paid-for answer
                reason = "stopped before the judge answered"
                self._queue(self._failure(item, "judge_not_run", reason, answer=answer))
                raise
            if result.error is not None:
                self._queue(self._failure(item, "judge_error", str(result.error), answer=answer))
                return
            raw = result.text
            verdict = parse_verdict(raw, task.judge, decision=decision)
            if verdict is not None:
                self._queue(self._scored(item, answer, verdict, judge=config.judge))
                return
        self._queue(
            self._failure(
                item, "judge_unparseable", "the judge's reply was not a usable verdict",
                answer=answer, raw_judge=raw,
            )
        )  # fmt: skip

    async def _teach(self, task: Task, item: Item) -> None:
        """A teaching item: its dialogue played on from the turns already stored (each new turn
        is stored with its call's row, in the group commit), then evaluated (``bench.dialogue``).
        A stop mid-dialogue stores no answer: a resume continues the dialogue."""
        try:
            scenario = scenario_for(task)
        except DataError as exc:
            self._queue(self._failure(item, "data_error", str(exc)))
            return
        config = self.plan.config
        judge = config.judge or config.model
        models: dict[DialogueRole, str] = {
            "teacher": config.model, "student": config.models.get("student", judge),
            "evaluator": judge,
        }  # fmt: skip
        student_limit = self.executor.model(models["student"]).info.max_output_tokens
        budgets: dict[DialogueRole, int] = {
            "teacher": config.max_tokens,
            "student": min(config.max_tokens, student_limit or config.max_tokens),
            "evaluator": self._judge_max_tokens(),
        }

        def on_turn(index: int, turn: Turn) -> None:
            self._pending_turns.append(StoredTurn(item.key, index, turn))
            self._wake.set()

        turns = read_turns(self.store, self.run_id, item.key)
        taught = await teach(
            scenario, item, models=models, budgets=budgets, call=self._call, turns=turns,
            on_turn=on_turn, retry_delay_s=self._dialogue_retry_delay_s,
            temperature=config.temperature,
        )  # fmt: skip
        self._queue(self._taught_row(item, scenario, taught, judge))

    def _taught_row(self, item: Item, scenario: Scenario, taught: Taught, judge: str) -> AnswerRow:
        """The answer row of a taught item: the transcript, the evaluation's mean and items."""
        tally = taught.tally
        answer = Answer(
            text=self._scrub(taught.text(scenario)), stop_reason=taught.dialogue.ended or "end",
            attempts=max(tally.attempts, 1), input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens, reasoning_tokens=tally.reasoning_tokens,
            latency_ms=tally.latency_ms,
        )  # fmt: skip
        meta = taught.metadata(scenario, item)
        evaluation = taught.evaluation
        if evaluation is None:
            return self._failure(
                item, taught.error_type or "judge_error", taught.error or "no evaluation",
                answer=answer, raw_judge=taught.raw_evaluation,
            )  # fmt: skip
        if evaluation.score is None:  # ELBench's "unknown": counted, never a pass
            reason = f"{scenario.id}: unknown (the evaluation held no readable score)"
            value = 0.0
        else:
            reason = f"{scenario.id}: mean {evaluation.score:.2f} (pass at {scenario.threshold:g})"
            value = evaluation.score
        if evaluation.vetoed:
            reason += "; vetoed for role confusion"
        score = Score(value, evaluation.result, evaluation.passed, reason, meta)
        row = self._scored(item, answer, score, judge=judge)
        row.raw_judge = self._scrub(evaluation.raw)
        return row

    def _judge_max_tokens(self) -> int:
        judge = self.executor.model(self.plan.config.judge or "")
        limit = judge.info.max_output_tokens
        return min(JUDGE_MAX_TOKENS, limit) if limit else JUDGE_MAX_TOKENS

    # -- calls and money ---------------------------------------------------------------------

    async def _call(
        self, role: Role, request: Request, key: str, retry: RetryPolicy | None = None
    ) -> tuple[Result, int]:
        """One call through the engine (its retries included); returns the last result and the
        attempts made. Raises _Stop when the run must stop: a ceiling or limit refused the
        call's hold (the refusal names it), or the key is out of credit or refused."""
        if self._stopping:
            raise _Stop(*(self._stop_status or ("interrupted", "stopped")))
        spec = CallSpec(request, role, run_id=self.run_id, key=key, retry=retry)
        try:
            outcome = await self.executor.execute(spec)
        except SpendRefused as refused:
            raise _Stop("paused_budget", str(refused)) from None
        self._account(role, request.model, outcome, key)
        if outcome.halt is not None:
            raise _Stop("interrupted", outcome.halt)
        if outcome.stopped_at_limit:  # the item is asked again when the run continues
            raise _Stop(
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

    # -- records -----------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return self.executor.scrub(text)

    def _scored(self, item: Item, answer: Answer, score: Score, *, judge: str | None) -> AnswerRow:
        meta = dict(score.metadata)
        if not answer.format_valid or not score.format_valid:
            meta["format_valid"] = False
        return AnswerRow(
            key=item.key, task=item.task, dimension=item.dimension, status="scored",
            answer=answer.text, stop_reason=answer.stop_reason, score=float(score.score),
            passed=bool(score.passed), result=score.result, reason=self._scrub(score.reason),
            judge=judge, score_metadata=meta or None, attempts=answer.attempts,
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
            reasoning_tokens=answer.reasoning_tokens, latency_ms=answer.latency_ms,
            retries=self._retries.pop(item.key, None),
        )  # fmt: skip

    def _failure(
        self,
        item: Item,
        error_type: str,
        message: str,
        *,
        answer: Answer | None = None,
        raw_judge: str | None = None,
    ) -> AnswerRow:
        return AnswerRow(
            key=item.key, task=item.task, dimension=item.dimension, status="failed",
            answer=None if answer is None or answer.error else answer.text,
            stop_reason=None if answer is None else answer.stop_reason,
            error_type=error_type, error=self._scrub(message),
            raw_judge=None if raw_judge is None else self._scrub(raw_judge),
            judge=self.plan.config.judge if error_type in JUDGE_ERRORS else None,
            attempts=1 if answer is None else answer.attempts,
            input_tokens=0 if answer is None else answer.input_tokens,
            output_tokens=0 if answer is None else answer.output_tokens,
            reasoning_tokens=0 if answer is None else answer.reasoning_tokens,
            latency_ms=None if answer is None else answer.latency_ms,
            retries=self._retries.pop(item.key, None),
        )  # fmt: skip

    def _queue(self, row: AnswerRow) -> None:
        self._pending_answers.append(row)
        if row.status == "scored":
            self.progress.scored += 1
        else:
            self.progress.failed += 1
        self._wake.set()
        if self.on_progress is not None:
            self.on_progress(self.progress)

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

        self.runs.write(self.run_id, answers, spend, also=calls_and_money)


def _money_json(spent: dict[str, Decimal]) -> dict[str, str]:
    return {role: str(usd) for role, usd in spent.items()}
