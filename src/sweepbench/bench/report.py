"""A stored run, read back: its outcome, its scores with intervals, and its export files."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from rich.table import Table
from rich.text import Text

from sweepbench.bench.dialogue.export import dialogue_files
from sweepbench.bench.items import Area, Benchmark, Item, Scope, Task
from sweepbench.bench.results import (
    Outcome,
    ScoredAnswer,
    Summary,
    detailed_rows,
    format_money,
    format_score,
    outcome_text,
    scores_line,
    summarise,
    summary_csv,
)
from sweepbench.bench.run_liveness import run_is_live
from sweepbench.bench.sources.registry import reload_run
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.settings import scrub, secret_values
from sweepbench.store import Store

log = logging.getLogger(__name__)

OUTCOMES = ("completed", "completed_with_errors", "paused_budget", "interrupted")


def catalogue_json(benchmark: Benchmark) -> list[dict[str, Any]]:
    """The benchmark's areas and tasks as a run stores them (enough to score the run even
    when its data can no longer be loaded)."""
    return [
        {"key": a.key, "label": a.label, "tasks": [
            {"id": t.id, "name": t.name, "grading": t.grading, "scorer": t.scorer,
             "score_by": t.score_by, "scale": t.options.get("scale"),
             "region_specific": t.region_specific}
            for t in a.tasks
        ]}
        for a in benchmark.areas
    ]  # fmt: skip


def _skeleton(run: RunRow) -> Benchmark:
    areas = []
    for area in run.settings.get("catalogue", []):
        tasks = tuple(
            Task(
                id=t["id"],
                area=area["key"],
                name=t["name"],
                grading=t["grading"],
                scorer=t["scorer"],
                score_by=t["score_by"],
                region_specific=t["region_specific"],
                options={"scale": t["scale"]} if t.get("scale") else {},
            )
            for t in area["tasks"]
        )
        areas.append(Area(area["key"], area["label"], tasks))
    return Benchmark(run.benchmark, run.settings.get("benchmark_name", run.benchmark), tuple(areas))


def _benchmark_of(run: RunRow) -> tuple[Benchmark, str | None]:
    """The run's benchmark, reloaded (for the expected item counts); the stored catalogue
    when its data cannot be loaded any more, with a note saying so."""
    try:
        return reload_run(run), None
    except (SweepbenchError, OSError) as exc:
        return (
            _skeleton(run),
            f"The benchmark's data could not be reloaded ({exc}); counts of "
            "questions in scope are unknown.",
        )


@dataclass
class RunReport:
    """Everything ``bench show`` and the export say about a run."""

    run: RunRow
    benchmark: Benchmark
    summary: Summary
    scored: int
    errors: int
    spent: Decimal
    spent_by_role: dict[str, Decimal]
    error_types: dict[str, int]
    rows: list[dict[str, Any]] | None
    """Per answer (scored and failed) what scores and counts need (``key``, ``task``,
    ``dimension``, ``status``, ``score``, ``passed``, ``error_type``); None when the report
    was read back as stored (no answer was read). The answers themselves:
    :meth:`BenchStore.answers`, streamed."""
    note: str | None = None

    @property
    def live(self) -> bool:
        """True while the run is still going in another process."""
        return run_is_live(self.run)

    @property
    def outcome(self) -> Outcome:
        """The run's outcome (a run still marked running reads as stopped early)."""
        status = self.run.status
        return cast(Outcome, status if status in OUTCOMES else "interrupted")

    def table(self, *, skills: bool = False) -> Table:
        """Scores per area and task (and skill, when ``skills``) with 95% intervals (0–100)."""
        # names come from declarations: plain Text, never Rich markup (a task "[/x]" is a name)
        table = Table(title=Text(f"{self.benchmark.name} · {self.run.model} · {self.run.id}"))
        for column in ("group", "name", "count", "mean score", "pass rate", "score", "95% range"):
            table.add_column(column, justify="left" if column in ("group", "name") else "right")
        for row in detailed_rows(self.summary):
            if row.group == "Skill" and not skills:
                continue
            ci = (
                ""
                if row.ci95_100 is None
                else (f"{format_score(row.ci95_100[0])}–{format_score(row.ci95_100[1])}")
            )
            table.add_row(
                Text(row.group), Text(row.name), f"{row.count:,}", f"{row.mean_score:.3f}",
                f"{row.pass_rate * 100:.1f}%",
                "" if row.score_100 is None else format_score(row.score_100), ci,
            )  # fmt: skip
        return table

    def footer_lines(self) -> list[str]:
        """The scores line, spend by role, errors by type, the interval wording, notes."""
        lines = [scores_line(self.summary)]
        roles = " · ".join(
            f"{'model under test' if r == 'target' else r} {format_money(v)}"
            for r, v in sorted(self.spent_by_role.items(), reverse=True)
        )
        lines.append(f"Spent {format_money(self.spent)}" + (f" ({roles})" if roles else ""))
        if self.error_types:
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.error_types.items()))
            lines.append(f"Errors: {kinds}. Retry only those with --retry-failed.")
        if self.summary.overall_ci95 is not None:
            lines.append(
                "95% ranges: 10,000 bootstrap resamples of the items within each task (seed 0). "
                "When two ranges overlap, the difference could disappear on a re-run."
            )
        if self.run.judge:
            lines.append(f"Judged answers were graded by {self.run.judge}.")
        lines.extend(hosts_lines(self.run.settings))
        if self.run.settings.get("config", {}).get("rule_scoring"):
            lines.append(
                "Rule-scored: tasks with a fixed-rule fallback were scored by it instead of a "
                "judge; this run is never ranked with judged runs."
            )
        if self.note:
            lines.append(self.note)
        return lines

    def as_json(self) -> dict[str, Any]:
        """The report for scripts (``--json``)."""
        s = self.summary
        return {
            "run_id": self.run.id,
            "benchmark": self.run.benchmark,
            "model": self.run.model,
            "judge": self.run.judge,
            "status": self.run.status,
            "live": self.live,
            "reason": self.run.reason,
            "config_hash": self.run.config_hash,
            "scored": self.scored,
            "errors": self.errors,
            "error_types": self.error_types,
            "spent_usd": str(self.spent),
            "spent_by_role": {k: str(v) for k, v in self.spent_by_role.items()},
            "overall": s.overall_100,
            "overall_ci95": s.overall_ci95,
            "covers_scope": s.covers_scope,
            "rule_scored": bool(self.run.settings.get("config", {}).get("rule_scoring")),
            "areas": {a.area: {"label": a.label, "score": a.score_100, "ci95": a.ci95_100,
                               "count": a.count, "complete": a.complete} for a in s.areas},
            "tasks": {t.task: {"area": t.area, "count": t.count, "expected": t.expected,
                               "score": t.score, "mean_score": t.mean_score,
                               "pass_rate": t.pass_rate, "ci95": t.ci95} for t in s.tasks},
            "note": self.note,
            "hosts": hosts_described(self.run.settings),
        }  # fmt: skip


def hosts_described(settings: Mapping[str, Any]) -> dict[str, str]:
    """Each routed role's route in words, as a run's settings keep it (``hosts``: which
    OpenRouter host answered), by role."""
    hosts = settings.get("hosts")
    if not isinstance(hosts, Mapping):
        return {}
    return {
        str(role): str(route["described"])
        for role, route in hosts.items()
        if isinstance(route, Mapping) and route.get("described")
    }


def hosts_lines(settings: Mapping[str, Any]) -> list[str]:
    """The Hosts lines of a stored run ("Hosts of openrouter/x (model under test): fp8 on
    …"), once per model."""
    config = settings.get("config") if isinstance(settings.get("config"), Mapping) else {}
    models = dict(config.get("models") or {}) if isinstance(config, Mapping) else {}
    if isinstance(config, Mapping):
        models.setdefault("target", config.get("model"))
        models.setdefault("judge", config.get("judge"))
    said: dict[str, str] = {}
    for role, text in hosts_described(settings).items():
        said.setdefault(str(models.get(role) or role), text)
    return [f"Hosts of {model}: {text}." for model, text in said.items()]


def load_report(
    store: Store,
    run_id: str,
    *,
    resamples: int = 10_000,
    benchmark: Benchmark | None = None,
    stored: bool = True,
) -> RunReport:
    """A run's report; UserError for an unknown run id. A run that is not running reads its
    stored report (computed when its session ended) while its answers are the ones it was
    computed from; otherwise every answer's outcome is read and scored, with ``benchmark``
    (the run's, already loaded by the caller) or the benchmark reloaded from its source, and
    the result stored for next time. ``stored=False``: always compute (with the answers'
    outcome rows)."""
    runs = BenchStore(store)
    run = _run_row(runs, run_id)
    live = run_is_live(run)
    if stored and not live:
        saved = runs.saved_report(run.id, resamples)
        if saved is not None:
            return _from_document(runs, run, benchmark or _skeleton(run), saved)
    note = None
    if benchmark is None:
        benchmark, note = _benchmark_of(run)
    stamp = runs.answers_stamp(run.id)
    report = _scored_report(runs, run, benchmark, runs.outcomes(run.id), note, resamples)
    if not live and note is None:
        save_report(runs, report, stamp, resamples)
    return report


def session_report(store: Store, run_id: str, benchmark: Benchmark) -> RunReport:
    """The report a runner builds its run record from when a session ends (and stores, so
    that showing the run reads it back instead of every answer): the benchmark it already
    holds (not reloaded from its source) and, per answer, only what scores and counts need."""
    runs = BenchStore(store)
    run = _run_row(runs, run_id)
    stamp = runs.answers_stamp(run.id)
    report = _scored_report(runs, run, benchmark, runs.outcomes(run.id), None, 10_000)
    save_report(runs, report, stamp, 10_000)
    return report


_SUMMARY: Any = None


def _summary_adapter() -> Any:
    """pydantic's reader and writer of :class:`Summary` (made once, on first use)."""
    global _SUMMARY
    if _SUMMARY is None:
        from pydantic import TypeAdapter

        _SUMMARY = TypeAdapter(Summary)
    return _SUMMARY


def save_report(
    runs: BenchStore, report: RunReport, stamp: tuple[int, str | None], resamples: int
) -> None:
    """Store a computed report with the stamp of the answers it was computed from. A report
    that cannot be stored is logged: it is computed again next time."""
    document = {
        "summary": _summary_adapter().dump_python(report.summary, mode="json"),
        "scored": report.scored,
        "errors": report.errors,
        "error_types": report.error_types,
    }
    try:
        runs.save_report(report.run.id, stamp, resamples, json.dumps(document))
    except Exception:
        log.warning("could not store the report of run %s", report.run.id, exc_info=True)


def _from_document(runs: BenchStore, run: RunRow, benchmark: Benchmark, text: str) -> RunReport:
    document = json.loads(text)
    spent_by_role = runs.spent(run.id)
    return RunReport(
        run=run,
        benchmark=benchmark,
        summary=_summary_adapter().validate_python(document["summary"]),
        scored=int(document["scored"]),
        errors=int(document["errors"]),
        spent=sum(spent_by_role.values(), Decimal(0)),
        spent_by_role=spent_by_role,
        error_types={str(k): int(v) for k, v in document["error_types"].items()},
        rows=None,
    )


def _run_row(runs: BenchStore, run_id: str) -> RunRow:
    run = runs.run(run_id)
    if run is None:
        raise UserError(f"no benchmark run {run_id!r} (see sweepbench bench runs)")
    return run


def _scored_report(
    runs: BenchStore,
    run: RunRow,
    benchmark: Benchmark,
    rows: list[dict[str, Any]],
    note: str | None,
    resamples: int,
) -> RunReport:
    scored = [
        ScoredAnswer(r["task"], r["dimension"], float(r["score"]), bool(r["passed"]))
        for r in rows
        if r["status"] == "scored"
    ]
    config = run.settings.get("config", {})
    summary = summarise(
        benchmark,
        scored,
        scope=cast(Scope, config.get("scope", "core")),
        selected_tasks=config.get("tasks", [t.id for t in benchmark.tasks]),
        bootstrap=resamples,
    )
    error_types: dict[str, int] = {}
    for row in rows:
        if row["status"] == "failed":
            error_types[row["error_type"]] = error_types.get(row["error_type"], 0) + 1
    spent_by_role = runs.spent(run.id)
    return RunReport(
        run=run,
        benchmark=benchmark,
        summary=summary,
        scored=len(scored),
        errors=len(rows) - len(scored),
        spent=sum(spent_by_role.values(), Decimal(0)),
        spent_by_role=spent_by_role,
        error_types=error_types,
        rows=rows,
        note=note,
    )


def _jsonl(path: Path, rows: Iterable[dict[str, Any]], secrets: list[str]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            text = json.dumps(row, ensure_ascii=False, default=str)
            handle.write(scrub(text, secrets) + "\n")


def _with_question(row: dict[str, Any], items: dict[str, Item]) -> dict[str, Any]:
    """An answer row with the question it answers (prompt, reference, source file and row),
    when the benchmark's data could be reloaded."""
    item = items.get(row["key"])
    if item is None:
        return row
    return {
        **row, "source_file": item.source_file, "source_row": item.row,
        "prompt": item.prompt, "reference": item.reference,
    }  # fmt: skip


def export_run(store: Store, run_id: str, directory: Path) -> list[Path]:
    """Write ``answers.jsonl`` (scored), ``failures.jsonl``, ``spend.jsonl``,
    ``summary.csv``, ``summary.json`` and, for teaching dialogues, ``dialogues.jsonl`` and an
    ``evaluation_<task>.csv`` per task into ``directory``; every file passes the key
    scrubber. Returns the paths written. The answers are streamed from the store in bounded
    batches, never held all at once."""
    runs = BenchStore(store)
    benchmark, _note = _benchmark_of(_run_row(runs, run_id))  # loaded once: the questions
    report = load_report(store, run_id, benchmark=benchmark)
    secrets = secret_values()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror or exc}") from exc
    paths = {
        name: directory / name
        for name in ("answers.jsonl", "failures.jsonl", "spend.jsonl", "summary.csv",
                     "summary.json")
    }  # fmt: skip
    items = {i.key: i for t in benchmark.tasks for i in t.items}
    base = {"run_id": report.run.id, "model": report.run.model}
    for name, status in (("answers.jsonl", "scored"), ("failures.jsonl", "failed")):
        rows = runs.answers(report.run.id, status=status)
        _jsonl(paths[name], ({**base, **_with_question(r, items)} for r in rows), secrets)
    _jsonl(paths["spend.jsonl"], runs.spend_lines(report.run.id), secrets)
    paths["summary.csv"].write_text(scrub(summary_csv(report.summary), secrets), "utf-8")
    summary = {**report.as_json(), "outcome": outcome_text(
        report.outcome, scored=report.scored, errors=report.errors, spent=report.spent,
        reason=report.run.reason,
    )}  # fmt: skip
    paths["summary.json"].write_text(
        scrub(json.dumps(summary, ensure_ascii=False, indent=2, default=str), secrets), "utf-8"
    )
    for name, text in dialogue_files(store, report.run.id).items():  # teaching dialogues
        paths[name] = directory / name
        paths[name].write_text(scrub(text, secrets), "utf-8")
    return list(paths.values())
