"""A key checked before a run started from the Run a benchmark page (issue 29 §3), in a real
Chromium against a fake OpenRouter: the key typed on the page is checked with OpenRouter's free
key endpoint (as ``bench run`` checks it) and the page says what it answered — accepted with
its credit left (the run goes on), rejected (refused, no model called), not checkable just now
(the run goes on), credit below the run's lowest estimate (refused, both figures said). The
typed key is found in no store row, log line or page response."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from sweepbench.bench.start import KEY_REJECTED, KEY_UNCHECKED
from sweepbench.bench.storage import BenchStore
from sweepbench.models import openrouter
from tests.helpers import store_texts
from tests.servers import OpenRouterServer
from tests.web.browser import TIMEOUT_MS, RecordedPage, ServedApp

expect = pytest.importorskip("playwright.sync_api").expect
KEY = "test-only-key-typed-on-the-page"
MODEL = "openrouter/openai/gpt-5.6-luna"  # in the fake's catalogue: priced
ACCEPTED = "Key accepted. This key has $9.75 of credit left."


App = ServedApp


def _fake(monkeypatch: pytest.MonkeyPatch, **key_info: Any) -> OpenRouterServer:
    """A fake OpenRouter that accepts :data:`KEY` (its key check answering ``key_info``),
    started, with OpenRouter pointed at it."""
    openrouter._failed.clear()
    server = OpenRouterServer(api_key=KEY, key_info=key_info or None).start()
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
    return server


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    server = _fake(monkeypatch)
    try:
        yield server
    finally:
        server.stop()
        openrouter._failed.clear()


def _chats(server: OpenRouterServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions"))


def _run(page: RecordedPage, app: App, key: str) -> None:
    """Open the page, ask for a small automatically checked run of :data:`MODEL` with ``key``
    typed, agree to spend, press Run."""
    page.goto(f"{app.url}/benchmarks")
    page.wait_for_selector("#bp-run")
    page.fill("#bp-model", MODEL)
    page.keyboard.press("Escape")
    page.check("#bp-preset-auto")
    page.click("text=Advanced settings")
    page.fill("#bp-per-task", "1")
    page.fill("#bp-key", key)
    page.check("#bp-confirm")
    page.click("#bp-run")


def _refused(page: RecordedPage, text: str) -> str:
    refusal = page.locator("#bp-refusal")
    expect(refusal).to_contain_text(text, timeout=TIMEOUT_MS)
    return " ".join(page.inner_text("#bp-refusals").split())


def test_an_accepted_key_is_said_with_its_credit_and_the_run_goes_on_keeping_no_key(
    page: RecordedPage, app: App, fake: OpenRouterServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    responses: list[Any] = []
    page.on("response", lambda response: responses.append(response))
    _run(page, app, KEY)
    expect(page.locator("#bp-key-check")).to_have_text(ACCEPTED, timeout=TIMEOUT_MS)
    page.wait_for_data("#bp-status", "state", "ended")
    assert fake.key_fetches == 1 and _chats(fake) > 0
    (run,) = BenchStore(app.store).runs()
    assert run.status == "completed"

    for table, texts in store_texts(app.store).items():  # the typed key: nowhere
        assert not [t for t in texts if KEY in t], table
    assert KEY not in caplog.text
    bodies = []
    for response in responses:
        try:
            bodies.append(response.body().decode("utf-8", "replace"))
        except Exception:  # a redirect or an evicted body has none to read
            continue
    assert bodies and not [b for b in bodies if KEY in b]
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_a_rejected_key_refuses_the_run_before_any_call(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    _run(page, app, "test-only-not-the-right-key")
    _refused(page, KEY_REJECTED)
    assert fake.key_fetches == 1 and _chats(fake) == 0
    assert BenchStore(app.store).runs() == []


def test_credit_below_the_lowest_estimate_refuses_the_run_saying_both(
    page: RecordedPage, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _fake(monkeypatch, limit_remaining=0.000001)
    try:
        _run(page, app, KEY)
        said = _refused(page, "less than the run's lowest estimate ($")
        assert "Key accepted. This key has $0.000001 of credit left." in said
        assert "this key has $0.000001 of credit left" in said
        assert _chats(server) == 0 and BenchStore(app.store).runs() == []
    finally:
        server.stop()
        openrouter._failed.clear()


def test_a_key_that_cannot_be_checked_just_now_lets_the_run_go_on(
    page: RecordedPage, app: App, fake: OpenRouterServer
) -> None:
    fake.push(fake.error(503), route="key")  # OpenRouter's key check is down for a moment
    _run(page, app, KEY)
    expect(page.locator("#bp-key-check")).to_have_text(KEY_UNCHECKED, timeout=TIMEOUT_MS)
    page.wait_for_data("#bp-status", "state", "ended")
    assert _chats(fake) > 0
