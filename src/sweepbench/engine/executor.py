"""The executor: the one way a model call is made.

For each call, in order: check the settings (bad ones fail before any row or traffic); work out
its worst case (the prompt at its token upper bound plus the whole output budget, at the model's
price); hold that in the ledger under the call's run and role (a $0 call holds nothing); take the
concurrency and rate limits of its provider and model; stream it through the recorder (the row
before traffic, a total timeout, cancellable — closing the stream closes the provider
connection); reject impossible usage; scrub every text; record the outcome; settle at the actual
cost; retry by policy (``retry-after`` honoured; quota and key errors stop the run, never
retried). ``generate``, sweep cells, benchmark answers and judges all come through here, so every
call keeps the same promises.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

from pydantic_core import to_json

from sweepbench.engine import cut
from sweepbench.engine.holds import Hold, Holds, PerCallHolds
from sweepbench.engine.limits import CallLimits
from sweepbench.engine.ratelimit import RateLimits
from sweepbench.engine.recorder import CallValues, ImmediateRecorder, Recorder
from sweepbench.engine.retry import RetryPolicy, error_type
from sweepbench.engine.usage import anomaly_source, implausible_cost, impossible_usage
from sweepbench.errors import ErrorKind, ProviderError
from sweepbench.models.base import (
    Event,
    Finish,
    Model,
    ReasoningDelta,
    Request,
    Result,
    TextDelta,
)
from sweepbench.models.registry import resolve
from sweepbench.models.routes import DEFAULT_ROUTE, RoutePolicy
from sweepbench.models.tokens import messages_token_bound
from sweepbench.money.ceilings import usd_to_micro
from sweepbench.money.ledger import Ledger
from sweepbench.money.prices import MILLION, Price, call_cost, price_for
from sweepbench.roles import Role
from sweepbench.settings import scrub, secret_values
from sweepbench.store import Store
from sweepbench.stream_scrub import StreamScrubber

log = logging.getLogger(__name__)

EventCallback = Callable[[Event], None]
DEFAULT_TIMEOUT_S = 600.0
"""A benchmark call's total deadline (benchmarks spec §10.1, §15.1)."""
INTERACTIVE_TIMEOUT_S = 3600.0
"""A sweep cell's or a generation's (sweeps spec §9.1)."""
_WORST_KNOWN = 4096
"""Lanes an executor remembers, and worst cases and costs a lane remembers."""
CUT_REASON = "stopped at the limit"
"""The ``provider_reason`` of a call whose stream the executor cut at its hold."""
_ZERO = Decimal(0)
_NO_HOLD = Hold(_ZERO)
"""What a free call holds: nothing."""


@dataclass(frozen=True)
class CallSpec:
    """One call to make: the request, who it is for, and where it belongs."""

    request: Request
    role: Role
    run_id: str | None = None
    """The sweep or benchmark run (the ledger's scope); None for a lone generation."""
    key: str | None = None
    """The benchmark item or sweep sample it is made for (stored with the call)."""
    timeout_s: float | None = None
    """Total deadline of one attempt; None: the executor's default."""
    retry: RetryPolicy | None = None
    """This call's retry policy (a teaching dialogue's fixed interval); None: the executor's."""


@dataclass
class CallOutcome:
    """What a call came to, over all its attempts (filled in as it goes, so a stopped call's
    outcome is there too)."""

    result: Result
    attempts: int = 0
    cost_usd: Decimal | None = Decimal(0)
    """Every attempt's actual cost; None when the model has no price."""
    price_source: str | None = None
    call_ids: list[str] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)
    """Each retry: attempt, role, wait before the next, error type, error (scrubbed)."""
    halt: str | None = None
    """Set when the run must stop making calls: the key ran out of credit or was refused."""
    stopped_at_limit: bool = False
    """The call held less than its worst case and its stream was cut at its hold
    (``engine/cut.py``): its answer is incomplete, not to be scored; ask it again later."""
    input_tokens: int = 0
    """Tokens of every attempt (what was billed), not only the last one's."""
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def call_id(self) -> str | None:
        """The last attempt's ``calls`` row."""
        return self.call_ids[-1] if self.call_ids else None


class _DeltaScrubber:
    """One call's deltas as they may be recorded and shown: each key the process knows
    replaced, a key split across deltas too (``stream_scrub.StreamScrubber``, one for the
    answer and one for the reasoning). A delta may come out shorter (or empty) while a tail is
    held back; what is held comes out just before the stream's Finish."""

    def __init__(self, secrets: list[str]) -> None:
        self.text = StreamScrubber(secrets)
        self.reasoning = StreamScrubber(secrets)

    def events(
        self, event: Event, scrub_error: Callable[[ProviderError], ProviderError]
    ) -> list[Event]:
        """The events to record and hand on for ``event``."""
        if isinstance(event, TextDelta):
            return [TextDelta(self.text.feed(event.text))]
        if isinstance(event, ReasoningDelta):
            return [ReasoningDelta(self.reasoning.feed(event.text))]
        if isinstance(event, Finish):
            done = event if event.error is None else replace(event, error=scrub_error(event.error))
            return [*self.flush(), done]
        return [event]

    def flush(self) -> list[Event]:
        """Deltas for what is still held back (none when nothing is)."""
        out: list[Event] = []
        if rest := self.reasoning.flush():
            out.append(ReasoningDelta(rest))
        if rest := self.text.flush():
            out.append(TextDelta(rest))
        return out


class _Deadline:
    """One attempt's total deadline (see :class:`_Deadlines`)."""

    __slots__ = ("cancelling", "fired", "task", "uncancelled", "when")

    def __init__(self, when: float, task: asyncio.Task[Any], cancelling: int) -> None:
        self.when = when
        self.task = task
        self.cancelling = cancelling
        """The task's pending cancellations when the deadline was armed."""
        self.fired = False
        self.uncancelled = False

    def expired(self) -> bool:
        """Whether the deadline cancelled the task, and nothing else did: take our
        cancellation back (as ``asyncio.timeout`` does) and say so."""
        if not self.fired or self.uncancelled:
            return False
        self.uncancelled = True
        return self.task.uncancel() <= self.cancelling


class _Deadlines:
    """Every attempt's total deadline on one timer of the executor's loop, set for the earliest
    deadline armed, instead of an ``asyncio.timeout`` (a timer and a context) per attempt. A
    deadline that passes cancels its attempt's task; the attempt takes that cancellation back
    and fails with a retryable "no complete answer" error, while a cancellation from outside
    (a Stop) propagates as before.

    The timer serves a batch of calls: it stays set while calls come one after another (an
    instantly answering model's calls never overlap, so "no deadline armed" falls between every
    two), and goes once the loop turns with no deadline armed — left set, it would keep this
    executor's loop holding a timer up to an hour away."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._armed: set[_Deadline] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._idle_check = False

    def arm(self, when: float, loop: asyncio.AbstractEventLoop) -> _Deadline:
        """A deadline at ``when`` (the loop's time) for the current task's attempt."""
        if loop is not self._loop:  # an executor used under a new loop (asyncio.run again)
            self._loop, self._armed, self._timer, self._idle_check = loop, set(), None, False
        task = asyncio.current_task(loop)
        assert task is not None
        deadline = _Deadline(when, task, task.cancelling())
        self._armed.add(deadline)
        if self._timer is None or when < self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = when
            self._timer = loop.call_at(when, self._expire)
        return deadline

    def disarm(self, deadline: _Deadline) -> None:
        """The attempt's stream is over; a fired deadline's cancellation is taken back. With no
        deadline left, the timer is cancelled once the loop turns without a new one."""
        armed = self._armed
        armed.discard(deadline)
        if deadline.fired and not deadline.uncancelled:
            deadline.uncancelled = True
            deadline.task.uncancel()
        if not armed and not self._idle_check and self._timer is not None:
            self._idle_check = True
            assert self._loop is not None
            self._loop.call_soon(self._idle)

    def _idle(self) -> None:
        self._idle_check = False
        if not self._armed and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        loop = self._loop
        assert loop is not None
        self._timer = None
        now = max(loop.time(), self._timer_at)
        earliest: float | None = None
        for deadline in self._armed:
            if deadline.fired:
                continue
            if deadline.when <= now:
                deadline.fired = True
                deadline.task.cancel()
            elif earliest is None or deadline.when < earliest:
                earliest = deadline.when
        if earliest is not None:
            self._timer_at = earliest
            self._timer = loop.call_at(earliest, self._expire)


class _Lane:
    """What every call of one model with one settings object shares, resolved once: the
    adapter, its checked settings and applied effort, its prices, its limits, its settings as
    recorded, its worst cases and costs. A benchmark's thousands of calls share one settings
    object, so they share one lane; a sweep cell or a generation has a lane of its own (the
    same code, a batch of one)."""

    __slots__ = (
        "costs", "effort", "floor_ok", "held", "max_tokens", "model", "model_id", "price",
        "provider", "settings", "settings_json", "slot", "worst",
    )  # fmt: skip

    def __init__(self, executor: Executor, request: Request) -> None:
        model = executor.model(request.model)
        self.model = model
        self.model_id = model.id
        self.provider = model.info.provider
        self.settings = request.settings
        self.effort = model.check(request)  # bad settings fail here, before any row or hold
        self.max_tokens = model.max_tokens(request)
        self.price = executor.price(model)
        self.held = executor.held_price(model)
        applied = model.info.resolve_effort(request.settings.effort, strict=False)
        self.floor_ok = self.held is not None and model.streams_what_it_bills(applied)
        as_json = {k: v for k, v in asdict(request.settings).items() if v is not None}
        self.settings_json = to_json(as_json).decode("utf-8")
        self.slot = executor.limits.slot(model)
        self.worst: dict[int, tuple[Decimal | None, int, Decimal | None]] = {}
        """prompt bound → worst case, in micro-dollars rounded up, and floor."""
        self.costs: dict[tuple[int, int, int, int], tuple[Decimal, str | None, int]] = {}
        """Usage (input, output, cache read, cache write tokens) → cost, price source and
        micro-dollars (half up): a benchmark's costs repeat."""

    def worst_case(self, bound: int) -> tuple[Decimal | None, int, Decimal | None]:
        """The call's worst case at ``bound`` prompt tokens (None: no price), in micro-dollars,
        and its floor (``engine/cut.py``; None: it holds its whole worst case)."""
        known = self.worst.get(bound)
        if known is None:
            held = self.held
            if held is None:
                known = (None, 0, None)
            else:
                worst = (bound * held.input + self.max_tokens * held.output) / MILLION
                floor = (
                    cut.floor_usd(bound, self.max_tokens, held) if worst and self.floor_ok else None
                )
                known = (worst, usd_to_micro(worst, up=True), floor)
            if len(self.worst) >= _WORST_KNOWN:
                self.worst.clear()
            self.worst[bound] = known
        return known


class Executor:
    """Makes calls for one surface or run. Holds the models it resolved, their concurrency and
    rate limits, the retry policy, the recorder and the money strategy; share one per run (or
    per process, for the web app's sweeps)."""

    def __init__(
        self,
        store: Store,
        *,
        ledger: Ledger | None = None,
        holds: Holds | None = None,
        recorder: Recorder | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        rate_limits: RateLimits | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        seed: int | None = None,
        limits: CallLimits | None = None,
        route: RoutePolicy = DEFAULT_ROUTE,
    ) -> None:
        """``limits``: concurrency and rate limits shared with other executors (a benchmark
        sweep's settings share one set per provider); None makes this executor its own from
        ``concurrency`` and ``rate_limits``. ``route``: how OpenRouter models' calls are routed
        among their hosts (:mod:`sweepbench.models.routes`)."""
        self.route = route
        self.store = store
        self.ledger = ledger if ledger is not None else Ledger(store)
        self.holds: Holds = holds if holds is not None else PerCallHolds(self.ledger)
        self.recorder: Recorder = recorder if recorder is not None else ImmediateRecorder(store)
        self.retry = retry or RetryPolicy()
        self.limits = limits if limits is not None else CallLimits(concurrency, rate_limits)
        self.timeout_s = timeout_s
        self._rng = random.Random(seed)
        self._models: dict[str, Model] = {}
        self._prices: dict[str, Price | None] = {}
        self._held: dict[str, Price | None] = {}
        self._secrets = secret_values()
        self._lanes: dict[tuple[str, int], _Lane] = {}
        self._deadlines = _Deadlines()

    # -- models ------------------------------------------------------------------------------

    def model(self, model_id: str) -> Model:
        """The adapter of ``model_id`` (resolved once). UserError for an unknown id."""
        model = self._models.get(model_id)
        if model is None:
            model = self._models[model_id] = resolve(model_id, route=self.route)
        return model

    def price(self, model: Model) -> Price | None:
        """The model's price (looked up once)."""
        model_id = model.id
        try:
            return self._prices[model_id]
        except KeyError:
            price = self._prices[model_id] = price_for(model.info)
            return price

    def held_price(self, model: Model) -> Price | None:
        """The price the model's calls are held at: a routed call's dearest host
        (:meth:`Price.held`)."""
        model_id = model.id
        try:
            return self._held[model_id]
        except KeyError:
            price = self.price(model)
            held = self._held[model_id] = None if price is None else price.held()
            return held

    def _lane(self, request: Request) -> _Lane:
        """The lane of ``request``'s model and settings object (resolved and checked once);
        the settings are checked against the model here, before any row, hold or traffic."""
        key = (request.model, id(request.settings))
        lane = self._lanes.get(key)
        if lane is None or lane.settings is not request.settings:
            if len(self._lanes) >= _WORST_KNOWN:
                self._lanes.clear()
            lane = self._lanes[key] = _Lane(self, request)
        elif request.messages[-1].role == "system":  # the one check a request adds
            lane.model.check(request)
        return lane

    def worst_case(self, model: Model, request: Request) -> tuple[int, int, Decimal | None]:
        """The prompt's token bound, the output budget, and the most the call can cost (None:
        no price on file)."""
        lane = self._lane(request)
        bound = messages_token_bound(request.messages)
        return bound, lane.max_tokens, lane.worst_case(bound)[0]

    def prices(self) -> dict[str, Price | None]:
        """The price of every model this executor has called (None: no price on file)."""
        return dict(self._prices)

    async def aclose(self) -> None:
        """Release the adapters' clients."""
        for model in self._models.values():
            await model.aclose()
        self._models.clear()
        self._lanes.clear()

    def scrub(self, text: str) -> str:
        """``text`` without any key this process knows."""
        return scrub(text, self._secrets) if self._secrets else text

    # -- one call ----------------------------------------------------------------------------

    async def execute(
        self,
        spec: CallSpec,
        *,
        on_event: EventCallback | None = None,
        outcome: CallOutcome | None = None,
    ) -> CallOutcome:
        """Make the call (with retries) and return its outcome. Raises UserError for settings
        the model cannot honour and SpendRefused when a ceiling would be crossed (nothing is
        spent); a cancelled call is recorded and settled, then CancelledError propagates."""
        request = spec.request
        lane = self._lane(request)  # bad settings fail here, before any row, hold or traffic
        bound = messages_token_bound(request.messages)
        worst, worst_micro, floor = lane.worst.get(bound) or lane.worst_case(bound)
        if outcome is None:
            outcome = CallOutcome(Result(lane.model_id))
        timeout = spec.timeout_s or self.timeout_s
        loop = asyncio.get_running_loop()
        ends = loop.time() + timeout  # one deadline for every attempt and wait between them
        start: CallValues = {
            "model": lane.model_id, "provider": lane.provider, "role": spec.role,
            "run_id": spec.run_id, "item_key": spec.key,
            "request_json": self._request_json(request, lane),
        }  # fmt: skip
        while True:
            outcome.attempts += 1
            attempt = outcome.attempts
            if worst:
                run_id = spec.run_id or f"generate-{time.strftime('%Y%m%d')}"
                hold = self.holds.take(
                    run_id, spec.role, lane.model_id, worst, attempt == 1, key=spec.key,
                    floor_usd=floor, worst_micro=worst_micro,
                )  # fmt: skip
            else:  # no price on file or a $0 model: nothing is held
                hold = _NO_HOLD
            result = await self._attempt(
                spec, lane, start, hold, attempt, bound, worst, ends, loop, on_event, outcome
            )
            error = result.error
            if error is None:
                return outcome
            if error.kind is ErrorKind.QUOTA:
                outcome.halt = "the key ran out of credit"
                return outcome
            if error.kind is ErrorKind.AUTH:
                outcome.halt = f"the key was not accepted ({error})"
                return outcome
            produced = result.deltas > 0
            policy = spec.retry or self.retry
            if not policy.should_retry(error, attempt, produced):
                return outcome
            wait = policy.delay(attempt, error, self._rng)
            if loop.time() + wait >= ends:  # the call's deadline covers its retries too
                return outcome
            outcome.retries.append(
                {"attempt": attempt, "role": spec.role, "next_delay_s": round(wait, 3),
                 "error_type": error_type(error), "error": str(error)}
            )  # fmt: skip
            await asyncio.sleep(wait)

    def _floor(
        self, model: Model, request: Request, bound: int, max_tokens: int, worst: Decimal | None
    ) -> Decimal | None:
        """The least this call may hold, cut at its hold (``engine/cut.py``); None when it must
        hold its whole worst case (no price, a small budget, output that may not stream)."""
        return self._lane(request).worst_case(bound)[2]

    async def _attempt(
        self,
        spec: CallSpec,
        lane: _Lane,
        start: CallValues,
        hold: Hold,
        attempt: int,
        bound: int,
        worst: Decimal | None,
        ends: float,
        loop: asyncio.AbstractEventLoop,
        on_event: EventCallback | None,
        outcome: CallOutcome,
    ) -> Result:
        """One attempt: its limits, its row, its stream within what is left of the call's
        deadline (cut at the hold's cap, if it has one), its outcome recorded and settled —
        also when it is cancelled."""
        request = spec.request
        max_tokens = lane.max_tokens
        recorder = self.recorder
        holds_money = hold.lease is not None or hold.reservation_id is not None
        call_id: str | None = None
        result = Result(lane.model_id)
        outcome.result = result
        in_flight = 0
        started = 0.0
        slot = lane.slot
        try:
            if not slot.take_now():
                await slot.enter(bound + max_tokens)
            try:
                call_id = recorder.start(start)
                outcome.call_ids.append(call_id)
                if hold.reservation_id is not None:  # a lease's calls are not linked one by one
                    self.holds.attach(hold, call_id)
                can_pay = None
                if hold.cap_usd is not None and lane.held is not None:
                    can_pay = cut.affordable(hold.cap_usd, bound, lane.held)
                started = time.perf_counter()
                in_flight = await self._stream(
                    lane, request, call_id, result, started, ends, loop, on_event, can_pay,
                    spec.timeout_s or self.timeout_s,
                )  # fmt: skip
                outcome.stopped_at_limit = result.provider_reason == CUT_REASON
            finally:
                slot.leave()
        finally:  # also when cancelled: record what was produced and settle it
            if result.stop_reason in ("cancelled", "error"):
                result.estimate_missing_usage(request, max_tokens)
            if result.provider_reason == CUT_REASON:  # what was in flight at the cut is billed
                made = min(result.usage.output_tokens + in_flight, max_tokens)
                result.usage = replace(result.usage, output_tokens=made)
            cost, source, micro = self._cost(lane, result, bound, max_tokens, worst)
            if self._secrets:
                self._scrub_result(result)
            usage = result.usage
            outcome.input_tokens += usage.input_tokens
            outcome.output_tokens += usage.output_tokens
            outcome.reasoning_tokens += usage.reasoning_tokens
            outcome.price_source = source
            total = outcome.cost_usd
            outcome.cost_usd = None if cost is None or total is None else total + cost
            if call_id is not None:
                recorder.finish(call_id, start, result, cost, source, attempt, started)
            if holds_money:  # a call that never reached the provider costs nothing
                if call_id is None:
                    self.holds.settle(hold, _ZERO, None, actual_micro=0)
                else:
                    self.holds.settle(hold, cost, call_id, actual_micro=micro)
        return result

    async def _stream(
        self,
        lane: _Lane,
        request: Request,
        call_id: str,
        result: Result,
        started: float,
        ends: float,
        loop: asyncio.AbstractEventLoop,
        on_event: EventCallback | None,
        can_pay: int | None,
        call_deadline_s: float,
    ) -> int:
        """Stream the call into ``result`` until ``ends`` (the loop's time: the call's deadline
        of ``call_deadline_s``, every attempt's); with ``can_pay``, cut it once the output received
        (at an upper bound, its UTF-8 bytes) and what may be in flight reach that many tokens:
        the hold's cap. Returns the tokens taken to be in flight at a cut (0 without one).

        The adapter's own generator is the one layer between the provider and here: the
        contract of :meth:`Model.stream` (a failure translated into ``Finish("error")``, a
        stream without a Finish given one) is kept in this loop with the model's own rules."""
        model = lane.model
        recorder = self.recorder
        keeps = recorder.keeps_events
        clean = _DeltaScrubber(self._secrets) if self._secrets else None
        seq = 0

        def emit(event: Event) -> None:
            """Record the event and hand it on, every key gone from it (a key split across
            deltas too: the scrubber holds back a tail until it knows)."""
            nonlocal seq
            shown = [event] if clean is None else clean.events(event, self._scrubbed_error)
            for one in shown:
                if keeps:
                    recorder.event(call_id, seq, one, time.perf_counter() - started)
                    seq += 1
                if on_event is not None:
                    on_event(one)

        handing_on = keeps or on_event is not None or clean is not None
        received = 0
        first = 0.0
        in_flight = 0
        finish: Finish | None = None
        stream = model._stream(request, lane.effort)
        deadline = self._deadlines.arm(ends, loop)
        try:
            try:
                async for event in stream:
                    kind = event.kind
                    if kind == "text" or kind == "reasoning":
                        text = event.text  # type: ignore[union-attr]
                        if result.ttft_s is None and text:
                            result.ttft_s = time.perf_counter() - started
                        result.deltas += 1
                        if kind == "text":
                            result.text += text
                        else:
                            result.reasoning += text
                            result.reasoning_deltas += 1
                        if handing_on:
                            emit(event)
                        if can_pay is not None:
                            now = time.perf_counter()
                            first = first or now
                            received += cut.utf8_bytes(text)
                            in_flight = cut.in_flight(received, now - first)
                            if received + in_flight >= can_pay:
                                finish = Finish("cancelled", provider_reason=CUT_REASON)
                                break
                    elif kind == "usage":
                        result.usage = event.usage  # type: ignore[union-attr]
                        if handing_on:
                            emit(event)
                    else:
                        finish = event  # type: ignore[assignment]
                        break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # translated once, by the model's own rule
                finish = model.failure(exc)  # re-raises what is not a provider error
            if finish is None:
                finish = model.unfinished()
            result.stop_reason = finish.stop_reason
            result.error = finish.error
            result.provider_reason = finish.provider_reason
            if handing_on:
                emit(finish)
        except asyncio.CancelledError:
            if deadline.expired():  # our deadline, not a stop from outside: a failed attempt
                result.stop_reason = "error"
                result.error = self._timed_out(model, call_deadline_s)
            else:
                result.stop_reason = "cancelled"
                if handing_on:
                    emit(Finish("cancelled"))
                raise
        except Exception as exc:  # a bug or an untranslated failure: a failed call, kept
            log.exception("%s: the call failed unexpectedly", model.id)
            result.stop_reason = "error"
            result.error = ProviderError(
                f"unexpected failure ({type(exc).__name__}: {exc})",
                kind=ErrorKind.BAD_RESPONSE,
                provider=model.provider,
            )
        finally:
            self._deadlines.disarm(deadline)
            if clean is not None:  # what the scrubber still holds (a stream with no Finish)
                for rest in clean.flush():
                    if keeps:
                        recorder.event(call_id, seq, rest, time.perf_counter() - started)
                        seq += 1
            await stream.aclose()  # closes the provider connection at once, not at GC time
            result.wall_s = time.perf_counter() - started
        return in_flight if result.provider_reason == CUT_REASON else 0

    @staticmethod
    def _timed_out(model: Model, deadline_s: float) -> ProviderError:
        return ProviderError(
            f"no complete answer within {deadline_s:g} s (every attempt's); the stream was closed",
            kind=ErrorKind.RETRYABLE,
            provider=model.provider,
        )

    def _cost(
        self, lane: _Lane, result: Result, bound: int, max_tokens: int, worst: Decimal | None
    ) -> tuple[Decimal | None, str | None, int | None]:
        """The actual cost (the provider's figure, else usage × price), its source, and the
        cost in micro-dollars where it is known without converting again. Usage the request
        could not produce, or a reported cost its usage cannot come to (:mod:`.usage`), makes
        the call a ``bad_response`` error settled at its worst case — the reservation — and
        recorded as an anomaly with the provider's figure (``price_source``), never charged
        beyond it."""
        usage = result.usage
        price = lane.price
        problem = impossible_usage(usage, prompt_bound=bound, max_tokens=max_tokens)
        if problem is None and usage.cost_usd is not None and price is not None:
            problem = implausible_cost(usage.cost_usd, price.held().cost(usage))
        if problem is not None:
            model = lane.model
            result.stop_reason = "error"
            result.error = ProviderError(
                f"the reply was impossible: {problem}",
                kind=ErrorKind.BAD_RESPONSE,
                provider=model.provider,
            )
            result.usage = replace(usage, cost_usd=None)
            return worst, anomaly_source(usage.cost_usd), None
        if usage.cost_usd is None and price is not None:  # usage × price: the costs repeat
            tokens = (
                usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                usage.cache_write_tokens,
            )  # fmt: skip
            known = lane.costs.get(tokens)
            if known is None:
                usd = price.cost(usage)
                micro = usd_to_micro(usd if usd > 0 else _ZERO, up=False)
                if len(lane.costs) >= _WORST_KNOWN:
                    lane.costs.clear()
                known = lane.costs[tokens] = (usd, price.source, micro)
            return known
        cost = call_cost(lane.model.info, usage, price=price)
        return cost.usd, cost.source, None

    def _scrubbed_error(self, error: ProviderError) -> ProviderError:
        """The same failure with its message scrubbed."""
        message = self.scrub(str(error.args[0]) if error.args else "")
        return ProviderError(
            message, kind=error.kind, provider=error.provider, status=error.status,
            retry_after=error.retry_after,
        )  # fmt: skip

    def _scrub_result(self, result: Result) -> None:
        result.text = self.scrub(result.text)
        result.reasoning = self.scrub(result.reasoning)
        if result.error is not None:
            result.error = self._scrubbed_error(result.error)

    def _request_json(self, request: Request, lane: _Lane) -> str:
        """The request as the call log keeps it, JSON text: its messages, every key scrubbed
        from them, and its settings (the lane's, serialised once)."""
        if self._secrets:
            secrets = self._secrets
            messages = [
                {"role": m.role, "content": scrub(m.content, secrets)} for m in request.messages
            ]
        else:
            messages = [{"role": m.role, "content": m.content} for m in request.messages]
        return f'{{"messages":{to_json(messages).decode()},"settings":{lane.settings_json}}}'
