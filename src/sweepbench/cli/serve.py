"""``sweepbench serve``: the local web app."""

from __future__ import annotations

import signal
from typing import Annotated

import typer
from rich.console import Console

from sweepbench.store import Store
from sweepbench.web.gate import TOKEN_VARIABLE, Gate

err = Console(stderr=True)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the app."""

    @app.command()
    def serve(
        host: Annotated[
            str, typer.Option("--host", help="Address to listen on (loopback by default).")
        ] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8050,
    ) -> None:
        """Open the web app (Sweep page, History). Bound to another address than loopback,
        runs that spend money need the token in SWEEPBENCH_TOKEN."""
        from werkzeug.serving import make_server

        from sweepbench.web.app import create_app

        gate = Gate.for_host(host)
        store = Store.open()
        dash_app = create_app(store, host=host, gate=gate)
        server = make_server(host, port, dash_app.server, threaded=True)
        shown = f"[{host}]" if ":" in host else host
        err.print(f"sweepbench is serving on [bold]http://{shown}:{server.port}/[/bold]")
        if gate.guarded:
            if gate.token is None:
                err.print(
                    f"[yellow]not loopback and no {TOKEN_VARIABLE} set: runs that spend money "
                    "are refused[/yellow]"
                )
            else:
                err.print(f"runs that spend money need the token in {TOKEN_VARIABLE}")
        err.print("Ctrl-C stops the server (and every sweep it is running).")

        def terminate(signum: int, frame: object) -> None:
            raise KeyboardInterrupt  # SIGTERM (systemctl stop, docker stop) acts as Stop all

        signal.signal(signal.SIGTERM, terminate)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            dash_app.server.config["sweepbench.runner"].close()
            store.close()
