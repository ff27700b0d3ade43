"""The Run a benchmark page's queue of hosted runs (spec benchmarks §8.1, "Concurrency between
visitors") and the controls a reopened run fills, in a real Chromium on scripted models."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from sweepbench.bench.start import prepare
from sweepbench.bench.storage import BenchStore
from sweepbench.settings import secret_values
from sweepbench.store import Store
from sweepbench.web.bench_form import build_request, controls_from_run
from sweepbench.web.bench_page import start_from_page
from sweepbench.web.bench_run_host import BenchRunHost, host_for, max_hosted_runs
from sweepbench.web.context import WebContext
from tests.bench.gate_helpers import gated, open_gate
from tests.web.browser import TIMEOUT_MS, TIMEOUT_S, RecordedPage, serve

SLOW = "scripted/guess?ttft=0.2"
QUICK = "scripted/guess"
JUDGE = "scripted/guess"


@dataclass(frozen=True)
class App:
    url: str
    context: WebContext
    store: Store
    host: BenchRunHost


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    from sweepbench.web.app import create_app

    monkeypatch.setenv("SWEEPBENCH_MAX_HOSTED_RUNS", "1")
    store = Store.open()
    dash_app = create_app(store)
    context: WebContext = dash_app.server.config["sweepbench.context"]
    host = host_for(context)
    try:
        with serve(dash_app) as url:
            yield App(url, context, store, host)
    finally:
        for run_id in host.live():
            host.stop(run_id)
        context.close()
        store.close()


def _values(model: str, **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = dict.fromkeys(
        ["bp-declaration", "bp-data", "bp-student", "bp-limit-target", "bp-limit-judge",
         "bp-limit-student", "bp-areas", "bp-tasks", "bp-skills", "bp-per-task",
         "bp-max-items", "bp-max-tokens"]
    )  # fmt: skip
    values.update({
        "bp-benchmark": "sample", "bp-model": model, "bp-preset": "full", "bp-scope": False,
        "bp-limit": "5", "bp-judge": JUDGE, "bp-decision": False, "bp-separate-student": False,
        "bp-concurrency": "1", "bp-resume": True, "bp-unpriced": False,
    })  # fmt: skip
    values.update(changes)
    return values


def _start(app: App, values: dict[str, Any]) -> str:
    """A run started as the page starts one (the first visitor's)."""
    shown, run_id = start_from_page(app.context, app.host, values, "", True)
    assert run_id is not None, shown
    return run_id


def _status(page: RecordedPage, state: str, timeout: float = TIMEOUT_MS) -> None:
    page.wait_for_data("#bp-status", "state", state, timeout=timeout)


def _second_visitor(page: RecordedPage, app: App, model: str, key: str = "") -> None:
    """Open the page (it shows the first run, live) and start another run."""
    page.goto(f"{app.url}/benchmarks")
    page.wait_for_selector("#bp-progress")
    page.click("text=Advanced settings")
    page.fill("#bp-max-items", "4")
    page.fill("#bp-model", model)
    page.keyboard.press("Escape")
    if key:
        page.fill("#bp-key", key)
    page.click("#bp-run")


def test_a_second_run_waits_in_the_queue_then_runs(page: RecordedPage, app: App) -> None:
    gate = f"queue-{uuid.uuid4().hex[:8]}"  # the first run holds until the queue is seen
    first = _start(app, _values(gated(SLOW, gate), **{"bp-max-items": "20"}))
    _second_visitor(page, app, QUICK)
    _status(page, "queued")
    assert page.inner_text("#bp-queued") == "Queued: 1 run ahead of yours."
    assert not page.is_disabled("#bp-stop")
    runs = BenchStore(app.store)
    assert [r.id for r in runs.runs()] == [first]  # the queued run is not recorded yet
    open_gate(gate)
    deadline = time.monotonic() + TIMEOUT_S
    while len(runs.runs()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    first_row = runs.run(first)  # the second is recorded only once the first has ended
    assert first_row is not None and first_row.status == "completed"
    _status(page, "ended")
    assert "Finished" in page.inner_text("#bp-outcome")
    (second,) = [r for r in runs.runs() if r.id != first]
    assert second.model == QUICK
    assert sum(1 for s in runs.statuses(second.id).values() if s == "scored") == 4
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_stop_on_a_queued_run_removes_it_unstarted(page: RecordedPage, app: App) -> None:
    planted = "sk-test-" + uuid.uuid4().hex  # a key-shaped sentinel, built at run time
    first = _start(app, _values(SLOW))
    _second_visitor(page, app, QUICK, key=planted)
    _status(page, "queued")
    assert planted in secret_values()  # held by the queued job only, for its own calls
    page.click("#bp-stop")
    _status(page, "removed")
    assert "nothing was run, spent or saved" in page.inner_text("#bp-removed")
    assert planted not in secret_values()  # wiped with the job
    runs = BenchStore(app.store)
    assert [r.id for r in runs.runs()] == [first]  # never recorded, never answered
    live = app.host.live()
    assert live == [first]
    app.host.stop(first)
    hosted = app.host.hosted(first)
    assert hosted is not None and hosted.done.wait(10)
    assert [r.id for r in runs.runs()] == [first]
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_reopening_a_run_fills_the_controls(page: RecordedPage, app: App) -> None:
    values = _values(
        QUICK, **{"bp-max-items": "3", "bp-tasks": "arithmetic, explain", "bp-limit": "2",
                  "bp-concurrency": "3", "bp-limit-judge": "1", "bp-max-tokens": "4000"}
    )  # fmt: skip
    run_id = _start(app, values)
    hosted = app.host.hosted(run_id)
    assert hosted is not None and hosted.done.wait(20)
    page.goto(f"{app.url}/benchmarks?run={run_id}")
    _status(page, "ended")
    page.click("text=Advanced settings")
    shown = {
        name: page.input_value(f"#{name}")
        for name in ("bp-model", "bp-judge", "bp-max-items", "bp-tasks", "bp-limit",
                     "bp-concurrency", "bp-limit-judge", "bp-max-tokens", "bp-key")
    }  # fmt: skip
    assert shown == {
        "bp-model": QUICK, "bp-judge": JUDGE, "bp-max-items": "3",
        "bp-tasks": "arithmetic, explain", "bp-limit": "2", "bp-concurrency": "3",
        "bp-limit-judge": "1", "bp-max-tokens": "4000", "bp-key": "",
    }  # fmt: skip
    assert page.is_checked("#bp-preset-full") and page.is_checked("#bp-resume")
    # the filled controls make the same run (so pressing Run continues it)
    (run,) = BenchStore(app.store).runs()
    filled = _values("", **controls_from_run(dict(run.settings)))
    again = prepare(build_request(filled), app.store)
    assert again.plan.config.hash == run.config_hash
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def test_a_bad_maximum_is_warned_about_and_the_default_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    monkeypatch.setenv("SWEEPBENCH_MAX_HOSTED_RUNS", "two")
    assert max_hosted_runs() == 1
    assert "SWEEPBENCH_MAX_HOSTED_RUNS='two' is not a whole number ≥ 1" in caplog.text
    monkeypatch.setenv("SWEEPBENCH_MAX_HOSTED_RUNS", "3")
    assert max_hosted_runs() == 3
    monkeypatch.delenv("SWEEPBENCH_MAX_HOSTED_RUNS")
    assert max_hosted_runs() == 1


def test_a_run_admitted_but_not_yet_recorded_is_running_not_missing(isolated_home: Any) -> None:
    """The moment between leaving the queue and the run writing its row (issue 31 §3): the
    page's first poll must see a running run, or it stops polling a run that goes on."""
    from sweepbench.engine.supervisor import Supervisor
    from sweepbench.web.bench_run_host import HostedRun
    from sweepbench.web.bench_views import state_view

    store, supervisor = Store.open(), Supervisor()
    host = BenchRunHost(store, supervisor)
    hosted = HostedRun("not-yet-recorded", resumed=False)
    host._runs[hosted.run_id] = hosted  # admitted; runner.run() has not written the row yet
    progress = host.progress(hosted.run_id)
    assert progress is not None and progress.running and progress.scored == 0
    _view, state, tick_off = state_view(None, host, hosted.run_id)  # type: ignore[arg-type]
    assert (state, tick_off) == ("running", False)
    hosted.error = "refused: another session holds these settings"
    hosted.done.set()  # it ended before it was recorded: its error is said, not "no run"
    view, state, _ = state_view(None, host, hosted.run_id)  # type: ignore[arg-type]
    assert state == "ended" and "another session" in str(view)
    supervisor.close()
    store.close()
