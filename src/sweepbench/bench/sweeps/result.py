"""The result of a benchmark sweep, read back from the store: a row per setting and, for every
setting against the best-scoring one on the same items, a paired comparison and a verdict.

A setting's row comes from its run's own report (:func:`~sweepbench.bench.report.load_report`:
scores per area and task with their bootstrap ranges, spend by role) and its stored answers
(tokens, answers cut at the token limit, failures). The comparison
(:func:`~sweepbench.bench.sweeps.compare.compare_settings`) pairs the settings by item: an item
asked several times (``--repeats``) is one item whose value is its samples' mean.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepbench.bench.items import base_key
from sweepbench.bench.report import load_report
from sweepbench.bench.results import format_money, format_score
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.bench.sweeps.compare import (
    Comparison,
    ItemSamples,
    SettingScores,
    SweepComparison,
    compare_settings,
)
from sweepbench.bench.sweeps.store import SweepRow, SweepStore
from sweepbench.bench.sweeps.verdict import signed_points
from sweepbench.errors import UserError
from sweepbench.models.registry import model_info
from sweepbench.money.prices import price_for
from sweepbench.settings import scrub, secret_values
from sweepbench.stats.paired import RESAMPLES, SEED
from sweepbench.store import Store

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class SettingResult:
    """One setting of a sweep, as its run stands."""

    label: str
    value: str
    run_id: str | None
    status: str
    """The run's status (``not started`` when it never ran)."""
    model: str
    scored: int
    failed: int
    overall: float | None
    """The benchmark's own overall score (0–100; its areas' mean, for ELBench)."""
    overall_ci95: tuple[float, float] | None
    areas: dict[str, dict[str, Any]]
    """By area key: ``label``, ``score``, ``ci95``, ``count``."""
    tasks: dict[str, dict[str, Any]]
    """By task id: ``score`` (0–1), ``ci95``, ``count``."""
    spent: Decimal
    spent_by_role: dict[str, Decimal]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    answers: int
    truncated: int
    """Answers cut at the token limit."""
    wall_s: float | None
    """The wall time of the run's finished sessions (None: none finished)."""

    @property
    def truncation_rate(self) -> float | None:
        """The share of answers cut at the token limit (None: no answers)."""
        return self.truncated / self.answers if self.answers else None

    def as_json(self) -> dict[str, Any]:
        """The row as plain JSON data (money as exact text)."""
        return {
            "label": self.label, "value": self.value, "run_id": self.run_id,
            "status": self.status, "model": self.model, "scored": self.scored,
            "failed": self.failed, "overall": self.overall, "overall_ci95": self.overall_ci95,
            "areas": self.areas, "tasks": self.tasks, "spent_usd": str(self.spent),
            "spent_by_role": {r: str(v) for r, v in self.spent_by_role.items()},
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens, "answers": self.answers,
            "truncated": self.truncated, "truncation_rate": self.truncation_rate,
            "wall_s": self.wall_s,
        }  # fmt: skip


@dataclass(frozen=True)
class BenchSweepResult:
    """A sweep's settings and its paired comparisons."""

    sweep: SweepRow
    settings: tuple[SettingResult, ...]
    comparison: SweepComparison | None
    """None when fewer than two settings have scored answers (``why_not`` says so)."""
    why_not: str | None = None

    def as_json(self) -> dict[str, Any]:
        """Everything as plain JSON data (``bench sweeps show --json``, the export)."""
        return {
            **self.sweep.as_json(),
            "results": [s.as_json() for s in self.settings],
            "comparison": None if self.comparison is None else self.comparison.as_json(),
            "why_no_comparison": self.why_not,
        }

    def to_pandas(self) -> pd.DataFrame:
        """One row per setting: its scores, cost, tokens and, against the best, the paired
        difference, range, p-values and verdict (needs pandas: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is in the test extra
            raise UserError("to_pandas() needs pandas: pip install pandas") from exc
        versus = {}
        summaries = {}
        if self.comparison is not None:
            versus = {c.label: c for c in self.comparison.comparisons}
            summaries = {s.label: s for s in self.comparison.settings}
        rows = []
        for setting in self.settings:
            c = versus.get(setting.label)
            summary = summaries.get(setting.label)
            passes: dict[str, float] = {}
            if summary is not None and summary.pass_at_k and summary.pass_hat_k:
                passes.update({f"pass@{k}": v for k, v in summary.pass_at_k.items()})
                passes.update({f"pass^{k}": v for k, v in summary.pass_hat_k.items()})
            rows.append(
                {
                    "setting": setting.label, "value": setting.value, "run_id": setting.run_id,
                    "status": setting.status, "overall": setting.overall,
                    "overall_low": setting.overall_ci95[0] if setting.overall_ci95 else None,
                    "overall_high": setting.overall_ci95[1] if setting.overall_ci95 else None,
                    "scored": setting.scored, "failed": setting.failed,
                    "spent_usd": float(setting.spent), "input_tokens": setting.input_tokens,
                    "output_tokens": setting.output_tokens,
                    "reasoning_tokens": setting.reasoning_tokens,
                    "truncation_rate": setting.truncation_rate, "wall_s": setting.wall_s,
                    "best": self.comparison is not None and self.comparison.best == setting.label,
                    "diff": c.diff if c else None, "diff_low": c.low if c else None,
                    "diff_high": c.high if c else None, "test": c.test if c else None,
                    "p_value": c.p_value if c else None, "p_holm": c.p_holm if c else None,
                    "min_detectable": c.min_detectable if c else None,
                    "detectably_worse": c.detectably_worse if c else None,
                    "worse_share": c.worse_share if c else None,
                    "better_share": c.better_share if c else None,
                    "verdict": c.sentence if c else None, **passes,
                }
            )  # fmt: skip
        return pd.DataFrame(rows)

    def lines(self) -> list[str]:
        """The verdicts in words, best setting first."""
        if self.comparison is None:
            return [self.why_not or "No comparison yet."]
        best = self.comparison.best
        out = [f"Best score: {best}. Against it, on the same items:"]
        for c in self.comparison.comparisons:
            flips = (
                f" {100 * c.worse_share:.1f}% of the items score lower than under the best, "
                f"{100 * c.better_share:.1f}% higher ({c.test})."
            )
            out.append(f"  {c.label} {c.sentence}.{flips}")
        for summary in self.comparison.settings:
            if summary.pass_at_k and summary.pass_hat_k:
                k = max(summary.pass_at_k)
                first, every = summary.pass_at_k[1], summary.pass_at_k[k]
                out.append(
                    f"{summary.label}, asked {summary.repeats} times an item: pass@1 "
                    f"{100 * first:.1f}%, pass@{k} {100 * every:.1f}%, "
                    f"pass^{k} {100 * summary.pass_hat_k[k]:.1f}% (pass/fail tasks)."
                )
        frontier = [s.label for s in self.comparison.settings if s.on_frontier]
        if frontier:
            out.append(f"Best value (no other setting costs less and scores more): "
                       f"{', '.join(frontier)}.")  # fmt: skip
        out.append(
            f"Ranges: a paired bootstrap of {self.comparison.resamples:,} resamples of the "
            f"items within each task (seed {self.comparison.seed}); p-values Holm-corrected "
            f'across the {len(self.comparison.comparisons)} comparison(s). "Not detectably '
            'worse" is not "equal": each line says how big a difference these items could '
            "detect (80% power, α = 0.05)."
        )
        return out

    def export(self, directory: Path) -> list[Path]:
        """Write ``sweep.json``, ``settings.csv`` and ``comparisons.csv`` into ``directory``
        (created); keys never appear in them. Returns the paths written."""
        directory.mkdir(parents=True, exist_ok=True)
        secrets = secret_values()

        def clean(text: str) -> str:
            return scrub(text, secrets)

        written = []
        path = directory / "sweep.json"
        path.write_text(clean(json.dumps(self.as_json(), indent=2, ensure_ascii=False)) + "\n")
        written.append(path)
        settings_rows = [
            {k: v for k, v in s.as_json().items() if k not in ("areas", "tasks", "spent_by_role")}
            for s in self.settings
        ]
        written.append(_csv(directory / "settings.csv", settings_rows, clean))
        comparisons = [] if self.comparison is None else self.comparison.comparisons
        written.append(
            _csv(directory / "comparisons.csv", [c.as_json() for c in comparisons], clean)
        )
        return written


def _csv(path: Path, rows: list[dict[str, Any]], clean: Any) -> Path:
    columns = list(rows[0]) if rows else ["label"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: clean(str(v)) if v is not None else "" for k, v in row.items()})
    return path


def setting_scores(
    label: str, outcomes: Iterable[Mapping[str, Any]], catalogue: list[dict[str, Any]],
    cost: Decimal | None,
) -> SettingScores:  # fmt: skip
    """A run's scored answers as the comparison reads them: by item (repeats grouped under
    the item's key), each sample's 0–1 value (the pass verdict, or the score over the task's
    scale) and pass verdict."""
    scales: dict[str, float] = {}
    for area in catalogue:
        for task in area.get("tasks", []):
            if task.get("score_by") == "mean_score":
                scales[task["id"]] = float(task.get("scale") or 1.0)
    values: dict[str, list[float]] = defaultdict(list)
    passes: dict[str, list[bool]] = defaultdict(list)
    tasks: dict[str, str] = {}
    for row in outcomes:
        if row["status"] != "scored":
            continue
        key = base_key(row["key"])
        scale = scales.get(row["task"])
        passed = bool(row["passed"])
        values[key].append(float(row["score"] or 0.0) / scale if scale else float(passed))
        passes[key].append(passed)
        tasks[key] = row["task"]
    items = {key: ItemSamples(tasks[key], tuple(values[key]), tuple(passes[key])) for key in values}
    return SettingScores(label, items, cost, frozenset(scales))


def load_sweep(
    store: Store, sweep_id: str, *, resamples: int = RESAMPLES, seed: int = SEED
) -> BenchSweepResult:
    """Read a sweep back and compare its settings; UserError for an unknown sweep id."""
    sweeps = SweepStore(store)
    sweep = sweeps.get(sweep_id)
    if sweep is None:
        known = ", ".join(s.id for s in sweeps.sweeps(5)) or "none yet"
        raise UserError(f"no benchmark sweep {sweep_id!r}; recent sweeps: {known}")
    runs = sweeps.runs(sweep)
    bench = BenchStore(store)
    results: list[SettingResult] = []
    scores: list[SettingScores] = []
    for setting, run in zip(sweep.settings, runs, strict=True):
        results.append(_setting_result(store, bench, setting.label, setting.value,
                                       setting.model, run, resamples))  # fmt: skip
        if run is not None:
            # what the setting itself costs: its model's answers (the judge's grading is the
            # evaluation's cost, the same for every setting); unknown when it has no price
            cost = (
                None if _unpriced(setting.model) else bench.spent(run.id).get("target", Decimal(0))
            )
            scores.append(
                setting_scores(setting.label, bench.outcomes(run.id),
                               run.settings.get("catalogue", []), cost)
            )  # fmt: skip
    with_answers = [s for s in scores if s.items]
    if len(with_answers) < 2:
        return BenchSweepResult(
            sweep, tuple(results), None,
            "No comparison yet: fewer than two settings have scored answers.",
        )  # fmt: skip
    try:
        comparison = compare_settings(with_answers, resamples=resamples, seed=seed)
    except UserError as exc:
        return BenchSweepResult(sweep, tuple(results), None, f"No comparison: {exc}")
    return BenchSweepResult(sweep, tuple(results), comparison)


def _unpriced(model: str) -> bool:
    """True when the model has no listed price (or is no longer known)."""
    try:
        return price_for(model_info(model)) is None
    except UserError:
        return True


def _setting_result(
    store: Store, bench: BenchStore, label: str, value: str, model: str,
    run: RunRow | None, resamples: int,
) -> SettingResult:  # fmt: skip
    if run is None:
        return SettingResult(
            label, value, None, "not started", model, 0, 0, None, None, {}, {}, Decimal(0), {},
            0, 0, 0, 0, 0, None,
        )  # fmt: skip
    report = load_report(store, run.id, resamples=resamples)
    summary = report.summary
    usage = bench.usage(run.id)
    wall = run.settings.get("wall_s")
    return SettingResult(
        label=label, value=value, run_id=run.id, status=report.outcome, model=run.model,
        scored=report.scored, failed=report.errors, overall=summary.overall_100,
        overall_ci95=summary.overall_ci95,
        areas={a.area: {"label": a.label, "score": a.score_100, "ci95": a.ci95_100,
                        "count": a.count} for a in summary.areas},
        tasks={t.task: {"score": t.score, "ci95": t.ci95, "count": t.count}
               for t in summary.tasks},
        spent=report.spent, spent_by_role=report.spent_by_role,
        input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"],
        reasoning_tokens=usage["reasoning_tokens"], answers=usage["answers"],
        truncated=usage["truncated"], wall_s=None if wall is None else float(wall),
    )  # fmt: skip


SETTINGS_COLUMNS = ("setting", "score (95% range)", "vs best", "spent", "tokens in/out/think",
                    "cut", "failed", "wall")  # fmt: skip
"""The columns of :func:`settings_table_rows`."""


def settings_table_rows(result: BenchSweepResult) -> list[list[str]]:
    """The settings table as text cells (:data:`SETTINGS_COLUMNS`): the setting (with its
    run's status unless it completed), score and range, the paired difference against the
    best with its range, spent, tokens, the share cut at the token limit, failures, wall."""
    versus = {}
    best = None
    if result.comparison is not None:
        versus = {c.label: c for c in result.comparison.comparisons}
        best = result.comparison.best
    rows = []
    for s in result.settings:
        name = (
            s.label
            if s.status == "completed"
            else f"{s.label} ({STATUS_WORDS.get(s.status, s.status)})"
        )
        score = "–" if s.overall is None else format_score(s.overall)
        if s.overall_ci95 is not None:
            low, high = s.overall_ci95
            score += f" ({format_score(low)}–{format_score(high)})"
        c = versus.get(s.label)
        against = "best" if s.label == best else ("" if c is None else _short(c))
        rate = s.truncation_rate
        rows.append([
            name, score, against, format_money(s.spent),
            f"{s.input_tokens:,}/{s.output_tokens:,}/{s.reasoning_tokens:,}",
            "–" if rate is None else f"{100 * rate:.0f}%", f"{s.failed:,}",
            _seconds(s.wall_s),
        ])  # fmt: skip
    return rows


STATUS_WORDS = {
    "not started": "not started",
    "completed_with_errors": "finished with errors",
    "paused_budget": "paused at its limit",
    "interrupted": "stopped early",
}


def _short(c: Comparison) -> str:
    """``−5.9 (−6.9…−4.9)*``: the paired difference and its range, starred when detectable
    (the verdict lines under the table say it in words)."""
    star = "*" if c.detectably_worse or c.detectably_better else ""
    return f"{signed_points(c.diff)} ({signed_points(c.low)}…{signed_points(c.high)}){star}"


def _seconds(wall: float | None) -> str:
    if wall is None:
        return "–"
    return f"{wall:.1f} s" if wall < 10 else f"{wall:,.0f} s"


def breakdown_rows(result: BenchSweepResult) -> tuple[list[str], list[list[str]]]:
    """Every area's and task's score (0–100, with its 95% range) under each setting: the
    header (group, name, then the settings) and one row per area and per task."""
    header = ["group", "name", *(s.label for s in result.settings)]
    areas: dict[str, str] = {}
    tasks: list[str] = []
    for setting in result.settings:
        for key, area in setting.areas.items():
            areas.setdefault(key, str(area.get("label") or key))
        tasks.extend(t for t in setting.tasks if t not in tasks)

    def cell(score: float | None, ci: Any, scale: float) -> str:
        if score is None:
            return "–"
        text = format_score(score * scale)
        if ci:
            text += f" ({format_score(ci[0] * scale)}–{format_score(ci[1] * scale)})"
        return text

    rows: list[list[str]] = []
    for key, name in areas.items():
        rows.append(["Area", name, *(
            cell(s.areas[key]["score"], s.areas[key]["ci95"], 1.0) if key in s.areas else "–"
            for s in result.settings
        )])  # fmt: skip
    for task in tasks:
        rows.append(["Task", task, *(
            cell(s.tasks[task]["score"], s.tasks[task]["ci95"], 100.0) if task in s.tasks
            else "–" for s in result.settings
        )])  # fmt: skip
    return header, rows
