"""The spend ledger's scopes, leases, overruns, the interactive call window, dead workers and
settlement inside a caller's transaction.

Like tests/money/test_ledger.py, every test runs on SQLite and, when ``SWEEPBENCH_TEST_POSTGRES``
names a throwaway database, on PostgreSQL too.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.errors import UserError
from sweepbench.models.tokens import prompt_token_bound
from sweepbench.money.ceilings import micro_to_usd, usd_to_micro
from sweepbench.money.ledger import Charge, Ledger, Reservation, Settlement, SpendRefused
from sweepbench.money.prices import format_usd
from sweepbench.store import Store
from sweepbench.store.records import CallEnd, CallStart, EventRecord
from sweepbench.store.schema import spend_reservations, workers
from sweepbench.store.workers import forget_workers
from tests.backends import BACKENDS, backend_url
from tests.money.test_ledger import Clock, charges, ledger_for, refusal, rows

D = Decimal
RUN = "bench-1"
PRICED = "scripted/echo"
PRICE_IN, PRICE_OUT = 3, 15
"""USD per million tokens of the priced scripted model (``models.toml`` below)."""


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with Store.open(backend_url(request.param, tmp_path / "ledger.db")) as s:
        yield s
        forget_workers()  # this process's worker row goes with the database


@pytest.fixture
def clock() -> Clock:
    return Clock()


def by_id(ledger: Ledger, run_id: str) -> dict[str, Reservation]:
    return {r.id: r for r in ledger.reservations(run_id)}


def usd(text: str) -> str:
    return format_usd(D(text))


# -- a run's limits ---------------------------------------------------------------------------


def test_a_role_limit_refuses_naming_its_flag(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, None, {"judge": D("0.5")})
    [first] = ledger.admit(RUN, charges("0.3", role="judge"))
    err = refusal(ledger, RUN, charges("0.3", role="judge"))
    assert str(err) == (
        f"This run could cost up to {usd('0.3')} and only {usd('0.2')} of the judge's "
        f"{usd('0.5')} spending limit is left. Raise it with --limit judge=USD, or lower the "
        "max-token budgets or the number of calls."
    )
    assert (err.ceiling, err.needed, err.remaining, err.limit, err.spent) == (
        "role",
        D("0.3"),
        D("0.2"),
        D("0.5"),
        0,
    )
    # only the judge's calls are held to it, and only in this run
    ledger.admit(RUN, charges("2", role="target"))
    ledger.admit("bench-2", charges("0.4", role="judge"))
    err = refusal(ledger, RUN, [*charges("0.1", role="target"), *charges("0.3", role="judge")])
    assert err.ceiling == "role" and "--limit judge=USD" in str(err)
    ledger.settle(first, D("0.5"))
    err = refusal(ledger, RUN, charges("0.01", role="judge"))
    assert str(err) == (
        f"This run's judge spending limit is reached — {usd('0.5')} of {usd('0.5')} spent. "
        "Raise it with --limit judge=USD."
    )
    assert (err.ceiling, err.remaining, err.spent) == ("role", 0, D("0.5"))
    assert ledger.role_spent(RUN, "judge") == D("0.5") and ledger.role_spent(RUN, "target") == 0


def test_a_role_limit_names_the_role_for_a_person(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, None, {"target": D(1)})
    err = refusal(ledger, RUN, charges("1.5", role="target"))
    assert "of the model under test's $1.00 spending limit is left" in str(err)
    assert "Raise it with --limit target=USD," in str(err)


def test_a_run_limit_refuses_naming_its_flag(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, D(1))
    [first] = ledger.admit(RUN, charges("0.6", role="judge"))
    err = refusal(ledger, RUN, charges("0.25", "0.25", role="target"))
    assert str(err) == (
        f"This run could cost up to {usd('0.5')} and only {usd('0.4')} of its {usd('1')} "
        "spending limit is left. Raise it with --limit USD, or lower the max-token budgets or "
        "the number of calls."
    )
    assert (err.ceiling, err.remaining, err.limit) == ("run", D("0.4"), 1)
    ledger.settle(first, D(1))
    err = refusal(ledger, RUN, charges("0.01", role="target"))
    assert str(err) == (
        f"This run's spending limit is reached — {usd('1')} of {usd('1')} spent. Raise it with "
        "--limit USD."
    )
    ledger.admit("other-run", charges("5"))  # another run has no limit


def test_limits_stored_by_one_ledger_bind_another(store: Store, clock: Clock) -> None:
    ledger_for(store, clock).set_limits(RUN, D(1), {"judge": D("0.3")})
    url = store.engine.url.render_as_string(hide_password=False)
    with Store.open(url) as elsewhere:  # another connection pool, as another process has
        other = ledger_for(elsewhere, clock)
        assert refusal(other, RUN, charges("0.31", role="judge")).ceiling == "role"
        assert refusal(other, RUN, charges("1.01", role="target")).ceiling == "run"
        other.admit(RUN, charges("0.3", role="judge"))
        with pytest.raises(SpendRefused) as info:
            other.lease(RUN, "judge", PRICED, D("0.1"), D("0.01"))
        assert info.value.ceiling == "role"
    # a limit given at admission is stored for the run too
    ledger_for(store, clock).admit("sweep-9", charges("0.5"), run_limit_usd=D("0.6"))
    assert refusal(ledger_for(store, clock), "sweep-9", charges("0.2")).ceiling == "run"


def test_raising_a_limit_lets_admissions_continue(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, D(1), {"judge": D("0.5")})
    [a] = ledger.admit(RUN, charges("0.5", role="judge"))
    ledger.settle(a, D("0.5"))
    assert refusal(ledger, RUN, charges("0.2", role="judge")).ceiling == "role"
    ledger.set_limits(RUN, D(1), {"judge": D("0.8")})  # a resumed run with a raised limit
    ledger.admit(RUN, charges("0.2", role="judge"))
    assert refusal(ledger, RUN, charges("0.4", role="target")).ceiling == "run"
    ledger.set_limits(RUN, D(2), {"judge": D("0.8")})
    ledger.admit(RUN, charges("0.4", role="target"))
    assert refusal(ledger, RUN, charges("0.2", role="judge")).ceiling == "role"
    ledger.set_limits(RUN, None, {"judge": None})  # None clears a limit
    ledger.admit(RUN, charges("3", "0.5", role="judge"))
    assert ledger.role_spent(RUN, "judge") == ledger.run_spent(RUN) == D("0.5")


# -- leases -----------------------------------------------------------------------------------


def test_a_lease_holds_what_it_wants_when_that_fits(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1), calls_per_hour=1)
    rid, amount = ledger.lease(RUN, "target", PRICED, D("0.25"), D("0.01"))
    assert amount == D("0.25")
    [held] = ledger.reservations(RUN)
    assert (held.id, held.kind, held.role, held.model, held.reserved_usd, held.state) == (
        rid,
        "lease",
        "target",
        PRICED,
        D("0.25"),
        "reserved",
    )
    assert held.worker == ledger.worker
    # want below need holds need; a lease never counts in the call window
    assert ledger.lease(RUN, "target", PRICED, D("0.01"), D("0.02"))[1] == D("0.02")
    s = ledger.summary()
    assert (s.calls_in_window, s.reserved, s.remaining_today) == (0, D("0.27"), D("0.73"))


def test_a_lease_takes_the_room_left_down_to_what_it_needs(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    ledger.admit("sweep-1", charges("0.7"))
    _, amount = ledger.lease(RUN, "target", PRICED, D("0.5"), D("0.1"))
    assert amount == D("0.3")  # the room, ≥ need
    assert ledger.summary().remaining_today == 0
    before = rows(store)
    with pytest.raises(SpendRefused) as info:
        ledger.lease(RUN, "target", PRICED, D("0.5"), D("0.000001"))
    assert info.value.ceiling == "daily" and rows(store) == before


def test_a_lease_is_refused_when_not_even_its_need_fits(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    ledger.admit("sweep-1", charges("0.7"))
    before = rows(store)
    with pytest.raises(SpendRefused) as info:
        ledger.lease(RUN, "judge", PRICED, D("0.5"), D("0.31"))
    assert (info.value.ceiling, info.value.needed, info.value.remaining) == (
        "daily",
        D("0.31"),
        D("0.3"),
    )
    assert rows(store) == before
    assert ledger.lease(RUN, "judge", PRICED, D("0.5"), D("0.3"))[1] == D("0.3")


@pytest.mark.parametrize("ceiling", ["daily", "cumulative", "run", "role"])
def test_leases_count_against_every_ceiling(store: Store, clock: Clock, ceiling: str) -> None:
    cap = {"daily": D("0.9"), "cumulative": D("0.8"), "run": D("0.7"), "role": D("0.6")}[ceiling]
    ledger = ledger_for(
        store,
        clock,
        daily_usd=cap if ceiling == "daily" else D(10),
        total_usd=cap if ceiling == "cumulative" else None,
    )
    ledger.set_limits(
        RUN, cap if ceiling == "run" else None, {"judge": cap} if ceiling == "role" else {}
    )
    rid, amount = ledger.lease(RUN, "judge", PRICED, D(5), D("0.1"))
    assert amount == cap  # all the room that ceiling leaves
    with pytest.raises(SpendRefused) as info:
        ledger.lease(RUN, "judge", PRICED, D(5), D("0.000001"))
    assert info.value.ceiling == ceiling
    assert refusal(ledger, RUN, charges("0.01", role="judge")).ceiling == ceiling
    # settling the lease at less frees the rest
    assert ledger.settle(rid, D("0.25"))
    assert ledger.lease(RUN, "judge", PRICED, D(5), D("0.1"))[1] == cap - D("0.25")
    assert ledger.role_spent(RUN, "judge") == ledger.run_spent(RUN) == D("0.25")
    s = ledger.summary()
    assert (s.spent_today, s.reserved, s.open_reservations) == (D("0.25"), cap - D("0.25"), 1)


def test_a_lease_for_one_role_leaves_the_other_roles_room(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, D(2), {"judge": D("0.5"), "target": D(1)})
    assert ledger.lease(RUN, "judge", PRICED, D(5), D("0.1"))[1] == D("0.5")
    assert ledger.lease(RUN, "target", PRICED, D(5), D("0.1"))[1] == D(1)
    assert ledger.lease(RUN, "student", PRICED, D(5), D("0.1"))[1] == D("0.5")  # the run's rest
    with pytest.raises(SpendRefused) as info:
        ledger.lease(RUN, "student", PRICED, D(5), D("0.1"))
    assert info.value.ceiling == "run"


# -- overruns ---------------------------------------------------------------------------------


def test_an_overrun_is_recorded_flagged_and_binds(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    [a, b] = ledger.admit("sweep-1", charges("0.5", "0.25"))
    assert ledger.settle(a, D("1.2"))  # the provider charged more than the worst case
    assert ledger.settle(b, D("0.1"))
    got = by_id(ledger, "sweep-1")
    assert (got[a].settled_usd, got[a].overrun, got[a].state) == (D("1.2"), True, "settled")
    assert (got[b].settled_usd, got[b].overrun) == (D("0.1"), False)
    s = ledger.summary()
    assert (s.spent_today, s.spent_total, s.overruns, s.remaining_today) == (
        D("1.3"),
        D("1.3"),
        1,
        0,
    )
    assert s.as_json()["overruns"] == 1
    assert ledger.run_spent("sweep-1") == D("1.3")
    err = refusal(ledger, "sweep-2", charges("0.000001"))
    assert err.ceiling == "daily" and err.spent == D("1.3")
    with pytest.raises(SpendRefused):
        ledger.lease(RUN, "target", PRICED, D("0.1"), D("0.000001"))
    free = Charge("local/smollm2-135m", D(0), free=True)
    assert ledger.admit("sweep-2", [free]) == [None]


def test_an_overrun_of_a_run_limit_stops_the_run(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    ledger.set_limits(RUN, D(1), {"judge": D("0.5")})
    rid, amount = ledger.lease(RUN, "judge", PRICED, D("0.4"), D("0.1"))
    assert amount == D("0.4")
    assert ledger.settle_many([Settlement(rid, D("0.7"), "c" * 32)]) == 1
    [lease] = ledger.reservations(RUN)
    assert (lease.overrun, lease.settled_usd, lease.call_id) == (True, D("0.7"), "c" * 32)
    assert ledger.summary().overruns == 1
    with pytest.raises(SpendRefused) as info:
        ledger.lease(RUN, "judge", PRICED, D("0.1"), D("0.000001"))
    assert info.value.ceiling == "role" and "is reached" in str(info.value)
    ledger.admit(RUN, charges("0.3", role="target"))  # the run still has 0.3
    assert refusal(ledger, RUN, charges("0.000001", role="target")).ceiling == "run"


# -- the call window --------------------------------------------------------------------------


def test_a_thousand_free_sweep_calls_in_an_hour_are_never_refused(
    store: Store, clock: Clock
) -> None:
    ledger = ledger_for(store, clock, calls_per_hour=40)
    free = Charge("scripted/echo", D(0), free=True)
    for i in range(1000):
        assert ledger.admit(f"sweep-{i}", [free]) == [None]
        clock.advance(seconds=3)  # 1,000 admissions inside 50 minutes
    s = ledger.summary()
    assert (s.calls_in_window, s.calls_left, s.open_reservations) == (0, 40, 0)
    assert rows(store)[0] == []
    for i in range(40):  # the window is all there for paid calls
        ledger.admit(f"paid-{i}", charges("0.01"))
    assert refusal(ledger, "paid-40", charges("0.01")).ceiling == "calls"
    assert ledger.admit("sweep-last", [free] * 10) == [None] * 10


def test_a_free_row_from_an_older_store_never_counts(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, calls_per_hour=1)
    with store.begin() as conn:  # older versions kept a $0 row for each free call
        conn.execute(
            spend_reservations.insert().values(
                id=uuid.uuid4().hex, run_id="old-sweep", model="local/smollm2-135m",
                role="sweep", admitted_at=clock.now, day=clock.now.date().isoformat(),
                reserved_micro=0, settled_micro=0, settled_at=clock.now, state="settled",
                free=True,
            )
        )  # fmt: skip
    assert ledger.summary().calls_in_window == 0
    ledger.admit("sweep-1", charges("0.01"))


def test_only_interactive_paid_calls_count_in_the_window(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, calls_per_hour=3)
    for role in ("target", "judge", "student"):
        assert len(ledger.admit(RUN, charges(*["0.01"] * 10, role=role))) == 10
    ledger.lease(RUN, "target", PRICED, D("0.5"), D("0.01"))
    ledger.lease("sweep-lease", "sweep", PRICED, D("0.5"), D("0.01"))  # a lease is no call
    assert ledger.summary().calls_in_window == 0
    ledger.admit("sweep-1", charges("0.01", "0.01"))
    ledger.admit("generate-1", charges("0.01", role="generate"))
    s = ledger.summary()
    assert (s.calls_in_window, s.calls_left) == (3, 0)
    assert refusal(ledger, "sweep-2", charges("0.01")).ceiling == "calls"
    assert refusal(ledger, "generate-2", charges("0.01", role="generate")).ceiling == "calls"
    assert len(ledger.admit(RUN, charges("0.01", role="judge"))) == 1  # still admitted
    clock.advance(hours=1)
    assert ledger.summary().calls_left == 3


# -- dead workers -----------------------------------------------------------------------------


@pytest.fixture
def priced(isolated_home: Path) -> None:
    """Give ``scripted/echo`` a price, so a dead worker's stored usage costs money."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        f"[scripted.echo]\nprice_in = {PRICE_IN}\nprice_out = {PRICE_OUT}\n"
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been waited for)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    assert proc.wait(timeout=30) == 0
    return proc.pid


def add_worker(
    store: Store,
    *,
    pid: int,
    host: str | None = None,
    heartbeat_at: datetime,
    stopped_at: datetime | None = None,
) -> str:
    worker_id = f"{pid}@{host or socket.gethostname()}:{uuid.uuid4().hex[:8]}"
    with store.begin() as conn:
        conn.execute(
            workers.insert().values(
                id=worker_id,
                host=host or socket.gethostname(),
                pid=pid,
                started_at=heartbeat_at,
                heartbeat_at=heartbeat_at,
                stopped_at=stopped_at,
            )
        )
    return worker_id


def add_hold(
    store: Store,
    clock: Clock,
    worker: str,
    usd_held: str,
    *,
    kind: str = "call",
    call_id: str | None = None,
    run_id: str = RUN,
    role: str = "target",
) -> str:
    rid = uuid.uuid4().hex
    with store.begin() as conn:
        conn.execute(
            spend_reservations.insert().values(
                id=rid,
                run_id=run_id,
                call_id=call_id,
                model=PRICED,
                role=role,
                admitted_at=clock.now,
                day=clock.now.date().isoformat(),
                reserved_micro=usd_to_micro(D(usd_held), up=True),
                state="reserved",
                free=False,
                kind=kind,
                worker=worker,
            )
        )
    return rid


def start_call(store: Store, content: str = "Why is the sky blue?") -> str:
    request = {"messages": [{"role": "user", "content": content}]}
    start = CallStart(model=PRICED, provider="scripted", role="target", run_id=RUN, request=request)
    return store.start_call(start)


def usage_event(seq: int, **tokens: int) -> EventRecord:
    return EventRecord(seq=seq, kind="usage", data=dict(tokens), t_s=0.5)


def priced_usd(input_tokens: int, output_tokens: int) -> Decimal:
    return D(input_tokens * PRICE_IN + output_tokens * PRICE_OUT) / 1_000_000


@pytest.mark.usefixtures("priced")
def test_a_dead_workers_holds_are_settled_at_what_they_received(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    mine = ledger.lease(RUN, "target", PRICED, D("0.05"), D("0.01"))[0]  # a live worker's
    gone = add_worker(store, pid=dead_pid(), heartbeat_at=clock.now)
    used = start_call(store)  # a call that streamed and reported its usage
    store.append_events(used, [EventRecord(seq=0, kind="text", data="Rayleigh", t_s=0.1)])
    store.append_events(used, [usage_event(1, input_tokens=1200, output_tokens=800)])
    finished = start_call(store)  # a call that finished: its recorded cost
    store.finish_call(finished, CallEnd(stop_reason="end", cost_usd=D("0.0123")))
    streamed = start_call(store, "hi")  # three deltas and no usage report yet
    store.append_events(
        streamed, [EventRecord(seq=i, kind="text", data="x", t_s=0.1 * i) for i in range(3)]
    )
    beyond = start_call(store)  # reported more than its reservation
    store.append_events(beyond, [usage_event(0, input_tokens=1000, output_tokens=1000)])
    holds = {
        "usage": add_hold(store, clock, gone, "0.05", call_id=used),
        "overrun": add_hold(store, clock, gone, "0.01", call_id=beyond),
        "finished": add_hold(store, clock, gone, "0.05", call_id=finished),
        "streamed": add_hold(store, clock, gone, "0.05", call_id=streamed),
        "unstarted": add_hold(store, clock, gone, "0.3"),  # no calls row: it never started
        "unknown": add_hold(store, clock, gone, "0.3", call_id="f" * 32),
        "lease": add_hold(store, clock, gone, "0.2", kind="lease"),
    }
    assert ledger.summary().open_reservations == len(holds) + 1
    assert ledger.reap_dead() == len(holds)
    assert ledger.reap_dead() == 0
    got = by_id(ledger, RUN)
    expected = {
        "usage": priced_usd(1200, 800),
        "overrun": priced_usd(1000, 1000),
        "finished": D("0.0123"),
        "streamed": priced_usd(prompt_token_bound(["hi"]), 3),
        "unstarted": D(0),
        "unknown": D(0),
        "lease": D("0.2"),
    }
    expected = {k: micro_to_usd(usd_to_micro(v, up=True)) for k, v in expected.items()}
    assert {k: got[rid].settled_usd for k, rid in holds.items()} == expected
    assert {got[rid].state for rid in holds.values()} == {"settled"}
    assert [k for k, rid in holds.items() if got[rid].overrun] == ["overrun"]
    assert (got[mine].state, got[mine].settled_usd) == ("reserved", None)
    s = ledger.summary()
    assert s.spent_today == sum(expected.values()) and s.reserved == D("0.05")
    assert ledger.run_spent(RUN) == ledger.role_spent(RUN, "target") == s.spent_today


def test_dead_is_a_stopped_row_a_gone_pid_or_a_silent_remote_heartbeat(
    store: Store, clock: Clock
) -> None:
    ledger = ledger_for(store, clock)
    here_alive = add_worker(store, pid=os.getppid(), heartbeat_at=clock.now)
    stopped = add_worker(
        store, pid=os.getppid(), heartbeat_at=clock.now, stopped_at=clock.now
    )  # its pid lives on, but it said it stopped
    gone = add_worker(store, pid=dead_pid(), heartbeat_at=clock.now)
    remote_alive = add_worker(
        store, pid=1, host="elsewhere.invalid", heartbeat_at=clock.now - timedelta(seconds=50)
    )
    remote_silent = add_worker(
        store, pid=1, host="elsewhere.invalid", heartbeat_at=clock.now - timedelta(seconds=61)
    )
    holds = {
        name: add_hold(store, clock, worker, "0.1", kind=kind)
        for name, worker, kind in [
            ("here_alive", here_alive, "lease"),
            ("stopped", stopped, "lease"),
            ("gone", gone, "lease"),
            ("remote_alive", remote_alive, "call"),
            ("remote_silent", remote_silent, "lease"),
            ("never_registered", "nobody@nowhere:00000000", "lease"),
        ]
    }
    [admitted] = ledger.admit(RUN, charges("0.1"))
    assert ledger.reap_dead() == 0  # the admission already settled them
    got = by_id(ledger, RUN)
    states = {name: got[rid].state for name, rid in holds.items()}
    assert states == {
        "here_alive": "reserved",
        "stopped": "settled",
        "gone": "settled",
        "remote_alive": "reserved",
        "remote_silent": "settled",
        "never_registered": "settled",
    }
    assert {got[holds[n]].settled_usd for n in ("stopped", "gone", "remote_silent")} == {D("0.1")}
    assert got[admitted].state == "reserved" and got[admitted].worker == ledger.worker
    clock.advance(seconds=11)  # the remote heartbeat falls silent too
    assert ledger.reap_dead() == 1
    assert by_id(ledger, RUN)[holds["remote_alive"]].settled_usd == 0  # no calls row


def test_a_ledger_holds_money_as_the_current_worker(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    [before] = ledger.admit(RUN, charges("0.1"))
    old = ledger.worker
    forget_workers()  # this process's registration ends (as at exit, or in a forked child)
    [after] = ledger.admit(RUN, charges("0.2"))
    assert ledger.worker != old
    ledger.admit(RUN, charges("0.3"))  # reaps what the stopped worker held, and only that
    got = by_id(ledger, RUN)
    assert (got[before].worker, got[before].state, got[before].settled_usd) == (old, "settled", 0)
    assert (got[after].worker, got[after].state) == (ledger.worker, "reserved")


def test_what_a_dead_worker_held_is_free_for_the_next_admission(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock, daily_usd=D(1))
    gone = add_worker(store, pid=dead_pid(), heartbeat_at=clock.now)
    add_hold(store, clock, gone, "0.9", run_id="sweep-dead", role="sweep")  # never started
    assert ledger.summary().remaining_today == D("0.1")
    ledger.admit("sweep-2", charges("0.8"))  # reaped first, then checked
    s = ledger.summary()
    assert (s.spent_today, s.reserved, s.open_reservations) == (0, D("0.8"), 1)


# -- settlement in a caller's transaction -----------------------------------------------------


def test_settle_in_a_rolled_back_transaction_leaves_the_hold_open(
    store: Store, clock: Clock
) -> None:
    ledger = ledger_for(store, clock)
    rid, _ = ledger.lease(RUN, "judge", PRICED, D("0.5"), D("0.1"))
    [call] = ledger.admit(RUN, charges("0.2", role="target"))
    before = rows(store)
    failed = pytest.raises(RuntimeError, match="the answer could not be stored")
    with failed, store.begin() as conn:
        assert ledger.settle_in(conn, [Settlement(rid, D("0.3")), Settlement(call, None)]) == 2
        raise RuntimeError("the answer could not be stored")
    assert rows(store) == before
    assert {r.state for r in ledger.reservations(RUN)} == {"reserved"}
    assert ledger.summary().spent_today == 0
    with store.begin() as conn:
        assert ledger.settle_in(conn, [Settlement(rid, D("0.3"), "a" * 32)]) == 1
        assert ledger.settle_in(conn, [Settlement(rid, D("0.4"))]) == 0  # the first one stands
    got = by_id(ledger, RUN)
    assert (got[rid].state, got[rid].settled_usd, got[rid].call_id) == (
        "settled",
        D("0.3"),
        "a" * 32,
    )
    assert got[call].state == "reserved"
    assert ledger.role_spent(RUN, "judge") == ledger.summary().spent_today == D("0.3")


def test_settle_many_settles_in_one_transaction(store: Store, clock: Clock) -> None:
    ledger = ledger_for(store, clock)
    a, b, c = ledger.admit("sweep-1", charges("0.1", "0.2", "0.3"))
    assert ledger.settle(a, D("0.05"))
    settled = ledger.settle_many(
        [Settlement(a, D("0.1")), Settlement(b, None), Settlement(c, D(0), "d" * 32)]
    )
    assert settled == 2  # a was already settled: the first settlement stands
    got = by_id(ledger, "sweep-1")
    assert [got[x].settled_usd for x in (a, b, c)] == [D("0.05"), D("0.2"), 0]
    assert got[c].call_id == "d" * 32
    assert ledger.settle_many([]) == 0
    before = rows(store)
    with pytest.raises(UserError, match="no spend reservation"):
        ledger.settle_many([Settlement(c, D(0)), Settlement("nope", D(0))])
    assert rows(store) == before
