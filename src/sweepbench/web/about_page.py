"""The About page (``/about``, spec benchmarks.md §17.10 and the decisions of §20 a user should
know): what ELBench measures (its areas with their question counts), the region-specific sets,
how scores, ranges and the paired verdicts are made, judged versus rule-scored tasks, our
scoring versions, what is never stored, and links. Built from the library's constants (areas
and tasks from the shipped ELBench catalogue, scoring versions, bootstrap resamples, the price
measure) where it has them, so the page cannot drift from what the code does; the question
counts are counted from ELBench's items when its data is in the operator's benchmark folders
(loaded by the one rule of what a visitor may run), else they are the published results'
counts, and the page says which."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dash_mantine_components as dmc
from dash import Dash, html

from sweepbench.bench.catalog import PRESETS
from sweepbench.bench.scoring.option_set import PARTIAL_CREDIT
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, SCORING_VERSIONS
from sweepbench.bench.sources.elbench_registry import Registry, load_registry
from sweepbench.bench.sweeps.plan import MAX_SETTINGS
from sweepbench.errors import SweepbenchError
from sweepbench.leaderboard.board import MEASURE_LABELS, OVERLAP
from sweepbench.leaderboard.published import (
    PER_TASK_REVISION,
    TEACHING_PROVENANCE,
    load_published,
)
from sweepbench.stats.paired import ALPHA, RESAMPLES, SEED
from sweepbench.web.context import WebContext
from sweepbench.web.offer import MAX_LISTED, BenchmarkOffer

PAPER = "https://arxiv.org/abs/2608.09548"
CODE = "https://github.com/ZeroLoss-Lab/ELBench"
QUESTIONS = "https://huggingface.co/datasets/ZeroLoss-Lab/ELBench"
RESULTS = "https://huggingface.co/datasets/ZeroLoss-Lab/ELBench-results"
"""The two datasets ELBench's README links (at commit bdf8ea0, the one its data and published
figures were taken from): the benchmark items, and the full results with the
judge-reliability audit. No address of the AI for Education leaderboard is written anywhere
we know of, so it is not linked."""
VERSION_WORDS = {
    "replicated": "reads answers as the original ELBench code does, misreadings included, so "
    "scores are comparable with the published results",
    "corrected": "fixes the misreadings that can be justified (a letter touching a Chinese "
    "character, prose read as an option letter, a full-width letter, the omni “FINAL ANSWER” "
    "prefix, the math fallbacks, interval brackets)",
}
"""What each scoring version does (docs/benchmarks.md, "Scoring versions")."""
GRADING_WORDS = {"auto": "rule-scored", "judge": "judged", "runtime": "judged dialogue"}


def _section(key: str, title: str, *children: Any) -> Any:
    return html.Section(
        [dmc.Title(title, order=3, mb=6), *children], id=f"ab-{key}", style={"marginTop": 18}
    )


def _text(*parts: str) -> Any:
    return dmc.Text(" ".join(parts), size="sm")


def _bullets(items: list[Any]) -> Any:
    return dmc.List([dmc.ListItem(dmc.Text(i, size="sm")) for i in items], spacing=4)


def _registry() -> Registry | None:
    try:
        return load_registry()
    except SweepbenchError:
        return None


@dataclass(frozen=True)
class QuestionCounts:
    """How many questions each ELBench task has, and where the counts come from."""

    tasks: Mapping[str, int]
    """Task id → questions."""
    source: str
    """Where the counts come from, for people (a sentence)."""

    def area(self, registry: Registry, area: str) -> int:
        return sum(self.tasks.get(t.id, 0) for t in registry.tasks if t.area == area)

    def total(self, registry: Registry, *, regional: bool) -> int:
        return sum(
            self.tasks.get(t.id, 0) for t in registry.tasks if regional or not t.region_specific
        )


def _data_folders(offer: BenchmarkOffer, registry: Registry) -> Iterator[Path]:
    """The folders of the operator's benchmark folders that look like ELBench's data (each
    benchmark folder itself, then its subfolders, at most :data:`MAX_LISTED` looked at): those
    holding every area's folder."""
    for folder in offer.folders:
        try:
            children = sorted(e.path for e in os.scandir(folder) if e.is_dir())[:MAX_LISTED]
        except OSError:
            continue
        for candidate in (str(folder), *children):
            if all(Path(candidate, area.folder).is_dir() for area in registry.areas):
                yield Path(candidate)


def question_counts(offer: BenchmarkOffer, registry: Registry) -> QuestionCounts:
    """The questions per task: counted from ELBench's items when its data is in the operator's
    benchmark folders and loads (by :meth:`BenchmarkOffer.load`, the rule every page loads
    a benchmark by), else the published results' per-task counts."""
    from sweepbench.bench.request import BenchRequest

    for folder in _data_folders(offer, registry):
        request = BenchRequest(benchmark="elbench", data=folder, models={"target": "x/y"})
        try:
            benchmark = offer.load(request)[1]
        except (SweepbenchError, OSError):
            continue
        shown = next(
            (folder.relative_to(f).as_posix() for f in offer.folders if folder.is_relative_to(f)),
            folder.name,
        )
        where = "one of this server's benchmark folders" if shown == "." else (
            f"this server's benchmark folders ({shown})"
        )  # fmt: skip
        return QuestionCounts(
            {t.id: len(t.items) for t in benchmark.tasks},
            f"The question counts are counted from the ELBench data in {where}: what a run asks.",
        )
    published = next((m.tasks for m in load_published().models if m.tasks), {})
    return QuestionCounts(
        {task: t.count for task, t in published.items()},
        "ELBench's data is not in this server's benchmark folders, so the question counts "
        f"are the published results' ({PER_TASK_REVISION} per-task counts); with the data "
        "there, they are counted from its items, which is what a run asks.",
    )


def _areas_table(registry: Registry, counts: QuestionCounts) -> Any:
    """One row per area: its questions, its tasks, how each is scored, and which are
    region-specific."""
    rows = []
    for area in registry.areas:
        tasks = [t for t in registry.tasks if t.area == area.key]
        names = ", ".join(f"{t.name}{' †' if t.region_specific else ''}" for t in tasks)
        gradings = sorted({GRADING_WORDS.get(t.grading, t.grading) for t in tasks})
        rows.append(
            dmc.TableTr(
                [
                    dmc.TableTd(area.label),
                    dmc.TableTd(f"{counts.area(registry, area.key):,}"),
                    dmc.TableTd(f"{len(tasks)}"),
                    dmc.TableTd(names),
                    dmc.TableTd(", ".join(gradings)),
                ]
            )
        )
    titles = ("Area", "Questions", "Tasks", "What is asked", "Scored")
    head = dmc.TableThead(dmc.TableTr([dmc.TableTh(h) for h in titles]))
    return dmc.TableScrollContainer(
        dmc.Table([head, dmc.TableTbody(rows)], striped=True, id="ab-areas-table"),
        minWidth=600,
    )


def _measures(registry: Registry | None, counts: QuestionCounts | None) -> list[Any]:
    if registry is None or counts is None:
        return [_text("The ELBench catalogue could not be read here.")]
    described = [f"{t.name}: {t.description}" for t in registry.tasks if t.description]
    return [
        _text(
            f"ELBench asks {len(registry.tasks)} tasks in {len(registry.areas)} areas. † marks "
            "a region-specific set."
        ),
        _areas_table(registry, counts),
        dmc.Text(counts.source, size="sm", c="dimmed", id="ab-counts-source"),
        dmc.Accordion(
            [
                dmc.AccordionItem(
                    [
                        dmc.AccordionControl("Every task in one line"),
                        dmc.AccordionPanel(_bullets(described)),
                    ],
                    value="tasks",
                )
            ]
        ),
    ]


def _region(registry: Registry | None, counts: QuestionCounts | None) -> list[Any]:
    names = ", ".join(t.name for t in registry.tasks if t.region_specific) if registry else "(none)"
    sizes = ""
    if registry is not None and counts is not None:
        core = counts.total(registry, regional=False)
        paper = counts.total(registry, regional=True)
        sizes = f"Without them: {core:,} questions; with them: {paper:,}."
    return [
        _text(
            f"Region-specific sets ({names}) test one country's curriculum and content rules.",
            "They are off by default (the core scope), so a score says how a model does on "
            "questions that make sense everywhere; include them (the paper scope) to compare "
            "with the published figures, which used it.",
            sizes,
            "The estimate shows how many questions each choice runs.",
        )
    ]


def _scores() -> list[Any]:
    presets = ", ".join(p.title for p in PRESETS.values())
    return [
        _bullets(
            [
                "Each area scores 0–100; the overall score is the mean of the areas, so an area "
                "with few questions counts as much as one with many.",
                "Rule-scored tasks are checked by a fixed rule (an option letter, a number, a "
                "verifiable instruction): free and repeatable. Judged tasks are graded by a judge "
                "model, which costs calls and depends on the judge: judged runs are shown per "
                "judge and never ranked with a different judge's. One task that the original "
                "code scores by rule but the published results judged is judged by default; "
                "its rule scorer is an offline option, labelled, and never ranked with judged "
                "runs.",
                "Select-all-that-apply questions (SATAs) earn partial credit: "
                f"{PARTIAL_CREDIT} for a partly right set, as the paper describes, checked "
                "against its published Safety figures — not a pass rate that ignores it.",
                "A 1–10 scale is passed at 6.0 and a 1–5 scale at 3.0: the same bar on every "
                "scale.",
                "A reasoning trace is never scored as the answer; an empty answer is reminded "
                "of the format once, then scored as empty. A judge's unreadable grade is retried, "
                "then recorded as a failure, never as a zero.",
                f"Ranges are 95% bootstrap ranges ({RESAMPLES:,} resamples of the items). "
                f"{OVERLAP}",
                "Best value: no other model or setting costs less and scores more. Prices are "
                f"shown as {MEASURE_LABELS['blended']}.",
                f"Presets: {presets}; the estimate says how many questions each one asks.",
            ]
        )
    ]


def _versions() -> list[Any]:
    items = [
        f"{v}{' (the default)' if v == DEFAULT_SCORING_VERSION else ''}: "
        f"{VERSION_WORDS.get(v, 'see docs/benchmarks.md')}."
        for v in SCORING_VERSIONS
    ]
    return [
        _text(
            "The rule scorers have scoring versions. The version is part of a run's settings, "
            "so runs scored differently never continue each other and are never ranked "
            "together. A stored run can be graded again by the other version, offline: the "
            "result is a new run, and the original is left as it was."
        ),
        _bullets(items),
    ]


def _sweeps() -> list[Any]:
    return [
        _text(
            "A benchmark sweep asks the same questions under settings that differ in one thing "
            "and compares each with the best-scoring setting on the same items:"
        ),
        _bullets(
            [
                f"the paired difference in points with a paired bootstrap 95% range "
                f"({RESAMPLES:,} resamples of the items within each task, seed {SEED});",
                "an exact McNemar test when every task is pass/fail and each item was asked "
                "once, else a Wilcoxon signed-rank test; p-values Holm-corrected across the "
                "comparisons;",
                f"the smallest difference these items could detect (80% power, α = {ALPHA}), "
                "so “not detectably worse” is never read as “equal”.",
            ]
        ),
        _text(
            "Every setting is an ordinary run (resumable, listed, exportable); Stop keeps every "
            "answer and the same sweep continues where it left off.",
            f"A sweep runs at most {MAX_SETTINGS} settings.",
        ),
    ]


def _runs() -> list[Any]:
    return [
        _bullets(
            [
                "Your runs use the same questions, prompts, retries and scoring as the "
                "published ones; the same model may be reached through another route, and a "
                "different judge can move judged scores, so boards are kept per judge.",
                "A published result counts as complete only on the same tasks; partial runs "
                "are marked and compared on matched tasks only.",
                "Published area and overall figures are the final table's; the published "
                f"task-by-task figures are the {PER_TASK_REVISION} revision, which does not add "
                "up to the final table, so they are marked † and never made into an area or "
                "overall figure.",
                TEACHING_PROVENANCE,
                "Empty spreadsheet cells that the original data turns into the text “None” are "
                "kept in the prompt, so scores stay comparable with the published ones.",
            ]
        )
    ]


def _keys() -> list[Any]:
    return [
        _bullets(
            [
                "Provider keys are read from this server's environment or config file, used "
                "only for the calls of a run, scrubbed from every log, record and export, and "
                "never saved in the store or shown on a page.",
                "Literal keys in benchmark data are refused; keys are never looked up in files "
                "of the working folder.",
                "Publishing is opt-in (off by default): it shares the model name, the settings, "
                "the answers and the scores — never a key.",
            ]
        )
    ]


def _links() -> list[Any]:
    return [
        _bullets(
            [
                html.A("The paper (arXiv 2608.09548)", href=PAPER, id="ab-link-paper"),
                html.A("The code (ZeroLoss-Lab/ELBench on GitHub)", href=CODE, id="ab-link-code"),
                html.A(
                    "The questions (the ZeroLoss-Lab/ELBench dataset on Hugging Face)",
                    href=QUESTIONS,
                    id="ab-link-questions",
                ),
                html.A(
                    "The published results and audits (the ZeroLoss-Lab/ELBench-results "
                    "dataset on Hugging Face)",
                    href=RESULTS,
                    id="ab-link-results",
                ),
            ]
        ),
        _text("The links open outside this app; nothing on this page loads from them."),
    ]


def layout(context: WebContext, search: str) -> Any:
    """The page (nothing here calls a model or reads the store; ELBench's data is counted
    when the operator's benchmark folders hold it)."""
    registry = _registry()
    counts = None if registry is None else question_counts(context.benchmarks, registry)
    return dmc.Stack(
        gap=4,
        maw=960,
        children=[
            dmc.Title("About", order=2),
            _section("measures", "What ELBench measures", *_measures(registry, counts)),
            _section("region", "Region-specific sets", *_region(registry, counts)),
            _section("scores", "How the scores work", *_scores()),
            _section("versions", "Scoring versions", *_versions()),
            _section("sweeps", "Ranges and paired verdicts in a sweep", *_sweeps()),
            _section("runs", "Your runs and the published ones", *_runs()),
            _section("keys", "Your key and your data", *_keys()),
            _section("links", "Links", *_links()),
        ],
    )


def register(app: Dash, context: WebContext) -> None:
    """The page has no callbacks."""
