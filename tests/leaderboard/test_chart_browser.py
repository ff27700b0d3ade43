"""The leaderboard chart in a real browser (issue 15): ``sweepbench leaderboard --chart``
writes one HTML file that, opened from ``file://`` in headless Chromium, draws its plot
without asking for anything off the machine (only ``file:`` and ``data:`` URLs).

Playwright's sync API, in a fixture of this module only (it keeps an event loop in the main
thread while open, so nothing here calls ``asyncio.run``). Skips without Playwright or
/usr/bin/chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from sweepbench.cli.app import app

CHROMIUM = Path("/usr/bin/chromium")
ON_MACHINE = {"file", "data", "blob", "about"}


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium (no sandbox: the tests run as root)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def test_the_chart_renders_offline_from_a_file(chromium: Any, tmp_path: Path) -> None:
    path = tmp_path / "board.html"
    result = CliRunner().invoke(app, ["leaderboard", "--scope", "paper", "--chart", str(path)])
    assert result.exit_code == 0, result.output
    assert path.is_file()

    requests: list[str] = []
    errors: list[str] = []
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:

        def record(route: Any) -> None:
            url = route.request.url
            requests.append(url)
            if urlsplit(url).scheme in ON_MACHINE:
                route.continue_()
            else:
                route.abort()  # never reach the network, but count the attempt

        context.route("**/*", record)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("request", lambda request: requests.append(request.url))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path.as_uri())
        page.wait_for_selector(".plotly svg.main-svg", state="attached")
        points = page.locator(".scatterlayer .point").count()
        legend = page.locator(".legend").first.text_content() or ""
        axis = page.locator(".xtitle").first.text_content() or ""
    finally:
        context.close()

    assert errors == []
    assert requests and all(urlsplit(u).scheme in ON_MACHINE for u in requests), requests
    assert points > 0  # the placed models are drawn
    assert "Best value" in legend  # the frontier is drawn
    assert axis.startswith("$/1M tokens")
