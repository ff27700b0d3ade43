"""What the Run a benchmark page shows of a run: the estimate, the progress, the outcome with
its scores and downloads, whether it goes to the shared leaderboard. Rendering only: the
figures and words are the library's."""

from __future__ import annotations

import json
from typing import Any

import dash_mantine_components as dmc
from dash import html

from sweepbench.axes.cells import SHORT_BUDGET, read_budget
from sweepbench.bench.defaults import MAX_REPEATS
from sweepbench.bench.items import Benchmark
from sweepbench.bench.plan import MAX_TEMPERATURE
from sweepbench.bench.report import hosts_lines, load_report
from sweepbench.bench.results import detailed_rows, format_money, format_score
from sweepbench.bench.results_text import outcome_text, scores_line
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.wording import estimate_lines
from sweepbench.errors import UserError
from sweepbench.models.catalog import EFFORT_LEVELS
from sweepbench.settings import scrub, shared_place
from sweepbench.web.bench_run_host import BenchRunHost, HostedRun
from sweepbench.web.bench_sweep_controls import DEFAULT_EFFORT
from sweepbench.web.context import WebContext

KEY_NOTE = "Used only for this run. Never saved or shown."
DOWNLOADS = [
    ("answers", "answers.jsonl", "Answers"),
    ("failures", "failures.jsonl", "Failures"),
    ("spend", "spend.jsonl", "Spend"),
    ("summary-csv", "summary.csv", "Summary (CSV)"),
    ("summary-json", "summary.json", "Summary (JSON)"),
    ("dialogues", "dialogues.jsonl", "Dialogues"),
]
"""Download button id suffix, the file ``export_run`` writes, the button's label."""

NO_SHARED_PLACE = (
    "No shared leaderboard is configured on this server, so results stay in this server's "
    "store (see Leaderboard)."
)
PUBLISH_LABEL = "Add my results to the shared leaderboard"
OPTED_OUT = "Not saved to the shared leaderboard (you opted out)."
REMOVED = (
    "Taken out of the queue before it started: nothing was run, spent or saved. Press Run "
    "to queue it again."
)

# -- the Advanced settings --------------------------------------------------------------------


def sampling_controls() -> Any:
    """Effort, temperature and repeats of the model under test, as ``bench run``'s
    ``--effort``, ``--temperature`` and ``--repeats`` (read by :data:`.bench_form.FORM`)."""
    efforts = [{"value": DEFAULT_EFFORT, "label": "the model's default (none sent)"}] + [
        {"value": e, "label": e} for e in EFFORT_LEVELS
    ]
    return dmc.Group(
        [
            dmc.Select(
                id="bp-effort", label="Effort", data=efforts, value=DEFAULT_EFFORT,
                allowDeselect=False, description="of the model under test", w=240,
            ),
            dmc.TextInput(
                id="bp-temperature", label="Temperature", placeholder="the model's default",
                description=f"0 to {MAX_TEMPERATURE:g} (empty: the model's default)", w=220,
            ),
            dmc.TextInput(
                id="bp-repeats", label="Repeats", value="1", w=240,
                description=f"times each question is asked (1–{MAX_REPEATS}); scores become "
                "per-question means",
            ),
        ],
        align="flex-start",
    )  # fmt: skip


def budget_note(value: Any) -> tuple[str, str]:
    """The note under the answer length limit, and its colour: how the typed budget reads
    (the one parser, the CLI's: "64.000" is 64,000 tokens), a warning under
    :data:`~sweepbench.axes.cells.SHORT_BUDGET` tokens, or why it cannot be read."""
    typed = "" if value is None else str(value).strip()
    if not typed:
        return "", "dimmed"
    try:
        tokens = read_budget(typed)
    except UserError as exc:
        return f"Answer length limit: {scrub(str(exc))}", "red"
    if tokens < SHORT_BUDGET:
        return (
            f"{tokens:,} tokens is under {SHORT_BUDGET:,}: answers will be cut short (a cut "
            "answer is scored as it stands).",
            "orange",
        )
    return f"{tokens:,} tokens.", "dimmed"


# -- rendering ---------------------------------------------------------------------------------


def _lines(lines: list[str], id_: str) -> Any:
    return html.Div([dmc.Text(line, size="sm") for line in lines], id=id_)


def alert(text: str, colour: str = "red", title: str | None = None) -> Any:
    return dmc.Alert(text, color=colour, title=title, id="bp-refusal")


def refusal(reasons: list[str] | tuple[str, ...]) -> Any:
    return dmc.Alert(
        [dmc.Text("This run can't start yet:", size="sm"),
         html.Ul([html.Li(scrub(r)) for r in reasons])],
        color="red", id="bp-refusal",
    )  # fmt: skip


def estimate_view(prepared: PreparedRun) -> Any:
    """The estimate's lines (``estimate_lines``, web wording) and the Technical details."""
    from sweepbench.bench.plan_json import plan_json

    details = plan_json(prepared)
    details.pop("text", None)
    return html.Div(
        [
            dmc.Text(f"Your key: {KEY_NOTE}", size="sm", c="dimmed", id="bp-key-note"),
            _lines([scrub(line) for line in estimate_lines(prepared, surface="web")],
                   "bp-estimate-lines"),
            dmc.Accordion(
                dmc.AccordionItem(
                    [dmc.AccordionControl("Technical details"),
                     dmc.AccordionPanel(html.Pre(
                         scrub(json.dumps(details, indent=2, ensure_ascii=False, default=str)),
                         id="bp-details", style={"fontSize": "12px", "whiteSpace": "pre-wrap"},
                     ))],
                    value="details",
                ),
            ),
        ]
    )  # fmt: skip


def progress_text(p: Any) -> str:
    """ "Running… 412 answers scored, 3 hit errors. Spent so far: $0.41 of your $5.00
    limit. Every finished answer is saved as it completes." (spec §8.2)."""
    verb = "Continuing…" if p.resumed else "Running…"
    errors = f", {p.failed:,} hit errors" if p.failed else ""
    limit = f" of your {format_money(p.limit)} limit" if p.limit is not None else ""
    return (
        f"{verb} {p.scored:,} answers scored{errors}. Spent so far: {format_money(p.spent)}"
        f"{limit}. Every finished answer is saved as it completes."
    )


def queued_text(ahead: int) -> str:
    """ "Queued: 2 runs ahead of yours." (spec §8.1, concurrency between visitors)."""
    return f"Queued: {ahead:,} run{'' if ahead == 1 else 's'} ahead of yours."


def outcome_view(context: WebContext, host: BenchRunHost, run_id: str) -> Any:
    """The outcome (spec §8.3), the scores line, publishing, the run id, Detailed results and
    the downloads of a run that has ended."""
    report = load_report(context.store, run_id)
    heading, body = outcome_text(
        report.outcome, scored=report.scored, errors=report.errors, spent=report.spent,
        reason=scrub(report.run.reason) if report.run.reason else None, surface="web",
    )  # fmt: skip
    hosted = host.hosted(run_id)
    extra = [dmc.Text(hosted.error, size="sm", c="red")] if hosted and hosted.error else []
    rows = [
        html.Tr([html.Td(r.group), html.Td(r.name), html.Td(f"{r.count:,}"),
                 html.Td(f"{r.mean_score:.3f}"), html.Td(f"{r.pass_rate * 100:.1f}%"),
                 html.Td("" if r.score_100 is None else format_score(r.score_100)),
                 html.Td("" if r.ci95_100 is None else
                         f"{format_score(r.ci95_100[0])}–{format_score(r.ci95_100[1])}")])
        for r in detailed_rows(report.summary)
    ]  # fmt: skip
    head = ["Group", "Name", "Count", "Mean score", "Pass rate", "Score", "95% range"]
    from sweepbench.bench.storage import BenchStore

    answered = BenchStore(context.store).tasks_answered(report.run.id)
    has_dialogues = bool(answered & set(_dialogue_tasks(report.benchmark)))
    buttons = [  # every button, always (a callback waits for all its inputs to exist)
        dmc.Button(
            label, id=f"bp-dl-{suffix}", variant="light", size="xs",
            style=None if suffix != "dialogues" or has_dialogues else {"display": "none"},
        )
        for suffix, _name, label in DOWNLOADS
    ]  # fmt: skip
    return html.Div(
        [
            dmc.Alert(body, title=heading, color=_colour(report.outcome), id="bp-outcome"),
            *extra,
            dmc.Text(scores_line(report.summary), size="sm", id="bp-scores"),
            *(
                dmc.Text(line, size="xs", c="dimmed", className="bp-hosts")
                for line in hosts_lines(report.run.settings)
            ),
            dmc.Text(publish_line(hosted), size="sm", id="bp-publish-outcome"),
            dmc.Text(f"Run id: {report.run.id}", size="xs", c="dimmed", id="bp-run-label"),
            dmc.Accordion(
                dmc.AccordionItem(
                    [dmc.AccordionControl("Detailed results"),
                     dmc.AccordionPanel(dmc.Table(
                         [html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(rows)],
                         id="bp-results",
                     ))],
                    value="results",
                ),
                value="results",
            ),
            dmc.Group(buttons, id="bp-downloads", gap="xs", mt="sm"),
        ]
    )  # fmt: skip


def configured_place() -> tuple[str | None, str | None]:
    """The configured shared leaderboard and None, or None and why the setting is unusable
    (scrubbed), or None and None when none is configured."""
    try:
        return shared_place(), None
    except UserError as exc:
        return None, scrub(str(exc))


def publish_note() -> tuple[bool, str]:
    """Whether the publish checkbox is offered, and the note under it."""
    place, problem = configured_place()
    if problem is not None:
        return False, f"The shared leaderboard setting cannot be used: {problem}"
    if place is None:
        return False, NO_SHARED_PLACE
    return True, (
        f"When ticked, the finished run is published to {place}: its record, scores and "
        "answers (scrubbed), never your key. Off unless you tick it."
    )


def publish_line(hosted: HostedRun | None) -> str:
    """What became of publishing the run (spec §8.3, §12)."""
    if hosted is None:  # started by another process, before this server did, or long ago
        place, _problem = configured_place()
        if place is None:
            return "Not saved to the shared leaderboard: " + NO_SHARED_PLACE
        return (
            "This server does not hold what became of this run (it was started elsewhere, "
            "before the server started, or many runs ago), so this page does not know whether "
            "it was added to the shared leaderboard."
        )
    if hosted.publish_to is None:
        place, _problem = configured_place()
        if place is None:
            return "Not saved to the shared leaderboard: " + NO_SHARED_PLACE
        return OPTED_OUT
    if hosted.published is not None:
        return (
            f"Saved to the shared leaderboard at {hosted.published}. Others see it on their "
            "Leaderboard page after Refresh."
        )
    if hosted.publish_error is not None:
        return (
            f"Not saved to the shared leaderboard at {hosted.publish_to}: "
            f"{hosted.publish_error}. The run itself is kept here; run `sweepbench leaderboard "
            "publish RUN_ID` to try again."
        )
    return f"Not saved to the shared leaderboard at {hosted.publish_to}: the run did not end."


def _dialogue_tasks(benchmark: Benchmark) -> set[str]:
    from sweepbench.bench.dialogue.scenario import is_dialogue

    return {t.id for t in benchmark.tasks if is_dialogue(t)}


def _colour(outcome: str) -> str:
    return {"completed": "green", "paused_budget": "yellow"}.get(outcome, "orange")


def state_view(
    context: WebContext, host: BenchRunHost, run_id: str | None
) -> tuple[Any, str, bool]:
    """The status area of a run: its progress while it goes on, its outcome once it ends.
    Returns (children, state, tick disabled)."""
    if not run_id:
        return [], "idle", True
    ahead = host.ahead(run_id)
    if ahead is not None:
        return dmc.Text(queued_text(ahead), size="sm", id="bp-queued"), "queued", False
    hosted = host.hosted(run_id)
    if hosted is not None and hosted.removed:
        return dmc.Alert(REMOVED, color="gray", id="bp-removed"), "removed", True
    progress = host.progress(run_id)
    if progress is None and hosted is not None and hosted.error:  # it ended before its row
        return dmc.Alert(hosted.error, color="red", id="bp-error"), "ended", True
    if progress is None:
        return dmc.Alert(f"No benchmark run {run_id!r}.", color="yellow"), "missing", True
    if progress.running:
        return dmc.Text(progress_text(progress), size="sm", id="bp-progress"), "running", False
    return outcome_view(context, host, run_id), "ended", True
