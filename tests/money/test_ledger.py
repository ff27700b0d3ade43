"""The spend ledger: admission arithmetic and refusals, settlement, the rolling hour, UTC days,
the lifetime ceiling across purges, environment overrides, several processes on one SQLite
file, and the ``spend`` command.

Tests that take the ``store`` fixture also run on PostgreSQL when ``SWEEPBENCH_TEST_POSTGRES``
holds the URL of a throwaway database (see tests/store/test_store.py).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import queue
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
import typer
from typer.testing import CliRunner

from sweepbench.errors import BudgetExceeded, UserError
from sweepbench.money.ceilings import cap_to_micro, micro_to_usd, usd_to_micro
from sweepbench.money.ledger import (
    STALE_AFTER_S,
    Ceilings,
    Charge,
    Ledger,
    SpendRefused,
)
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations, spend_totals
from sweepbench.store.workers import forget_workers
from tests.backends import BACKENDS, backend_url

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
D = Decimal
MODEL = "anthropic/claude-opus-5"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with Store.open(backend_url(request.param, tmp_path / "ledger.db")) as s:
        yield s
        # This process's worker row goes with the database; without this, a later test on the
        # same PostgreSQL URL (its schema wiped) would hold money as a worker with no row, which
        # every admission takes for dead.
        forget_workers()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def ledger_for(store: Store, clock: Clock, **ceilings: Any) -> Ledger:
    return Ledger(store, Ceilings(**ceilings), clock)


def charges(*amounts: str, role: str = "sweep") -> list[Charge]:
    return [Charge(MODEL, D(a), role=role) for a in amounts]


def rows(store: Store) -> tuple[list[Any], list[Any]]:
    with store.engine.connect() as conn:
        return (
            conn.execute(sa.select(spend_reservations).order_by("id")).all(),
            conn.execute(sa.select(spend_totals).order_by("scope")).all(),
        )


def refusal(ledger: Ledger, run_id: str, batch: list[Charge], **kw: Any) -> SpendRefused:
    before = rows(ledger.store)
    with pytest.raises(SpendRefused) as info:
        ledger.admit(run_id, batch, **kw)
    assert isinstance(info.value, BudgetExceeded)
    assert rows(ledger.store) == before  # a refusal writes nothing
    return info.value


# -- admission ----------------------------------------------------------------------------------


def test_admit_reserves_each_call_at_its_ceiling_rounded_up(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ids = ledger.admit("sweep-1", charges("0.6075", "0.0000001", "0"))
    assert len(ids) == len(set(ids)) == 3
    got = ledger.reservations("sweep-1")
    assert [r.id for r in got] == ids
    assert [r.reserved_usd for r in got] == [D("0.6075"), D("0.000001"), D(0)]
    assert {(r.state, r.day, r.role, r.admitted_at, r.settled_usd) for r in got} == {
        ("reserved", "2025-06-01", "sweep", T0, None)
    }
    s = ledger.summary()
    assert s.reserved == s.reserved_today == D("0.607501") and s.open_reservations == 3
    assert s.spent_today == 0 and s.spent_total == 0
    assert s.remaining_today == D("9.392499") and s.remaining_total is None
    assert (s.calls_in_window, s.calls_left, s.binding) == (3, 37, "daily")
    assert ledger.admit("sweep-2", []) == []


def test_the_call_window_refuses_with_the_spec_wording(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, calls_per_hour=3)
    ledger.admit("a", charges("0.01", "0.01"))
    err = refusal(ledger, "b", charges("0.01", "0.01"))
    assert str(err) == (
        "Rate limit: 3 paid model calls per 60 minutes on this host (SWEEPBENCH_CALLS_PER_HOUR); "
        "1 remain and this sweep needs 2. Calls to free models never count."
    )
    assert (err.ceiling, err.needed, err.remaining, err.limit) == ("calls", 2, 1, 3)
    err = refusal(ledger, "b", charges("0.01", "0.01", role="generate"))
    assert "; 1 remain and this generation needs 2." in str(err)
    err = refusal(ledger, "b", [*charges("0.01"), *charges("0.01", role="generate")])
    assert "; 1 remain and this run needs 2." in str(err)
    # benchmark calls never count in the window: admitted past it, and the window is unchanged
    assert len(ledger.admit("bench", charges("0.01", "0.01", role="judge"))) == 2
    assert ledger.summary().calls_in_window == 2
    ledger.admit("b", charges("0.01"))  # exactly what is left
    assert refusal(ledger, "c", charges("0.01", role="generate")).remaining == 0


def test_a_sweep_too_big_for_today_says_what_is_left(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    ledger.admit("a", charges("0.70"))
    err = refusal(ledger, "b", charges("0.20", "0.20"))
    e, r, c = format_usd(D("0.4")), format_usd(D("0.3")), format_usd(D(1))
    assert str(err) == (
        f"This sweep could cost up to {e} and only {r} of today's {c} is left "
        "(SWEEPBENCH_DAILY_USD). Lower the max-token budgets, the effort or the number of cells, "
        "or try again after midnight UTC."
    )
    assert (err.ceiling, err.needed, err.remaining, err.limit) == ("daily", D("0.4"), D("0.3"), 1)
    ledger.admit("b", charges("0.20", "0.10"))  # exactly the cap fits


def test_a_reached_daily_budget_says_so(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    [rid] = ledger.admit("a", charges("1"))
    err = refusal(ledger, "b", charges("0.01"))
    one = format_usd(D(1))
    assert str(err) == (
        f"Daily budget reached (SWEEPBENCH_DAILY_USD) — $0 of {one} spent today ({one} more is "
        "held by calls in progress). It resets at midnight UTC. This is a host limit, not a "
        "fault with your prompt."
    )
    ledger.settle(rid, D("1.2"))  # actual cost beyond the reservation is counted in full
    err = refusal(ledger, "b", charges("0.01"))
    assert str(err) == (
        f"Daily budget reached (SWEEPBENCH_DAILY_USD) — {format_usd(D('1.2'))} of {one} spent "
        "today. It resets at midnight UTC. This is a host limit, not a fault with your prompt."
    )
    assert err.remaining == 0 and err.spent == D("1.2")


def test_the_lifetime_ceiling_is_named(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, total_usd=D(2))
    [rid] = ledger.admit("a", charges("1.5"))
    err = refusal(ledger, "b", charges("1"))
    e, r, c = (format_usd(D(x)) for x in ("1", "0.5", "2"))
    assert str(err) == (
        f"This sweep could cost up to {e} and only {r} of this host's {c} lifetime ceiling is "
        "left (SWEEPBENCH_TOTAL_USD). Lower the max-token budgets, the effort or the number of "
        "cells."
    )
    assert err.ceiling == "cumulative"
    ledger.settle(rid, D(2))
    err = refusal(ledger, "b", charges("0.5"))
    assert str(err) == (
        f"Lifetime budget reached — {c} of this host's {c} lifetime ceiling is spent "
        "(SWEEPBENCH_TOTAL_USD). This is a host limit, not a fault with your prompt."
    )


def test_the_tighter_of_daily_and_lifetime_is_reported(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1), total_usd=D(5))
    ledger.admit("a", charges("0.9"))
    assert refusal(ledger, "b", charges("0.5")).ceiling == "daily"
    ledger = ledger_for(store, clock, daily_usd=D(5), total_usd=D(1))
    assert refusal(ledger, "b", charges("0.5")).ceiling == "cumulative"


def test_a_run_limit_counts_the_runs_settled_and_open_spend(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    [first] = ledger.admit("bench-1", charges("0.6", role="judge"), run_limit_usd=D(1))
    ledger.settle(first, D("0.5"))
    ledger.admit("bench-1", charges("0.3", role="judge"), run_limit_usd=D(1))
    err = refusal(ledger, "bench-1", charges("0.3", role="judge"), run_limit_usd=D(1))
    r, c = format_usd(D("0.2")), format_usd(D(1))
    assert str(err) == (
        f"This run could cost up to {format_usd(D('0.3'))} and only {r} of its {c} spending "
        "limit is left. Raise it with --limit USD, or lower the max-token budgets or the number "
        "of calls."
    )
    assert (err.ceiling, err.remaining, err.spent) == ("run", D("0.2"), D("0.5"))
    ledger.admit("bench-2", charges("0.3"), run_limit_usd=D(1))  # another run, its own limit
    assert ledger.run_spent("bench-1") == D("0.5")


def test_free_calls_hold_nothing_and_never_count(store: Store, clock: Clock) -> None:
    free = Charge("local/smollm2-135m", D(0), free=True)
    nothing = ledger_for(store, clock, daily_usd=D(0), total_usd=D(0), calls_per_hour=0)
    before = rows(store)
    # $0 never crosses a ceiling, even a $0 one or an empty window, and keeps no row
    assert nothing.admit("local", [free] * 50) == [None] * 50
    assert rows(store) == before
    s = nothing.summary()
    assert (s.calls_in_window, s.open_reservations, s.reserved) == (0, 0, 0)

    ledger = ledger_for(store, clock, daily_usd=D(1), calls_per_hour=2)
    ids = ledger.admit("mixed", [free, *charges("0.1"), free, free, *charges("0.2")])
    assert [i is None for i in ids] == [True, False, True, True, False]
    assert [(r.id, r.reserved_usd) for r in ledger.reservations("mixed")] == [
        (ids[1], D("0.1")),
        (ids[4], D("0.2")),
    ]
    s = ledger.summary()
    assert (s.calls_in_window, s.calls_left, s.open_reservations) == (2, 0, 2)
    assert ledger.admit("more", [free] * 3) == [None] * 3  # the window is full: still admitted
    long_id = Charge("scripted/echo?text=" + "x" * 400, D(0), free=True)  # kept nowhere, so fine
    assert ledger.admit("long", [long_id]) == [None]
    assert refusal(ledger, "more", [free, *charges("0.01")]).ceiling == "calls"
    assert ledger.summary().calls_in_window == 2


def test_micro_dollar_conversions_are_exact() -> None:
    assert [str(micro_to_usd(m)) for m in (0, 1, 1_500_000, 10_000_000, 123_000_000)] == [
        "0",
        "0.000001",
        "1.5",
        "10",
        "123",
    ]
    assert usd_to_micro(D("0.0000001"), up=True) == 1
    assert usd_to_micro(D("0.0000004999"), up=False) == 0
    assert usd_to_micro(D("0.0000005"), up=False) == 1
    assert usd_to_micro(D("123456789.1234567"), up=True) == 123456789123457
    assert cap_to_micro(D("0.0000019")) == 1


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ceiling_usd": 0.5}, TypeError),
        ({"ceiling_usd": D("-0.01")}, ValueError),
        ({"ceiling_usd": D("NaN")}, ValueError),
        ({"ceiling_usd": D("Infinity")}, ValueError),
        ({"ceiling_usd": D("0.1"), "free": True}, ValueError),
        ({"ceiling_usd": D(1), "model": ""}, UserError),
        ({"ceiling_usd": D(1), "model": "scripted/echo?text=" + "x" * 300}, UserError),
    ],
)
def test_bad_charges_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        Charge(**{"model": MODEL, **kwargs})
    assert Charge(MODEL, 2).ceiling_usd == D(2)  # type: ignore[arg-type]


# -- settlement ---------------------------------------------------------------------------------


def test_settle_release_and_attach(
    store: Store, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = ledger_for(store, clock)
    a, b, c, d = ledger.admit("s", charges("0.5", "0.5", "0.5", "0.5"))
    clock.advance(seconds=30)
    assert ledger.settle(a, D("0.0000015"))  # half-up to 2 micro-dollars
    assert ledger.settle(b, None)  # no price on file: counted at the reservation
    assert ledger.release(c)  # never reached the provider
    ledger.attach(d, "c" * 32)
    ledger.attach(d, "c" * 32)  # the same link again is fine
    with pytest.raises(UserError, match="already belongs"):
        ledger.attach(d, "e" * 32)
    with pytest.raises(UserError, match="no spend reservation"):
        ledger.attach("nope", "c" * 32)
    with pytest.raises(UserError, match="no spend reservation"):
        ledger.settle("nope", D(0))
    got = {r.id: r for r in ledger.reservations("s")}
    assert [got[x].settled_usd for x in (a, b, c, d)] == [D("0.000002"), D("0.5"), D(0), None]
    assert [got[x].state for x in (a, b, c, d)] == ["settled"] * 3 + ["reserved"]
    assert got[a].settled_at == clock.now and got[d].call_id == "c" * 32
    s = ledger.summary()
    assert s.spent_today == s.spent_total == D("0.500002") and s.reserved == D("0.5")
    assert s.calls_in_window == 4  # a released call still used its slot

    with caplog.at_level(logging.WARNING, logger="sweepbench.money.ledger"):
        assert not ledger.settle(a, D(3))  # idempotent: the first settlement stands
    assert "already settled" in caplog.text
    assert ledger.summary().spent_total == D("0.500002")
    with pytest.raises(ValueError):
        ledger.settle(d, D(-1))


def test_stale_reservations_expire_at_their_reserved_amount(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    [old] = ledger.admit("crashed", charges("0.25"))
    clock.advance(seconds=STALE_AFTER_S - 1)
    ledger.admit("alive", charges("0.5"))
    assert ledger.expire_stale() == 0
    clock.advance(seconds=2)
    assert ledger.expire_stale() == 1
    [expired] = ledger.reservations("crashed")
    assert (expired.state, expired.settled_usd, expired.settled_at) == (
        "expired",
        D("0.25"),
        clock.now,
    )
    assert not ledger.settle(old, D("0.01"))  # a late settlement does not undo the expiry
    s = ledger.summary()
    assert s.spent_total == s.spent_today == D("0.25") and s.reserved == D("0.5")
    assert ledger.run_spent("crashed") == D("0.25")
    clock.advance(seconds=STALE_AFTER_S + 1)
    ledger.admit("next", charges("0.1"))  # admission expires stale reservations first
    assert ledger.reservations("alive")[0].state == "expired"
    assert ledger.settle(ledger.reservations("next")[0].id, D("0.1"))


# -- time ---------------------------------------------------------------------------------------


def test_the_daily_ceiling_resets_at_midnight_utc(store: Store) -> None:
    clock = Clock(datetime(2025, 6, 1, 23, 59, 30, tzinfo=UTC))
    ledger = ledger_for(store, clock, daily_usd=D(1))
    [rid] = ledger.admit("late", charges("0.9"))
    assert refusal(ledger, "x", charges("0.2")).ceiling == "daily"
    clock.advance(seconds=45)  # 00:00:15 on the 2nd
    ledger.settle(rid, D("0.8"))  # counts against the day it was admitted
    s = ledger.summary()
    assert (s.day, s.spent_today, s.reserved_today, s.remaining_today) == ("2025-06-02", 0, 0, 1)
    assert s.spent_total == D("0.8")
    ledger.admit("early", charges("1"))
    assert ledger.reservations("early")[0].day == "2025-06-02"
    # the same instant given in another zone is the same UTC day
    east = Ledger(store, ledger.ceilings, lambda: clock.now.astimezone(ZoneInfo("Asia/Tokyo")))
    assert east.summary().day == "2025-06-02"


def test_the_call_window_rolls(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, calls_per_hour=3)
    ledger.admit("a", charges("0", "0"))
    clock.advance(minutes=30)
    ledger.admit("b", charges("0"))
    clock.advance(minutes=29, seconds=59)
    assert refusal(ledger, "c", charges("0")).remaining == 0
    clock.advance(seconds=1)  # the first two are exactly an hour old: out of the window
    assert ledger.summary().calls_left == 2
    ledger.admit("c", charges("0", "0"))
    assert refusal(ledger, "d", charges("0")).ceiling == "calls"


def test_the_lifetime_total_survives_the_purge(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, total_usd=D(5))
    [rid] = ledger.admit("old", charges("3"))
    ledger.settle(rid, D(3))
    [open_id] = ledger.admit("open", charges("0.5"))
    clock.advance(days=7)
    assert ledger.purge() == 0  # 7 days old: kept
    assert ledger.summary().spent_today == 0
    clock.advance(days=1)
    assert ledger.purge() == 1  # the settled row goes; the open one stays
    assert [r.id for r in ledger.reservations("open")] == [open_id]
    assert ledger.reservations("old") == []
    s = ledger.summary()
    assert (s.spent_total, s.reserved, s.remaining_total) == (3, D("0.5"), D("1.5"))
    assert ledger.run_spent("old") == 3
    assert refusal(ledger, "new", charges("1.6")).ceiling == "cumulative"
    ledger.admit("new", charges("1.5"))


def test_summary_names_the_binding_ceiling(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(10), total_usd=D(20), calls_per_hour=5)
    ledger.admit("a", charges("2"))
    s = ledger.summary()
    assert s.binding == "daily" and s.remaining == D(8)
    assert s.allowance_text() == f"· 4 calls and {format_usd(D(8))} left today on this host"
    ledger = ledger_for(store, clock, daily_usd=D(10), total_usd=D(3), calls_per_hour=2)
    s = ledger.summary()
    assert s.binding == "cumulative" and s.remaining == 1
    assert s.allowance_text() == (
        f"· 1 call and {format_usd(D(1))} left of the {format_usd(D(3))} lifetime ceiling "
        "on this host"
    )
    data = s.as_json()
    assert json.loads(json.dumps(data)) == data
    assert data["remaining_total"] == "1" and data["ceilings"]["total_usd"] == "3"


def test_a_naive_clock_is_refused(store: Store) -> None:
    ledger = Ledger(store, Ceilings(), lambda: datetime(2025, 1, 1))
    with pytest.raises(ValueError, match="naive"):
        ledger.summary()


# -- environment --------------------------------------------------------------------------------


def test_ceilings_default_and_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DAILY_USD", "CALLS_PER_HOUR", "TOTAL_USD", "EXEMPT_FREE_CALLS"):
        monkeypatch.delenv(f"SWEEPBENCH_{name}", raising=False)
    assert Ceilings.from_env() == Ceilings() == Ceilings(D(10), 40, None, ())
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", " 2.50 ")
    monkeypatch.setenv("SWEEPBENCH_CALLS_PER_HOUR", "7")
    monkeypatch.setenv("SWEEPBENCH_TOTAL_USD", "100")
    monkeypatch.setenv("SWEEPBENCH_EXEMPT_FREE_CALLS", "1")  # retired: free calls never count
    c = Ceilings.from_env()
    assert (c.daily_usd, c.calls_per_hour, c.total_usd) == (D("2.50"), 7, D(100))
    assert c.overridden == (
        "SWEEPBENCH_DAILY_USD",
        "SWEEPBENCH_CALLS_PER_HOUR",
        "SWEEPBENCH_TOTAL_USD",
    )
    assert not hasattr(c, "exempt_free_calls")
    env = {
        "SWEEPBENCH_DAILY_USD": "0",
        "SWEEPBENCH_TOTAL_USD": "",
        "SWEEPBENCH_CALLS_PER_HOUR": "0",
    }
    c = Ceilings.from_env(env)
    assert (c.daily_usd, c.calls_per_hour, c.total_usd) == (0, 0, None)
    assert c.overridden == ("SWEEPBENCH_DAILY_USD", "SWEEPBENCH_CALLS_PER_HOUR")


@pytest.mark.parametrize("bad", ["abc", "-5", "inf", "nan", "-inf", "1e", "Infinity", "sNaN"])
@pytest.mark.parametrize(
    ("name", "field", "default"),
    [
        ("SWEEPBENCH_DAILY_USD", "daily_usd", D(10)),
        ("SWEEPBENCH_CALLS_PER_HOUR", "calls_per_hour", 40),
        ("SWEEPBENCH_TOTAL_USD", "total_usd", None),
    ],
)
def test_bad_overrides_fall_back_with_a_warning(
    caplog: pytest.LogCaptureFixture, bad: str, name: str, field: str, default: object
) -> None:
    with caplog.at_level(logging.WARNING, logger="sweepbench.money.ceilings"):
        c = Ceilings.from_env({name: bad})
    assert getattr(c, field) == default
    assert name not in c.overridden
    assert name in caplog.text and "using the default" in caplog.text
    with pytest.raises((ValueError, TypeError)):
        Ceilings(daily_usd=D("-1"))


def test_the_ledger_reads_the_environment(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_CALLS_PER_HOUR", "1")
    ledger = Ledger(store)
    ledger.admit("a", charges("0.1"))
    assert ledger.summary().overridden == ("SWEEPBENCH_CALLS_PER_HOUR",)
    assert "Rate limit: 1 paid model calls per 60 minutes on this host " in str(
        refusal(ledger, "b", charges("0.1"))
    )


# -- several processes --------------------------------------------------------------------------

PROCESSES = 6
ATTEMPTS = 12


def _admit_in_a_process(home: str, url: str, barrier: Any, results: Any, index: int) -> None:
    """Runs in a spawned process: admit small sweeps against a $1 daily ceiling, settle one
    call of each and leave the other open until every process is done (a process that exits
    is a dead worker: what it left open would be settled at $0 and free room for others)."""
    os.environ["SWEEPBENCH_HOME"] = home
    os.environ["SWEEPBENCH_DB"] = url
    admitted = refused = 0
    errors: list[str] = []
    try:
        with Store.open() as store:
            ledger = Ledger(store, Ceilings(daily_usd=D(1), calls_per_hour=100_000))
            barrier.wait(timeout=60)
            for attempt in range(ATTEMPTS):
                try:
                    ids = ledger.admit(f"p{index}-{attempt}", charges("0.03", "0.03"))
                except BudgetExceeded as exc:
                    refused += 1
                    if not str(exc).startswith(("This sweep could cost", "Daily budget")):
                        errors.append(f"unexpected wording: {exc}")
                    continue
                admitted += 1
                ledger.settle(ids[0], None)  # at the reservation, so the sums stay comparable
                ledger.summary()
            barrier.wait(timeout=60)
    except BaseException as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    results.put((index, admitted, refused, errors))


@pytest.mark.parametrize("backend", BACKENDS)
def test_processes_share_one_ceiling(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "shared-home"
    url = backend_url(backend, home / "ledger.db")
    with Store.open(url):  # migrate once, before the race
        pass
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_admit_in_a_process, args=(str(home), url, barrier, results, i))
        for i in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    outcomes = []
    try:
        for _ in procs:
            outcomes.append(results.get(timeout=90))
    except queue.Empty:
        pytest.fail(f"only {len(outcomes)} of {PROCESSES} processes reported")
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert [errors for *_, errors in outcomes] == [[]] * PROCESSES
    assert all(a + r == ATTEMPTS for _, a, r, _ in outcomes)
    with Store.open(url) as store:
        reserved = rows(store)[0]
        ledger = Ledger(store, Ceilings(daily_usd=D(1)))
        s = ledger.summary()
        total = sum(row.reserved_micro for row in reserved)
        assert total <= 1_000_000  # the ceiling held across processes
        assert total == 960_000  # and 16 sweeps of $0.06 fit, no more
        assert sum(a for _, a, _, _ in outcomes) == 16 == len(reserved) // 2
        assert (s.spent_today, s.reserved, s.open_reservations) == (D("0.48"), D("0.48"), 16)
        # the processes have exited: the calls they left open never started, so they cost $0
        assert ledger.reap_dead() == 16
        s = ledger.summary()
        assert (s.spent_today, s.reserved, s.open_reservations) == (D("0.48"), 0, 0)


# -- the command --------------------------------------------------------------------------------


def test_spend_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from sweepbench.cli.spend import register

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """A tiny app for the test."""

    register(app)
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "2")
    monkeypatch.setenv("SWEEPBENCH_CALLS_PER_HOUR", "junk")
    with Store.open() as store:
        ledger = Ledger(store)
        [rid, _] = ledger.admit("s", charges("0.5", "0.25"))
        ledger.settle(rid, D("0.1"))
    runner = CliRunner()
    result = runner.invoke(app, ["spend", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["spent_today"] == "0.1" and data["reserved"] == "0.25"
    assert data["remaining_today"] == "1.65" and data["calls_left"] == 38
    assert data["overridden"] == ["SWEEPBENCH_DAILY_USD"]
    assert data["ceilings"] == {"daily_usd": "2", "calls_per_hour": 40, "total_usd": None}
    result = runner.invoke(app, ["spend"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    for text in ("Spent today", format_usd(D("1.65")), "SWEEPBENCH_DAILY_USD", "38 left"):
        assert text in result.stdout
