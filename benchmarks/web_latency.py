"""Time from the scripted model emitting a drawing element to that element being on the page.

Runs the web app in this process on 127.0.0.1, drives Debian's Chromium with Playwright, and
starts a drawing sweep of N cells on ``scripted/sketch`` from the page itself. The runner
records when each element left the parser (``time.time()``); a MutationObserver in the page
records when each canvas's ``data-elements`` count grew (``Date.now()``, same machine, same
clock). Latency of element k = first time the canvas showed ≥ k+1 elements − its emission time.

    python benchmarks/web_latency.py [--cells 6] [--tps 60] [--runs 3]
    python benchmarks/web_latency.py --quick     # 2 fast cells, one run: that it works (CI)

Prints p50 / p95 / max per run and overall, with the ticker interval for scale (the page polls
every TICK_MS; the rest is the callback round trip and Excalidraw's update).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sweepbench.sweeps.live import SweepRunner

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OBSERVER = """
() => {
  window.__growth = {};
  const watch = (el, i) => {
    new MutationObserver(() => {
      const n = +el.dataset.elements;
      const seen = window.__growth[i] || (window.__growth[i] = {});
      if (!(n in seen)) seen[n] = Date.now();
    }).observe(el, {attributes: true, attributeFilter: ['data-elements']});
  };
  document.querySelectorAll('[data-elements]').forEach(watch);
  return document.querySelectorAll('[data-elements]').length;
}
"""


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))]


FINISHED = "/variants in [\\d.]+s wall clock/.test(document.querySelector('#status').innerText)"
"""The page's status line once the sweep has finished."""


def one_run(pg: Any, base_url: str, runner: SweepRunner, cells: int, tps: int) -> list[float]:
    """One sweep from the page; the latencies (ms) of every element of every cell."""
    from tests.web.browser import pick_models

    pg.goto(base_url)
    pg.wait_for_selector("#estimate:not(:empty)")
    pick_models(pg, [f"scripted/sketch?tps={tps + i}" for i in range(cells)])
    pg.fill("#prompt", "a payments service")
    pg.wait_for_selector("#run:not([disabled])")
    pg.click("#run")
    pg.wait_for_function(f"document.querySelectorAll('[data-elements]').length === {cells}")
    pg.evaluate(OBSERVER)
    pg.set_default_timeout(120_000)
    pg.wait_for_function(FINISHED)
    pg.wait_for_selector("#stop[disabled]")
    pg.wait_for_timeout(600)
    growth = pg.evaluate("window.__growth")
    live = runner.recent()[-1]
    latencies: list[float] = []
    for index in range(cells):
        emitted = live.samples[(index, 0)].emitted
        shown = {int(n): t for n, t in (growth.get(str(index)) or {}).items()}
        for k, at in enumerate(emitted):
            times = [t for n, t in shown.items() if n >= k + 1]
            if times:
                latencies.append(min(times) - at * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=6)
    parser.add_argument("--tps", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 fast cells, one run (CI)")
    args = parser.parse_args()
    if args.quick:
        args.cells, args.tps, args.runs = 2, 400, 1
    os.environ["SWEEPBENCH_HOME"] = tempfile.mkdtemp(prefix="sweepbench-latency-")
    os.environ["SWEEPBENCH_CALLS_PER_HOUR"] = "10000"

    import logging

    from playwright.sync_api import sync_playwright
    from tests.web.browser import serve

    from sweepbench.store import Store
    from sweepbench.web.app import create_app
    from sweepbench.web.sweep_page import TICK_MS

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    store = Store.open()
    app = create_app(store)
    runner = app.server.config["sweepbench.runner"]
    everything: list[float] = []
    with serve(app) as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for run in range(args.runs):
            started = time.perf_counter()
            latencies = one_run(page, base_url, runner, args.cells, args.tps)
            everything += latencies
            print(
                f"run {run + 1}: {len(latencies)} elements in {time.perf_counter() - started:.1f}s"
                f" · p50 {statistics.median(latencies):.0f} ms · p95 "
                f"{percentile(latencies, 0.95):.0f} ms · max {max(latencies):.0f} ms"
            )
        browser.close()
    runner.close()
    print(
        f"all: {len(everything)} elements, {args.cells} cells at ~{args.tps} tokens/s · "
        f"p50 {statistics.median(everything):.0f} ms · p95 {percentile(everything, 0.95):.0f} ms"
        f" · max {max(everything):.0f} ms · ticker {TICK_MS} ms · p95/ticker "
        f"{percentile(everything, 0.95) / TICK_MS:.2f}"
    )


if __name__ == "__main__":
    main()
