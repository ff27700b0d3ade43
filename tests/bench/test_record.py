"""The stored run record: the golden file, a record built from a real run, and refusals."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.record import (
    RecordRole,
    RunRecord,
    config_hash,
    dump_record,
    load_record,
)
from sweepbench.bench.record_build import build_record
from sweepbench.bench.report import RunReport, load_report
from sweepbench.bench.results import weighted_area_score
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run import BenchRunner
from sweepbench.bench.run_config import Limits, Selection
from sweepbench.bench.run_progress import Progress
from sweepbench.bench.storage import BenchStore
from sweepbench.engine.retry import RetryPolicy
from sweepbench.errors import DataError
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from tests.bench.helpers import calls_of, set_prices
from tests.bench.plans import prepare

GOLDEN = Path(__file__).parent / "golden" / "run_record_v1.json"
FAST = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")


def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text("utf-8"))
    return data


def refused(data: dict[str, Any]) -> str:
    """The DataError message of loading ``data``."""
    with pytest.raises(DataError) as caught:
        load_record(data)
    return str(caught.value)


# ---------------------------------------------------------------- the golden file


def test_golden_file_loads_and_round_trips_byte_identically() -> None:
    text = GOLDEN.read_text("utf-8")
    record = load_record(text)
    assert dump_record(record) == text
    assert load_record(golden()) == record  # a parsed dict reads the same
    assert record.spent_usd == Decimal("0.022469") and isinstance(record.spent_usd, Decimal)
    assert record.roles["judge"].model == "openai/gpt-5-mini"
    assert record.prices["openai/gpt-5-mini"] is not None
    assert record.prices["openai/gpt-5-mini"].cache_read_per_million == Decimal("0.025")


def test_golden_file_adds_up_by_hand() -> None:
    """The figures a person would check: scores from the pass counts, the area and overall
    formulas, coverage and spend totals, the settings hash."""
    record = load_record(GOLDEN.read_text("utf-8"))
    scores, coverage = record.scores, record.coverage
    passed = {"arithmetic": 11, "multiple_choice": 7, "instructions": 8, "explain": 4}
    for task, wins in passed.items():
        assert scores.tasks[task].score == pytest.approx(100 * wins / scores.tasks[task].n)
        assert scores.tasks[task].n == coverage.tasks[task].scored
    for key, area in scores.areas.items():
        tasks = [t for t, c in coverage.tasks.items() if c.area == key and t in scores.tasks]
        counts = [scores.tasks[t].n for t in tasks]
        task_scores = [scores.tasks[t].score / 100 for t in tasks]
        assert area.score == pytest.approx(weighted_area_score(counts, task_scores))
        assert area.n == sum(counts)
    assert scores.overall is not None
    assert scores.overall.score == pytest.approx(77.0833333, abs=1e-6)  # (91.67+70+80+66.67)/4
    assert scores.overall.n == 38 == coverage.overall.scored == record.counts.scored
    assert (coverage.overall.selected, coverage.overall.failed) == (40, 2)
    assert not coverage.tasks["explain"].complete and not coverage.overall.complete
    assert coverage.overall.all_areas_present
    assert sum(r.spent_usd for r in record.roles.values()) == record.spent_usd
    assert config_hash(record.settings.config) == record.settings.hash
    assert record.run_id.endswith(record.settings.hash[:8])


def test_every_field_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"
        for sub in _submodels(model):
            walk(sub)

    walk(RunRecord)
    assert len(seen) >= 10


def _submodels(model: type[BaseModel]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.append(annotation)
        for argument in getattr(annotation, "__args__", ()):
            visit(argument)

    for field in model.model_fields.values():
        visit(field.annotation)
    return found


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("version", [2, 0, "1", True, None])
def test_an_unknown_version_is_a_data_error(version: Any) -> None:
    data = golden() | {"version": version}
    message = refused(data)
    assert "version" in message and "reads (1)" in message


def test_a_missing_version_or_another_format_is_a_data_error() -> None:
    data = golden()
    del data["version"]
    assert "version: required" in refused(data)
    assert "format" in refused(golden() | {"format": "something-else"})
    assert "not JSON" in _text_refused("{not json")
    assert "not JSON" in _text_refused('{"spent_usd": NaN}')
    assert "expected a JSON object" in _text_refused("[1, 2]")


def _text_refused(text: str) -> str:
    with pytest.raises(DataError) as caught:
        load_record(text, where="runs/r1.json")
    assert str(caught.value).startswith("runs/r1.json: ")
    return str(caught.value)


def test_a_malformed_record_names_the_field() -> None:
    data = golden()
    data["coverage"]["tasks"]["arithmetic"]["scored"] = "12"
    assert "coverage.tasks.arithmetic.scored" in refused(data)
    data = golden()
    del data["scores"]["overall"]["n"]
    assert "scores.overall.n: required but missing" in refused(data)
    data = golden()
    data["roles"]["target"]["colour"] = "red"
    assert "roles.target.colour: unknown field" in refused(data)
    data = golden()
    data["status"] = "finished"
    assert "status:" in refused(data)
    data = golden()
    data["created_at"] = "2026-04-30T09:12:05"  # no time zone
    assert "created_at" in refused(data)


def test_figures_that_do_not_add_up_are_refused() -> None:
    data = golden()
    data["coverage"]["tasks"]["explain"]["unasked"] = 1
    assert "coverage.tasks.explain" in refused(data) and "must equal selected" in refused(data)
    data = golden()
    data["coverage"]["areas"]["judged"]["scored"] = 7
    data["coverage"]["areas"]["judged"]["failed"] = 1
    assert "areas.judged.scored" in refused(data)
    data = golden()
    data["spent_usd"] = "0.03"
    assert "roles' sum" in refused(data)
    data = golden()
    data["settings"]["config"]["max_tokens"] = 4096
    assert "settings: hash does not match config" in refused(data)
    data = golden()
    data["scores"]["tasks"]["arithmetic"]["low"] = None
    assert "scores.tasks.arithmetic" in refused(data)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("roles", "target", "spent_usd"), 0.018342),
        (("spent_usd",), 0.022469),
        (("prices", "openai/gpt-5-mini", "output_per_million"), 2),
        (("limits", "total"), 1.0),
        (("limits", "roles", "judge"), "0.25 USD"),
        (("roles", "judge", "spent_usd"), "0.004127e0x"),
        (("roles", "judge", "spent_usd"), "-0.01"),
    ],
)
def test_money_that_is_not_a_decimal_string_is_refused(path: tuple[str, ...], value: Any) -> None:
    data = golden()
    keys: tuple[str, ...] = path
    part = data
    for key in keys[:-1]:
        part = part[key]
    part[keys[-1]] = value
    message = refused(data)
    assert ".".join(keys) in message and "money" in message


def test_money_as_a_float_is_refused_in_python_too() -> None:
    record = load_record(GOLDEN.read_text("utf-8"))
    data = record.model_dump() | {"spent_usd": 0.022469}
    with pytest.raises(ValidationError, match="money must be a decimal string"):
        RunRecord.model_validate(data)
    with pytest.raises(ValidationError):  # frozen
        record.spent_usd = Decimal(1)


# ---------------------------------------------------------------- records of real runs


async def _session(
    store: Store, *, judge: str = "scripted/guess", stop_after: int | None = None, **kwargs: Any
) -> tuple[PreparedRun, BenchRunner, RunReport]:
    """One session of the sample benchmark on the guessing model, then its report."""
    prepared = prepare(
        load_benchmark("sample"), store, model="scripted/guess", judge=judge, **kwargs
    )
    runner = BenchRunner(prepared, store, retry=FAST, concurrency=1)
    if stop_after is not None:

        def stop(progress: Progress) -> None:
            if progress.done == stop_after:
                runner.stop()

        runner.on_progress = stop
    outcome = await runner.run()
    return prepared, runner, load_report(store, outcome.run_id, stored=False)


async def test_a_record_of_a_real_run_has_the_reports_scores_and_spend(
    store: Store, isolated_home: Path
) -> None:
    # the guessing model priced the operator's way: $1 per million tokens in, $2 out
    set_prices(isolated_home, {"scripted.guess": (1, 2)})
    prepared, runner, report = await _session(store)
    record = build_record(report, prepared.plan, prices=runner.executor.prices())
    summary = report.summary
    assert record.status == "completed" and record.run_id == report.run.id
    for result in summary.tasks:
        score = record.scores.tasks[result.task]
        assert score.score == result.score * 100.0 and score.n == result.count
        assert result.ci95 is not None
        assert (score.low, score.high) == (result.ci95[0] * 100.0, result.ci95[1] * 100.0)
        assert score.mean_score == result.mean_score and score.pass_rate == result.pass_rate
        assert record.coverage.tasks[result.task].complete == result.complete
    for area in summary.areas:
        score = record.scores.areas[area.area]
        assert (score.score, (score.low, score.high)) == (area.score_100, area.ci95_100)
        assert record.coverage.areas[area.area].complete == area.complete
    assert record.scores.overall is not None
    assert record.scores.overall.score == summary.overall_100
    assert (record.scores.overall.low, record.scores.overall.high) == summary.overall_ci95
    assert record.coverage.overall.complete == summary.covers_scope is True
    assert record.scoring.bootstrap_resamples == 10_000 == summary.resamples
    # coverage adds up, and to the report's counts
    overall = record.coverage.overall
    assert overall.selected == prepared.plan.selected == 40
    assert (overall.scored, overall.failed, overall.unasked) == (report.scored, 0, 0)
    assert sum(c.selected for c in record.coverage.tasks.values()) == overall.selected
    # spend by role, as the store has it: what each role's calls cost, as the ledger settled it
    # (changed on purpose: priced by tokens through models.toml, no longer a cent a call)
    assert {r: v.spent_usd for r, v in record.roles.items()} == report.spent_by_role
    calls = calls_of(store, record.run_id)
    ledger = Ledger(store)
    counts: tuple[tuple[RecordRole, int], ...] = (("target", 40), ("judge", 8))
    for role, count in counts:  # every answer, and the eight judged ones
        costs = [c.cost_usd or Decimal(0) for c in calls if c.role == role]
        assert len(costs) == count and all(cost > 0 for cost in costs)
        assert record.roles[role].spent_usd == sum(costs) == ledger.role_spent(record.run_id, role)
    assert record.spent_usd == report.spent == ledger.run_spent(record.run_id) > 0
    price = record.prices["scripted/guess"]
    assert price is not None and price.source == "operator override"
    assert (price.input_per_million, price.output_per_million) == (Decimal(1), Decimal(2))
    # the runner stored the same record on the run's row as the session ended
    row = BenchStore(store).run(record.run_id)
    assert row is not None and row.record is not None and load_record(row.record) == record
    assert record.scoring.judge_prompt_version == "1"
    text = dump_record(record)
    assert load_record(text) == record and dump_record(load_record(text)) == text


async def test_failures_and_unasked_items_are_counted_where_they_are(store: Store) -> None:
    prepared, runner, report = await _session(store, judge="scripted/echo?fail=500")
    record = build_record(report, prepared.plan)
    assert record.status == "completed_with_errors"
    explain = record.coverage.tasks["explain"]
    assert (explain.selected, explain.scored, explain.failed, explain.unasked) == (8, 0, 8, 0)
    assert "explain" not in record.scores.tasks and "judged" not in record.scores.areas
    assert not record.coverage.areas["judged"].complete
    assert not record.coverage.overall.all_areas_present and not record.coverage.overall.complete
    assert record.counts.errors_by_type == {"judge_error": 8} and record.counts.failed == 8
    assert record.prices == {  # looked up now: no session price was given
        "scripted/guess": record.prices["scripted/guess"],
        "scripted/echo?fail=500": record.prices["scripted/echo?fail=500"],
    }
    assert all(p is not None and p.input_per_million == 0 for p in record.prices.values())

    stopped = Selection(tasks=("arithmetic", "multiple_choice"))
    prepared, runner, report = await _session(store, selection=stopped, stop_after=5)
    record = build_record(report, prepared.plan, prices=runner.executor.prices())
    assert record.status == "interrupted" and record.reason == "stopped early by you"
    overall = record.coverage.overall
    assert overall.selected == 22 and overall.scored == report.scored
    assert overall.unasked == 22 - len(report.rows) > 0
    assert record.coverage.tasks["instructions"].selected == 0  # in scope, not selected
    assert record.coverage.overall.items == 40
    assert "judge" not in record.roles  # no selected task needs one
    assert record.scoring.judge_prompt_version is None


async def test_a_resumed_run_rewrites_its_record_with_the_whole_run(store: Store) -> None:
    limits = Limits(total=Decimal("1"))
    selection = Selection(tasks=("arithmetic",))
    first, runner, report = await _session(store, selection=selection, limits=limits, stop_after=3)
    before = build_record(report, first.plan, prices=runner.executor.prices())
    again, runner, report = await _session(store, selection=selection, limits=limits)
    assert again.previous is not None and again.previous.id == before.run_id
    after = build_record(report, again.plan, prices=runner.executor.prices())
    assert after.run_id == before.run_id and after.created_at == before.created_at
    assert after.updated_at > before.updated_at
    assert before.coverage.tasks["arithmetic"].unasked > 0
    assert after.coverage.tasks["arithmetic"].scored == 12 == after.scores.tasks["arithmetic"].n
    assert after.settings == before.settings and after.limits.total == Decimal("1")
    row = BenchStore(store).run(after.run_id)  # the stored record is the whole run's now
    assert row is not None and row.record is not None and load_record(row.record) == after


def test_a_report_of_another_run_is_refused(store: Store) -> None:
    golden_record = load_record(GOLDEN.read_text("utf-8"))
    plan = prepare(load_benchmark("sample"), None, model="scripted/guess").plan
    report = RunReport(
        run=_row(golden_record), benchmark=plan.benchmark, summary=_empty(plan), scored=0,
        errors=0, spent=Decimal(0), spent_by_role={}, error_types={}, rows=[],
    )  # fmt: skip
    with pytest.raises(ValueError, match="other settings"):
        build_record(report, plan)


def _row(record: RunRecord) -> Any:
    from sweepbench.bench.storage_rows import RunRow

    return RunRow(
        id=record.run_id, config_hash=record.settings.hash, benchmark=record.benchmark.id,
        model=record.roles["target"].model, judge=None, status=record.status,
        reason=record.reason, created_at=record.created_at, updated_at=record.updated_at,
        items=record.coverage.overall.selected,
    )  # fmt: skip


def _empty(plan: Any) -> Any:
    from sweepbench.bench.results import summarise

    return summarise(plan.benchmark, [], scope="core", selected_tasks=plan.config.tasks)
