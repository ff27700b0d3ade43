"""Runs a sweep the way ``sweepbench serve`` does (SweepRunner on the engine's supervisor) and
prints ``ready <sweep id>`` once its fast cell is stored done; the test then kills it. With
``--serve`` it runs the real ``sweepbench serve`` code path's shutdown on SIGTERM instead."""

from __future__ import annotations

import signal
import sys
import time

from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.sweeps.history import load_sweep
from sweepbench.sweeps.live import SweepRunner
from sweepbench.sweeps.plan import build_plan


def main() -> None:
    url = sys.argv[1]
    graceful = "--sigterm" in sys.argv
    store = Store.open(url)
    runner = SweepRunner(store)
    if graceful:  # what `sweepbench serve` does with SIGTERM: Stop all, then exit

        def terminate(signum: int, frame: object) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, terminate)
    plan = build_plan(
        "one two three",
        "model",
        ["scripted/echo?tps=200", "scripted/lorem?words=3000&tps=40"],
        max_tokens=4000,
    )
    live = runner.start(plan)
    try:
        while True:  # the fast cell stored done, the slow one streaming
            try:
                cells = load_sweep(store, live.id)["cells"]
            except UserError:  # not stored yet
                cells = [{"status": "queued"}]
            if cells[0]["status"] == "done" and live.samples[(1, 0)].deltas >= 5:
                break
            time.sleep(0.05)
        print(f"ready {live.id}", flush=True)
        while True:
            time.sleep(0.1)
    except KeyboardInterrupt:
        runner.close()
        store.close()
        print("closed", flush=True)


if __name__ == "__main__":
    main()
