"""The web server runs no Python declaration, whatever the request (issue 26 §3): every
request is answered inside ``python_declarations_refused``, so opening a run that was made from
a ``.py`` declaration on the command line cannot make the server run that module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dash import Dash

from sweepbench.bench.catalog import load_benchmark
from sweepbench.errors import SweepbenchError
from tests.web.dash_protocol import app_on_the_store

DECLARATION = """
from pathlib import Path
Path({marker!r}).write_text("ran")
BENCHMARK = {{"id": "py-bench"}}
"""
"""A module that says it ran (its declaration is incomplete: running it is what is tested)."""


@pytest.fixture
def app() -> Iterator[Dash]:
    with app_on_the_store() as dash_app:
        yield dash_app


def test_a_request_never_runs_a_python_declaration(app: Dash, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    module = tmp_path / "bench.py"
    module.write_text(DECLARATION.format(marker=str(marker)), "utf-8")
    said: list[str] = []

    def reload_it() -> str:  # what a page, callback or download that reloads a run would do
        try:
            load_benchmark(str(module))
        except SweepbenchError as exc:
            said.append(str(exc))
            return "refused"
        return "ran"

    app.server.add_url_rule("/_test/reload", "test_reload", reload_it)
    answer = app.server.test_client().get("/_test/reload", headers={"Host": "127.0.0.1"})
    assert answer.status_code == 200 and answer.get_data(as_text=True) == "refused"
    assert not marker.exists()
    assert said and "a Python declaration is not run here" in said[0]
    # outside a request (the command line) the operator's own module runs as before
    with pytest.raises(SweepbenchError, match="problem"):
        load_benchmark(str(module))
    assert marker.exists()
