"""Helpers for browser tests: serve an app on 127.0.0.1 in a thread; a page that records.

The fixtures that hand these out (``browser``, ``page``) are in tests/web/conftest.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_MS = 120_000
"""Every browser wait's limit (the page fixture's default): scaled for a loaded machine, not a
quiet one. A wait ends as soon as its condition holds, so a generous limit costs nothing when
the page is quick; it only decides how long a broken page takes to fail."""
TIMEOUT_S = TIMEOUT_MS / 1000
"""The same limit for a test's own wait on the app's state (a loop over the store)."""
LOCAL_HOSTS = {"127.0.0.1"}
LOCAL_SCHEMES = {"data", "blob", "about"}


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve a Dash app (or a Flask/WSGI app) on a free port of 127.0.0.1; yields its base URL."""
    from werkzeug.serving import make_server

    wsgi = getattr(app, "server", app)
    server = make_server("127.0.0.1", 0, wsgi, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="test-web-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass(frozen=True)
class ServedApp:
    """The web app served on 127.0.0.1: its address, its context and its store."""

    url: str
    context: Any
    """The app's :class:`~sweepbench.web.context.WebContext`."""
    store: Any
    """Its :class:`~sweepbench.store.Store`."""


@contextmanager
def served_app(**options: Any) -> Iterator[ServedApp]:
    """The web app on a fresh store (``options``: :func:`~sweepbench.web.app.create_app`'s,
    e.g. ``benchmark_folders``), served until the block ends, then closed with its store."""
    from sweepbench.store import Store
    from sweepbench.web.app import create_app

    store = Store.open()
    dash_app = create_app(store, **options)
    context = dash_app.server.config["sweepbench.context"]
    try:
        with serve(dash_app) as url:
            yield ServedApp(url, context, store)
    finally:
        context.close()
        store.close()


@dataclass
class RecordedPage:
    """A Playwright page (its methods are reachable directly) and what it did.

    ``requests``: every URL the browser asked for; ``errors``: uncaught page errors and
    console messages of type error; ``failures``: responses with status >= 400 as
    ``"STATUS URL"``; ``responses``: URL -> last status seen.
    """

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    responses: dict[str, int] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.page, name)

    def non_local(self) -> list[str]:
        """Requests that went anywhere but 127.0.0.1 (data:, blob: and about: URLs are local)."""
        return [url for url in self.requests if not _local(url)]

    def wait_for_data(
        self, selector: str, name: str, value: str, timeout: float = TIMEOUT_MS
    ) -> None:
        """Wait until ``selector`` carries ``data-NAME="VALUE"`` (hidden elements count too)."""
        self.page.wait_for_selector(
            f"{selector}[data-{name}='{value}']", state="attached", timeout=timeout
        )


def _local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or parts.hostname in LOCAL_HOSTS


def pick_models(page: RecordedPage, models: list[str]) -> None:
    """On the Sweep page, replace the model list with ``models`` (typed: any provider/model id
    is accepted)."""
    page.click("text=Compare models")
    box = page.locator("#vary-model")
    box.click()
    for _ in range(6):
        box.press("Backspace")
    for model in models:
        box.fill(model)
        box.press("Enter")
    box.press("Escape")  # close the suggestions
    box.evaluate("e => e.blur()")
