"""The About page (``/about``, spec benchmarks.md §17.10 and the decisions of §20 a user should
know): what ELBench measures, the region-specific sets, how scores, ranges and the paired
verdicts are made, judged versus rule-scored tasks, our scoring versions, what is never stored,
and links. Static text, built from the library's constants (areas and tasks from the shipped
ELBench catalogue, scoring versions, bootstrap resamples, the price measure) where it has them,
so the page cannot drift from what the code does."""

from __future__ import annotations

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
from sweepbench.leaderboard.published import PER_TASK_REVISION, TEACHING_PROVENANCE
from sweepbench.stats.paired import ALPHA, RESAMPLES, SEED
from sweepbench.web.context import WebContext

PAPER = "https://arxiv.org/abs/2608.09548"
CODE = "https://github.com/ZeroLoss-Lab/ELBench"
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


def _areas_table(registry: Registry) -> Any:
    """One row per area: its tasks, how each is scored, and which are region-specific."""
    rows = []
    for area in registry.areas:
        tasks = [t for t in registry.tasks if t.area == area.key]
        names = ", ".join(f"{t.name}{' †' if t.region_specific else ''}" for t in tasks)
        gradings = sorted({GRADING_WORDS.get(t.grading, t.grading) for t in tasks})
        rows.append(
            dmc.TableTr(
                [
                    dmc.TableTd(area.label),
                    dmc.TableTd(f"{len(tasks)}"),
                    dmc.TableTd(names),
                    dmc.TableTd(", ".join(gradings)),
                ]
            )
        )
    head = dmc.TableThead(
        dmc.TableTr([dmc.TableTh(h) for h in ("Area", "Tasks", "What is asked", "Scored")])
    )
    return dmc.TableScrollContainer(
        dmc.Table([head, dmc.TableTbody(rows)], striped=True, id="ab-areas-table"),
        minWidth=600,
    )


def _measures(registry: Registry | None) -> list[Any]:
    if registry is None:
        return [_text("The ELBench catalogue could not be read here.")]
    described = [f"{t.name}: {t.description}" for t in registry.tasks if t.description]
    return [
        _text(
            f"ELBench asks {len(registry.tasks)} tasks in {len(registry.areas)} areas. Question "
            "counts are counted from the data you load (the paper's published counts differ "
            "slightly from its own data; counts must describe what actually ran). † marks a "
            "region-specific set."
        ),
        _areas_table(registry),
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


def _region(registry: Registry | None) -> list[Any]:
    names = ", ".join(t.name for t in registry.tasks if t.region_specific) if registry else "(none)"
    return [
        _text(
            f"Region-specific sets ({names}) test one country's curriculum and content rules.",
            "They are off by default (the core scope), so a score says how a model does on "
            "questions that make sense everywhere; include them (the paper scope) to compare "
            "with the published figures, which used it. The estimate shows how many questions "
            "each choice runs.",
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
                html.A(
                    "The code and questions (ZeroLoss-Lab/ELBench)", href=CODE, id="ab-link-code"
                ),
            ]
        ),
        _text("The links open outside this app; nothing on this page loads from them."),
    ]


def layout(context: WebContext, search: str) -> Any:
    """The page (static: nothing here calls a model or reads the store)."""
    registry = _registry()
    return dmc.Stack(
        gap=4,
        maw=960,
        children=[
            dmc.Title("About", order=2),
            _section("measures", "What ELBench measures", *_measures(registry)),
            _section("region", "Region-specific sets", *_region(registry)),
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
