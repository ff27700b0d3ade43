"""Browser fixtures for the web tests (helpers in tests/web/browser.py).

    from tests.web.browser import RecordedPage, serve

    def test_page(page: RecordedPage) -> None:
        with serve(app) as base_url:
            page.goto(base_url)
            page.wait_for_data("#canvas", "ready", "1")
            assert page.errors == [] and page.non_local() == []

``browser`` (package scope) is headless Chromium; ``page`` is a fresh context and page per test.
They skip when Playwright or /usr/bin/chromium is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from tests.web.browser import CHROMIUM, TIMEOUT_MS, RecordedPage, ServedApp, serve, served_app


@dataclass(frozen=True)
class Served:
    """The app's address and its runner (sweeps are started here and opened by ``?sweep=``)."""

    url: str
    runner: SweepRunner


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """The web app on a fresh store, served on 127.0.0.1; the test's ``tmp_path`` is its
    benchmarks folder (declarations written there may be run from the pages)."""
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store, benchmark_folders=[tmp_path])
    runner: SweepRunner = app.server.config["sweepbench.runner"]
    try:
        with serve(app) as url:
            yield Served(url, runner)
    finally:
        app.server.config["sweepbench.context"].close()  # the sweep runner and the bench loop
        store.close()


@pytest.fixture
def app() -> Iterator[ServedApp]:
    """The web app on a fresh store, served on 127.0.0.1, with its context and store (a test
    module that needs other options defines its own)."""
    with served_app() as served:
        yield served


@pytest.fixture(autouse=True)
def _quiet_server_log() -> None:
    """Werkzeug logs every request; the tests read the recorded page instead."""
    import logging

    logging.getLogger("werkzeug").setLevel(logging.WARNING)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's /usr/bin/chromium; no sandbox, tests run as root).

    Package scope, not session: Playwright's sync API keeps an event loop running in the main
    thread while it is open, which would break any later test that calls ``asyncio.run``."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[RecordedPage]:
    """A fresh browser context and page that records requests, errors and failed responses."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    recorded = RecordedPage(context.new_page())
    recorded.page.set_default_timeout(TIMEOUT_MS)  # waits for states, scaled for load
    recorded.page.set_default_navigation_timeout(TIMEOUT_MS)

    def on_console(message: Any) -> None:
        if message.type == "error":
            recorded.errors.append(f"console: {message.text}")

    def on_response(response: Any) -> None:
        recorded.responses[response.url] = response.status
        if response.status >= 400:
            recorded.failures.append(f"{response.status} {response.url}")

    recorded.page.on("request", lambda request: recorded.requests.append(request.url))
    recorded.page.on("pageerror", lambda error: recorded.errors.append(f"pageerror: {error}"))
    recorded.page.on("console", on_console)
    recorded.page.on("response", on_response)
    try:
        yield recorded
    finally:
        context.close()
