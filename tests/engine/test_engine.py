"""The engine's executor: holds are upper bounds, impossible usage is a provider error settled at
the hold, a real charge above its hold is recorded and flagged, calls have a deadline, keys never
reach the store, $0 calls never count against the call window — through real adapters and fake
provider servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench import CallSpec, Executor, Request
from sweepbench.engine import RetryPolicy
from sweepbench.models.openrouter import catalogue
from sweepbench.money.ledger import Ceilings, Ledger, SpendRefused
from sweepbench.store import Store
from sweepbench.store.schema import calls, spend_reservations
from tests.servers import OpenAIServer, OpenRouterServer

OR_KEY = "test-openrouter-key-0123456789"
MODEL = "openrouter/openai/gpt-5.6-luna"
ONCE = RetryPolicy(max_attempts=1)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'engine.db'}")


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    with OpenRouterServer(api_key=OR_KEY) as server:
        monkeypatch.setenv("OPENROUTER_API_KEY", OR_KEY)
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        catalogue(refresh=True)
        yield server


def executor(store: Store, **kwargs: object) -> Executor:
    ceilings = kwargs.pop("ceilings", Ceilings(daily_usd=Decimal(100), calls_per_hour=10_000))
    assert isinstance(ceilings, Ceilings)
    return Executor(store, ledger=Ledger(store, ceilings), retry=ONCE, **kwargs)  # type: ignore[arg-type]


def only_reservation(store: Store) -> sa.Row[tuple[object, ...]]:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(spend_reservations)).all()
    assert len(rows) == 1
    return rows[0]


async def test_a_hold_bounds_a_prompt_of_one_letter_words(
    store: Store, srv: OpenRouterServer
) -> None:
    # 2,000 one-letter words: ~2,000 real tokens for 3,999 characters (chars ÷ 4 would say
    # ~1,000); the provider reports 2,000 input tokens and no cost of its own
    prompt = " ".join(["a"] * 2000)
    srv.reply("ok", input_tokens=2000, output_tokens=1, cost=None)
    run = executor(store)
    outcome = await run.execute(CallSpec(Request.simple(MODEL, prompt, max_tokens=10), "sweep"))
    assert outcome.result.error is None
    row = only_reservation(store)
    assert row.state == "settled" and not row.overrun
    assert 0 < row.settled_micro <= row.reserved_micro


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"input_tokens": 5_000_000}, "5,000,000 input tokens"),
        ({"cost": -5.0}, "a cost of -5"),
        ({"output_tokens": 10_000_000}, "output tokens with a budget of 10"),
    ],
)
async def test_impossible_usage_is_a_provider_error_settled_at_the_hold(
    store: Store, srv: OpenRouterServer, fields: dict[str, object], problem: str
) -> None:
    srv.reply("hi", **fields)
    run = executor(store)
    outcome = await run.execute(CallSpec(Request.simple(MODEL, "Say hi", max_tokens=10), "sweep"))
    error = outcome.result.error
    assert error is not None and error.kind.value == "bad_response"
    assert problem in str(error)
    row = only_reservation(store)
    assert row.state == "settled" and row.settled_micro == row.reserved_micro  # the worst case
    with store.engine.connect() as conn:
        call = conn.execute(sa.select(calls)).one()
    assert call.error_kind == "bad_response" and call.cost_usd is not None
    assert call.cost_usd >= 0


async def test_a_reported_cost_its_usage_cannot_come_to_is_settled_at_the_hold(
    store: Store, srv: OpenRouterServer
) -> None:
    # the provider reports $0.90 for a 1-token answer that costs a few millionths of a dollar
    srv.reply("hi", cost=0.9)
    run = executor(store)
    outcome = await run.execute(CallSpec(Request.simple(MODEL, "Say hi", max_tokens=10), "sweep"))
    error = outcome.result.error
    assert error is not None and error.kind.value == "bad_response"
    assert "reported a cost of $0.9" in str(error)
    row = only_reservation(store)
    assert row.state == "settled" and row.settled_micro == row.reserved_micro  # the hold
    assert not row.overrun and outcome.cost_usd is not None and outcome.cost_usd < Decimal("0.9")
    count, anomalies = store.anomalous_calls(datetime.now(UTC) - timedelta(hours=1))
    assert count == 1 and "the provider reported $0.9" in (anomalies[0].price_source or "")


async def test_a_plausible_charge_above_its_hold_is_recorded_flagged_and_stops_admissions(
    store: Store, srv: OpenRouterServer
) -> None:
    # usage at the request's bounds, and a reported cost 1.4× what it comes to at our price
    # (cache premiums, a dearer host): believed, charged, flagged, and admissions stop
    request = Request.simple(MODEL, "Say hi", max_tokens=10)
    probe = executor(store)
    bound, budget, worst = probe.worst_case(probe.model(MODEL), request)
    assert worst is not None
    charged = worst * Decimal("1.4")
    srv.reply("hi", input_tokens=bound, output_tokens=budget, cost=float(charged))
    ceilings = Ceilings(daily_usd=worst * Decimal("1.2"), calls_per_hour=10_000)
    run = executor(store, ceilings=ceilings)
    outcome = await run.execute(CallSpec(request, "sweep"))
    assert outcome.result.error is None
    assert outcome.cost_usd is not None and abs(outcome.cost_usd - charged) < Decimal("0.000001")
    row = only_reservation(store)
    assert row.overrun and row.settled_micro > row.reserved_micro
    assert Ledger(store, ceilings).summary().overruns == 1
    with pytest.raises(SpendRefused, match="SWEEPBENCH_DAILY_USD"):
        await run.execute(CallSpec(Request.simple(MODEL, "Again", max_tokens=10), "sweep"))
    free = await run.execute(
        CallSpec(Request.simple("scripted/echo", "free", max_tokens=5), "sweep")
    )
    assert free.result.error is None  # a $0 call is never refused


async def test_an_endlessly_trickling_stream_meets_its_deadline(
    store: Store, srv: OpenRouterServer
) -> None:
    srv.reply(["tick "] * 200, delay=0.05)
    run = executor(store, timeout_s=0.5)
    outcome = await run.execute(CallSpec(Request.simple(MODEL, "Go", max_tokens=500), "target"))
    error = outcome.result.error
    assert error is not None and "no complete answer within 0.5 s" in str(error)
    assert outcome.result.deltas > 0  # what arrived before the deadline is kept and paid for
    row = only_reservation(store)
    assert row.state == "settled" and 0 < row.settled_micro <= row.reserved_micro


async def test_a_key_echoed_in_an_error_body_never_reaches_the_store(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "compat-secret-value-4242"
    with OpenAIServer(api_key=key) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", key)
        server.error(400, f"invalid request for key {key}")
        run = Executor(store, retry=ONCE)
        outcome = await run.execute(
            CallSpec(Request.simple("compatible/m", f"my key is {key}"), "generate")
        )
    assert outcome.result.error is not None
    assert key not in str(outcome.result.error)
    with store.engine.connect() as conn:
        for table in (calls, spend_reservations):
            for row in conn.execute(sa.select(table)):
                assert key not in repr(tuple(row))


async def test_free_calls_never_count_against_the_call_window(store: Store) -> None:
    ceilings = Ceilings(daily_usd=Decimal(0), calls_per_hour=40)
    run = executor(store, ceilings=ceilings)
    request = Request.simple("scripted/echo", "hi", max_tokens=5)
    for _ in range(1000):
        outcome = await run.execute(CallSpec(request, "sweep", run_id="free-sweep"))
        assert outcome.result.error is None
    summary = Ledger(store, ceilings).summary()
    assert summary.calls_in_window == 0 and summary.calls_left == 40
    with store.engine.connect() as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(calls)) == 1000
        assert conn.scalar(sa.select(sa.func.count()).select_from(spend_reservations)) == 0


async def test_quota_errors_halt_and_are_never_retried(store: Store, srv: OpenRouterServer) -> None:
    srv.error(402)
    run = Executor(store, retry=RetryPolicy(max_attempts=5, base_delay_s=0.001))
    outcome = await run.execute(CallSpec(Request.simple(MODEL, "hi", max_tokens=5), "target"))
    assert outcome.attempts == 1 and outcome.halt == "the key ran out of credit"


async def test_retries_honour_the_policy_and_each_attempt_is_a_call_row(
    store: Store, srv: OpenRouterServer
) -> None:
    srv.error(503)
    srv.reply("second time lucky")
    run = Executor(store, retry=RetryPolicy(base_delay_s=0.001, max_delay_s=0.002))
    outcome = await run.execute(CallSpec(Request.simple(MODEL, "hi", max_tokens=5), "target"))
    assert outcome.result.text == "second time lucky" and outcome.attempts == 2
    assert [r["attempt"] for r in outcome.retries] == [1]
    with store.engine.connect() as conn:
        attempts = conn.execute(sa.select(calls.c.attempt).order_by(calls.c.attempt)).scalars()
        assert list(attempts) == [1, 2]


# -- what a long-lived process keeps --------------------------------------------------------


async def test_no_timer_outlives_the_calls_of_an_executor(store: Store) -> None:
    # a deadline timer left set for an hour would keep the executor, and what its calls'
    # tasks referred to, alive that long: the web app soak grew 4 MB per 100 sweeps with it
    import asyncio

    executor = Executor(store)
    loop = asyncio.get_running_loop()
    request = Request.simple("scripted/echo", "one two three")
    await asyncio.gather(*(executor.execute(CallSpec(request, "generate")) for _ in range(3)))
    assert executor._deadlines._timer is None
    far = [h for h in getattr(loop, "_scheduled", []) if not h.cancelled()]
    assert all(h.when() - loop.time() < 60 for h in far)  # nothing set an hour out is left


def test_a_supervised_run_starts_in_an_empty_context() -> None:
    # a task copies the context it is created in: a run started from a web request would keep
    # that request (and the web framework's callback state) alive as long as the run
    import contextvars

    from sweepbench.engine.supervisor import Supervisor

    request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")
    request.set("the request that started it")

    async def seen() -> str:
        return request.get()

    supervisor = Supervisor("test-context")
    try:
        assert supervisor.submit(seen()).result(5) == "none"
    finally:
        supervisor.close()
