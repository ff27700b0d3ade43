"""Screenshots of the benchmark pages for the README: ``python scripts/web_screenshots.py DIR``.

Starts the web app on a fresh store in a temporary home, runs a small benchmark and a
benchmark sweep on scripted models (offline, free) so the pages have something to show, and
saves ``leaderboard.png``, ``run-benchmark.png``, ``bench-sweep.png`` and ``about.png`` into
DIR, driving Debian's Chromium (/usr/bin/chromium) with Playwright."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def _prepare_store() -> tuple[str, str]:
    """A finished run and a finished sweep on scripted models; their ids."""
    sys.path.insert(0, str(REPO))
    from tests.bench.sweep_helpers import guess, marked_benchmark

    import sweepbench
    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.start import prepare
    from sweepbench.store import Store

    home = Path(os.environ["SWEEPBENCH_HOME"])
    path = marked_benchmark(home / "marked", 400)
    sweep = sweepbench.bench_sweep(str(path), "model", [guess("0.9"), guess("0.85"), guess("0.6")])
    request = BenchRequest.from_values(
        {"benchmark": "sample", "models": {"target": "scripted/guess", "judge": "scripted/guess"},
         "confirmed": True}
    )  # fmt: skip
    with Store.open() as store:
        outcome = asyncio.run(BenchRunner(prepare(request, store), store).run())
    return outcome.run_id, sweep.sweep.id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["SWEEPBENCH_HOME"] = home
        run_id, sweep_id = _prepare_store()
        from playwright.sync_api import sync_playwright
        from tests.web.browser import serve

        from sweepbench.store import Store
        from sweepbench.web.app import create_app

        store = Store.open()
        app = create_app(store)
        pages = {  # file: (path, what to wait for, what to scroll to)
            "leaderboard.png": ("/leaderboard", "#lb-chart", None),
            "run-benchmark.png": (f"/benchmarks?run={run_id}", "#bp-outcome", "#bp-confirm"),
            "bench-sweep.png": (f"/bench-sweep?sweep={sweep_id}", "#bs-verdicts", "#bs-progress"),
            "about.png": ("/about", "#page h2", None),
        }
        try:
            with serve(app) as url, sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                for name, (path, ready, scroll) in pages.items():
                    page.goto(url + path)
                    page.wait_for_selector(ready, timeout=30_000)
                    page.wait_for_timeout(2_500)  # callbacks settle, the chart draws
                    if scroll is not None:
                        page.locator(scroll).evaluate("e => e.scrollIntoView({block: 'start'})")
                        page.evaluate("window.scrollBy(0, -70)")  # below the fixed header
                        page.wait_for_timeout(300)
                    page.screenshot(path=str(args.out / name), full_page=False)
                    print(args.out / name)
                browser.close()
        finally:
            app.server.config["sweepbench.context"].close()
            store.close()


if __name__ == "__main__":
    main()
