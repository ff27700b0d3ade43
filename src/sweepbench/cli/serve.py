"""``sweepbench serve``: the local web app."""

from __future__ import annotations

import signal
import socket
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from sweepbench.cli.validate import bind_error, check_port
from sweepbench.store import Store
from sweepbench.web.gate import TOKEN_VARIABLE, Gate

err = Console(stderr=True)


def serve_command(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (loopback by default).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8050,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="Another Host name the app answers to (repeatable), e.g. the name a "
            "reverse proxy or your LAN uses; also SWEEPBENCH_ALLOWED_HOSTS (comma-separated).",
        ),
    ] = None,
    trust_forwarded_proto: Annotated[
        bool,
        typer.Option(
            "--trust-forwarded-proto",
            help="Behind a TLS-terminating reverse proxy: trust its X-Forwarded-Proto, so "
            "the sign-in cookie is marked Secure.",
        ),
    ] = False,
    benchmarks_folder: Annotated[
        list[Path] | None,
        typer.Option(
            "--benchmarks-folder",
            help="A folder whose YAML benchmark declarations (and ELBench data) visitors "
            "may run (repeatable); also folders = [...] under [benchmarks] in the config "
            "file. Without one the pages run only the built-in benchmarks.",
        ),
    ] = None,
) -> None:
    """Open the web app (sweeps, benchmarks, the leaderboard). Bound to another address
    than loopback, runs that spend money need the token in SWEEPBENCH_TOKEN.

    In fact the whole app does then: visitors sign in with the token, and with none set
    the app stays closed. It answers only to its own Host names (loopback, the bound
    address, --allowed-host, SWEEPBENCH_ALLOWED_HOSTS). Visitors run only the built-in
    benchmarks and the YAML declarations in the benchmark folders (--benchmarks-folder,
    [benchmarks] folders); never a Python declaration, never a path outside them."""
    from werkzeug.serving import make_server

    from sweepbench.settings import benchmark_folders
    from sweepbench.web.app import create_app
    from sweepbench.web.offer import BenchmarkOffer
    from sweepbench.web.security import ALLOWED_HOSTS_VARIABLE

    port = check_port(port)  # before anything opens: -1, 0 and 99999 are one sentence
    folders = [*benchmark_folders(), *(benchmarks_folder or ())]
    offer = BenchmarkOffer.for_folders(folders)  # a folder that is not one: said now
    gate = Gate.for_host(host)
    store = Store.open()
    dash_app = create_app(
        store,
        host=host,
        gate=gate,
        allowed_hosts=allowed_host or (),
        trust_forwarded_proto=trust_forwarded_proto,
        benchmark_folders=offer.folders,
    )
    try:  # bound here: werkzeug's own bind prints the error and exits with status 1
        listening = _listen(host, port)
    except OSError as exc:  # the port is taken, the host is not ours or does not resolve
        dash_app.server.config["sweepbench.context"].close()
        store.close()
        raise bind_error(exc, host, port) from None
    with listening:
        server = make_server(host, port, dash_app.server, threaded=True, fd=listening.fileno())
    shown = f"[{host}]" if ":" in host else host
    err.print(f"sweepbench is serving on [bold]http://{shown}:{server.port}/[/bold]")
    if gate.guarded:
        if gate.token is None:
            err.print(
                f"[yellow]not loopback and no {TOKEN_VARIABLE} set: the app is closed "
                f"(every page says so); set {TOKEN_VARIABLE} and restart[/yellow]"
            )
        else:
            err.print(f"visitors sign in with the token in {TOKEN_VARIABLE}")
        if not trust_forwarded_proto:
            err.print(
                "[yellow]plain HTTP: the token and every prompt and output cross the "
                "network unencrypted; put a TLS reverse proxy in front (README)[/yellow]"
            )
    err.print(
        "answers to Host names: loopback, the bound address"
        + (f", {', '.join(allowed_host)}" if allowed_host else "")
        + f" (more with --allowed-host or {ALLOWED_HOSTS_VARIABLE})"
    )
    err.print(
        "benchmarks visitors may run: the built-in ones"
        + "".join(f", the YAML declarations in {folder}" for folder in offer.folders)
        + ("" if offer.folders else " (add a folder with --benchmarks-folder DIR)")
    )
    err.print("Ctrl-C stops the server (and every sweep and benchmark run it hosts).")

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (systemctl stop, docker stop) acts as Stop all

    signal.signal(signal.SIGTERM, terminate)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        # every sweep, benchmark run and benchmark sweep it hosts stops, answers kept
        dash_app.server.config["sweepbench.context"].close(timeout=10.0)
        store.close()


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the app."""
    app.command("serve")(serve_command)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (the first address the host resolves to)."""
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    return socket.create_server(address, family=family)
