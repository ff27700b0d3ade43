"""Do a sweep's cells really run at once, and how fast does Stop all close every stream?

Two measurements in one run, against a temporary ``SWEEPBENCH_HOME`` (store, ledger and
config file are made in a temporary folder and deleted afterwards: the user's store is never
touched):

1. **Concurrency.** Six cells on the scripted model with a fixed latency per call
   (``scripted/lorem?words=90&tps=100&ttft=0.1``: about 1 s), varying ``max_tokens`` over six
   budgets that are all above the answer's length, so every call does the same work. The
   figure is the sweep's wall time (``await sweep.run()``, admission and bookkeeping
   included) divided by the slowest call's own time (``Sample.seconds``): 1.00 would mean the
   sweep costs nothing beyond its slowest call. Also the serial equivalent (the sum of every
   call's time) over the wall time. The same again with ``repeats=2`` (twelve calls).
2. **Stop all.** Six cells on six fake OpenAI-compatible servers (``tests/servers``, one per
   cell, each a configured endpoint ``fake0`` … ``fake5``), each streaming 2000 chunks 10 ms
   apart. Once every cell has received a few deltas, ``sweep.stop_all()`` is called at t0 and
   each server stamps the moment it records the client's hang-up. Reported per trial: the
   latest of the six stamps − t0, and the time from t0 to ``sweep.run()`` returning.
   Resolution: between chunks a fake server waits in ``select()`` on the socket
   (``Exchange.sleep`` in ``tests/servers/base.py``), so it sees the client's FIN at once, not
   only at its next write; the 10 ms chunk delay is the worst case. The servers are threads of
   this process and share its GIL with the client, which can only make the figures worse.

    python benchmarks/sweep_concurrency.py                  # 7 trials each, 21 stop-all trials
    python benchmarks/sweep_concurrency.py --trials 11 --json sweep_concurrency.json
    python benchmarks/sweep_concurrency.py --quick          # one trial each: that it runs (CI)

Timings are ratios against a baseline measured in the same run (the slowest call's own time)
or latencies of a few milliseconds; nothing is compared with a fixed number of seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent

if TYPE_CHECKING:
    from tests.servers import OpenAIServer

    from sweepbench.money.ledger import Ledger
    from sweepbench.store import Store

CELLS = 6
WORDS, TPS, TTFT = 90, 100, 0.1  # 0.1 s + 90 tokens at 100/s: about 1 s per call
SCRIPTED = f"scripted/lorem?words={WORDS}&tps={TPS}&ttft={TTFT}"
BUDGETS = [str(100 * (i + 1)) for i in range(CELLS)]  # all above WORDS: no cell is cut short
SLOW_CHUNKS, SLOW_DELAY = 2000, 0.01  # 20 s of stream, a chunk every 10 ms
MIN_DELTAS = 3  # deltas every cell must have received before Stop all
GOAL_RATIO = 1.05
GOAL_STOP_P95_MS = 100.0
DISCONNECT_WAIT_S = 5.0


def _prepare_imports() -> None:
    """Make ``sweepbench`` (from ``src/`` when not installed) and ``tests.servers`` importable."""
    sys.path.insert(0, str(ROOT))
    try:
        import sweepbench  # noqa: F401
    except ImportError:  # running from a checkout without `pip install -e .`
        sys.path.insert(0, str(ROOT / "src"))


def _isolate(home: Path) -> None:
    """Point sweepbench at the temporary home only: no user store, config or endpoint."""
    os.environ["SWEEPBENCH_HOME"] = str(home)
    # The ledger counts $0 calls against the hourly call window unless told not to; this run
    # makes ~170 free calls (scripted model, fake servers), far above the default 40 an hour.
    os.environ["SWEEPBENCH_EXEMPT_FREE_CALLS"] = "1"
    for name in ("SWEEPBENCH_DB", "SWEEPBENCH_CONFIG", "SWEEPBENCH_COMPATIBLE_BASE_URL"):
        os.environ.pop(name, None)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0–100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


class StampedEvent(threading.Event):
    """A ``threading.Event`` that remembers when it was first set (``perf_counter``).

    Put in place of a fake server's ``disconnected`` flag, it timestamps the hang-up in the
    server's own handler thread, with no waiting thread's wake-up added."""

    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def set(self) -> None:
        if self.at is None:
            self.at = time.perf_counter()
        super().set()

    def clear(self) -> None:
        self.at = None
        super().clear()


# ------------------------------------------------------------------------- 1. concurrency


@dataclass
class ConcurrencyTrial:
    calls: int
    wall_s: float
    """Around ``await sweep.run()``, as the caller sees it."""
    sweep_wall_s: float
    """The sweep's own ``SweepResult.wall_s`` (starts after admission)."""
    slowest_call_s: float
    fastest_call_s: float
    serial_s: float

    @property
    def ratio(self) -> float:
        return self.wall_s / self.slowest_call_s

    @property
    def speedup(self) -> float:
        return self.serial_s / self.wall_s


async def concurrency_trial(store: Store, ledger: Ledger, repeats: int) -> ConcurrencyTrial:
    from sweepbench.sweeps.plan import build_plan
    from sweepbench.sweeps.run import Sweep

    plan = build_plan("Say something.", "max_tokens", BUDGETS, model=SCRIPTED, repeats=repeats)
    if plan.blocking():
        raise RuntimeError(f"plan refused: {plan.blocking()}")
    sweep = Sweep(plan, store=store, ledger=ledger)
    started = time.perf_counter()
    result = await sweep.run()
    wall = time.perf_counter() - started
    statuses = {s.status for s in result.samples}
    if statuses != {"done"} or any(s.truncated for s in result.samples):
        raise RuntimeError(f"unexpected outcome: {[s.status for s in result.samples]}")
    seconds = [s.seconds for s in result.samples]
    return ConcurrencyTrial(
        calls=len(seconds),
        wall_s=wall,
        sweep_wall_s=result.wall_s,
        slowest_call_s=max(seconds),
        fastest_call_s=min(seconds),
        serial_s=result.serial_s,
    )


# ------------------------------------------------------------------------------ 2. stop all


@dataclass
class StopTrial:
    hangup_ms: list[float]
    """Per server: t0 → the server records the client's hang-up."""
    return_ms: float
    """t0 → ``sweep.run()`` returns."""
    deltas_before_stop: int

    @property
    def worst_ms(self) -> float:
        return max(self.hangup_ms)


def start_servers() -> list[OpenAIServer]:
    from tests.servers import OpenAIServer

    servers = [OpenAIServer().start() for _ in range(CELLS)]
    for server in servers:
        server.disconnected = StampedEvent()
    return servers


def write_endpoints(home: Path, servers: list[OpenAIServer]) -> list[str]:
    """One ``[endpoints.fakeN]`` per server in the temporary config; returns the model ids."""
    lines = [
        f'[endpoints.fake{i}]\nbase_url = "{server.url}/v1"\n' for i, server in enumerate(servers)
    ]
    (home / "config.toml").write_text("\n".join(lines), encoding="utf-8")
    return [f"fake{i}/m" for i in range(len(servers))]


async def stop_trial(
    store: Store, ledger: Ledger, servers: list[OpenAIServer], models: list[str]
) -> StopTrial:
    from sweepbench.models.base import TextDelta
    from sweepbench.sweeps.plan import build_plan
    from sweepbench.sweeps.run import Sweep, SweepEvent

    for server in servers:
        server.reset()
        server.slow(chunks=SLOW_CHUNKS, delay=SLOW_DELAY)
    plan = build_plan("Say something long.", "model", models)
    if plan.blocking():
        raise RuntimeError(f"plan refused: {plan.blocking()}")
    deltas = [0] * len(plan.cells)
    ready = asyncio.Event()

    def on_event(event: SweepEvent) -> None:
        if isinstance(event.event, TextDelta):
            deltas[event.cell_index] += 1
            if min(deltas) >= MIN_DELTAS:
                ready.set()

    sweep = Sweep(plan, store=store, ledger=ledger, on_event=on_event)
    running = asyncio.create_task(sweep.run())
    try:
        await asyncio.wait_for(ready.wait(), 10)
    except TimeoutError:
        sweep.stop_all()
        await running
        raise RuntimeError(f"cells never all streamed (deltas per cell: {deltas})") from None
    # Stop all from another task, as a Stop button or a signal handler would.
    before = sum(deltas)
    t0 = time.perf_counter()
    sweep.stop_all()
    result = await running
    returned = time.perf_counter()
    hangups: list[float] = []
    for i, server in enumerate(servers):
        stamped = server.disconnected
        assert isinstance(stamped, StampedEvent)
        if not stamped.wait(DISCONNECT_WAIT_S) or stamped.at is None:
            raise RuntimeError(f"server {i} saw no hang-up within {DISCONNECT_WAIT_S} s")
        outcomes = [r.outcome for r in server.requests if r.path.endswith("/chat/completions")]
        if outcomes != ["disconnected"]:
            raise RuntimeError(f"server {i}: unexpected outcomes {outcomes}")
        hangups.append((stamped.at - t0) * 1000)
    if {s.status for s in result.samples} != {"stopped"} or not result.stopped:
        raise RuntimeError(f"unexpected outcome: {[s.status for s in result.samples]}")
    return StopTrial(hangups, (returned - t0) * 1000, before)


# ---------------------------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def summarize_concurrency(trials: list[ConcurrencyTrial]) -> dict[str, float]:
    ratios = [t.ratio for t in trials]
    return {
        "calls": trials[0].calls,
        "trials": len(trials),
        "slowest_call_s_median": statistics.median(t.slowest_call_s for t in trials),
        "wall_s_median": statistics.median(t.wall_s for t in trials),
        "overhead_ms_median": statistics.median(
            (t.wall_s - t.slowest_call_s) * 1000 for t in trials
        ),
        "ratio_median": statistics.median(ratios),
        "ratio_max": max(ratios),
        "speedup_median": statistics.median(t.speedup for t in trials),
    }


def summarize_stops(trials: list[StopTrial]) -> dict[str, float]:
    worst = [t.worst_ms for t in trials]
    first = [min(t.hangup_ms) for t in trials]
    returned = [t.return_ms for t in trials]
    return {
        "trials": len(trials),
        "hangup_last_ms_p50": percentile(worst, 50),
        "hangup_last_ms_p95": percentile(worst, 95),
        "hangup_last_ms_max": max(worst),
        "hangup_first_ms_p50": percentile(first, 50),
        "return_ms_p50": percentile(returned, 50),
        "return_ms_p95": percentile(returned, 95),
        "return_ms_max": max(returned),
    }


def print_report(
    info: dict[str, Any], conc: list[dict[str, float]], stops: dict[str, float]
) -> None:
    print(
        f"\n{info['date']}  {info['cpus']} CPUs ({info['cpu']})  Python {info['python']}  "
        f"load avg {info['load_before']} → {info['load_after']}"
    )
    print(f"\nConcurrency: {SCRIPTED}, {CELLS} cells (max_tokens {', '.join(BUDGETS)})")
    print(
        f"{'calls':>5} {'trials':>6} {'slowest call':>12} {'wall':>7} {'overhead':>9} "
        f"{'wall/slowest med':>16} {'max':>5} {'serial/wall':>11}"
    )
    for row in conc:
        print(
            f"{row['calls']:>5} {row['trials']:>6} {row['slowest_call_s_median']:>10.3f} s "
            f"{row['wall_s_median']:>5.3f} s {row['overhead_ms_median']:>6.1f} ms "
            f"{row['ratio_median']:>16.3f} {row['ratio_max']:>5.3f} "
            f"{row['speedup_median']:>11.2f}"
        )
    worst = max(row["ratio_max"] for row in conc)
    verdict = "met" if worst <= GOAL_RATIO else "NOT met"
    print(f"goal wall/slowest ≤ {GOAL_RATIO}: {verdict} (worst trial {worst:.3f})")

    print(
        f"\nStop all: {CELLS} cells on {CELLS} fake OpenAI servers, {SLOW_CHUNKS} chunks "
        f"{SLOW_DELAY * 1000:.0f} ms apart, stopped after ≥ {MIN_DELTAS} deltas per cell, "
        f"{stops['trials']} trials"
    )
    print(f"{'from stop_all() to':<38} {'p50':>8} {'p95':>8} {'max':>8}")
    print(
        f"{'last of 6 servers sees the hang-up':<38} {stops['hangup_last_ms_p50']:>5.1f} ms "
        f"{stops['hangup_last_ms_p95']:>5.1f} ms {stops['hangup_last_ms_max']:>5.1f} ms"
    )
    print(
        f"{'sweep.run() returns':<38} {stops['return_ms_p50']:>5.1f} ms "
        f"{stops['return_ms_p95']:>5.1f} ms {stops['return_ms_max']:>5.1f} ms"
    )
    verdict = "met" if stops["hangup_last_ms_p95"] <= GOAL_STOP_P95_MS else "NOT met"
    print(f"goal p95 ≤ {GOAL_STOP_P95_MS:.0f} ms: {verdict}")


# ------------------------------------------------------------------------------------ main


async def run_all(home: Path, trials: int, stop_trials: int) -> dict[str, Any]:
    from sweepbench.money.ledger import Ledger
    from sweepbench.store import Store

    servers = start_servers()
    try:
        models = write_endpoints(home, servers)
        store = Store.open()
        try:
            ledger = Ledger(store)
            # Warm-up, not counted: imports, the SDK client, the store's first writes.
            await concurrency_trial(store, ledger, repeats=1)
            await stop_trial(store, ledger, servers, models)

            conc_trials: dict[int, list[ConcurrencyTrial]] = {1: [], 2: []}
            for _ in range(trials):
                for repeats, found in conc_trials.items():  # alternate, so noise hits both
                    found.append(await concurrency_trial(store, ledger, repeats))
                    print(".", end="", flush=True)
            stops: list[StopTrial] = []
            for _ in range(stop_trials):
                stops.append(await stop_trial(store, ledger, servers, models))
                print(".", end="", flush=True)
            print()
        finally:
            store.close()
    finally:
        for server in servers:
            server.stop()
    errors = [e for server in servers for e in server.server_errors]
    if errors:
        raise RuntimeError(f"fake server errors:\n{errors[0]}")
    return {
        "concurrency": {
            str(repeats): {
                "summary": summarize_concurrency(found),
                "trials": [{**asdict(t), "ratio": t.ratio} for t in found],
            }
            for repeats, found in conc_trials.items()
        },
        "stop_all": {
            "summary": summarize_stops(stops),
            "trials": [{**asdict(t), "worst_ms": t.worst_ms} for t in stops],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--trials", type=int, default=7, help="concurrency trials per arm (default 7)"
    )
    parser.add_argument(
        "--stop-trials", type=int, default=None, help="stop-all trials (default 3 × --trials)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--quick", action="store_true", help="one trial of each (CI)")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.stop_trials = 1, 1
    trials = max(1, args.trials)
    stop_trials = max(1, args.stop_trials if args.stop_trials is not None else 3 * trials)

    _prepare_imports()
    info: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        **machine(),
        "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sweepbench-bench-") as tmp:
        home = Path(tmp)
        _isolate(home)
        figures = asyncio.run(run_all(home, trials, stop_trials))
    info["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    info["total_s"] = round(time.perf_counter() - started, 1)
    conc = [figures["concurrency"][k]["summary"] for k in ("1", "2")]
    print_report(info, conc, figures["stop_all"]["summary"])
    print(f"\n(total {info['total_s']} s)")
    if args.json is not None:
        setup = {
            "scripted_model": SCRIPTED,
            "budgets": BUDGETS,
            "slow_chunks": SLOW_CHUNKS,
            "slow_delay_s": SLOW_DELAY,
            "min_deltas": MIN_DELTAS,
        }
        document = {"machine": info, "setup": setup, **figures}
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
