"""Dash's callback protocol spoken directly, as a hostile visitor would: any callback of an app
fired with any values (``None`` included) through ``POST /_dash-update-component``, over a
Flask test client that sends a fixed Host header and keeps its session cookie.

    client = Visitor(app)                       # loopback
    client = Visitor(app, token=TOKEN)          # off loopback, signed in with the token
    reply = client.fire("bp-estimate.children", {"bp-benchmark.value": "declaration", ...})
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dash import Dash
from werkzeug.test import TestResponse

from sweepbench.web.security import SIGN_IN_PATH

HOST = "127.0.0.1:8050"
UPDATE = "/_dash-update-component"


@contextmanager
def app_on_the_store() -> Iterator[Dash]:
    """The web app over this test's store (its own SWEEPBENCH_HOME), closed after."""
    from sweepbench.store import Store
    from sweepbench.web.app import create_app

    store = Store.open()
    dash_app = create_app(store)
    try:
        yield dash_app
    finally:
        dash_app.server.config["sweepbench.context"].close()
        store.close()


def output_parts(spec: str) -> list[str]:
    """A dependency's output string as its ``id.property`` parts (``..a.b...c.d..`` when
    several; ``@hash`` suffixes of duplicate outputs dropped)."""
    parts = spec[2:-2].split("...") if spec.startswith("..") else [spec]
    return [part.split("@")[0] for part in parts]


def _split(part: str) -> tuple[Any, str]:
    ident, prop = part.rsplit(".", 1)
    return (json.loads(ident) if ident.startswith("{") else ident), prop


def _concrete(ident: Any) -> Any:
    """A pattern id with every wildcard (``["ALL"]``, ``["MATCH"]``…) given the value 0."""
    if not isinstance(ident, dict):
        return ident
    return {k: 0 if isinstance(v, list) else v for k, v in ident.items()}


def _is_pattern(ident: Any) -> bool:
    return isinstance(ident, dict) and any(isinstance(v, list) for v in ident.values())


def _slot(item: dict[str, Any], values: dict[str, Any]) -> Any:
    """One input or state slot: the value given for ``id.property`` (None when none is); a
    wildcard slot holds one matching component with that value (``ALL``: a list of one)."""
    raw, prop = item["id"], item["property"]
    ident = json.loads(raw) if raw.startswith("{") else raw
    value = values.get(f"{raw}.{prop}")
    if not _is_pattern(ident):
        return {"id": ident, "property": prop, "value": value}
    slot = {"id": _concrete(ident), "property": prop, "value": value}
    wildcards = [v for v in ident.values() if isinstance(v, list)]
    return slot if wildcards == [["MATCH"]] else [slot]


@dataclass
class Fired:
    """What one callback answered: its HTTP status and, for 200, its response."""

    status: int
    response: dict[str, Any]
    text: str


class Visitor:
    """A browser-less visitor of one app: its callbacks by output, fired with chosen values."""

    def __init__(self, app: Dash, *, token: str | None = None, host: str = HOST) -> None:
        self.app = app
        self.host = host
        self.flask = app.server.test_client()
        if token is not None:
            self.sign_in(token)
        answer = self.get("/_dash-dependencies")
        assert answer.status_code == 200, answer.data[:200]
        self.dependencies: list[dict[str, Any]] = answer.get_json()

    def get(self, path: str) -> TestResponse:
        response: TestResponse = self.flask.get(path, headers={"Host": self.host})
        return response

    def post(self, path: str, **kwargs: Any) -> TestResponse:
        headers = {"Host": self.host, "Origin": f"http://{self.host}"}
        response: TestResponse = self.flask.post(path, headers=headers, **kwargs)
        return response

    def sign_in(self, token: str) -> None:
        """Sign in with the access token (the session cookie is kept)."""
        answer = self.post(SIGN_IN_PATH, data={"token": token, "next": "/"})
        assert answer.status_code in (302, 303), answer.data[:200]

    def dependency(self, output: str) -> dict[str, Any]:
        """The callback one of whose outputs is ``output`` (``id.property``)."""
        for dep in self.dependencies:
            if output in output_parts(dep["output"]):
                return dep
        raise LookupError(f"no callback outputs {output}")

    def body(self, dep: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
        """The request body of ``dep`` with ``values`` (``id.property`` → value; None for
        every input and state not given), its first input the one that changed."""
        outputs: list[Any] = []
        for part in output_parts(dep["output"]):
            ident, prop = _split(part)
            out = {"id": _concrete(ident), "property": prop}
            outputs.append([out] if _is_pattern(ident) and "ALL" in part else out)
        inputs = [_slot(i, values) for i in dep["inputs"]]
        changed = [f"{i['id']}.{i['property']}" for i in dep["inputs"][:1]]
        return {
            "output": dep["output"],
            "outputs": outputs if len(outputs) > 1 else outputs[0],
            "inputs": inputs,
            "state": [_slot(s, values) for s in dep["state"]],
            "changedPropIds": changed,
        }

    def fire_dependency(self, dep: dict[str, Any], values: dict[str, Any]) -> Fired:
        """Fire one callback with ``values``."""
        answer = self.post(UPDATE, json=self.body(dep, values))
        text = answer.get_data(as_text=True)
        reply = answer.get_json(silent=True) if answer.status_code == 200 else None
        return Fired(answer.status_code, (reply or {}).get("response", {}), text)

    def fire(self, output: str, values: dict[str, Any]) -> Fired:
        """Fire the callback that outputs ``output`` with ``values``."""
        return self.fire_dependency(self.dependency(output), values)


def texts(tree: Any) -> list[str]:
    """Every string in a reply's component tree (children, labels, messages)."""
    found: list[str] = []
    if isinstance(tree, str):
        found.append(tree)
    elif isinstance(tree, list):
        for child in tree:
            found.extend(texts(child))
    elif isinstance(tree, dict):
        for value in tree.values():
            found.extend(texts(value))
    return found
