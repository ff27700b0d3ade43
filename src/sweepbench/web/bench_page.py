"""The Run a benchmark page (spec benchmarks §5–§12, §19): choose a benchmark and a model,
estimate the cost (the same text as ``bench estimate``), run it in the background with a key
used only for that run, watch its progress, stop it, continue it, read its results and
download what ``bench export`` writes.

The rules are the library's (:mod:`sweepbench.bench.request`: ``prepare``, ``start_check``);
the callbacks fill a ``BenchRequest`` and render the answers. What the request may name is the
app's :class:`~sweepbench.web.offer.BenchmarkOffer` (the built-ins and YAML declarations in the
operator's benchmark folders, never a Python declaration): every load goes through it. Runs
are hosted by :mod:`sweepbench.web.bench_run_host`. The typed key is read only by the Run
callback, handed to the run's own context, and cleared from the field; no callback sends it
back."""

from __future__ import annotations

import base64
import json
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
from dash import Dash, Input, Output, State, ctx, dcc, html, no_update
from dash.development.base_component import Component

from sweepbench.bench.catalog import PRESETS
from sweepbench.bench.items import Benchmark, Scope
from sweepbench.bench.report import export_run, load_report
from sweepbench.bench.request import BenchRequest, parse_usd, prepare, start_check
from sweepbench.bench.results import detailed_rows, format_money, format_score
from sweepbench.bench.results_text import outcome_text, scores_line
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.sources.registry import sources as benchmark_sources
from sweepbench.bench.wording import estimate_lines
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.models.providers import provider
from sweepbench.models.registry import listed_models, split_id
from sweepbench.money.prices import price_for
from sweepbench.settings import MIN_RUN_KEY_CHARS, provider_key, run_keys, scrub, shared_place
from sweepbench.sweeps.plan import default_model
from sweepbench.web.bench_run_host import BenchRunHost, HostedRun, host_for
from sweepbench.web.context import WebContext
from sweepbench.web.offer import BenchmarkOffer

DEFAULT_LIMIT = "5"
TICK_MS = 1000
KEY_NOTE = "Used only for this run. Never saved or shown."
LIMIT_NOTE = "The run pauses here and keeps its progress. Leave empty for no limit."
CONFIRM_LABEL = "Charge my key for this run, up to my spending limit"
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
BENCHMARKS = [
    *((s.name, s.label) for s in benchmark_sources()),  # the source registry's, in its order
    ("declaration", "A declaration in this server's benchmark folders (.yaml)"),
]
DOWNLOADS = [
    ("answers", "answers.jsonl", "Answers"),
    ("failures", "failures.jsonl", "Failures"),
    ("spend", "spend.jsonl", "Spend"),
    ("summary-csv", "summary.csv", "Summary (CSV)"),
    ("summary-json", "summary.json", "Summary (JSON)"),
    ("dialogues", "dialogues.jsonl", "Dialogues"),
]
"""Download button id suffix, the file ``export_run`` writes, the button's label."""

FIELDS = [
    "bp-benchmark", "bp-declaration", "bp-data", "bp-model", "bp-preset", "bp-scope",
    "bp-limit", "bp-judge", "bp-decision", "bp-separate-student", "bp-student",
    "bp-limit-target", "bp-limit-judge", "bp-limit-student", "bp-areas", "bp-tasks",
    "bp-skills", "bp-per-task", "bp-max-items", "bp-concurrency", "bp-resume", "bp-unpriced",
    "bp-max-tokens",
]  # fmt: skip
"""Every setting of the request, in the order :func:`request_values` reads them. The key is
not one of them: only the Run callback reads it."""
PROPERTY = {
    "bp-scope": "checked", "bp-decision": "checked", "bp-separate-student": "checked",
    "bp-resume": "checked", "bp-unpriced": "checked",
}  # fmt: skip


# -- the request -------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _int(value: Any, name: str) -> int | None:
    text = _text(value)
    if not text:
        return None
    try:
        return int(text.replace(",", ""))
    except ValueError:
        raise UserError(f"{name}: a whole number, not {text!r}") from None


def _usd(value: Any, name: str) -> Decimal | None:
    """Empty, ≤ 0 or… a limit is none when empty; otherwise the one money parser's answer."""
    text = _text(value)
    if not text:
        return None
    amount = parse_usd(text, name)
    return amount if amount > 0 else None


def benchmark_name(choice: Any, declaration: Any) -> str:
    """The ``BenchRequest.benchmark`` of the benchmark choice, as the visitor gave it (what
    it may name is :class:`~sweepbench.web.offer.BenchmarkOffer`'s rule)."""
    chosen = _text(choice) or "sample"
    if chosen == "declaration":
        path = _text(declaration)
        if not path:
            raise UserError(
                "Give the name of a benchmark declaration (.yaml) in this server's benchmark "
                "folders."
            )
        return path
    return chosen


def request_values(values: dict[str, Any], *, confirmed: bool = False) -> dict[str, Any]:
    """The fields of a ``BenchRequest`` from the page's settings (``values``: id → value);
    a UserError names the field that is wrong."""
    models = {"target": _text(values["bp-model"])}
    if not models["target"]:
        raise UserError("Choose the model you want to test.")
    if _text(values["bp-judge"]):
        models["judge"] = _text(values["bp-judge"])
    if values["bp-separate-student"]:
        if not _text(values["bp-student"]):
            raise UserError("Choose the simulated student under Advanced settings.")
        models["student"] = _text(values["bp-student"])
    roles = {
        role: _usd(values[f"bp-limit-{role}"], f"Limit for the {word}")
        for role, word in (("target", "model under test"), ("judge", "judge"),
                           ("student", "simulated student"))
    }  # fmt: skip
    data = _text(values["bp-data"])
    return {
        "benchmark": benchmark_name(values["bp-benchmark"], values["bp-declaration"]),
        "data": Path(data) if data and values["bp-benchmark"] == "elbench" else None,
        "preset": _text(values["bp-preset"]) or "full",
        "scope": "paper" if values["bp-scope"] else "core",
        "areas": _text(values["bp-areas"]),
        "tasks": _text(values["bp-tasks"]),
        "skills": _text(values["bp-skills"]),
        "per_task": _int(values["bp-per-task"], "Questions per task"),
        "max_items": _int(values["bp-max-items"], "Stop after this many questions"),
        "models": models,
        "max_tokens": _int(values["bp-max-tokens"], "Answer length limit"),
        "decision_judge": bool(values["bp-decision"]),
        "limit": _usd(values["bp-limit"], "Spending limit"),
        "role_limits": {r: v for r, v in roles.items() if v is not None},
        "concurrency": _int(values["bp-concurrency"], "Requests at once") or 8,
        "resume": bool(values["bp-resume"]),
        "accept_unpriced": bool(values["bp-unpriced"]),
        "confirmed": confirmed,
    }


NAMES = {
    "benchmark": "Benchmark", "data": "Data folder", "preset": "Preset", "scope": "Scope",
    "areas": "Areas", "tasks": "Tasks", "skills": "Only these skills",
    "per_task": "Questions per task", "max_items": "Stop after this many questions",
    "models": "Models", "max_tokens": "Answer length limit", "limit": "Spending limit",
    "role_limits": "Limits per role", "concurrency": "Requests at once",
}  # fmt: skip


def build_request(values: dict[str, Any], *, confirmed: bool = False) -> BenchRequest:
    """The request the page's settings make (UserError, scrubbed, when they are wrong)."""
    return BenchRequest.from_values(request_values(values, confirmed=confirmed), names=NAMES)


def _target_provider(model: str) -> str | None:
    try:
        return split_id(model)[0]
    except UserError:
        return None


# -- rendering ---------------------------------------------------------------------------------


def _lines(lines: list[str], id_: str) -> Any:
    return html.Div([dmc.Text(line, size="sm") for line in lines], id=id_)


def _alert(text: str, colour: str = "red", title: str | None = None) -> Any:
    return dmc.Alert(text, color=colour, title=title, id="bp-refusal")


def _refusal(reasons: list[str] | tuple[str, ...]) -> Any:
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


def _state_view(
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


# -- the page ----------------------------------------------------------------------------------


def _known_models(max_price: Any, max_size: Any) -> tuple[list[str], int]:
    """The listed model ids within the filters (price: $ per 1M input tokens; size: billions
    of parameters), and how many there are in all."""
    infos = listed_models()
    shown: list[str] = []
    for info in infos:
        if _text(max_price):
            price = price_for(info)
            try:
                if price is None or price.input > Decimal(_text(max_price)):
                    continue
            except ArithmeticError:
                pass
        if _text(max_size):
            try:
                if info.size_b is None or info.size_b > float(_text(max_size)):
                    continue
            except ValueError:
                pass
        shown.append(info.id)
    return list(dict.fromkeys(shown)), len({i.id for i in infos})


def _preset_options(benchmark: Benchmark | None, paper: bool) -> list[Any]:
    scope: Scope = "paper" if paper else "core"
    return [
        dmc.Radio(
            label=p.label(benchmark, scope) if benchmark is not None else p.title,
            value=name, id=f"bp-preset-{name}",
        )
        for name, p in PRESETS.items()
    ]  # fmt: skip


def _load(
    offer: BenchmarkOffer, choice: Any, declaration: Any, data: Any
) -> tuple[Benchmark | None, str | None]:
    """The chosen benchmark as the web may run it (:meth:`BenchmarkOffer.load`), or None and
    why not (scrubbed)."""
    try:
        name = benchmark_name(choice, declaration)
        folder = _text(data)
        path = Path(folder) if folder and choice == "elbench" else None
        request = BenchRequest(benchmark=name, data=path, models={"target": "x/y"})
        return offer.load(request)[1], None
    except (SweepbenchError, OSError, ValueError) as exc:
        return None, scrub(str(exc))


def _elbench_loadable(offer: BenchmarkOffer, data: Any) -> bool:
    return bool(_text(data)) and _load(offer, "elbench", None, data)[0] is not None


def _reopened(host: BenchRunHost, search: str) -> str | None:
    asked = parse_qs(search.lstrip("?")).get("run", [None])[0]
    if asked:
        return asked
    live = host.live()
    return live[-1] if live else None


def _joined(value: Any) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list | tuple) else _text(value)


def _benchmark_choice(settings: dict[str, Any]) -> dict[str, Any]:
    """The benchmark controls of a stored run: its choice and the path it was loaded from."""
    from sweepbench.bench.sources.declared import SAMPLE_FOLDER
    from sweepbench.bench.sources.elbench import BENCHMARK_ID

    config = settings.get("config") or {}
    source = _text(settings.get("benchmark_source"))
    if source == str((SAMPLE_FOLDER / "teaching.yaml").resolve()):
        return {"bp-benchmark": "sample-teaching"}
    if config.get("benchmark") == BENCHMARK_ID:
        return {"bp-benchmark": "elbench", "bp-data": source}
    if source and source != "built in":
        return {"bp-benchmark": "declaration", "bp-declaration": source}
    return {"bp-benchmark": "sample"}


def controls_from_run(settings: dict[str, Any]) -> dict[str, Any]:
    """The page's controls (id → value or checked) from a run's stored settings (config,
    selection, limits, concurrency), so pressing Run continues it; never a key (none is
    stored)."""
    config = settings.get("config") or {}
    selection = settings.get("selection") or {}
    limits = settings.get("limits") or {}
    roles = limits.get("roles") or {}
    models = config.get("models") or {}
    student = _text(models.get("student"))
    filled: dict[str, Any] = _benchmark_choice(settings)
    filled.update({
        "bp-model": _text(models.get("target") or config.get("model")),
        "bp-judge": _text(models.get("judge") or config.get("judge")),
        "bp-decision": bool(config.get("decision_judge")),
        "bp-separate-student": bool(student),
        "bp-student": student,
        "bp-preset": _text(selection.get("preset")) or "full",
        "bp-scope": (selection.get("scope") or config.get("scope")) == "paper",
        "bp-limit": _text(limits.get("total")),
        "bp-areas": _joined(selection.get("areas") or []),
        "bp-tasks": _joined(selection.get("tasks") or []),
        "bp-skills": _joined(config.get("dimensions") or []),
        "bp-per-task": _text(config.get("per_task")),
        "bp-max-items": _text(config.get("max_items")),
        "bp-max-tokens": _text(config.get("max_tokens")),
        "bp-concurrency": _text(settings.get("concurrency")) or "8",
        "bp-resume": True,
    })  # fmt: skip
    for role in ("target", "judge", "student"):
        filled[f"bp-limit-{role}"] = _text(roles.get(role))
    return filled


def _stored_controls(context: WebContext, run_id: str | None) -> dict[str, Any]:
    """The controls of a stored run (empty: no such run, or none asked for)."""
    if not run_id:
        return {}
    from sweepbench.bench.storage import BenchStore

    try:
        run = BenchStore(context.store).run(run_id)
    except SweepbenchError:
        run = None
    return controls_from_run(dict(run.settings)) if run is not None else {}


def _fill(node: Any, filled: dict[str, Any]) -> None:
    """Set the value (or checked) of every control of ``node``'s tree named in ``filled``."""
    if isinstance(node, list | tuple):
        for child in node:
            _fill(child, filled)
        return
    if not isinstance(node, Component):
        return
    name = getattr(node, "id", None)
    if isinstance(name, str) and name in filled:
        setattr(node, PROPERTY.get(name, "value"), filled[name])
    _fill(getattr(node, "children", None), filled)


def layout(context: WebContext, search: str) -> Any:
    """The page; a run going on here (or ``?run=ID``) is shown with its progress and Stop,
    and its stored settings fill the controls (so pressing Run continues it)."""
    host = host_for(context)
    run_id = _reopened(host, search)
    filled = _stored_controls(context, run_id)
    choice = filled.get("bp-benchmark", "sample")
    data = filled.get("bp-data")
    offer = context.benchmarks
    benchmark, _problem = _load(offer, choice, filled.get("bp-declaration"), data)
    paper = bool(filled.get("bp-scope"))
    loadable = choice == "elbench" and benchmark is not None
    models, total = _known_models(None, None)
    can_publish, note = publish_note()
    text = {"size": "sm"}
    advanced = [
        dmc.TextInput(id="bp-judge", label="Judge model", placeholder="provider/model"),
        dmc.Checkbox(
            id="bp-decision",
            label="Use a decision model as the judge (cheaper "
            "verdict-only models; not the paper's setup)",
            checked=False,
        ),
        dmc.Checkbox(
            id="bp-separate-student",
            checked=False,
            label="Use a separate model as the simulated student",
        ),
        dmc.TextInput(id="bp-student", label="Simulated student", placeholder="provider/model"),
        dmc.Group(
            [
                dmc.TextInput(id="bp-limit-target", label="Limit: model under test ($)"),
                dmc.TextInput(id="bp-limit-judge", label="Limit: judge ($)"),
                dmc.TextInput(id="bp-limit-student", label="Limit: simulated student ($)"),
            ]
        ),
        dmc.TextInput(id="bp-areas", label="Areas (comma-separated; an area selects its tasks)"),
        dmc.TextInput(id="bp-tasks", label="Tasks (comma-separated)"),
        dmc.TextInput(id="bp-skills", label="Only these skills (empty = all)"),
        dmc.Group(
            [
                dmc.TextInput(id="bp-per-task", label="Questions per task"),
                dmc.TextInput(id="bp-max-items", label="Stop after this many questions"),
                dmc.TextInput(
                    id="bp-concurrency",
                    label="Requests at once (1–100)",
                    value="8",
                    description="Higher is faster but more likely to hit rate limits.",
                ),
                dmc.TextInput(
                    id="bp-max-tokens", label="Answer length limit (tokens)", placeholder="8,192"
                ),
            ]
        ),
        dmc.Checkbox(
            id="bp-resume", checked=True, label="Continue an unfinished run with the same settings"
        ),
        dmc.Checkbox(
            id="bp-unpriced", checked=False, label="Run even though this model has no listed price"
        ),
    ]
    page = dmc.Stack(
        [
            dmc.Title("Run a benchmark", order=2),
            dmc.Group(
                [
                    dmc.Select(
                        id="bp-benchmark",
                        label="Benchmark",
                        value="sample",
                        data=[
                            {"value": v, "label": lbl, "disabled": v == "elbench" and not loadable}
                            for v, lbl in BENCHMARKS
                        ],
                        allowDeselect=False,
                    ),
                    dmc.Autocomplete(
                        id="bp-declaration",
                        label="Declaration",
                        placeholder="my-benchmark.yaml",
                        data=offer.declarations(),
                        description=offer.note(),
                        limit=50,
                    ),
                    dmc.TextInput(
                        id="bp-data",
                        label="ELBench data folder",
                        placeholder="benchmark_root",
                        description="In this server's benchmark folders. ELBench is offered "
                        "once its data loads from here.",
                    ),
                ],
                align="flex-start",
            ),
            dmc.Text(id="bp-benchmark-note", size="sm", c="red"),
            dmc.PasswordInput(
                id="bp-key", label="API key", description=KEY_NOTE, autoComplete="off"
            ),
            dmc.Text(id="bp-key-provider", size="xs", c="dimmed"),
            dmc.Autocomplete(
                id="bp-model",
                label="Model under test (type any provider/model id)",
                value=default_model(),  # the first keyed provider's, else the local one
                data=models,
                limit=50,
            ),
            dmc.Group(
                [
                    dmc.TextInput(id="bp-max-price", label="Max input price ($ per 1M tokens)"),
                    dmc.TextInput(id="bp-max-size", label="Max size (billions of parameters)"),
                ]
            ),
            dmc.Text(f"Showing {len(models)} of {total} models.", id="bp-picker-note", **text),
            dmc.RadioGroup(
                dmc.Stack(_preset_options(benchmark, paper), gap=4),
                id="bp-preset",
                value="full",
                label="What to run",
            ),
            dmc.Checkbox(id="bp-scope", label="Include the region-specific sets", checked=False),
            dmc.TextInput(
                id="bp-limit",
                label="Spending limit ($)",
                value=DEFAULT_LIMIT,
                description=LIMIT_NOTE,
            ),
            dmc.Checkbox(
                id="bp-publish", checked=False, disabled=not can_publish, label=PUBLISH_LABEL
            ),
            dmc.Text(note, id="bp-publish-note", size="xs", c="dimmed"),
            dmc.Accordion(
                dmc.AccordionItem(
                    [
                        dmc.AccordionControl("Advanced settings", id="bp-advanced"),
                        dmc.AccordionPanel(dmc.Stack(advanced, gap="xs")),
                    ],
                    value="advanced",
                )
            ),
            dmc.Group([dmc.Button("Estimate cost", id="bp-estimate-button", variant="light")]),
            html.Div(id="bp-estimate"),
            dmc.Checkbox(id="bp-confirm", label=CONFIRM_LABEL, checked=False),
            dmc.Group(
                [
                    dmc.Button("Run", id="bp-run"),
                    dmc.Button(
                        "Stop", id="bp-stop", color="red", variant="light", disabled=run_id is None
                    ),
                ]
            ),
            html.Div(id="bp-refusals"),
            html.Div(id="bp-status", **{"data-state": "idle"}),  # type: ignore[arg-type]
            dcc.Store(id="bp-run-id", data=run_id),
            dcc.Interval(id="bp-tick", interval=TICK_MS, disabled=run_id is None),
            dcc.Download(id="bp-download"),
        ],
        gap="sm",
    )
    _fill(page, filled)
    return page


def _values(args: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip(FIELDS, args, strict=True))


def register(app: Dash, context: WebContext) -> None:
    """The page's callbacks."""
    host = host_for(context)
    settings = [State(f, PROPERTY.get(f, "value")) for f in FIELDS]

    @app.callback(
        Output("bp-model", "data"),
        Output("bp-picker-note", "children"),
        Input("bp-max-price", "value"),
        Input("bp-max-size", "value"),
        prevent_initial_call=True,
    )
    def on_filters(max_price: Any, max_size: Any) -> tuple[list[str], str]:
        models, total = _known_models(max_price, max_size)
        return models, f"Showing {len(models)} of {total} models."

    @app.callback(
        Output("bp-key-provider", "children"),
        Input("bp-model", "value"),
    )
    def on_model(model: Any) -> str:
        name = _target_provider(_text(model))
        if name is None:
            return "The key is for the provider of the model under test."
        entry = provider(name)
        if entry.needs != "key":
            return f"{entry.label} models need no key."
        return f"Your {entry.key_owner} API key (for {name}/… models)."

    @app.callback(
        Output("bp-preset", "children"),
        Output("bp-benchmark", "data"),
        Output("bp-benchmark-note", "children"),
        Input("bp-benchmark", "value"),
        Input("bp-declaration", "value"),
        Input("bp-data", "value"),
        Input("bp-scope", "checked"),
        prevent_initial_call=True,
    )
    def on_benchmark(choice: Any, declaration: Any, data: Any, paper: Any) -> tuple[Any, ...]:
        loadable = _elbench_loadable(context.benchmarks, data)
        options = [
            {"value": v, "label": lbl, "disabled": v == "elbench" and not loadable}
            for v, lbl in BENCHMARKS
        ]
        if choice == "declaration" and not _text(declaration):
            return no_update, options, ""
        benchmark, problem = _load(context.benchmarks, choice, declaration, data)
        note = f"The benchmark data did not load: {problem}" if problem else ""
        return dmc.Stack(_preset_options(benchmark, bool(paper)), gap=4), options, note

    @app.callback(
        Output("bp-estimate", "children"),
        Input("bp-estimate-button", "n_clicks"),
        *settings,
        prevent_initial_call=True,
    )
    def on_estimate(_clicks: Any, *args: Any) -> Any:
        """The estimate of the settings (no key needed: nothing is called)."""
        try:
            request, benchmark = context.benchmarks.load(build_request(_values(args)))
        except (SweepbenchError, OSError) as exc:
            return _alert(scrub(str(exc)))
        prepared = prepare(request, context.store, benchmark=benchmark)
        return estimate_view(prepared)

    @app.callback(
        Output("bp-refusals", "children"),
        Output("bp-run-id", "data"),
        Output("bp-key", "value"),
        Input("bp-run", "n_clicks"),
        State("bp-key", "value"),
        State("bp-confirm", "checked"),
        State("bp-publish", "checked"),
        *settings,
        prevent_initial_call=True,
    )
    def on_run(
        _clicks: Any, key: Any, confirmed: Any, publish: Any, *args: Any
    ) -> tuple[Any, Any, str]:
        """Refusals (spec §8.1, first match wins) or the run started in the background. The
        key field is cleared either way; the key is never part of any answer."""
        message, run_id = start_from_page(
            context, host, _values(args), _text(key), confirmed, publish=bool(publish)
        )
        return message, run_id if run_id is not None else no_update, ""

    @app.callback(
        Output("bp-status", "children"),
        Output("bp-status", "data-state"),
        Output("bp-tick", "disabled"),
        Output("bp-stop", "disabled"),
        Input("bp-run-id", "data"),
        Input("bp-tick", "n_intervals"),
    )
    def on_tick(run_id: Any, _n: Any) -> tuple[Any, str, bool, bool]:
        children, state, disabled = _state_view(context, host, run_id)
        return children, state, disabled, state not in ("running", "queued")

    @app.callback(
        Output("bp-stop", "children"),
        Input("bp-stop", "n_clicks"),
        State("bp-run-id", "data"),
        prevent_initial_call=True,
    )
    def on_stop(_clicks: Any, run_id: Any) -> str:
        if run_id:
            host.stop(str(run_id))
        return "Stop"

    @app.callback(
        Output("bp-download", "data"),
        *[Input(f"bp-dl-{suffix}", "n_clicks") for suffix, _n, _l in DOWNLOADS],
        State("bp-run-id", "data"),
        prevent_initial_call=True,
    )
    def on_download(*args: Any) -> Any:
        run_id = args[-1]
        chosen = ctx.triggered_id
        if not run_id or not isinstance(chosen, str) or not any(args[:-1]):
            return no_update
        name = next(n for s, n, _l in DOWNLOADS if f"bp-dl-{s}" == chosen)
        content = export_file(context, str(run_id), name)
        if content is None:
            return no_update
        return {"content": base64.b64encode(content).decode("ascii"), "base64": True,
                "filename": f"{run_id}-{name}", "type": None}  # fmt: skip


def export_file(context: WebContext, run_id: str, name: str) -> bytes | None:
    """One file of what ``bench export`` writes for the run (None: it writes no such file)."""
    with tempfile.TemporaryDirectory(prefix="sweepbench-export-") as folder:
        paths = export_run(context.store, run_id, Path(folder))
        for path in paths:
            if path.name == name:
                return path.read_bytes()
    return None


def start_from_page(
    context: WebContext,
    host: BenchRunHost,
    values: dict[str, Any],
    key: str,
    confirmed: Any,
    *,
    publish: bool = False,
) -> tuple[Any, str | None]:
    """Check and start a run from the page's settings: (what to show, the run id started or
    None). Refusals follow spec §8.1; the access gate applies to any run that may spend money
    or is given a key. With ``publish`` (the visitor ticked the box) the run's bundle goes to
    the configured shared leaderboard when it ends; a setting that went away or broke since
    the page opened refuses the run rather than drop that choice."""
    try:  # what the web may run: the built-ins and the operator's folders (BenchmarkOffer)
        request = build_request(values, confirmed=bool(confirmed))
        request, benchmark = context.benchmarks.load(request)
    except UserError as exc:
        text = scrub(str(exc))
        if "model you want to test" in text or "simulated student" in text:
            return _alert(text), None
        return _alert(f"The benchmark data did not load: {text}"), None
    except (SweepbenchError, OSError) as exc:
        return _alert(f"The benchmark data did not load: {scrub(str(exc))}"), None
    name = _target_provider(request.models["target"])
    entry = provider(name) if name else None
    keys = {name: key} if name and key else {}
    if entry is not None and entry.needs == "key" and not key and not provider_key(entry.name):
        return _alert(f"Paste your {entry.key_owner} API key first."), None
    if key and len(key) < MIN_RUN_KEY_CHARS:
        return _alert("That key is too short: check that it was copied in full."), None
    with run_keys(keys):  # the plan sees the key as the run will (and its errors are scrubbed)
        prepared = prepare(request, context.store, benchmark=benchmark)
        decision = start_check(prepared, request)
        spends = bool(key) or prepared.plan.spends  # the library's rule, plus a visitor's key
        closed = context.gate.why_closed(None, spends=spends)
        if closed is not None:
            return _alert(closed), None
        if decision.refused:
            return _refusal(decision.reasons), None
        if decision.nothing_left:
            previous = prepared.previous.id if prepared.previous is not None else None
            return (
                _alert("Nothing left to run: every selected question is already scored.",
                       "blue"),
                previous,
            )  # fmt: skip
        if decision.needs_confirmation:
            up_to = decision.spend_up_to
            high = "an unknown amount" if up_to is None else format_money(up_to)
            return _alert(f"Tick “{CONFIRM_LABEL}” to run (up to {high}).", "yellow"), None
        publish_to, problem = configured_place() if publish else (None, None)
        if publish and publish_to is None:
            why = problem or "no shared leaderboard is configured on this server any more"
            return _alert(f"Your results cannot be added to the shared leaderboard: {why}. "
                          f"Untick “{PUBLISH_LABEL}” to run without publishing."), None  # fmt: skip
        try:
            hosted = host.start(prepared, request, keys, publish_to=publish_to)
        except UserError as exc:
            return _alert(scrub(str(exc))), None
    keys.clear()
    return [], hosted.run_id


__all__ = ["build_request", "layout", "progress_text", "register", "start_from_page"]
