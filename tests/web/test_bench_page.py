"""The Run a benchmark page in a real Chromium, on scripted models: the estimate is the CLI's,
a run shows progress, stops, continues and finishes, its downloads are what ``bench export``
writes, a typed key is found nowhere afterwards, and the token gate refuses spending."""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.report import export_run
from sweepbench.bench.start import prepare
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.wording import estimate_lines
from sweepbench.settings import provider_key, run_keys, secret_values
from sweepbench.store import Store
from sweepbench.web.bench_form import build_request
from sweepbench.web.bench_page import start_from_page
from sweepbench.web.bench_run_host import host_for
from sweepbench.web.context import WebContext
from sweepbench.web.gate import Gate
from tests.helpers import run_cli, store_texts
from tests.web.browser import TIMEOUT_MS, RecordedPage, ServedApp

SLOW = "scripted/guess?ttft=0.3"
JUDGE = "scripted/guess"


App = ServedApp


def _open(page: RecordedPage, app: App) -> None:
    page.goto(f"{app.url}/benchmarks")
    page.wait_for_selector("#bp-run")


def _settings(page: RecordedPage, model: str, *, concurrency: str | None = None) -> None:
    page.click("text=Advanced settings")
    page.fill("#bp-judge", JUDGE)
    if concurrency is not None:
        page.fill("#bp-concurrency", concurrency)
    page.fill("#bp-model", model)
    page.keyboard.press("Escape")


def _page_values(model: str, concurrency: str = "8") -> dict[str, Any]:
    """The page's settings as the test sets them (for the library's side of a comparison)."""
    values: dict[str, Any] = dict.fromkeys(
        ["bp-declaration", "bp-data", "bp-student", "bp-limit-target", "bp-limit-judge",
         "bp-limit-student", "bp-areas", "bp-tasks", "bp-skills", "bp-per-task",
         "bp-max-items", "bp-max-tokens"]
    )  # fmt: skip
    values.update({
        "bp-benchmark": "sample", "bp-model": model, "bp-preset": "full", "bp-scope": False,
        "bp-limit": "5", "bp-judge": JUDGE, "bp-decision": False, "bp-separate-student": False,
        "bp-concurrency": concurrency, "bp-resume": True, "bp-unpriced": False,
    })  # fmt: skip
    return values


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_estimate_is_the_clis(
    page: RecordedPage,
    app: App,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _open(page, app)
    _settings(page, JUDGE)
    page.click("#bp-estimate-button")
    page.wait_for_selector("#bp-estimate-lines")
    shown = [t.strip() for t in page.locator("#bp-estimate-lines > *").all_inner_texts()]
    request = build_request(_page_values(JUDGE))
    expected = estimate_lines(prepare(request, app.store), surface="web")
    assert shown == expected and "40 questions for scripted/guess." in shown
    code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "--model", JUDGE, "--judge", JUDGE,
        "--limit", "5",
    )  # fmt: skip
    assert code == 0 and _words(err) == _words("\n".join(shown))
    assert "Used only for this run. Never saved or shown." in page.inner_text("#bp-key-note")
    page.click("text=Technical details")
    assert '"config_hash"' in page.inner_text("#bp-details")
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def _status(page: RecordedPage, state: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_data("#bp-status", "state", state, timeout=timeout)


def test_a_run_stops_continues_and_downloads_what_export_writes_and_keeps_no_key(
    page: RecordedPage, app: App, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    planted = "sk-test-" + uuid.uuid4().hex  # a key-shaped sentinel, built at run time
    responses: list[Any] = []
    page.on("response", lambda response: responses.append(response))
    _open(page, app)
    _settings(page, SLOW, concurrency="1")
    page.fill("#bp-key", planted)
    page.click("#bp-run")
    page.wait_for_selector("#bp-progress")
    assert page.input_value("#bp-key") == ""  # the field is cleared once the run starts
    assert page.inner_text("#bp-progress").startswith("Running…")
    assert planted in secret_values()  # scrubbed everywhere while the run lives
    assert provider_key("scripted") is None  # ...but not this thread's key: the run's only

    page.goto(f"{app.url}/benchmarks")  # a closed tab: the run goes on, shown with Stop
    page.wait_for_selector("#bp-progress")
    page.wait_for_function(
        "document.querySelector('#bp-progress').innerText.match(/Running… [1-9]/)"
    )
    assert "Spent so far: $0 of your $5.00 limit." in page.inner_text("#bp-progress")
    page.click("#bp-stop")
    _status(page, "ended")
    assert "Stopped early" in page.inner_text("#bp-outcome")
    runs = BenchStore(app.store)
    (run,) = runs.runs()
    kept = sum(1 for s in runs.statuses(run.id).values() if s == "scored")
    assert 0 < kept < 40 and run.status == "interrupted"

    # continue, faster (requests at once is not one of the settings that make a run)
    _settings(page, SLOW, concurrency="40")  # the reopened page holds the run's settings
    page.click("#bp-run")
    page.wait_for_selector("#bp-outcome:has-text('Finished')")
    assert [r.id for r in runs.runs()] == [run.id]
    assert sum(1 for s in runs.statuses(run.id).values() if s == "scored") == 40
    assert "Scores on the questions that ran" in page.inner_text("#bp-scores")
    assert page.locator("#bp-results tbody tr").count() > 3

    exported = {p.name: p.read_bytes() for p in export_run(app.store, run.id, tmp_path / "x")}
    for suffix, name in [("answers", "answers.jsonl"), ("failures", "failures.jsonl"),
                         ("spend", "spend.jsonl"), ("summary-csv", "summary.csv"),
                         ("summary-json", "summary.json")]:  # fmt: skip
        with page.expect_download() as info:
            page.click(f"#bp-dl-{suffix}")
        download = info.value
        assert download.suggested_filename == f"{run.id}-{name}"
        assert Path(download.path()).read_bytes() == exported[name], name
    assert exported["answers.jsonl"].count(b"\n") == 40

    assert planted not in secret_values()  # the run is over: its key is gone
    for table, texts in store_texts(app.store).items():
        assert not [t for t in texts if planted in t], table
    assert planted not in caplog.text
    bodies = []
    for response in responses:
        try:
            bodies.append(response.body().decode("utf-8", "replace"))
        except Exception:  # a redirect or an evicted body has none to read
            continue
    assert bodies and not [b for b in bodies if planted in b]
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_the_token_gate_refuses_a_run_when_bound_off_loopback() -> None:
    from sweepbench.web.app import create_app

    token = "t-" + uuid.uuid4().hex
    store = Store.open()
    dash_app = create_app(store, host="0.0.0.0", gate=Gate("0.0.0.0", token=token))
    context: WebContext = dash_app.server.config["sweepbench.context"]
    try:
        host = host_for(context)
        key = "sk-test-" + uuid.uuid4().hex
        with dash_app.server.test_request_context("/"):  # not signed in
            shown, run_id = start_from_page(context, host, _page_values(JUDGE), key, True)
        assert run_id is None and "sign in with the access token" in str(shown)
        assert key not in str(shown)
        assert BenchStore(store).runs() == []
    finally:
        context.close()
        store.close()


def test_a_run_key_reaches_only_its_own_context() -> None:
    key = "sk-test-" + uuid.uuid4().hex
    assert provider_key("scripted") is None
    with run_keys({"scripted": key}):
        assert provider_key("scripted") == key and key in secret_values()
        with pytest.raises(ValueError), run_keys({"scripted": "short"}):
            pass
        assert contextvars.Context().run(provider_key, "scripted") is None
    assert provider_key("scripted") is None and key not in secret_values()
    assert not re.search("sk-test-", " ".join(secret_values()))
