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
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import dash_mantine_components as dmc
from dash import Dash, Input, Output, State, ctx, dcc, html, no_update
from dash.development.base_component import Component

from sweepbench.bench.catalog import PRESETS
from sweepbench.bench.items import Benchmark, Scope
from sweepbench.bench.report import export_run
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.results import format_money
from sweepbench.bench.sources.registry import sources as benchmark_sources
from sweepbench.bench.start import prepare, start_check
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.models.providers import provider
from sweepbench.models.registry import split_id
from sweepbench.settings import MIN_RUN_KEY_CHARS, provider_key, run_keys, scrub
from sweepbench.sweeps.plan import default_model
from sweepbench.web.bench_form import (
    FIELDS,
    PROPERTY,
    benchmark_name,
    build_request,
    stored_controls,
)
from sweepbench.web.bench_key import key_check
from sweepbench.web.bench_picker import (
    FILTER_OPTIONS,
    RENDER_OPTION,
    filter_controls,
    picker_models,
    picker_note,
    shown_models,
)
from sweepbench.web.bench_roles import register as register_roles
from sweepbench.web.bench_roles import role_controls
from sweepbench.web.bench_run_host import BenchRunHost, host_for
from sweepbench.web.bench_views import (
    DOWNLOADS,
    KEY_NOTE,
    PUBLISH_LABEL,
    alert,
    budget_note,
    configured_place,
    estimate_view,
    publish_note,
    refusal,
    sampling_controls,
    state_view,
)
from sweepbench.web.context import WebContext
from sweepbench.web.offer import BenchmarkOffer, needs_data
from sweepbench.web.request_form import text

DEFAULT_LIMIT = "5"
TICK_MS = 1000
LIMIT_NOTE = "The run pauses here and keeps its progress. Leave empty for no limit."
CONFIRM_LABEL = "Charge my key for this run, up to my spending limit"
BENCHMARKS = [
    *((s.name, s.label) for s in benchmark_sources()),  # the source registry's, in its order
    ("declaration", "A declaration in this server's benchmark folders (.yaml)"),
]


def _target_provider(model: str) -> str | None:
    try:
        return split_id(model)[0]
    except UserError:
        return None


# -- the page ----------------------------------------------------------------------------------


def _known_models(
    max_price: Any, max_size: Any, undisclosed: Any = True
) -> tuple[list[dict[str, str]], int]:
    """The picker's options within the filters (:mod:`.bench_picker`: the blended price, the
    size, the models that don't publish theirs; a slider at its right-hand end is no limit),
    and how many models there are in all."""
    models = picker_models()
    shown = shown_models(models, max_price, max_size, undisclosed)
    return [m.option() for m in shown], len(models)


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
        folder = text(data)
        path = Path(folder) if folder and needs_data(str(choice)) else None
        request = BenchRequest(benchmark=name, data=path, models={"target": "x/y"})
        return offer.load(request)[1], None
    except (SweepbenchError, OSError, ValueError) as exc:
        return None, scrub(str(exc))


def _options(
    offer: BenchmarkOffer, data: Any, loaded: tuple[str, bool] | None = None
) -> list[dict[str, Any]]:
    """The benchmark choice's options: one whose data the user gives is offered once the data
    folder typed loads (``loaded``: the choice already loaded, and whether it did)."""

    def disabled(choice: str) -> bool:
        if not needs_data(choice):
            return False
        if loaded is not None:
            return not (loaded[0] == choice and loaded[1])
        return not _loadable(offer, choice, data)

    return [{"value": v, "label": lbl, "disabled": disabled(v)} for v, lbl in BENCHMARKS]


def _loadable(offer: BenchmarkOffer, choice: str, data: Any) -> bool:
    return bool(text(data)) and _load(offer, choice, None, data)[0] is not None


def _reopened(host: BenchRunHost, search: str) -> str | None:
    asked = parse_qs(search.lstrip("?")).get("run", [None])[0]
    if asked:
        return asked
    live = host.live()
    return live[-1] if live else None


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
    filled = stored_controls(context, run_id)
    choice = filled.get("bp-benchmark", "sample")
    data = filled.get("bp-data")
    offer = context.benchmarks
    benchmark, _problem = _load(offer, choice, filled.get("bp-declaration"), data)
    paper = bool(filled.get("bp-scope"))
    models, total = _known_models(None, None)
    can_publish, note = publish_note()
    text = {"size": "sm"}
    advanced = [
        *role_controls(benchmark, filled),  # the judge and student: the benchmark's own
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
        dmc.Text(id="bp-max-tokens-note", size="xs", c="orange"),
        sampling_controls(),
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
                        data=_options(offer, data, (choice, benchmark is not None)),
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
                renderOption=RENDER_OPTION,  # "<name> · $in in / $out out … · <size>"
                filter=FILTER_OPTIONS,
                maxDropdownHeight=320,
            ),
            filter_controls(),
            dmc.Text(picker_note(len(models), total), id="bp-picker-note", **text),
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
    register_roles(app, lambda *chosen: _load(context.benchmarks, *chosen)[0])

    @app.callback(
        Output("bp-model", "data"),
        Output("bp-picker-note", "children"),
        Input("bp-max-price", "value"),
        Input("bp-max-size", "value"),
        Input("bp-undisclosed", "checked"),
        prevent_initial_call=True,
    )
    def on_filters(
        max_price: Any, max_size: Any, undisclosed: Any
    ) -> tuple[list[dict[str, str]], str]:
        models, total = _known_models(max_price, max_size, undisclosed)
        return models, picker_note(len(models), total)

    @app.callback(
        Output("bp-max-tokens-note", "children"),
        Output("bp-max-tokens-note", "c"),
        Input("bp-max-tokens", "value"),
    )
    def on_max_tokens(value: Any) -> tuple[str, str]:
        """How the typed answer length limit reads, warned under 1,000 tokens."""
        return budget_note(value)

    @app.callback(
        Output("bp-key-provider", "children"),
        Input("bp-model", "value"),
    )
    def on_model(model: Any) -> str:
        name = _target_provider(text(model))
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
        options = _options(context.benchmarks, data)
        if choice == "declaration" and not text(declaration):
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
            return alert(scrub(str(exc)))
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
            context, host, _values(args), text(key), confirmed, publish=bool(publish)
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
        children, state, disabled = state_view(context, host, run_id)
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
            return alert(text), None
        return alert(f"The benchmark data did not load: {text}"), None
    except (SweepbenchError, OSError) as exc:
        return alert(f"The benchmark data did not load: {scrub(str(exc))}"), None
    name = _target_provider(request.models["target"])
    entry = provider(name) if name else None
    keys = {name: key} if name and key else {}
    if entry is not None and entry.needs == "key" and not key and not provider_key(entry.name):
        return alert(f"Paste your {entry.key_owner} API key first."), None
    if key and len(key) < MIN_RUN_KEY_CHARS:
        return alert("That key is too short: check that it was copied in full."), None
    with run_keys(keys):  # the plan sees the key as the run will (and its errors are scrubbed)
        prepared = prepare(request, context.store, benchmark=benchmark)
        decision = start_check(prepared, request)
        spends = bool(key) or prepared.plan.spends  # the library's rule, plus a visitor's key
        closed = context.gate.why_closed(None, spends=spends)
        if closed is not None:
            return alert(closed), None
        if decision.refused:
            return refusal(decision.reasons), None
        if decision.nothing_left:
            previous = prepared.previous.id if prepared.previous is not None else None
            return (
                alert("Nothing left to run: every selected question is already scored.",
                       "blue"),
                previous,
            )  # fmt: skip
        said, key_refused = key_check(prepared)  # OpenRouter's free key check, as bench run's
        if key_refused:
            return [*said, refusal(key_refused)], None
        if decision.needs_confirmation:
            up_to = decision.spend_up_to
            high = "an unknown amount" if up_to is None else format_money(up_to)
            return [*said, alert(f"Tick “{CONFIRM_LABEL}” to run (up to {high}).", "yellow")], None
        publish_to, problem = configured_place() if publish else (None, None)
        if publish and publish_to is None:
            why = problem or "no shared leaderboard is configured on this server any more"
            return alert(f"Your results cannot be added to the shared leaderboard: {why}. "
                          f"Untick “{PUBLISH_LABEL}” to run without publishing."), None  # fmt: skip
        try:
            hosted = host.start(prepared, request, keys, publish_to=publish_to)
        except UserError as exc:
            return alert(scrub(str(exc))), None
    keys.clear()
    return said, hosted.run_id


__all__ = ["layout", "register", "start_from_page"]
