"""The configured shared leaderboard on the web pages, in a real Chromium (a tmp folder is the
shared place: no network). Run a benchmark: the checkbox is offered (off) and says where results
go; a ticked run publishes its scrubbed bundle there — with no trace of the key typed for it —
and an unticked one writes nothing. Leaderboard: Refresh pulls the folder into the store first,
says how many were added and skipped (one line each), and the pulled run is shown."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.leaderboard.bundle import SUFFIX, RunBundle, build_bundle, write_bundle
from sweepbench.settings import SHARED_ENV
from sweepbench.store import Store
from sweepbench.web.bench_views import OPTED_OUT, PUBLISH_LABEL
from tests.leaderboard.helpers import store_answered_golden_run
from tests.web.browser import RecordedPage, serve
from tests.web.test_leaderboard_page import RUN_JUDGE, TRACES

MODEL = "scripted/guess"
OTHER = "scripted/echo?text=ANSWER: A"
"""Another model for the opted-out run (the same settings would only reopen the first run)."""


@contextmanager
def _app() -> Iterator[str]:
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store)
    try:
        with serve(app) as url:
            yield url
    finally:
        app.server.config["sweepbench.context"].close()
        store.close()


def _clean(page: RecordedPage) -> None:
    assert page.errors == [] and page.failures == [] and page.non_local() == []


def _run(page: RecordedPage, url: str, model: str, *, publish: bool, key: str) -> str:
    page.goto(f"{url}/benchmarks")
    page.wait_for_selector("#bp-run")
    page.click("text=Advanced settings")
    page.fill("#bp-judge", MODEL)
    page.fill("#bp-concurrency", "40")
    page.fill("#bp-model", model)
    page.keyboard.press("Escape")
    page.fill("#bp-key", key)
    box = page.get_by_label(PUBLISH_LABEL)
    assert box.is_enabled() and not box.is_checked()  # offered, and off unless ticked
    if publish:
        box.check(force=True)
        assert box.is_checked()
    page.click("#bp-run")
    page.wait_for_selector("#bp-outcome:has-text('Finished')")
    return str(page.inner_text("#bp-publish-outcome"))


def test_a_ticked_run_publishes_a_bundle_with_no_key_and_an_unticked_one_writes_nothing(
    page: RecordedPage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    monkeypatch.setenv(SHARED_ENV, str(shared))
    planted = "sk-test-" + uuid.uuid4().hex  # a key-shaped sentinel, built at run time
    with _app() as url:
        said = _run(page, url, OTHER, publish=False, key=planted)
        assert said == OPTED_OUT and not shared.exists()
        note = page.inner_text("#bp-publish-note")
        assert str(shared) in note and "never your key" in note

        said = _run(page, url, MODEL, publish=True, key=planted)
        (path,) = shared.glob(f"*{SUFFIX}")
        assert said.startswith(f"Saved to the shared leaderboard at {path}")
        _clean(page)
    text = path.read_text("utf-8")
    assert planted not in text and planted.removeprefix("sk-") not in text
    bundle = RunBundle.model_validate_json(text)
    assert bundle.answers_included and len(bundle.answers) == 40  # spec §12: answers go too
    assert bundle.record.roles["target"].model == MODEL


def test_without_a_shared_place_the_checkbox_is_off_and_says_so(
    page: RecordedPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    with _app() as url:
        page.goto(f"{url}/benchmarks")
        page.wait_for_selector("#bp-run")
        assert page.get_by_label(PUBLISH_LABEL).is_disabled()
        assert "No shared leaderboard is configured" in page.inner_text("#bp-publish-note")
        page.goto(f"{url}/leaderboard")
        page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] > 0")
        page.click("#lb-refresh")
        page.wait_for_selector("#lb-refresh-note >> text=Re-read the store")
        assert "No shared leaderboard is configured" in page.inner_text("#lb-refresh-note")
        _clean(page)


def test_refresh_pulls_the_shared_place_and_the_run_appears(
    page: RecordedPage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "publisher"))  # someone else's runs
    # a complete ELBench run with the answers behind its record (a pull recomputes its scores)
    run_id = store_answered_golden_run(as_elbench=True, complete=True)
    with Store.open() as store:
        write_bundle(build_bundle(BenchStore(store), run_id), str(shared))
    (shared / f"broken{SUFFIX}").write_text("{not json", "utf-8")
    monkeypatch.setenv("SWEEPBENCH_HOME", str(tmp_path / "viewer"))
    monkeypatch.setenv(SHARED_ENV, str(shared))
    with _app() as url:
        page.goto(f"{url}/leaderboard")
        page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] > 0")
        page.get_by_role("button", name="Your runs").click()
        page.wait_for_selector("#lb-runs >> text=No runs of yours")
        page.click("#lb-refresh")
        page.wait_for_selector(f"#lb-runs >> text={run_id}")
        note = page.inner_text("#lb-refresh-note")
        assert f"Pulled from the shared leaderboard at {shared}: 1 added, 0 already here, " \
            "1 skipped." in note  # fmt: skip
        assert f"broken{SUFFIX}: skipped, not JSON" in note
        assert "Re-read the store: 1 of your runs" in note
        page.click("#lb-board")  # the pulled run's judge is now a board, with the run on it
        page.get_by_role("option", name=RUN_JUDGE, exact=True).click()
        page.wait_for_function(f"({TRACES})() && ({TRACES})()['Your runs'] === 1")

        page.click("#lb-refresh")  # again: nothing new, the run is already here
        page.wait_for_selector("#lb-refresh-note >> text=0 added, 1 already here")
        _clean(page)
    with Store.open() as store:
        row = BenchStore(store).run(run_id)
        assert row is not None and row.settings["source"] == "pulled"


def test_a_publish_that_fails_is_said_and_the_run_is_kept(
    page: RecordedPage, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where the shared folder's parent should be", "utf-8")
    monkeypatch.setenv(SHARED_ENV, str(blocker / "shared"))  # valid, but cannot be created
    with _app() as url:
        said = _run(page, url, MODEL, publish=True, key="sk-test-" + uuid.uuid4().hex)
        assert said.startswith(f"Not saved to the shared leaderboard at {blocker / 'shared'}: ")
        assert "cannot be made (Not a directory)" in said and "The run itself is kept here" in said
        assert "Finished" in page.inner_text("#bp-outcome")
        _clean(page)
    with Store.open() as store:
        bench = BenchStore(store)
        (run,) = bench.runs()
        assert sum(1 for s in bench.statuses(run.id).values() if s == "scored") == 40
