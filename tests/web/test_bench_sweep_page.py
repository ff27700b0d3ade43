"""The Benchmark sweep page (/bench-sweep): a sweep of two scripted settings started from the
page shows each setting's progress and then the paired verdict; a stored sweep opens by
``?sweep=``, with its scores per area and task and the files ``export`` writes to download;
the advanced settings reach the request (repeats show pass@k; a wrong number shows the
library's message) and come back when the sweep is reopened; Stop stops every setting keeping
the answers; a sweep that spends is refused when the gate is not satisfied; and nothing ever
leaves 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import flask
import pytest

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.sweeps.plan import plan_bench_sweep
from sweepbench.bench.sweeps.result import breakdown_rows, load_sweep
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.bench.sweeps.store import SweepStore
from sweepbench.engine.supervisor import Supervisor
from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.web.bench_sweep_controls import Controls, plan_for
from sweepbench.web.bench_sweep_live import live_sweeps
from sweepbench.web.bench_sweep_page import start_sweep
from sweepbench.web.bench_sweep_view import DOWNLOADS
from sweepbench.web.context import WebContext
from sweepbench.web.gate import Gate
from sweepbench.web.offer import BenchmarkOffer
from tests.bench.helpers import set_prices
from tests.bench.sweep_helpers import guess, marked_benchmark
from tests.web.browser import TIMEOUT_S, RecordedPage, serve
from tests.web.conftest import Served

TOKEN = "correct-horse-battery-staple-4417"
GOOD, POOR = guess("0.9"), guess("0.6")


def _assert_clean(page: RecordedPage) -> None:
    assert page.errors == []
    assert page.failures == []
    assert page.non_local() == []


def _fill_sweep(page: RecordedPage, benchmark: Path, models: list[str]) -> None:
    """The benchmark and the models to compare, typed (any model id is accepted)."""
    page.fill("#bs-benchmark", str(benchmark))
    box = page.locator("#bs-values")
    box.click()
    for model in models:
        box.fill(model)
        box.press("Enter")
    box.press("Escape")
    box.evaluate("e => e.blur()")
    page.wait_for_function(
        "document.querySelector('#bs-estimate').innerText.includes('2 settings varying models')"
    )


def _stored_sweep(store: Store, benchmark: Path, models: list[str]) -> str:
    """Run a sweep through the library (in a thread: the browser holds this thread's loop)."""
    request = BenchRequest.from_values(
        {"benchmark": str(benchmark), "models": {"target": models[0]}, "confirmed": True}
    )
    plan = plan_bench_sweep(request, "model", models, store)
    runner = BenchSweepRunner(plan, store)
    with ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(asyncio.run, runner.run()).result(30)
    assert outcome.status == "completed"
    return runner.sweep_id


def test_a_sweep_started_from_the_page_shows_progress_then_the_verdict(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 200)
    page.goto(f"{served.url}/bench-sweep")
    models = [guess("0.9", ttft="0.02"), guess("0.6", ttft="0.02")]
    _fill_sweep(page, path, models)
    estimate = page.inner_text("#bs-estimate")
    for model in models:  # the estimate per setting, as bench sweep --estimate-only says it
        assert f"{model}: 200 questions" in estimate
    assert "Estimated cost of the whole sweep" in estimate
    page.wait_for_selector("#bs-run:not([disabled])")
    page.click("#bs-run")
    page.wait_for_selector("#bs-progress-0[data-total='200']", state="attached")
    page.wait_for_selector("#bs-progress-1[data-total='200']", state="attached")
    page.wait_for_selector("#bs-progress-0[data-done='200']", state="attached")
    page.wait_for_selector("#bs-progress-1[data-done='200']", state="attached")
    page.wait_for_selector("#bs-verdicts:has-text('is worse by')")
    verdicts = page.inner_text("#bs-verdicts")
    assert f"Best score: {models[0]}" in verdicts
    assert f"{models[1]} is worse by" in verdicts
    assert "200/200 answered" in page.inner_text("#bs-progress")
    page.wait_for_selector("#bs-status:has-text('Finished')")
    page.wait_for_selector("#bs-chart .js-plotly-plot")  # the score-against-price chart
    assert page.locator("#bs-chart-wrap").is_visible()
    table = page.inner_text("#bs-table")
    assert models[0] in table and "best" in table
    [sweep] = SweepStore(served.runner.store).sweeps(5)
    runs = [s.run_id for s in load_sweep(served.runner.store, sweep.id).settings]
    hrefs = [page.get_attribute(f"#bs-run-link-{i}", "href") for i in range(2)]
    assert hrefs == [f"/benchmarks?run={run_id}" for run_id in runs]
    _assert_clean(page)


def test_opening_a_stored_sweep_shows_its_table_and_settings(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 200)
    sweep_id = _stored_sweep(served.runner.store, path, [GOOD, POOR])
    page.goto(f"{served.url}/bench-sweep?sweep={sweep_id}")
    page.wait_for_selector("#bs-table")
    table = page.inner_text("#bs-table")
    assert GOOD in table and POOR in table and "best" in table
    assert f"{POOR} is worse by" in page.inner_text("#bs-verdicts")
    assert sweep_id in page.inner_text("#bs-status")
    assert page.input_value("#bs-benchmark") == str(path)  # its settings, to run again
    page.wait_for_selector("#bs-progress-1:has-text('200 scored')")
    page.wait_for_selector("#bs-chart .js-plotly-plot")
    # the same settings again: nothing left to run, the stored sweep is shown
    page.wait_for_function(
        "document.querySelector('#bs-estimate').innerText.includes('nothing is left to run')"
    )
    _assert_clean(page)
    page.goto(f"{served.url}/bench-sweep?sweep=no-such-sweep")
    page.wait_for_selector("#bs-missing")
    _assert_clean(page)


def _open_advanced(page: RecordedPage) -> None:
    page.click("#bs-advanced")
    page.wait_for_selector("#bs-repeats", state="visible")


def test_the_breakdown_and_the_downloads_are_what_export_writes(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 60)
    store = served.runner.store
    sweep_id = _stored_sweep(store, path, [GOOD, POOR])
    result = load_sweep(store, sweep_id)
    exported = {p.name: p.read_bytes() for p in result.export(tmp_path / "export")}
    assert set(exported) == {name for _s, name, _l in DOWNLOADS}
    page.goto(f"{served.url}/bench-sweep?sweep={sweep_id}")
    page.wait_for_selector("#bs-table")
    page.click("#bs-breakdown-open")
    page.wait_for_selector("#bs-breakdown", state="visible")
    header, rows = breakdown_rows(result)
    assert rows and any(r[0] == "Task" for r in rows) and any(r[0] == "Area" for r in rows)
    shown = page.eval_on_selector_all(
        "#bs-breakdown tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
    )
    assert shown == [header, *rows]
    for suffix, name, _label in DOWNLOADS:
        with page.expect_download() as info:
            page.click(f"#bs-dl-{suffix}")
        download = info.value
        assert download.suggested_filename == f"{sweep_id}-{name}"
        assert Path(download.path()).read_bytes() == exported[name], name
    _assert_clean(page)


def test_advanced_settings_reach_the_sweep_and_repeats_show_pass_at_k(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 40)
    page.goto(f"{served.url}/bench-sweep")
    models = [guess("0.9", ttft="0.01"), guess("0.6", ttft="0.01")]
    _fill_sweep(page, path, models)
    _open_advanced(page)
    page.fill("#bs-repeats", "3")
    page.fill("#bs-temperature", "0.7")
    page.fill("#bs-concurrency", "4")
    page.fill("#bs-rpm", "100000")
    page.fill("#bs-max-tokens", "512")
    page.click("#bs-scoring")
    page.click("[role='option']:has-text('corrected')")
    page.check("#bs-decision")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_function(
        "document.querySelector('#bs-estimate').innerText.includes('120 questions')"
    )  # 40 items asked 3 times, per setting
    estimate = page.inner_text("#bs-estimate")
    assert "repeats 3" in estimate and "temperature 0.7" in estimate, estimate
    page.wait_for_selector("#bs-run:not([disabled])")
    page.click("#bs-run")
    page.wait_for_selector("#bs-status:has-text('Finished')")
    page.wait_for_selector("#bs-verdicts:has-text('pass@3')")
    [sweep] = SweepStore(served.runner.store).sweeps(5)
    result = load_sweep(served.runner.store, sweep.id)
    pass_lines = [line for line in result.lines() if "pass@" in line]
    assert len(pass_lines) == 2
    verdicts = page.inner_text("#bs-verdicts")
    assert all(line.strip() in verdicts for line in pass_lines)
    request = sweep.request
    assert (request["repeats"], request["temperature"], request["concurrency"]) == (3, 0.7, 4)
    assert (request["rpm"], request["max_tokens"], request["scoring"]) == (100000, 512, "corrected")
    assert request["decision_judge"] is True
    # reopened, the advanced settings are the stored request's
    page.goto(f"{served.url}/bench-sweep?sweep={sweep.id}")
    page.wait_for_selector("#bs-verdicts:has-text('pass@3')")
    _open_advanced(page)
    assert page.input_value("#bs-repeats") == "3"
    assert page.input_value("#bs-temperature") == "0.7"
    assert page.input_value("#bs-concurrency") == "4"
    assert page.input_value("#bs-rpm") == "100000"
    assert page.input_value("#bs-max-tokens") == "512"
    assert page.input_value("#bs-scoring") == "corrected"
    assert page.is_checked("#bs-decision") and not page.is_checked("#bs-edu-rule")
    page.wait_for_function(
        "document.querySelector('#bs-estimate').innerText.includes('nothing is left to run')"
    )  # the same sweep, continued
    _assert_clean(page)


def test_a_wrong_advanced_number_shows_the_librarys_message(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 20)
    page.goto(f"{served.url}/bench-sweep")
    _fill_sweep(page, path, [GOOD, POOR])
    page.wait_for_selector("#bs-run:not([disabled])")
    _open_advanced(page)
    page.fill("#bs-temperature", "warm")
    page.wait_for_selector("#bs-problem:has-text('Temperature')")
    assert "valid number" in page.inner_text("#bs-problem")
    assert page.locator("#bs-run").is_disabled()
    page.fill("#bs-temperature", "5")  # a number, but out of range: the plan says so
    page.wait_for_function(
        "document.querySelector('#bs-estimate').innerText.includes('temperature must be between')"
    )
    assert page.locator("#bs-run").is_disabled()
    page.fill("#bs-temperature", "")
    page.fill("#bs-concurrency", "0")
    page.wait_for_selector("#bs-problem:has-text('Requests at once: must be between 1 and 100')")
    assert page.locator("#bs-run").is_disabled()
    page.fill("#bs-concurrency", "8")
    page.wait_for_selector("#bs-run:not([disabled])")
    assert SweepStore(served.runner.store).sweeps(5) == []
    _assert_clean(page)


def test_stop_stops_every_setting_and_keeps_the_answers(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 200)
    page.goto(f"{served.url}/bench-sweep")
    _fill_sweep(page, path, [guess("0.9", ttft="0.3"), guess("0.6", ttft="0.3")])
    page.wait_for_selector("#bs-run:not([disabled])")
    page.click("#bs-run")
    page.wait_for_selector("#bs-stop:not([disabled])")
    page.wait_for_function(
        "Number(document.querySelector('#bs-progress-0')?.dataset.done || 0) > 0"
    )
    page.click("#bs-stop")
    page.wait_for_selector("#bs-status:has-text('Stopped early')")
    [sweep] = SweepStore(served.runner.store).sweeps(5)
    result = load_sweep(served.runner.store, sweep.id)
    scored = [s.scored for s in result.settings]
    assert all(0 <= n < 200 for n in scored) and sum(scored) > 0, scored  # answers kept
    assert {s.status for s in result.settings} == {"interrupted"}
    assert page.locator("#bs-stop").is_disabled()
    _assert_clean(page)


def test_a_sweep_goes_on_when_the_tab_closes(
    served: Served, page: RecordedPage, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 200)
    page.goto(f"{served.url}/bench-sweep")
    models = [guess("0.9", ttft="0.05"), guess("0.6", ttft="0.05")]
    _fill_sweep(page, path, models)
    page.wait_for_selector("#bs-run:not([disabled])")
    page.click("#bs-run")
    page.wait_for_selector("#bs-status:has-text('Running 2 settings')")
    page.goto("about:blank")  # the tab leaves; the sweep is the app's, not the page's
    store = served.runner.store
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        sweeps = SweepStore(store).sweeps(5)
        if sweeps and [s.scored for s in load_sweep(store, sweeps[0].id).settings] == [200, 200]:
            break
        time.sleep(0.2)
    [sweep] = SweepStore(store).sweeps(5)
    assert [s.scored for s in load_sweep(store, sweep.id).settings] == [200, 200]
    page.goto(f"{served.url}/bench-sweep?sweep={sweep.id}")
    page.wait_for_selector("#bs-verdicts:has-text('is worse by')")
    _assert_clean(page)


@pytest.fixture
def priced(isolated_home: Path, tmp_path: Path) -> Path:
    """A benchmark whose scripted model has a price, so a sweep of it spends."""
    set_prices(isolated_home, {"scripted.guess": (1, 1)})
    return marked_benchmark(tmp_path / "bench", 20)


@pytest.fixture
def contexts(tmp_path: Path) -> Iterator[Any]:
    """``make(gate)``: a WebContext on one store (``tmp_path`` its benchmarks folder), closed
    after the test."""
    store = Store.open()
    made: list[WebContext] = []
    offer = BenchmarkOffer.for_folders([tmp_path])

    def make(gate: Gate) -> WebContext:
        supervisor = Supervisor("test-bench-sweeps")
        context = WebContext(store, gate, SweepRunner(store), supervisor, offer)
        made.append(context)
        return context

    try:
        yield make
    finally:
        for context in made:
            context.close()
        store.close()


def test_a_sweep_that_spends_is_refused_by_a_guarded_gate(priced: Path, contexts: Any) -> None:
    controls = Controls(benchmark=str(priced), axis="model", values=[GOOD, POOR], confirmed=True)
    guarded = contexts(Gate("0.0.0.0", token=TOKEN))
    planned = plan_for(controls, guarded.store, guarded.benchmarks)
    assert planned.plan is not None and planned.plan.ok and planned.plan.spends
    with flask.Flask(__name__).test_request_context("/"):  # a request that is not signed in
        sweep_id, status, colour = start_sweep(guarded, controls)
    assert sweep_id is None and colour == "red" and "SWEEPBENCH_TOKEN" in status
    assert SweepStore(guarded.store).sweeps(5) == []  # nothing started, nothing stored
    # the same sweep on loopback starts: the refusal was the gate's
    local = contexts(Gate("127.0.0.1"))
    sweep_id, status, _ = start_sweep(local, controls)
    assert sweep_id is not None, status
    live = live_sweeps(local).get(sweep_id)
    assert live is not None
    live.future.result(30)
    # a free sweep is not gated even off loopback
    free = Controls(
        benchmark=str(priced), axis="max_tokens", values=["64", "128"], model="scripted/echo"
    )
    free_plan = plan_for(free, guarded.store, guarded.benchmarks).plan
    assert free_plan is not None and free_plan.ok and not free_plan.spends


def test_a_guarded_page_shows_the_gate_and_keeps_run_off(
    priced: Path, page: RecordedPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store, gate=Gate("0.0.0.0", token=TOKEN), benchmark_folders=[priced.parent])
    try:
        with serve(app) as url:
            page.goto(f"{url}/bench-sweep")
            page.wait_for_selector("#sign-in-token")
            page.fill("#sign-in-token", TOKEN)
            page.click("#sign-in-submit")
            page.wait_for_selector("#bs-benchmark")
            # signed in, the page may spend; a session that proves nothing may not
            monkeypatch.setattr("sweepbench.web.gate._signed_in", lambda: False)
            _fill_sweep(page, priced, [GOOD, POOR])
            page.wait_for_selector("#bs-gate-closed")
            assert "SWEEPBENCH_TOKEN" in page.inner_text("#bs-gate-closed")
            assert page.locator("#bs-run").is_disabled()
            assert SweepStore(store).sweeps(5) == []
            assert TOKEN not in page.content()
            _assert_clean(page)
    finally:
        app.server.config["sweepbench.context"].close()
        store.close()
