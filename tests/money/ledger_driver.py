"""One OS process of tests/money/test_ledger_processes.py: spends through the shared ledger like a
sweep (admit a few calls, settle each at most at its reservation) or like a benchmark worker
(lease, draw calls from the lease locally, settle the lease at their sum), with small random
sleeps.

Run as ``python tests/money/ledger_driver.py '<json settings>'``. It registers its worker, writes
``ready-<index>``, waits for ``start``, and at the end writes ``result-<index>.json``. The victim
writes ``holding-<index>.json`` (what it holds) once it holds money and then waits to be killed.
The others wait for that file before the round after the victim's (so that, however the OS
schedules them, they cannot use up the ceilings before the victim holds something) and for
``killed`` before their last round, so that what the victim held is settled by a live process
(its admissions, and ``reap_dead`` at the end).
"""

from __future__ import annotations

import json
import random
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from sweepbench.money.ceilings import micro_to_usd, usd_to_micro
from sweepbench.money.ledger import Ceilings, Charge, Ledger, Settlement, SpendRefused
from sweepbench.store import Store
from sweepbench.store.records import CallStart, EventRecord

PRICED = "scripted/echo"
"""The model every call is for; the test prices it in ``$SWEEPBENCH_HOME/models.toml``."""
CALL_USAGE = {"input_tokens": 50, "output_tokens": 20}
"""What each sweep's first call reports before it is settled: 450 µ$ at $3/$15 per million
tokens, below any sweep reservation here (``CHARGE_MICRO``)."""
CHARGE_MICRO = (500, 1_500)
"""The range of a sweep call's reservation, in micro-dollars."""
LEASE_WANT = Decimal("0.002")
CALL_WORST_MICRO = 500
"""A benchmark call's worst case, in micro-dollars: what a lease must have left to draw one."""
KILL_ROUND = 1
"""The round in which the victim, once it holds money, waits to be killed."""


def wait_for(path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path.name} never appeared")
        time.sleep(0.002)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically, so a reader never sees half a file."""
    part = path.with_suffix(".part")
    part.write_text(json.dumps(data))
    part.replace(path)


class Driver:
    def __init__(self, cfg: dict[str, Any], store: Store) -> None:
        self.cfg = cfg
        self.index: int = cfg["index"]
        self.dir = Path(cfg["dir"])
        self.rng = random.Random(cfg["seed"])
        self.store = store
        self.ledger = Ledger(
            store, Ceilings(daily_usd=Decimal(cfg["daily"]), calls_per_hour=10_000)
        )
        self.result: dict[str, Any] = {
            "index": self.index,
            "mode": cfg["mode"],
            "worker": self.ledger.worker,  # registered before the start
            "admitted": 0,
            "refused": {},
            "settled": 0,
            "reaped": 0,
            "max_committed_micro": 0,
            "max_spent_micro": 0,
            "errors": [],
        }

    # -- helpers ----------------------------------------------------------------------------

    def nap(self, most_s: float = 0.01) -> None:
        time.sleep(self.rng.uniform(0, most_s))

    def observe(self) -> None:
        """Record the most ever spent and committed (spent + held) today, as seen now."""
        s = self.ledger.summary()
        committed = usd_to_micro(s.spent_today + s.reserved_today, up=False)
        r = self.result
        r["max_committed_micro"] = max(r["max_committed_micro"], committed)
        r["max_spent_micro"] = max(r["max_spent_micro"], usd_to_micro(s.spent_today, up=False))

    def refused(self, exc: SpendRefused) -> None:
        counts = self.result["refused"]
        counts[exc.ceiling] = counts.get(exc.ceiling, 0) + 1

    def at_most(self, micro: int) -> Decimal:
        """A random settlement ≤ ``micro``: $0 a quarter of the time."""
        return Decimal(0) if self.rng.random() < 0.25 else micro_to_usd(self.rng.randint(0, micro))

    def hold_and_wait(self, holding: dict[str, Any]) -> None:
        """The victim: say what it holds, then wait for SIGKILL."""
        write_json(self.dir / f"holding-{self.index}.json", holding)
        time.sleep(120)
        raise RuntimeError("the victim was not killed")

    def victim_now(self, round_no: int) -> bool:
        return bool(self.cfg["victim"]) and round_no == KILL_ROUND

    def last_round(self, round_no: int) -> bool:
        """Wait at the gates (see the module's doc); True in the last round."""
        last: bool = round_no == int(self.cfg["rounds"]) - 1
        if not self.cfg["victim"]:
            if round_no == KILL_ROUND + 1:
                wait_for(self.dir / f"holding-{self.cfg['victim_index']}.json", 60)
            if last:
                wait_for(self.dir / "killed", 60)
        return last

    # -- a sweep ----------------------------------------------------------------------------

    def sweep(self) -> None:
        pending: list[Settlement] = []
        rounds = self.cfg["rounds"]
        round_no = 0
        while round_no < rounds:
            last = self.last_round(round_no)
            run_id = f"sweep-{self.index}-{round_no}"
            batch = [
                Charge(PRICED, micro_to_usd(self.rng.randint(*CHARGE_MICRO)))
                for _ in range(self.rng.randint(2, 4))
            ]
            if self.rng.random() < 0.5:
                batch.insert(1, Charge(PRICED, Decimal(0), free=True))
            try:
                ids = self.ledger.admit(run_id, batch)
            except SpendRefused as exc:
                self.refused(exc)
                self.observe()
                if self.victim_now(round_no):  # the victim must hold something: try again
                    self.nap(0.02)
                    continue
                round_no += 1
                self.nap()
                continue
            self.result["admitted"] += 1
            paid = [(rid, c) for rid, c in zip(ids, batch, strict=True) if rid is not None]
            assert all((rid is None) == c.free for rid, c in zip(ids, batch, strict=True))
            # the first call streams: a calls row, linked to its hold, and a usage report
            first, _ = paid[0]
            call_id = self.store.start_call(
                CallStart(model=PRICED, provider="scripted", role="sweep", run_id=run_id)
            )
            self.ledger.attach(first, call_id)
            self.store.append_events(
                call_id, [EventRecord(seq=0, kind="usage", data=CALL_USAGE, t_s=0.1)]
            )
            if self.victim_now(round_no):
                self.hold_and_wait(
                    {"kind": "call", "reservations": [rid for rid, _ in paid], "call": first}
                )
            for rid, charge in paid:
                micro = usd_to_micro(charge.ceiling_usd, up=True)
                choice = self.rng.random()
                if choice < 0.35:
                    self.result["settled"] += self.ledger.settle(rid, self.at_most(micro))
                elif choice < 0.45:
                    self.result["settled"] += self.ledger.release(rid)
                else:  # settled later, with others, in one transaction
                    pending.append(Settlement(rid, self.at_most(micro)))
                self.nap(0.005)
            if len(pending) >= 4 or last:
                self.result["settled"] += self.ledger.settle_many(pending)
                pending.clear()
            self.observe()
            self.nap()
            round_no += 1
        self.result["settled"] += self.ledger.settle_many(pending)

    # -- a benchmark worker -----------------------------------------------------------------

    def bench(self) -> None:
        run_id = self.cfg["bench_run"]
        round_no = 0
        while round_no < self.cfg["rounds"]:
            self.last_round(round_no)
            role = ("target", "judge")[(self.index + round_no) % 2]
            need = micro_to_usd(CALL_WORST_MICRO)
            try:
                rid, held = self.ledger.lease(run_id, role, PRICED, LEASE_WANT, need)
            except SpendRefused as exc:
                self.refused(exc)
                self.observe()
                if not self.victim_now(round_no):
                    round_no += 1
                self.nap(0.02)
                continue
            self.result["admitted"] += 1
            held_micro = usd_to_micro(held, up=True)
            assert usd_to_micro(need, up=True) <= held_micro <= usd_to_micro(LEASE_WANT, up=True)
            if self.victim_now(round_no):
                self.hold_and_wait({"kind": "lease", "reservations": [rid], "held": str(held)})
            used = 0
            while held_micro - used >= CALL_WORST_MICRO:  # draw calls from the lease
                used += self.rng.randint(0, CALL_WORST_MICRO)
                self.nap(0.003)
                if self.rng.random() < 0.2:  # this worker's items are done for now
                    break
            actual = micro_to_usd(used)
            how = self.rng.choice(("settle", "many", "in"))
            if how == "settle":
                self.result["settled"] += self.ledger.settle(rid, actual)
            elif how == "many":
                self.result["settled"] += self.ledger.settle_many([Settlement(rid, actual)])
            else:  # with the answers, in the caller's own transaction
                with self.store.begin() as conn:
                    self.result["settled"] += self.ledger.settle_in(conn, [Settlement(rid, actual)])
            self.observe()
            self.nap()
            round_no += 1

    def run(self) -> None:
        (self.dir / f"ready-{self.index}").touch()
        wait_for(self.dir / "start", 60)
        try:
            self.sweep() if self.cfg["mode"] == "sweep" else self.bench()
            self.result["reaped"] = self.ledger.reap_dead()
            self.observe()
        except Exception as exc:  # reported, and the test fails on it
            self.result["errors"].append(f"{type(exc).__name__}: {exc}")
        write_json(self.dir / f"result-{self.index}.json", self.result)


def main(argv: list[str]) -> int:
    cfg = json.loads(argv[1])
    with Store.open(cfg["url"]) as store:
        Driver(cfg, store).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
