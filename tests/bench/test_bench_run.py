"""The benchmark runner on the scripted model: scores, storage, resume, retries, limits."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncGenerator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.items import Area, Benchmark, Item, Task
from sweepbench.bench.plan import Limits, Selection, build_plan
from sweepbench.bench.ratelimit import RateLimits
from sweepbench.bench.resume import prepare
from sweepbench.bench.retry import RetryPolicy
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import ProviderError, UserError
from sweepbench.models.base import Event, Finish, Model, Request, TextDelta, Usage, UsageEvent
from sweepbench.models.catalog import ModelInfo
from sweepbench.money.prices import Price
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)


class _CentPerCall(Price):
    def cost(self, usage: Usage) -> Decimal:
        return Decimal("0.01")


CENT_A_CALL = _CentPerCall(Decimal(0), Decimal(0), source="test: one cent a call")
VERDICT = '{"judge_result": "pass", "score": 0.9, "judge_reason": "clear"}'


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")


async def _run(store: Store, **kwargs: Any) -> Any:
    options = {k: kwargs.pop(k) for k in ("concurrency", "retry", "accept_unpriced") if k in kwargs}
    benchmark = kwargs.pop("benchmark", toy_benchmark(10))
    prepared = prepare(benchmark, store, **kwargs)
    runner = BenchRunner(prepared, store, retry=options.pop("retry", FAST), **options)
    return await runner.run()


async def test_scores_every_item_and_stores_it(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?text=42")
    assert outcome.status == "completed"
    assert (outcome.scored, outcome.errors) == (10, 0)
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert len(rows) == 10
    passed = {r["key"]: r["passed"] for r in rows}
    assert sum(passed.values()) == 5  # even rows expect 42, odd ones 41
    assert all(r["answer"] == "42" and r["status"] == "scored" for r in rows)


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
    nothing = prepare(toy_benchmark(10), store, model="scripted/echo?text=42", retry_failed=True)
    assert nothing.plan.errors  # other settings: nothing to retry


async def test_quota_error_interrupts_and_skips_the_rest(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?fail=402", concurrency=1)
    assert outcome.status == "interrupted"
    assert outcome.reason == "the key ran out of credit"
    assert BenchStore(store).statuses(outcome.run_id) == {}  # skipped, not failed


async def test_rate_limit_retry_honours_retry_after(store: Store) -> None:
    from sweepbench.errors import ErrorKind, ProviderError

    policy = RetryPolicy(base_delay_s=0.1, max_delay_s=20, jitter=0.0)
    import random

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
    bad = await _run(
        store, benchmark=bench, model="scripted/echo?text=42", judge="scripted/echo?text=nonsense"
    )
    rows = [r for r in BenchStore(store).answers(bad.run_id) if r["task"] == "explain"]
    assert {r["error_type"] for r in rows} == {"judge_unparseable"}
    assert all(r["raw_judge"] == "nonsense" and r["answer"] == "42" for r in rows)
    assert bad.status == "completed_with_errors"


async def test_judge_is_required_when_judged_tasks_are_selected(store: Store) -> None:
    prepared = prepare(toy_benchmark(2, judged=2), store, model="scripted/echo?text=42")
    assert any("--judge" in e for e in prepared.plan.errors)
    with pytest.raises(UserError, match="can't start"):
        BenchRunner(prepared, store)


async def test_spending_limit_pauses_and_keeps_answers(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a priced scripted model: $1,000 per 1M input tokens → each call costs a little
    from sweepbench.bench import run as run_module

    monkeypatch.setattr(run_module, "price_for", lambda info: CENT_A_CALL)
    outcome = await _run(
        store, model="scripted/echo?text=42", limits=Limits(total=Decimal("0.035")), concurrency=1
    )
    assert outcome.status == "paused_budget"
    stored = BenchStore(store)
    assert len(stored.statuses(outcome.run_id)) == 4  # 4 × $0.01 ≥ $0.035: the 5th is not sent
    assert stored.spent(outcome.run_id) == {"target": Decimal("0.04")}
    # raising the limit continues the same run
    more = await _run(
        store, model="scripted/echo?text=42", limits=Limits(total=Decimal("1")), concurrency=1
    )
    assert more.run_id == outcome.run_id and more.status == "completed"
    assert len(stored.statuses(outcome.run_id)) == 10


async def test_role_limit_for_the_judge(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from sweepbench.bench import run as run_module

    monkeypatch.setattr(run_module, "price_for", lambda info: CENT_A_CALL)
    outcome = await _run(
        store, benchmark=toy_benchmark(0, judged=5), model="scripted/echo?text=42",
        judge=f"scripted/echo?text={VERDICT}", limits=Limits(roles={"judge": Decimal("0.02")}),
        concurrency=1,
    )  # fmt: skip
    assert outcome.status == "paused_budget"
    rows = list(BenchStore(store).answers(outcome.run_id))
    graded = [r for r in rows if r["status"] == "scored"]
    waiting = [r for r in rows if r["error_type"] == "judge_not_run"]
    assert len(graded) == 2 and len(waiting) == 1 and waiting[0]["answer"] == "42"


async def test_fake_key_never_reaches_the_store_or_exports(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentinel = "sentinel-KEY-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", sentinel)
    # the scripted model echoes the prompt; the error message of a failing call carries the key
    from sweepbench.bench import run as run_module

    real = run_module.BenchRunner._stream

    async def leaky(self: Any, model: Any, request: Any, role: str, key: str) -> Any:
        result = await real(self, model, request, role, key)
        if key.endswith("-1"):
            from sweepbench.errors import ErrorKind, ProviderError

            result.stop_reason = "error"
            result.error = ProviderError(f"bad key {sentinel}", kind=ErrorKind.BAD_REQUEST,
                                         provider="openai")  # fmt: skip
        return result

    monkeypatch.setattr(run_module.BenchRunner, "_stream", leaky)
    outcome = await _run(store, model="scripted/echo?text=42")
    from sweepbench.bench.report import export_run

    written = export_run(store, outcome.run_id, tmp_path / "export")
    store.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]  # noqa: ASYNC240 (a test, after the run)
    assert any(p.name == "failures.jsonl" for p in files)
    for path in files:
        assert sentinel.encode() not in path.read_bytes(), path
    failures = (tmp_path / "export" / "failures.jsonl").read_text()
    assert "[redacted]" in failures
    assert len(written) == 5
    json.loads((tmp_path / "export" / "summary.json").read_text())


class _Replay(Model):
    """A model that gives pre-set replies in turn and records what it was asked."""

    provider = "scripted"

    def __init__(self, replies: list[tuple[str, str] | ProviderError]) -> None:
        super().__init__(ModelInfo(provider="scripted", name="replay"))
        self.replies = replies
        self.requests: list[Request] = []

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, ProviderError):
            raise reply
        text, stop = reply
        yield TextDelta(text)
        yield UsageEvent(Usage(input_tokens=5, output_tokens=len(text.split())))
        yield Finish(stop)  # type: ignore[arg-type]


def _one_item_benchmark(scorer: str, prompt: str, reference: str, **options: Any) -> Benchmark:
    item = Item("t.jsonl::1", "1", "t", "default", prompt, reference, {"choices": 4}, "t.jsonl", 1)
    task = Task("t", "a", "T", "auto", scorer, (item,), options=options)
    return Benchmark("one", "One", (Area("a", "A", (task,)),), version="1")


async def _run_replay(
    store: Store, benchmark: Benchmark, fake: _Replay, limits: Limits | None = None
) -> dict[str, Any]:
    prepared = prepare(benchmark, store, model="scripted/echo", max_tokens=300, limits=limits)
    runner = BenchRunner(prepared, store, retry=FAST)
    runner._model("scripted/echo")  # create its semaphore, then swap in the fake
    runner._models["scripted/echo"] = fake
    outcome = await runner.run()
    (row,) = BenchStore(store).answers(outcome.run_id)
    return row


async def test_choice_answer_without_a_letter_gets_one_reminder(store: Store) -> None:
    fake = _Replay([("I think it is B", "end"), ("ANSWER: B", "end")])
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"), fake)
    assert (row["passed"], row["attempts"], row["answer"]) == (True, 2, "ANSWER: B")
    second = fake.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "user"]
    assert second[1].content == "I think it is B" and "final line" in second[2].content
    assert row["output_tokens"] == 5 + 2  # both tries are counted


async def test_choice_answer_cut_by_the_limit_gets_the_concise_prompt(store: Store) -> None:
    fake = _Replay([("Let me think about x and y at length", "max_tokens"), ("C", "end")])
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"), fake)
    concise = fake.requests[1]
    assert len(concise.messages) == 1 and concise.settings.max_tokens == 64
    assert concise.messages[0].content.endswith("Reply with only the final line: ANSWER: [LETTER]")
    assert "(ABCD)" in concise.messages[0].content
    assert (row["answer"], row["passed"]) == ("C", False)


async def test_choice_answer_still_without_a_letter_is_scored_and_marked(store: Store) -> None:
    fake = _Replay([("maybe", "end"), ("still unsure", "end")])
    row = await _run_replay(store, _one_item_benchmark("choice", "Pick: A) x B) y", "B"), fake)
    assert row["status"] == "scored" and row["passed"] is False and row["attempts"] == 2
    assert row["score_metadata"]["format_valid"] is False
    assert row["answer"] == "maybe"  # the first answer is the one scored
    assert row["output_tokens"] == 1 + 2  # and both tries are counted


async def test_math_answer_cut_by_the_limit_is_asked_for_the_boxed_answer(store: Store) -> None:
    prompt = "Let's think step by step. What is 6 times 7? Put the answer in \\boxed{}."
    fake = _Replay([("First, six sevens are", "max_tokens"), ("\\boxed{42}", "end")])
    row = await _run_replay(store, _one_item_benchmark("math", prompt, "42"), fake)
    retry = fake.requests[1]
    assert "step by step" not in retry.messages[0].content
    assert "Skip the reasoning" in retry.messages[0].content
    assert retry.settings.max_tokens == 300  # the base, below 512
    assert (row["passed"], row["attempts"]) == (True, 2)


async def test_upstream_content_filter_is_an_answer_not_an_error(store: Store) -> None:
    from sweepbench.errors import ErrorKind

    blocked = ProviderError(
        "content_filter: the prompt was blocked", kind=ErrorKind.BAD_REQUEST,
        provider="openai", status=400,
    )  # fmt: skip
    row = await _run_replay(store, _one_item_benchmark("exact", "Say 42", "42"), _Replay([blocked]))
    assert row["status"] == "scored" and row["passed"] is False
    assert row["answer"].startswith("[UPSTREAM_FILTERED:content_filter] content_filter: the")


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
    in_flight = peak = 0
    from sweepbench.bench import run as run_module

    real = run_module.BenchRunner._stream

    async def counting(self: Any, *args: Any) -> Any:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await real(self, *args)
        finally:
            in_flight -= 1

    run_module.BenchRunner._stream = counting  # type: ignore[method-assign,assignment]
    try:
        outcome = await _run(
            store, benchmark=toy_benchmark(30, judged=30), model="scripted/echo?text=42&ttft=0.01",
            judge=f"scripted/echo?ttft=0.01&text={VERDICT}", concurrency=3,
        )  # fmt: skip
    finally:
        run_module.BenchRunner._stream = real  # type: ignore[method-assign]
    assert outcome.status == "completed"
    assert peak == 3  # target and judge share the scripted provider's allowance


def test_a_run_alive_in_another_process_is_not_resumed_twice(store: Store) -> None:
    import subprocess
    import sys

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
    from datetime import UTC, datetime, timedelta

    from sweepbench.bench.storage import RunRow, run_is_live

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
    from sweepbench.bench import run as run_module

    monkeypatch.setattr(run_module, "HEARTBEAT_S", 0.05)
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


async def test_free_openrouter_models_are_rate_limited(store: Store) -> None:
    prepared = prepare(toy_benchmark(2), store, model="scripted/echo?text=42")
    runner = BenchRunner(prepared, store, retry=FAST)
    runner._model("scripted/echo?text=42")
    assert "scripted/echo?text=42" not in runner._limiters  # no limits asked for: none
    limited = BenchRunner(prepared, store, retry=FAST, rate_limits=RateLimits(rpm=600))
    limited._model("scripted/echo?text=42")
    assert limited._limiters["scripted/echo?text=42"].limits.rpm == 600
    outcome = await limited.run()
    assert outcome.status == "completed"
    plan = build_plan(toy_benchmark(2), model="openrouter/meta/llama-4:free")
    assert any("20 requests a minute" in note for note in plan.notes)


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
                                      if t.scorer == "choice"))  # fmt: skip
    assert 0 < choice.count == 10  # every choice answer was readable: ANSWER: X
    rows = list(BenchStore(store).answers(outcome.run_id))
    assert not any((r["score_metadata"] or {}).get("format_valid") is False
                   for r in rows if r["task"] == choice.task)  # fmt: skip


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


async def test_a_zero_limit_lets_free_calls_run(store: Store) -> None:
    outcome = await _run(store, model="scripted/echo?text=42", limits=Limits(total=Decimal(0)))
    assert outcome.status == "completed" and outcome.scored == 10


def test_limits_over_an_unpriced_model_are_said_to_be_unenforceable(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.bench import plan as plan_module

    monkeypatch.setattr(plan_module, "price_for", lambda info: None)
    plan = build_plan(toy_benchmark(2), model="scripted/echo", limits=Limits(total=Decimal(1)))
    assert plan.needs_price_ack and plan.low is None
    assert any("cannot hold calls to scripted/echo" in note for note in plan.notes)


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


async def test_a_limit_between_the_two_tries_keeps_the_paid_answer(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.bench import run as run_module

    monkeypatch.setattr(run_module, "price_for", lambda info: CENT_A_CALL)
    fake = _Replay([("I think it is B", "end"), ("ANSWER: B", "end")])
    bench = _one_item_benchmark("choice", "Pick: A) x B) y", "B")
    row = await _run_replay(store, bench, fake, Limits(total=Decimal("0.01")))
    assert len(fake.requests) == 1  # the reminder was not sent: the limit was reached
    assert (row["status"], row["answer"], row["passed"]) == ("scored", "I think it is B", False)
    (run,) = BenchStore(store).runs()
    assert run.status == "paused_budget"


async def test_a_content_filter_message_is_scrubbed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.errors import ErrorKind

    sentinel = "sentinel-filter-key-0123456789"
    monkeypatch.setenv("OPENROUTER_API_KEY", sentinel)
    blocked = ProviderError(
        f"content_filter: blocked for key {sentinel}",
        kind=ErrorKind.BAD_REQUEST, provider="openrouter", status=400,
    )  # fmt: skip
    row = await _run_replay(store, _one_item_benchmark("exact", "Say 42", "42"), _Replay([blocked]))
    assert sentinel not in row["answer"] and "[redacted]" in row["answer"]


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


def test_free_models_keep_their_rate_when_only_tokens_are_limited(store: Store) -> None:
    prepared = prepare(toy_benchmark(2), store, model="scripted/echo?text=42")
    runner = BenchRunner(prepared, store, rate_limits=RateLimits(tpm=1_000_000))
    runner._model("scripted/echo?text=42")
    limits = runner._limiters["scripted/echo?text=42"].limits
    assert (limits.rpm, limits.tpm) == (None, 1_000_000)
    free = "scripted/echo?text=a:free"
    runner._model(free)
    assert (runner._limiters[free].limits.rpm, runner._limiters[free].limits.tpm) == (20, 1_000_000)


def test_an_ambiguous_run_prefix_is_an_error(store: Store) -> None:
    from datetime import UTC, datetime

    from sweepbench.bench.storage import RunRow

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
