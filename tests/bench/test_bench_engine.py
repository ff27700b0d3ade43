"""Benchmarks on the engine, through public paths only: the host's ceilings (the daily budget,
the call window), impossible usage from a real adapter, and a key that a server echoes back —
on the scripted model and on a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_progress import RunOutcome
from sweepbench.bench.storage import BenchStore
from sweepbench.engine import RetryPolicy
from sweepbench.models.tokens import prompt_token_bound
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from tests.bench.helpers import calls_of, compatible_server, set_prices, toy_benchmark
from tests.bench.plans import prepare
from tests.helpers import cli, store_texts
from tests.servers import Reply, StreamFailure

FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
MODEL = "scripted/echo?text=42"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")


async def _run(store: Store, model: str = MODEL, **kwargs: Any) -> RunOutcome:
    benchmark = kwargs.pop("benchmark", toy_benchmark(10))
    concurrency = kwargs.pop("concurrency", 1)
    prepared = prepare(benchmark, store, model=model, **kwargs)
    return await BenchRunner(prepared, store, retry=FAST, concurrency=concurrency).run()


# -- the host's ceilings ----------------------------------------------------------------------


async def test_a_priced_benchmark_pauses_at_the_daily_ceiling_and_the_ledger_shows_it(
    store: Store, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.01")
    set_prices(isolated_home, {"scripted.echo": (50, 50)})  # $0.00005 a token
    per_token, budget = Decimal("0.00005"), 6
    bench = toy_benchmark(30)
    # a call is made while its worst case (prompt at its bound + the whole budget) fits what
    # is left of today's $0.01; each answer costs its words in and "42" out
    spent, expected = Decimal(0), 0
    for item in bench.tasks[0].items:
        if Decimal("0.01") - spent < (prompt_token_bound([item.prompt]) + budget) * per_token:
            break
        spent += (len(item.prompt.split()) + 1) * per_token
        expected += 1
    assert 0 < expected < 30
    outcome = await _run(store, benchmark=bench, max_tokens=budget)
    assert outcome.status == "paused_budget" and outcome.scored == expected
    reason = outcome.reason or ""
    assert "SWEEPBENCH_DAILY_USD" in reason and "today's $0.01" in reason
    ledger = Ledger(store)
    summary = ledger.summary()
    assert summary.spent_today == spent == ledger.run_spent(outcome.run_id) > 0
    assert summary.reserved == 0 and summary.remaining_today == Decimal("0.01") - spent
    assert sum(BenchStore(store).spent(outcome.run_id).values()) == spent
    assert len(calls_of(store, outcome.run_id)) == expected
    # the same run again today: refused at its first call, nothing asked, nothing spent
    again = await _run(store, benchmark=bench, max_tokens=budget)
    assert (again.run_id, again.status, again.session_scored) == (
        outcome.run_id,
        "paused_budget",
        0,
    )
    assert "SWEEPBENCH_DAILY_USD" in (again.reason or "")
    assert ledger.summary().spent_today == spent
    assert len(calls_of(store, outcome.run_id)) == expected


async def test_the_call_window_never_counts_free_or_benchmark_calls(
    store: Store, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_CALLS_PER_HOUR", "2")
    free = await _run(store, concurrency=4)  # scripted, no price: $0 calls hold nothing
    assert (free.status, free.scored) == ("completed", 10)
    assert Ledger(store).reservations(free.run_id) == []
    set_prices(isolated_home, {"scripted.guess": (1, 2)})
    paid = await _run(store, model="scripted/guess", concurrency=4)
    assert (paid.status, paid.scored) == ("completed", 10)
    summary = Ledger(store).summary()
    assert summary.ceilings.calls_per_hour == 2  # the window is set, and nothing counted in it
    assert (summary.calls_in_window, summary.calls_left) == (0, 2)
    assert summary.spent_today == Ledger(store).run_spent(paid.run_id) > 0
    assert len(calls_of(store, free.run_id)) == len(calls_of(store, paid.run_id)) == 10


# -- impossible usage from a real adapter -----------------------------------------------------


async def test_a_negative_or_nan_reported_cost_is_a_bad_response_settled_at_its_hold(
    store: Store, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    set_prices(isolated_home, {"compatible.m": (1000, 1000)})  # $0.001 a token
    per_token, budget = Decimal("0.001"), 20
    good = Reply("42", input_tokens=7, output_tokens=1, cost=0.005)  # OpenRouter's usage.cost
    bench = toy_benchmark(10)
    keys = [i.key for i in bench.tasks[0].items]
    worst = (prompt_token_bound([bench.tasks[0].items[0].prompt]) + budget) * per_token
    with compatible_server(monkeypatch, default=good) as server:
        server.push(good, good, Reply("42", cost=-5.0), Reply("42", cost=float("nan")))
        first = await _run(store, "compatible/m", benchmark=bench, max_tokens=budget)
        assert len(server.requests) == 10
        runs = BenchStore(store)
        assert first.status == "completed_with_errors" and (first.scored, first.errors) == (8, 2)
        failed = {r["key"]: r for r in runs.answers(first.run_id, status="failed")}
        assert set(failed) == {keys[2], keys[3]}  # the rest of the batch is stored, scored
        assert {r["error_type"] for r in failed.values()} == {"bad_response"}
        assert (
            "cost of -5" in failed[keys[2]]["error"] and "cost of NaN" in failed[keys[3]]["error"]
        )
        assert all(r["attempts"] == 1 and not r["retries"] for r in failed.values())  # not retried
        # never a charge of $-5 (nor NaN): each bad call is settled at what was held for it
        lines = {s["key"]: Decimal(s["usd"]) for s in runs.spend_lines(first.run_id)}
        assert lines == {k: worst if k in failed else Decimal("0.005") for k in keys}
        paid = 8 * Decimal("0.005") + 2 * worst
        ledger = Ledger(store)
        assert ledger.run_spent(first.run_id) == paid == ledger.summary().spent_today
        calls = {c.item_key: c for c in calls_of(store, first.run_id)}
        assert len(calls) == 10
        for key in failed:
            call = calls[key]
            assert (call.stop_reason, call.error_kind, call.cost_usd) == ("error", "bad_response",
                                                                          worst)  # fmt: skip
        # Continuing the run does not ask the eight good answers again: only the two failures
        # are planned (with --retry-failed, and — spec §9 — by a plain resume too), each held
        # at its worst case again and paid once; the first attempts' charges stay counted once.
        plain = prepare(bench, store, model="compatible/m", max_tokens=budget)
        retry = prepare(bench, store, model="compatible/m", max_tokens=budget, retry_failed=True)
        for again in (plain, retry):
            assert again.previous is not None and again.previous.id == first.run_id
            assert {i.key for i in again.plan.items} == set(failed)
        second = await BenchRunner(retry, store, retry=FAST, concurrency=1).run()
        assert (second.run_id, second.status, second.session_scored) == (
            first.run_id, "completed", 2,
        )  # fmt: skip
        assert len(server.requests) == 12
    assert ledger.run_spent(first.run_id) == paid + 2 * Decimal("0.005")
    assert len(calls_of(store, first.run_id)) == 12


# -- a key the server echoes ------------------------------------------------------------------

KEY = "fake-compat-secret-0123456789"
"""Not shaped like any provider's key: only the scrubber's list of known keys can catch it."""
DECLARATION = """\
id: leaky
name: Leaky
areas:
  - {key: maths, label: Maths}
tasks:
  - id: sums
    area: maths
    name: Sums
    data: sums.jsonl
    fields: {id: id, prompt: question, reference: answer}
    scorer: exact
"""


def test_a_key_the_server_echoes_reaches_no_table_no_export_and_no_output(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "leaky.yaml").write_text(DECLARATION)
    rows = [{"id": f"s{i}", "question": f"What is {i} + {i}?", "answer": "42"} for i in range(6)]
    (folder / "sums.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    printed: list[str] = []

    def run(*args: str) -> int:
        code = cli(monkeypatch, *args)
        captured = capsys.readouterr()
        printed.extend((captured.out, captured.err))
        return code

    answer = Reply("42", input_tokens=5, output_tokens=1)
    with compatible_server(monkeypatch, api_key=KEY, default=answer) as server:
        # the server repeats the key it was sent in every HTTP error; the stream failure
        # carries it in its own message. With one request at a time: s0 is refused (400, not
        # retried), s1 fails with a 500 and is retried, s2's stream breaks and is retried.
        server.error(400, "bad request")
        server.error(500, "upstream failed")
        server.push(answer, Reply("4", failure=StreamFailure(after=1, message=f"lost {KEY}")))
        code = run("bench", "run", str(folder / "leaky.yaml"), "-m", "compatible/leaky",
                   "--concurrency", "1")  # fmt: skip
        assert code == 1, printed  # finished with an error
        assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.requests)
        assert len(server.requests) == 6 + 2  # six answers, two retries
    assert run("bench", "runs", "--json") == 0
    (stored,) = json.loads(printed[-2])
    run_id = stored["run_id"]
    assert (stored["scored"], stored["errors"]) == (5, 1)
    assert run("bench", "show", run_id) == 0
    assert run("bench", "show", run_id, "--json") == 0
    export = tmp_path / "export"
    assert run("bench", "export", run_id, str(export)) == 0
    assert run("spend") == 0 and run("spend", "--json") == 0
    # the output: no key anywhere, on stdout or stderr
    assert all(KEY not in text for text in printed)
    # the store: every text of every table, and the database files themselves
    with Store.open() as store:
        cells = store_texts(store)
        answers = {r["key"]: r for r in BenchStore(store).answers(run_id)}
        calls = calls_of(store, run_id)
    assert cells["calls"] and cells["bench_answers"] and cells["bench_runs"]
    assert not [(t, v) for t, values in cells.items() for v in values if KEY in v]
    for path in isolated_home.glob("sweepbench.db*"):
        assert KEY.encode() not in path.read_bytes(), path
    # where the key was, the scrubber left its mark: the error, the retry log, the calls log
    (refused,) = [r for r in answers.values() if r["status"] == "failed"]
    assert refused["error_type"] == "bad_request" and "[redacted]" in refused["error"]
    retried = [r for r in answers.values() if r["retries"]]
    assert len(retried) == 2 and all("[redacted]" in r["retries"][0]["error"] for r in retried)
    assert sum(c.error is not None and "[redacted]" in c.error for c in calls) == 3
    # one calls row per answer and per retry
    assert len(calls) == 6 + 2 == sum(r["attempts"] for r in answers.values())
    # the export: every file
    files = sorted(p for p in export.iterdir() if p.is_file())
    assert {p.name for p in files} >= {"answers.jsonl", "failures.jsonl", "summary.json"}
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    assert "[redacted]" in (export / "failures.jsonl").read_text()


def test_the_fake_server_really_echoes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above means something only if the key does reach the error text unscrubbed
    when nothing scrubs it: the adapter alone passes it through."""
    from tests.adapters import run

    with compatible_server(monkeypatch, api_key=KEY) as server:
        server.error(400, "bad request")
        result = asyncio.run(run("compatible/leaky"))
    assert result.error is not None and KEY in str(result.error)
