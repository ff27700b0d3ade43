"""The benchmark runner on the scripted model and on a fake OpenAI-compatible server: scores,
storage, resume, retries, limits, and the ``calls`` row of every call it makes."""

from __future__ import annotations

import asyncio
import random
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench import run as run_module
from sweepbench.bench.items import Area, Benchmark, Item, Task
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_config import Limits, Selection
from sweepbench.bench.run_liveness import run_is_live
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.scoring.judge import JUDGE_MAX_TOKENS
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.engine import RateLimits, RetryPolicy
from sweepbench.engine.cut import CUT_MARGIN_TOKENS, DELTA_RESERVE_TOKENS, MIN_OUTPUT_TOKENS
from sweepbench.engine.limits import CallLimits
from sweepbench.errors import ErrorKind, ProviderError, UserError
from sweepbench.models.base import Model
from sweepbench.models.tokens import prompt_token_bound
from sweepbench.money.ledger import Ledger
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from tests.bench.helpers import (
    CompatibleServer,
    calls_of,
    compatible_server,
    set_prices,
    toy_benchmark,
)
from tests.bench.plans import build_plan, prepare
from tests.servers import Reply

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
VERDICT = '{"judge_result": "pass", "score": 0.9, "judge_reason": "clear"}'
PER_TOKEN = Decimal("0.001")
"""$1,000 per million tokens, the price the limit tests give their models."""


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")


async def _run(store: Store, **kwargs: Any) -> RunOutcome:
    options = {k: kwargs.pop(k) for k in ("concurrency", "retry", "accept_unpriced") if k in kwargs}
    benchmark = kwargs.pop("benchmark", toy_benchmark(10))
    prepared = prepare(benchmark, store, **kwargs)
    runner = BenchRunner(prepared, store, retry=options.pop("retry", FAST), **options)
    return await runner.run()


def _reason(outcome: RunOutcome) -> str:
    assert outcome.reason is not None
    return outcome.reason


async def test_scores_every_item_and_stores_it(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?text=42")
    assert outcome.status == "completed"
    assert (outcome.scored, outcome.errors) == (10, 0)
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert len(rows) == 10
    passed = {r["key"]: r["passed"] for r in rows}
    assert sum(passed.values()) == 5  # even rows expect 42, odd ones 41
    assert all(r["answer"] == "42" and r["status"] == "scored" for r in rows)
    # every answer is a row of the calls log, written with it in the group commit
    calls = calls_of(store, outcome.run_id)
    assert sorted(c.item_key or "" for c in calls) == sorted(passed)
    assert {(c.role, c.attempt, c.stop_reason, c.text) for c in calls} == {
        ("target", 1, "end", "42")
    }
    summary = Ledger(store).summary()  # a free model holds and spends nothing
    assert (summary.spent_today, summary.open_reservations) == (Decimal(0), 0)


async def test_same_settings_resume_and_finished_run_is_not_redone(store: Store) -> None:
    first = await _run(store, model="scripted/echo?text=42", selection=Selection(max_items=4))
    assert first.scored == 4
    again = prepare(
        toy_benchmark(10), store, model="scripted/echo?text=42", selection=Selection(max_items=4)
    )
    assert again.previous is not None and again.previous.id == first.run_id
    assert again.plan.items == ()  # finished: nothing left to run
    wider = await _run(store, model="scripted/echo?text=42")
    assert wider.run_id != first.run_id  # other settings, other run
    assert len(calls_of(store, first.run_id)) == 4 and len(calls_of(store, wider.run_id)) == 10


async def test_interrupted_run_resumes_where_it_stopped(store: Store) -> None:
    prepared = prepare(toy_benchmark(40), store, model="scripted/echo?text=42&ttft=0.01")
    runner = BenchRunner(prepared, store, concurrency=2, retry=FAST)
    seen: list[int] = []

    def stop_after_some(progress: Any) -> None:
        seen.append(progress.done)
        if progress.done == 6:
            runner.stop()

    runner.on_progress = stop_after_some
    outcome = await runner.run()
    assert outcome.status == "interrupted"
    done = BenchStore(store).statuses(outcome.run_id)
    assert 6 <= len(done) < 40
    resumed = prepare(toy_benchmark(40), store, model="scripted/echo?text=42&ttft=0.01")
    assert resumed.previous is not None and resumed.previous.id == outcome.run_id
    assert len(resumed.plan.items) == 40 - len(done)
    final = await BenchRunner(resumed, store, concurrency=4, retry=FAST).run()
    assert final.run_id == outcome.run_id and final.status == "completed"
    assert final.session_scored == 40 - len(done)
    assert len(BenchStore(store).statuses(final.run_id)) == 40
    # the calls the Stop cut short are kept too, as cancelled rows; every other call is one
    # stored answer, so no item was paid for twice
    calls = calls_of(store, final.run_id)
    answered = sorted(c.item_key or "" for c in calls if c.stop_reason != "cancelled")
    assert answered == sorted(BenchStore(store).statuses(final.run_id))
    assert sum(c.stop_reason == "cancelled" for c in calls) <= 2  # at most one per worker


async def test_failures_are_kept_and_retry_failed_reruns_only_them(store: Store) -> None:
    broken = await _run(store, model="scripted/echo?fail=500", selection=Selection(max_items=3))
    assert broken.status == "completed_with_errors"
    rows = list(BenchStore(store).answers(broken.run_id))
    assert {r["error_type"] for r in rows} == {"provider_error"}
    assert all(r["attempts"] == 3 for r in rows)  # retried, then recorded
    retries = rows[0]["retries"]  # the retry log: two waits before attempts 2 and 3
    assert [(r["attempt"], r["role"], r["error_type"]) for r in retries] == [
        (1, "target", "provider_error"), (2, "target", "provider_error"),
    ]  # fmt: skip
    assert all(r["next_delay_s"] <= 0.01 and "scripted server error" in r["error"] for r in retries)
    # each attempt is a row of the calls log: 3 items × 3 attempts
    calls = calls_of(store, broken.run_id)
    assert sorted((c.item_key or "", c.attempt) for c in calls) == sorted(
        (r["key"], attempt) for r in rows for attempt in (1, 2, 3)
    )
    assert all(c.stop_reason == "error" and c.error_kind == "retryable" for c in calls)
    nothing = prepare(toy_benchmark(10), store, model="scripted/echo?text=42", retry_failed=True)
    assert nothing.plan.errors  # other settings: nothing to retry


async def test_quota_error_interrupts_and_skips_the_rest(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?fail=402", concurrency=1)
    assert outcome.status == "interrupted"
    assert outcome.reason == "the key ran out of credit"
    assert BenchStore(store).statuses(outcome.run_id) == {}  # skipped, not failed
    (call,) = calls_of(store, outcome.run_id)  # the one call made, never retried
    assert (call.error_kind, call.attempt) == ("quota", 1)


async def test_rate_limit_retry_honours_retry_after() -> None:
    policy = RetryPolicy(base_delay_s=0.1, max_delay_s=20, jitter=0.0)
    rng = random.Random(0)
    hinted = ProviderError("slow down", kind=ErrorKind.RETRYABLE, provider="x", status=429,
                           retry_after=7.5)  # fmt: skip
    bare = ProviderError("slow down", kind=ErrorKind.RETRYABLE, provider="x", status=429)
    other = ProviderError("boom", kind=ErrorKind.RETRYABLE, provider="x", status=500)
    assert policy.delay(1, hinted, rng) == 7.5
    assert policy.delay(1, bare, rng) == 60.0
    assert policy.delay(3, other, rng) == pytest.approx(0.4)
    jittered = RetryPolicy(base_delay_s=1, jitter=0.2)
    delays = [jittered.delay(1, other, rng) for _ in range(200)]
    assert min(delays) >= 1.0 and max(delays) <= 1.2 and len(set(delays)) > 100


async def test_judge_grades_and_unparseable_verdict_is_a_failure(store: Store) -> None:
    bench = toy_benchmark(2, judged=3)
    ok = await _run(
        store, benchmark=bench, model="scripted/echo?text=42",
        judge=f"scripted/echo?text={VERDICT}",
    )  # fmt: skip
    assert ok.status == "completed"
    judged = [r for r in BenchStore(store).answers(ok.run_id) if r["task"] == "explain"]
    assert [r["result"] for r in judged] == ["pass"] * 3
    assert all(r["judge"].startswith("scripted/echo") and r["score"] == 0.9 for r in judged)
    roles = sorted(c.role for c in calls_of(store, ok.run_id))
    assert roles == ["judge"] * 3 + ["target"] * 5  # 5 answers, 3 grades
    bad = await _run(
        store, benchmark=bench, model="scripted/echo?text=42", judge="scripted/echo?text=nonsense"
    )
    rows = [r for r in BenchStore(store).answers(bad.run_id) if r["task"] == "explain"]
    assert {r["error_type"] for r in rows} == {"judge_unparseable"}
    assert all(r["raw_judge"] == "nonsense" and r["answer"] == "42" for r in rows)
    assert bad.status == "completed_with_errors"
    roles = sorted(c.role for c in calls_of(store, bad.run_id))
    assert roles == ["judge"] * 6 + ["target"] * 5  # an unparseable verdict is asked twice


async def test_judge_is_required_when_judged_tasks_are_selected(store: Store) -> None:
    prepared = prepare(toy_benchmark(2, judged=2), store, model="scripted/echo?text=42")
    assert any("--judge" in e for e in prepared.plan.errors)
    with pytest.raises(UserError, match="can't start"):
        BenchRunner(prepared, store)


async def test_spending_limit_pauses_and_keeps_answers(store: Store, isolated_home: Path) -> None:
    # Changed on purpose: a limit now holds by reserving each call's worst case — its prompt at
    # the token upper bound plus its whole output budget — before the call, so the run pauses
    # as soon as the next call's worst case no longer fits under what is left of the limit
    # (it used to pause once the spend had reached the limit, one call past it).
    set_prices(isolated_home, {"scripted.echo": (1000, 1000)})
    bench = toy_benchmark(10)
    prompt = bench.tasks[0].items[0].prompt  # every prompt has the same length
    worst = (prompt_token_bound([prompt]) + 10) * PER_TOKEN  # answers of at most 10 tokens
    actual = (len(prompt.split()) + 1) * PER_TOKEN  # the scripted model: a token a word, "42"
    limit = Decimal("0.16")
    fits = int((limit - worst) // actual) + 1  # calls made while the worst case still fits
    assert 1 < fits < 10
    settings: dict[str, Any] = {"benchmark": bench, "model": "scripted/echo?text=42",
                                "max_tokens": 10, "concurrency": 1}  # fmt: skip
    outcome = await _run(store, limits=Limits(total=limit), **settings)
    assert outcome.status == "paused_budget"
    assert "spending limit" in _reason(outcome) and "--limit USD" in _reason(outcome)
    assert f"only {format_usd(limit - fits * actual)} of its" in _reason(outcome)  # what is left
    stored, ledger = BenchStore(store), Ledger(store)
    run_id = outcome.run_id
    assert len(stored.statuses(run_id)) == fits
    assert stored.spent(run_id) == {"target": fits * actual}
    assert ledger.run_spent(run_id) == fits * actual <= limit  # settled, never above the limit
    summary = ledger.summary()
    assert (summary.spent_today, summary.reserved) == (
        fits * actual,
        Decimal(0),
    )  # every lease settled
    assert len(calls_of(store, run_id)) == fits  # the refused call was never made
    # raising the limit continues the same run
    more = await _run(store, limits=Limits(total=Decimal("1")), **settings)
    assert more.run_id == run_id and more.status == "completed"
    assert len(stored.statuses(run_id)) == 10
    assert ledger.run_spent(run_id) == 10 * actual == sum(stored.spent(run_id).values())
    assert len(calls_of(store, run_id)) == 10


async def test_role_limit_for_the_judge(store: Store, isolated_home: Path) -> None:
    # Changed on purpose (issue 26 §2): a grade whose worst case (JUDGE_MAX_TOKENS at $1,000
    # per million) no longer fits may hold what is left down to its floor (its prompt, free
    # here, and 256 + 64 + 32 output tokens), cut at it; grades go on while the floor fits under
    # what is left of the judge's limit; the answers (a free model) are unlimited.
    set_prices(isolated_home, {"scripted.guess": (0, 1000)})
    floor = (MIN_OUTPUT_TOKENS + CUT_MARGIN_TOKENS + DELTA_RESERVE_TOKENS) * PER_TOKEN
    assert floor < JUDGE_MAX_TOKENS * PER_TOKEN
    limit = floor + 5 * PER_TOKEN  # room for one grade's floor: after one grade, not another
    outcome = await _run(
        store, benchmark=toy_benchmark(0, judged=5), model="scripted/echo?text=42",
        judge="scripted/guess", limits=Limits(roles={"judge": limit}), concurrency=1,
    )  # fmt: skip
    assert outcome.status == "paused_budget"
    assert "judge" in _reason(outcome) and "--limit judge=USD" in _reason(outcome)
    rows = list(BenchStore(store).answers(outcome.run_id))
    graded = [r for r in rows if r["status"] == "scored"]
    waiting = [r for r in rows if r["error_type"] == "judge_not_run"]
    assert len(graded) == 1 and len(waiting) == 1 and waiting[0]["answer"] == "42"
    calls = calls_of(store, outcome.run_id)
    grades = [c for c in calls if c.role == "judge"]
    assert len(grades) == len(graded)  # the refused grade was never sent
    assert sum(c.role == "target" for c in calls) == 2  # the second answer waits for its grade
    assert Ledger(store).run_spent(outcome.run_id) <= limit
    each = grades[0].cost_usd
    assert each is not None and {c.cost_usd for c in grades} == {each}
    assert len(graded) == int((limit - floor) // each) + 1  # as many as fit, not one more
    left = format_usd(limit - len(graded) * each)
    assert f"only {left} of the judge's" in _reason(outcome)
    ledger = Ledger(store)
    assert ledger.role_spent(outcome.run_id, "judge") == len(graded) * each <= limit
    assert ledger.role_spent(outcome.run_id, "target") == 0
    assert ledger.summary().spent_today == len(graded) * each


# -- replies from a fake OpenAI-compatible server (compatible/replay) ---------------------------

REPLAY = "compatible/replay"


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch) -> Iterator[CompatibleServer]:
    """A fake OpenAI-compatible server answering ``compatible/replay`` with the replies queued
    on it, in turn; it records every request it was sent."""
    with compatible_server(monkeypatch) as server:
        yield server


def said(text: str, stop: str | None = None) -> Reply:
    """A reply of ``text`` (a token a word, five prompt tokens); ``stop="length"``: cut short."""
    return Reply(text=text, stop_reason=stop, input_tokens=5, output_tokens=len(text.split()))


def _one_item_benchmark(scorer: str, prompt: str, reference: str, **options: Any) -> Benchmark:
    item = Item("t.jsonl::1", "1", "t", "default", prompt, reference, {"choices": 4}, "t.jsonl", 1)
    task = Task("t", "a", "T", "auto", scorer, (item,), options=options)
    return Benchmark("one", "One", (Area("a", "A", (task,)),), version="1")


async def _run_replay(
    store: Store, benchmark: Benchmark, limits: Limits | None = None
) -> dict[str, Any]:
    prepared = prepare(benchmark, store, model=REPLAY, max_tokens=300, limits=limits)
    outcome = await BenchRunner(prepared, store, retry=FAST).run()
    (row,) = BenchStore(store).answers(outcome.run_id)
    return row


def _asked(server: CompatibleServer, n: int) -> dict[str, Any]:
    """The body of the ``n``-th request the server received."""
    return server.requests[n].json


async def test_choice_answer_without_a_letter_gets_one_reminder(
    store: Store, replay: CompatibleServer
) -> None:
    replay.push(said("I think it is B"), said("ANSWER: B"))
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"))
    assert (row["passed"], row["attempts"], row["answer"]) == (True, 2, "ANSWER: B")
    second = _asked(replay, 1)["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "I think it is B" and "final line" in second[2]["content"]
    assert row["output_tokens"] == 5 + 2  # both tries are counted
    assert len(replay.requests) == 2
    (run,) = BenchStore(store).runs()
    assert [c.role for c in calls_of(store, run.id)] == ["target", "target"]  # both are calls


async def test_choice_answer_cut_by_the_limit_gets_the_concise_prompt(
    store: Store, replay: CompatibleServer
) -> None:
    replay.push(said("Let me think about x and y at length", "length"), said("C"))
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"))
    concise = _asked(replay, 1)
    assert len(concise["messages"]) == 1 and concise["max_tokens"] == 64
    content = concise["messages"][0]["content"]
    assert content.endswith("Reply with only the final line: ANSWER: [LETTER]")
    assert "(ABCD)" in content
    assert (row["answer"], row["passed"]) == ("C", False)


async def test_choice_answer_still_without_a_letter_is_scored_and_marked(
    store: Store, replay: CompatibleServer
) -> None:
    replay.push(said("maybe"), said("still unsure"))
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"))
    assert row["status"] == "scored" and row["passed"] is False and row["attempts"] == 2
    assert row["score_metadata"]["format_valid"] is False
    assert row["answer"] == "maybe"  # the first answer is the one scored
    assert row["output_tokens"] == 1 + 2  # and both tries are counted


async def test_math_answer_cut_by_the_limit_is_asked_for_the_boxed_answer(
    store: Store, replay: CompatibleServer
) -> None:
    prompt = "Let's think step by step. What is 6 times 7? Put the answer in \\boxed{}."
    replay.push(said("First, six sevens are", "length"), said("\\boxed{42}"))
    row = await _run_replay(store, _one_item_benchmark("math", prompt, "42"))
    retry = _asked(replay, 1)
    assert "step by step" not in retry["messages"][0]["content"]
    assert "Skip the reasoning" in retry["messages"][0]["content"]
    assert retry["max_tokens"] == 300  # the base, below 512
    assert (row["passed"], row["attempts"]) == (True, 2)


async def test_upstream_content_filter_is_an_answer_not_an_error(
    store: Store, replay: CompatibleServer
) -> None:
    replay.error(400, "content_filter: the prompt was blocked")
    row = await _run_replay(store, _one_item_benchmark("exact", "Say 42", "42"))
    assert row["status"] == "scored" and row["passed"] is False
    assert row["answer"].startswith("[UPSTREAM_FILTERED:content_filter] content_filter: the")
    assert len(replay.requests) == 1  # a refusal of the prompt is not retried


async def test_a_limit_between_the_two_tries_keeps_the_paid_answer(
    store: Store, replay: CompatibleServer, isolated_home: Path
) -> None:
    # Changed on purpose: the limit is exactly the first try's worst case (its prompt at the
    # token bound plus the 300-token budget, at $1,000 per million): the first try fits, and
    # the reminder's worst case does not fit what the first answer left.
    set_prices(isolated_home, {"compatible.replay": (1000, 1000)})
    prompt = "Pick: A) x B) y"
    limit = (prompt_token_bound([prompt]) + 300) * PER_TOKEN
    replay.push(said("I think it is B"), said("ANSWER: B"))
    row = await _run_replay(store, _one_item_benchmark("choice", prompt, "B"), Limits(total=limit))
    assert len(replay.requests) == 1  # the reminder was not sent: its worst case did not fit
    assert (row["status"], row["answer"], row["passed"]) == ("scored", "I think it is B", False)
    (run,) = BenchStore(store).runs()
    assert run.status == "paused_budget" and "--limit USD" in (run.reason or "")
    first = (5 + 5) * PER_TOKEN  # five prompt tokens, five answer tokens
    assert Ledger(store).run_spent(run.id) == first == BenchStore(store).spent(run.id)["target"]
    assert len(calls_of(store, run.id)) == 1


async def test_a_content_filter_message_is_scrubbed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentinel = "sentinel-filter-key-0123456789"
    with compatible_server(monkeypatch, api_key=sentinel) as server:
        server.error(400, "content_filter: blocked")  # the server repeats the key it was sent
        row = await _run_replay(store, _one_item_benchmark("exact", "Say 42", "42"))
    assert server.requests[0].headers["authorization"] == f"Bearer {sentinel}"
    assert row["answer"].startswith("[UPSTREAM_FILTERED:content_filter]")
    assert sentinel not in row["answer"] and "[redacted]" in row["answer"]
    (run,) = BenchStore(store).runs()
    (call,) = calls_of(store, run.id)
    assert sentinel not in (call.error or "") and "[redacted]" in (call.error or "")


# -- judges, concurrency, liveness -------------------------------------------------------------


async def test_verdict_only_judge(store: Store) -> None:
    outcome = await _run(
        store, benchmark=toy_benchmark(0, judged=3), model="scripted/echo?text=42",
        judge="scripted/echo?text=pass", decision_judge=True,
    )  # fmt: skip
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert [(r["result"], r["score"], r["reason"]) for r in rows] == [("pass", 1.0, "")] * 3
    prepared = prepare(toy_benchmark(0, judged=3), store, model="scripted/echo?text=42",
                       judge="scripted/echo?text=pass", decision_judge=False)  # fmt: skip
    assert prepared.plan.config.hash != outcome_hash(store, outcome.run_id)  # another board


def outcome_hash(store: Store, run_id: str) -> str:
    run = BenchStore(store).run(run_id)
    assert run is not None
    return run.config_hash


async def test_calls_in_flight_never_exceed_the_concurrency(store: Store) -> None:
    outcome = await _run(
        store, benchmark=toy_benchmark(30, judged=30), model="scripted/echo?text=42&ttft=0.01",
        judge=f"scripted/echo?ttft=0.01&text={VERDICT}", concurrency=3,
    )  # fmt: skip
    assert outcome.status == "completed"
    # Changed on purpose: counted from the calls log (each row's start and end), not by
    # wrapping the runner's private stream method.
    calls = calls_of(store, outcome.run_id)
    assert len(calls) == 60 + 30  # 60 answers, 30 of them graded
    edges: list[tuple[datetime, int]] = []
    for call in calls:
        assert call.finished_at is not None
        edges += [(call.created_at, 1), (call.finished_at, -1)]
    in_flight = peak = 0
    for _, step in sorted(edges):  # at the same instant an end comes before a start
        in_flight += step
        peak = max(peak, in_flight)
    assert peak == 3  # target and judge share the scripted provider's allowance


def test_a_run_alive_in_another_process_is_not_resumed_twice(store: Store) -> None:
    outcome = asyncio.run(
        _run(store, model="scripted/echo?text=42", selection=Selection(max_items=3))
    )
    runs = BenchStore(store)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        runs.set_status(outcome.run_id, "running", worker={"host": socket.gethostname(),
                                                           "pid": other.pid})  # fmt: skip
        busy = prepare(toy_benchmark(10), store, model="scripted/echo?text=42",
                       selection=Selection(max_items=3))  # fmt: skip
        assert busy.plan.items == () and "still running" in busy.plan.errors[0]
        assert str(other.pid) in busy.plan.errors[0]
    finally:
        other.kill()
        other.wait()
    # its process is gone: the run "stopped unexpectedly" and may be continued
    free = prepare(toy_benchmark(10), store, model="scripted/echo?text=42",
                   selection=Selection(max_items=3))  # fmt: skip
    assert not free.plan.errors and free.previous is not None


def test_liveness_of_a_run_on_another_host() -> None:
    now = datetime.now(UTC)
    row = RunRow("r", "h", "b", "m", None, "running", None, now, now, 1,
                 {"worker": {"host": "elsewhere.example", "pid": 1}})  # fmt: skip
    assert run_is_live(row, now + timedelta(seconds=20))
    assert not run_is_live(row, now + timedelta(seconds=120))  # no heartbeat for 2 minutes
    row.status = "paused_budget"
    assert not run_is_live(row, now)


async def test_a_running_run_beats_while_its_calls_are_slow(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "HEARTBEAT_S", 0.05)  # the runner's public setting
    prepared = prepare(toy_benchmark(1), store, model="scripted/echo?text=42&ttft=0.5")
    runner = BenchRunner(prepared, store, retry=FAST)
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(0.15)
    first = BenchStore(store).run(runner.run_id)
    await asyncio.sleep(0.2)
    later = BenchStore(store).run(runner.run_id)
    assert first is not None and later is not None and first.status == "running"
    assert later.updated_at > first.updated_at  # touched with no answer written
    assert (await task).status == "completed"


# -- rate limits: what the runner's executor grants, without waiting ---------------------------


async def _granted_at_once(limits: CallLimits, model: Model, tries: int, tokens: int = 10) -> int:
    """How many of ``tries`` back-to-back calls of ``tokens`` ``limits`` lets ``model`` start
    without waiting (it stops at the first that would wait)."""
    granted = 0
    for _ in range(tries):
        try:
            async with asyncio.timeout(0.2):
                slot = await limits.enter(model, tokens)
        except TimeoutError:
            break
        slot.leave()
        granted += 1
    return granted


async def test_free_openrouter_models_are_rate_limited(store: Store) -> None:
    # Changed on purpose: rate limits live in the engine; they are read through the runner's
    # public executor (what its slots grant), not through the runner's private limiter table.
    prepared = prepare(toy_benchmark(2), store, model="scripted/echo?text=42")
    runner = BenchRunner(prepared, store, retry=FAST)
    limits, model = runner.executor.limits, runner.executor.model
    assert await _granted_at_once(limits, model("scripted/echo?text=42"), 30) == 30  # none
    assert await _granted_at_once(limits, model("scripted/echo?text=a:free"), 30) == 20
    limited = BenchRunner(prepared, store, retry=FAST, rate_limits=RateLimits(rpm=5))
    echo = limited.executor.model("scripted/echo?text=42")
    assert await _granted_at_once(limited.executor.limits, echo, 30) == 5
    outcome = await BenchRunner(prepared, store, retry=FAST, rate_limits=RateLimits(rpm=600)).run()
    assert outcome.status == "completed"
    plan = build_plan(toy_benchmark(2), model="openrouter/meta/llama-4:free")
    assert any("20 requests a minute" in note for note in plan.notes)


async def test_free_models_keep_their_rate_when_only_tokens_are_limited(store: Store) -> None:
    prepared = prepare(toy_benchmark(2), store, model="scripted/echo?text=42")
    runner = BenchRunner(prepared, store, rate_limits=RateLimits(tpm=1_000_000))
    limits, model = runner.executor.limits, runner.executor.model
    echo = model("scripted/echo?text=42")
    assert await _granted_at_once(limits, echo, 30) == 30  # no request rate asked for
    assert await _granted_at_once(limits, echo, 1, tokens=1_000_000) == 0  # the tokens are
    assert await _granted_at_once(limits, model("scripted/echo?text=a:free"), 30) == 20


# -- whole benchmarks, scoring choices, plans --------------------------------------------------


async def test_the_sample_benchmark_end_to_end_on_the_guessing_model(store: Store) -> None:
    from sweepbench.bench.catalog import load_benchmark
    from sweepbench.bench.report import load_report

    outcome = await _run(
        store, benchmark=load_benchmark("sample"), model="scripted/guess", judge="scripted/guess"
    )
    assert (outcome.status, outcome.scored, outcome.errors) == ("completed", 40, 0)
    report = load_report(store, outcome.run_id, resamples=1000)
    assert report.summary.covers_scope and report.summary.overall_100 is not None
    choice = report.summary.task(next(t.id for t in load_benchmark("sample").tasks
                                      if t.scorer == "choice_free"))  # fmt: skip
    assert 0 < choice.count == 10  # every choice answer was readable: ANSWER: X
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert not any((r["score_metadata"] or {}).get("format_valid") is False
                   for r in rows if r["task"] == choice.task)  # fmt: skip
    calls = calls_of(store, outcome.run_id)
    assert sum(c.role == "target" for c in calls) == sum(r["attempts"] for r in rows)
    assert sum(c.role == "judge" for c in calls) == sum(r["judge"] is not None for r in rows)


async def test_rule_scoring_replaces_the_judge_where_a_rule_exists(store: Store) -> None:
    from dataclasses import replace as swap

    from sweepbench.bench.report import load_report

    bench = toy_benchmark(2, judged=3)
    explain = bench.task("explain")
    ruled = swap(explain, options={"rule_scorer": "exact"},
                 items=tuple(swap(i, reference="42") for i in explain.items))  # fmt: skip
    bench = swap(bench, areas=(bench.areas[0], swap(bench.areas[1], tasks=(ruled,))))
    judged = prepare(bench, store, model="scripted/echo?text=42")
    assert any("--judge" in e for e in judged.plan.errors)  # judged by default
    prepared = prepare(bench, store, model="scripted/echo?text=42", rule_scoring=True)
    assert not prepared.plan.errors and prepared.plan.judged == 0
    assert any(n.startswith("Rule-scored: explain") for n in prepared.plan.notes)
    assert prepared.plan.config.hash != judged.plan.config.hash
    outcome = await BenchRunner(prepared, store, retry=FAST).run()
    rows = [r for r in BenchStore(store).answers(outcome.run_id) if r["task"] == "explain"]
    assert [r["passed"] for r in rows] == [True] * 3 and all(r["judge"] is None for r in rows)
    report = load_report(store, outcome.run_id, resamples=0)
    assert any(line.startswith("Rule-scored") for line in report.footer_lines())
    assert {c.role for c in calls_of(store, outcome.run_id)} == {"target"}  # no judge called


async def test_a_zero_limit_lets_free_calls_run(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?text=42", limits=Limits(total=Decimal(0)))
    assert outcome.status == "completed" and outcome.scored == 10
    assert Ledger(store).run_spent(outcome.run_id) == 0


def test_limits_over_an_unpriced_model_are_said_to_be_unenforceable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Changed on purpose: a model no price source knows, instead of patching the plan's lookup
    monkeypatch.setenv("OPENAI_API_KEY", "fake-openai-key-for-the-plan")
    model = "openai/no-such-model-anywhere"
    plan = build_plan(toy_benchmark(2), model=model, limits=Limits(total=Decimal(1)))
    assert not plan.errors
    assert plan.needs_price_ack and plan.low is None
    assert any(f"cannot hold calls to {model}" in note for note in plan.notes)


async def test_stop_while_grading_keeps_the_answer_for_a_regrade(store: Store) -> None:
    bench = toy_benchmark(0, judged=4)
    judge = f"scripted/echo?ttft=5&text={VERDICT}"
    prepared = prepare(bench, store, model="scripted/echo?text=42", judge=judge)
    runner = BenchRunner(prepared, store, retry=FAST, concurrency=4)
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(0.3)  # every answer is in; the judge is still thinking
    runner.stop()
    outcome = await task
    assert outcome.status == "interrupted"
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert len(rows) == 4 and {r["error_type"] for r in rows} == {"judge_not_run"}
    assert all(r["answer"] == "42" for r in rows)
    again = prepare(bench, store, model="scripted/echo?text=42", judge=judge)
    assert set(again.regrade) == {r["key"] for r in rows}  # graded again, not asked again
    calls = calls_of(store, outcome.run_id)  # the stopped grades are kept as cancelled calls
    assert sorted((c.role, c.stop_reason) for c in calls) == [
        ("judge", "cancelled")] * 4 + [("target", "end")] * 4  # fmt: skip


async def test_retry_failed_leaves_unasked_items_and_says_so(store: Store) -> None:
    bench = toy_benchmark(6, judged=2)
    stopped = prepare(bench, store, model="scripted/echo?text=42", judge="scripted/echo?text=x")
    runner = BenchRunner(stopped, store, retry=FAST, concurrency=1)
    runner.on_progress = lambda p: runner.stop() if p.done == 7 else None  # 6 + 1 judged
    first = await runner.run()
    assert first.status == "interrupted"
    assert len(BenchStore(store).statuses(first.run_id)) == 7  # one judged item never asked
    retry = prepare(bench, store, model="scripted/echo?text=42", judge="scripted/echo?text=x",
                    retry_failed=True)  # fmt: skip
    assert len(retry.plan.items) == 1 and retry.plan.already_done == 6
    assert retry.plan.role("target") is not None
    assert retry.plan.role("target").calls == 0  # type: ignore[union-attr]  # re-grade only
    outcome = await BenchRunner(retry, store, retry=FAST).run()
    assert outcome.status == "interrupted" and "not asked yet" in (outcome.reason or "")


def test_plan_refusals_and_aliases() -> None:
    bad = build_plan(toy_benchmark(2), model="scripted/echo", max_tokens=-5)
    assert any("at least 1 token" in e for e in bad.errors)
    auto = build_plan(toy_benchmark(2, judged=2), model="scripted/echo",
                      selection=Selection(preset="auto-checked"),
                      judge="openrouter/some/unreachable-model")  # fmt: skip
    assert not auto.errors and auto.config.judge is None  # an unused judge is not checked
    judged = build_plan(toy_benchmark(0, judged=2), model="scripted/echo",
                        judge="scripted/echo", decision_judge=True)  # fmt: skip
    role = judged.role("judge")
    assert role is not None and role.low == role.high  # verdict only: high is its low


def test_an_ambiguous_run_prefix_is_an_error(store: Store) -> None:
    runs = BenchStore(store)
    now = datetime.now(UTC)
    for suffix in ("a", "b"):
        runs.create_run(RunRow(f"toy-{suffix}", "h", "toy", "m", None, "completed", None, now,
                               now, 1, {}))  # fmt: skip
    with pytest.raises(UserError, match="matches 2 runs"):
        runs.run("toy-")
    assert runs.run("toy-a") is not None and runs.exists("toy-b") and not runs.exists("toy")


def test_the_judge_prompt_version_is_part_of_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sweepbench.bench import plan as plan_module

    judged = toy_benchmark(1, judged=1)
    before = build_plan(judged, model="scripted/echo", judge="scripted/echo").config
    auto_only = build_plan(toy_benchmark(1), model="scripted/echo", judge="scripted/echo")
    monkeypatch.setattr(plan_module, "JUDGE_PROMPT_VERSION", "next")
    after = build_plan(judged, model="scripted/echo", judge="scripted/echo").config
    assert before.hash != after.hash and after.prompt_version.endswith("+judge-next")
    unjudged = build_plan(toy_benchmark(1), model="scripted/echo", judge="scripted/echo")
    assert unjudged.config.hash == auto_only.config.hash  # no judge used: no judge version
