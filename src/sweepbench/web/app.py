"""The local web app: a Dash shell with the Sweep, History, Leaderboard, Run a benchmark,
Benchmark sweep and About pages.

``create_app`` builds one app around one store and one background sweep runner; nothing is
global, so tests can run several apps side by side. Every script, stylesheet and font the pages
load is served by this app (Dash and Mantine serve locally; our viewer bundles ship in the
package), so the app works with no internet at all.

Every request passes :mod:`sweepbench.web.security` first: only this app's Host names, no
cross-site state changes, and — off loopback — a signed-in session. A visitor runs only what
the operator made available (:class:`~sweepbench.web.offer.BenchmarkOffer`: the built-in
benchmarks and YAML declarations in the configured benchmark folders). A callback sent values
no page would send (a hostile visitor's nulls, lists for texts) answers with no update and a
log line, never a 500 (:func:`_callback_failed`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import dash_mantine_components as dmc
import flask
from dash import Dash, Input, Output, callback_context, dcc, html

from sweepbench.engine.supervisor import Supervisor
from sweepbench.errors import SweepbenchError
from sweepbench.settings import benchmark_folders as configured_benchmark_folders
from sweepbench.settings import scrub
from sweepbench.store import Store
from sweepbench.sweeps.live import SweepRunner
from sweepbench.web import (
    about_page,
    bench_page,
    bench_sweep_page,
    history_page,
    leaderboard_page,
    sweep_page,
)
from sweepbench.web.components import register_assets
from sweepbench.web.context import WebContext
from sweepbench.web.gate import Gate
from sweepbench.web.offer import BenchmarkOffer
from sweepbench.web.security import SIGN_OUT_PATH, HostRule, Site, hosts_from_environment

PAGES = [
    ("/", "Sweep", "One prompt, several settings, side by side"),
    ("/history", "History", "Sweeps run here"),
    ("/leaderboard", "Leaderboard", "Scores against price, published and yours"),
    ("/benchmarks", "Run a benchmark", "A question set, estimated, run and scored"),
    ("/bench-sweep", "Benchmark sweep", "A question set under several settings"),
    ("/about", "About", "What the scores mean, what is never stored"),
]
BENCH_PAGES = {
    "/leaderboard": leaderboard_page,
    "/benchmarks": bench_page,
    "/bench-sweep": bench_sweep_page,
    "/about": about_page,
}
"""Pages built from a :class:`WebContext`: ``layout(context, search)`` and ``register``."""
BREAKPOINT = "sm"
"""Below this width (Mantine's sm, 48em) the navbar is hidden behind the header's burger."""

log = logging.getLogger(__name__)


def refuse_python_declarations(server: flask.Flask) -> None:
    """Every request the server answers runs inside
    :func:`~sweepbench.bench.sources.declared.python_declarations_refused`: no page, callback
    or download runs a Python declaration (a run made from one on the command line is shown
    from what the store holds)."""
    from sweepbench.bench.sources.declared import python_declarations_refused

    def enter() -> None:
        refused = python_declarations_refused()
        refused.__enter__()
        flask.g.sweepbench_python_refused = refused

    def leave(_error: BaseException | None) -> None:
        refused = flask.g.pop("sweepbench_python_refused", None)
        if refused is not None:
            refused.__exit__(None, None, None)

    server.before_request(enter)
    server.teardown_request(leave)


def create_app(
    store: Store,
    *,
    host: str = "127.0.0.1",
    gate: Gate | None = None,
    allowed_hosts: Iterable[str] = (),
    trust_forwarded_proto: bool = False,
    benchmark_folders: Iterable[Path] | None = None,
) -> Dash:
    """The app for ``store``; ``host`` is where it will listen (it decides the access gate).

    ``allowed_hosts``: more Host names to answer to, besides loopback, the bound address and
    ``SWEEPBENCH_ALLOWED_HOSTS``; ``trust_forwarded_proto``: a TLS proxy in front says which
    requests came over HTTPS (``X-Forwarded-Proto``), so the session cookie is Secure.
    ``benchmark_folders``: where the YAML declarations (and ELBench data) visitors may run
    live (None: ``folders`` under ``[benchmarks]`` in the config file); UserError naming one
    that is not a folder."""
    folders = configured_benchmark_folders() if benchmark_folders is None else benchmark_folders
    offer = BenchmarkOffer.for_folders(folders)
    gate = gate or Gate.for_host(host)
    supervisor = Supervisor("sweepbench-web")  # one loop hosts the page's sweeps and runs
    runner = SweepRunner(store, supervisor)
    context = sweep_page.PageContext(runner, gate)
    web = WebContext(store, gate, runner, supervisor, offer)
    site = Site(
        gate,
        HostRule.for_server([host, gate.host], [*allowed_hosts, *hosts_from_environment()]),
        trust_forwarded_proto=trust_forwarded_proto,
    )
    app = Dash(
        __name__,
        title="sweepbench",
        suppress_callback_exceptions=True,
        serve_locally=True,
        update_title="",
        on_error=_callback_failed,
    )

    def shell() -> Any:
        return _shell(signed_in=gate.guarded)

    app.layout = shell
    server: flask.Flask = app.server
    refuse_python_declarations(server)
    site.install(server)
    server.config["sweepbench.runner"] = runner
    server.config["sweepbench.context"] = web
    register_assets(server)
    _register_files(server, runner)

    @app.callback(Output("page", "children"), Input("url", "pathname"), Input("url", "search"))
    def route(pathname: str | None, search: str | None) -> Any:
        """The page for the path (viewed now: model lists and history are read fresh)."""
        path = pathname or "/"
        if path == "/history":
            return history_page.layout(store)
        if path in BENCH_PAGES:
            return BENCH_PAGES[path].layout(web, search or "")
        if path in ("/", "/sweep"):
            return sweep_page.layout(context, search or "")
        return dmc.Alert(f"No page at {path}.", color="yellow")

    _register_navbar(app)
    sweep_page.register(app, context)
    history_page.register(app, store)
    for module in BENCH_PAGES.values():
        module.register(app, web)
    return app


def _callback_failed(error: Exception) -> None:
    """What a callback that raised answers: no update (never a 500), and a log line naming
    the callback and the error. The pages read what their own controls send; this answers a
    request no page would make (a hostile visitor's nulls, a list for a text)."""
    outputs = callback_context.outputs_list
    first = outputs[0] if isinstance(outputs, list) and outputs else outputs
    name = first.get("id", "?") if isinstance(first, dict) else "?"
    log.warning(
        "callback for %s could not use the values it was sent (%s: %s); answered no update",
        scrub(str(name)), type(error).__name__, scrub(str(error)),
    )  # fmt: skip


def _register_navbar(app: Dash) -> None:
    """On narrow screens the burger opens and closes the navbar; following a link closes it."""

    @app.callback(Output("shell", "navbar"), Input("burger", "opened"))
    def toggle(opened: bool | None) -> dict[str, Any]:
        return _navbar(opened=bool(opened))

    @app.callback(Output("burger", "opened"), Input("url", "pathname"), prevent_initial_call=True)
    def close_on_navigation(_path: str | None) -> bool:
        return False


def _navbar(*, opened: bool = False) -> dict[str, Any]:
    """The AppShell's navbar settings: always shown from :data:`BREAKPOINT` up, below it only
    while the burger is open."""
    return {"width": 220, "breakpoint": BREAKPOINT, "collapsed": {"mobile": not opened}}


def _shell(*, signed_in: bool = False) -> Any:
    header: list[Any] = [
        dmc.Burger(
            id="burger",
            opened=False,
            hiddenFrom=BREAKPOINT,
            size="sm",
            **{"aria-label": "Toggle navigation"},
        ),
        dmc.Text("sweepbench", fw=700, size="lg"),
        dmc.Text(
            "what do you give up by turning the knob down?",
            size="sm",
            c="dimmed",
            visibleFrom=BREAKPOINT,
        ),
    ]
    if signed_in:  # guarded: every page is behind the sign-in
        header.append(
            html.Form(
                html.Button("Sign out", type="submit", id="sign-out"),
                action=SIGN_OUT_PATH,
                method="post",
                style={"marginLeft": "auto"},
            )
        )
    return dmc.MantineProvider(
        dmc.AppShell(
            [
                dmc.AppShellHeader(dmc.Group(header, h="100%", px="md")),
                dmc.AppShellNavbar(
                    id="navbar",
                    children=[
                        dmc.NavLink(label=label, description=hint, href=path, id=f"nav-{path}")
                        for path, label, hint in PAGES
                    ],
                    p="xs",
                ),
                dmc.AppShellMain(html.Div(id="page")),
                dcc.Location(id="url", refresh="callback-nav"),
            ],
            id="shell",
            header={"height": 52},
            navbar=_navbar(),
            padding="md",
        )
    )


def _register_files(server: flask.Flask, runner: SweepRunner) -> None:
    """Serve each sample's .glb (live or stored) to the 3D viewer."""

    @server.route("/_sweepbench/sweeps/<sweep_id>/<int:position>.glb")
    def glb(sweep_id: str, position: int) -> flask.Response:
        try:
            data = runner.file(sweep_id, position, "glb")
        except SweepbenchError:
            data = None
        if data is None:
            return flask.Response("no such sculpture", status=404, mimetype="text/plain")
        return flask.Response(data, mimetype="model/gltf-binary")
