"""Limits that are hard and still let a small run answer (issue 26 §2): a benchmark call whose
worst case no longer fits may hold what is left, down to its floor, and is cut at it; the cut
item is "stopped at the limit" — not scored, asked again when the run continues — and nothing
settles above the limit."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import sqlalchemy as sa

from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_config import Limits
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import BenchStore
from sweepbench.engine import RetryPolicy
from sweepbench.engine.cut import CUT_MARGIN_TOKENS, DELTA_RESERVE_TOKENS, MIN_OUTPUT_TOKENS
from sweepbench.engine.executor import CUT_REASON
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations
from tests.bench.helpers import calls_of, set_prices, toy_benchmark
from tests.bench.plans import prepare

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
PER_TOKEN = Decimal("0.001")  # $1,000 per million output tokens, prompts free
FLOOR = (MIN_OUTPUT_TOKENS + CUT_MARGIN_TOKENS + DELTA_RESERVE_TOKENS) * PER_TOKEN


async def run(store: Store, model: str, limit: Decimal, items: int = 5) -> RunOutcome:
    prepared = prepare(toy_benchmark(items), store, model=model, limits=Limits(total=limit))
    return await BenchRunner(prepared, store, retry=FAST, concurrency=1).run()


def settled_above_reserved(store: Store) -> int:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(spend_reservations)).all()
    return sum(1 for r in rows if (r.settled_micro or 0) > r.reserved_micro)


async def test_a_limit_far_below_the_worst_case_still_answers(
    tmp_path: Path, isolated_home: Path
) -> None:
    # the worst case of each answer is its 8,192-token budget: $8.19, sixteen times the limit;
    # each answer costs two tokens. Held at its worst case, not one answer would run.
    set_prices(isolated_home, {"scripted.echo": (0, 1000)})
    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    limit = Decimal("0.5")
    outcome = await run(store, "scripted/echo?text=42", limit)
    assert outcome.status == "completed" and outcome.scored == 5
    assert Ledger(store).run_spent(outcome.run_id) <= limit
    assert settled_above_reserved(store) == 0
    store.close()


async def test_an_answer_past_what_is_left_is_stopped_at_the_limit_then_asked_again(
    tmp_path: Path, isolated_home: Path
) -> None:
    set_prices(isolated_home, {"scripted.lorem": (0, 1000)})
    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    limit = FLOOR + 100 * PER_TOKEN  # room for about 356 tokens; each answer is 600 words
    model = "scripted/lorem?words=600"
    outcome = await run(store, model, limit, items=2)
    assert outcome.status == "paused_budget"
    assert "stopped at the limit" in (outcome.reason or "")
    assert list(BenchStore(store).answers(outcome.run_id)) == []  # not scored, not stored
    (cut,) = calls_of(store, outcome.run_id)
    assert cut.provider_reason == CUT_REASON and cut.stop_reason == "cancelled"
    spent = Ledger(store).run_spent(outcome.run_id)
    assert 0 < spent <= limit  # cut before its cost could pass the hold
    assert settled_above_reserved(store) == 0
    # the same run, continued with more money, asks the item again and answers it
    more = await run(store, model, Decimal("100"), items=2)
    assert more.run_id == outcome.run_id and more.status == "completed" and more.scored == 2
    store.close()


async def test_a_model_that_may_reason_out_of_sight_always_holds_its_worst_case(
    tmp_path: Path, isolated_home: Path
) -> None:
    # whether a call may hold less is the adapter's word (Model.streams_what_it_bills): the
    # scripted model says yes, so its call has a floor; an adapter that says no (a model that
    # may reason out of sight) gets none, and must hold its whole worst case
    from sweepbench.engine.executor import Executor
    from sweepbench.models.base import Request

    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    set_prices(isolated_home, {"scripted.echo": (0, 1000)})
    executor = Executor(store)
    request = Request.simple("scripted/echo?text=42", "hi", max_tokens=4000)
    model = executor.model(request.model)
    bound, budget, worst = executor.worst_case(model, request)
    assert executor._floor(model, request, bound, budget, worst) == FLOOR
    other = Executor(store)  # the adapter's word is read once per executor (its call lane)
    model = other.model(request.model)
    model.streams_what_it_bills = lambda effort: False  # type: ignore[method-assign]
    assert other._floor(model, request, bound, budget, worst) is None
    store.close()
