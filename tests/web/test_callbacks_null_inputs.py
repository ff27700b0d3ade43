"""No callback answers 500, whatever a visitor sends (issue 26 §5): every Dash callback of the
app is fired through ``POST /_dash-update-component`` as a hostile visitor can — every input
and state null, then each one alone null, empty or an empty list while the others hold what
the page shows, then values of the wrong type — and must answer 200 or 204.

A callback that answers on its own (a message or no update) is what the pages promise; the
app's safety net (``web/app.py``: a callback that raises answers no update and logs why) is
checked to be reached only by the leaderboard's callbacks (``lb-…``: another file's, noted in
the report of issue 26) and by a callback made to raise."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from dash import Dash, Input, Output

from sweepbench.store import Store
from sweepbench.web.app import PAGES, create_app
from tests.web.dash_protocol import Visitor, app_on_the_store, output_parts

SAFETY_NET = "could not use the values it was sent"
NOT_OURS: tuple[str, ...] = ()
"""Outputs whose callbacks may still reach the safety net on empty values (none now)."""
WRONG_TYPES: tuple[Any, ...] = (True, -1, {"a": 1}, [None], "x")


@pytest.fixture
def app() -> Iterator[Dash]:
    with app_on_the_store() as dash_app:
        yield dash_app


def _components(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, list):
        for child in tree:
            yield from _components(child)
    elif isinstance(tree, dict) and "props" in tree:
        yield tree
        for value in tree["props"].values():
            if isinstance(value, dict | list):
                yield from _components(value)


def page_values(visitor: Visitor) -> dict[str, Any]:
    """``id.property`` → value of every component of every page, as the pages show them."""
    values: dict[str, Any] = {}
    for path, _label, _hint in PAGES:
        page = visitor.fire("page.children", {"url.pathname": path, "url.search": ""})
        assert page.status == 200, page.text[:300]
        for component in _components(page.response["page"]["children"]):
            ident = component["props"].get("id")
            if isinstance(ident, str):
                for prop, value in component["props"].items():
                    values[f"{ident}.{prop}"] = value
    return values


def _slots(dep: dict[str, Any]) -> list[str]:
    return [f"{s['id']}.{s['property']}" for s in dep["inputs"] + dep["state"]]


def _ours(dep: dict[str, Any]) -> bool:
    return not all(part.startswith(NOT_OURS) for part in output_parts(dep["output"]))


def _fire(
    visitor: Visitor, dep: dict[str, Any], values: dict[str, Any], caplog: Any
) -> tuple[int, bool]:
    """The status of one callback and whether the safety net answered it."""
    caplog.clear()
    fired = visitor.fire_dependency(dep, values)
    return fired.status, SAFETY_NET in caplog.text


def test_every_callback_answers_all_nulls(app: Dash, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sweepbench.web.app")
    visitor = Visitor(app)
    assert len(visitor.dependencies) > 30
    answered: list[str] = []
    for dep in visitor.dependencies:
        status, caught = _fire(visitor, dep, {}, caplog)
        assert status in (200, 204), (dep["output"], status)
        if caught and _ours(dep):
            answered.append(dep["output"])
    assert answered == []  # every one of ours answered on its own


def test_each_input_alone_null_or_empty(app: Dash, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sweepbench.web.app")
    visitor = Visitor(app)
    shown = page_values(visitor)
    netted: list[tuple[str, str, Any]] = []
    for dep in visitor.dependencies:
        base = {slot: shown.get(slot) for slot in _slots(dep)}
        for slot in _slots(dep):
            for empty in (None, "", []):
                status, caught = _fire(visitor, dep, {**base, slot: empty}, caplog)
                assert status in (200, 204), (dep["output"], slot, empty, status)
                if caught and _ours(dep):
                    netted.append((dep["output"][:60], slot, empty))
    assert netted == []


def test_values_of_the_wrong_type_never_answer_500(app: Dash) -> None:
    visitor = Visitor(app)
    for dep in visitor.dependencies:
        for wrong in WRONG_TYPES:
            fired = visitor.fire_dependency(dep, dict.fromkeys(_slots(dep), wrong))
            assert fired.status in (200, 204), (dep["output"], wrong, fired.text[-300:])


def test_a_callback_that_raises_answers_no_update_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store.open()
    app = create_app(store)

    @app.callback(Output("test-out", "children"), Input("test-in", "value"))
    def broken(value: Any) -> str:
        raise RuntimeError(f"cannot use {value!r}")

    try:
        visitor = Visitor(app)
        fired = visitor.fire("test-out.children", {"test-in.value": "x"})
        assert fired.status == 200 and fired.response == {}  # no output updated
        assert "callback for test-out could not use the values it was sent" in caplog.text
        assert "RuntimeError: cannot use 'x'" in caplog.text
    finally:
        app.server.config["sweepbench.context"].close()
        store.close()
