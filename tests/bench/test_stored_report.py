"""A run's report is computed once, when its session ends, and read back from the store while
its answers are the ones it was computed from (issue 19): ``bench show`` of a finished run
reads one row, not every answer; a changed answer or a continued run computes it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from sweepbench.bench.report import load_report
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_reports
from tests.helpers import run_cli

RUN = ("bench", "run", "sample", "--preset", "auto-checked", "--model", "scripted/echo?text=B")


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    code, out, err = run_cli(monkeypatch, capsys, *RUN, *extra, "--yes", "--json")
    assert code in (0, 1), err
    return dict(json.loads(out))


def test_the_stored_report_is_the_computed_one(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _run(monkeypatch, capsys)
    with Store.open() as store:
        with store.engine.connect() as conn:
            stored = conn.execute(sa.select(bench_reports)).all()
        assert [r.run_id for r in stored] == [report["run_id"]]
        assert stored[0].answers == report["scored"] + report["errors"]
        kept = load_report(store, report["run_id"])
        fresh = load_report(store, report["run_id"], stored=False)
    assert kept.rows is None and fresh.rows is not None  # read back; computed from answers
    as_printed = [json.loads(json.dumps(r.as_json())) for r in (kept, fresh)]
    assert as_printed[0] == as_printed[1] == {**report, "live": False}
    assert kept.summary == fresh.summary
    assert str(kept.table().title) == str(fresh.table().title)


def test_show_reads_the_stored_report_until_an_answer_changes(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _run(monkeypatch, capsys)
    run_id = report["run_id"]
    assert report["overall"] > 0
    with Store.open() as store, store.engine.begin() as conn:
        # every score zeroed behind the report's back, the stamp (count, newest time) kept
        conn.execute(bench_answers.update().values(score=0.0, passed=False))
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--json")
    assert code == 0 and json.loads(out)["overall"] == report["overall"]  # the stored report

    with Store.open() as store, store.engine.begin() as conn:
        newest = conn.scalar(sa.select(sa.func.max(bench_answers.c.updated_at)))
        key = conn.scalar(sa.select(bench_answers.c.key).limit(1))
        conn.execute(
            bench_answers.update()
            .where(bench_answers.c.key == key)
            .values(updated_at=newest.replace(year=newest.year + 1))
        )  # an answer written again: the stored report is no longer the run's
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "show", run_id, "--json")
    assert code == 0
    again = json.loads(out)
    assert again["overall"] == 0 and again["scored"] == report["scored"]  # computed afresh


def test_a_continued_run_stores_the_report_of_the_whole_run(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run(monkeypatch, capsys, "--max-items", "5")
    assert first["scored"] == 5
    whole = _run(monkeypatch, capsys)
    assert whole["scored"] > 5
    with Store.open() as store:
        with store.engine.connect() as conn:
            stored = {r.run_id: r.answers for r in conn.execute(sa.select(bench_reports))}
        assert stored[whole["run_id"]] == whole["scored"] + whole["errors"]
        assert load_report(store, whole["run_id"]).as_json()["scored"] == whole["scored"]
