"""A fourth artifact kind, registered through the documented hook (``artifacts.register``),
is offered by the Sweep page and runs there (issue 28 §3): the page asks the kind for what it
shows (its ``PageFacts``) instead of knowing kinds by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sweepbench.artifacts import ArtifactKind, PageFacts, register
from sweepbench.artifacts import registry as kinds
from sweepbench.web.defaults import kind_defaults, kinds_offered
from tests.web.browser import RecordedPage, pick_models
from tests.web.conftest import Served
from tests.web.test_sweep_page import _assert_clean, _finished, _open, _run

POEM = ArtifactKind(
    name="poem",
    label="Poem",
    prompts={"v1": "Answer in four lines of verse."},
    page=PageFacts(working="rhyming…", verb="Rhyming", kept="What was rhymed is kept"),
)


@pytest.fixture
def poem(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArtifactKind]:
    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))  # the registration ends with the test
    yield register(POEM)


def test_a_registered_kind_has_page_defaults_without_naming_it(poem: ArtifactKind) -> None:
    assert kinds_offered()["poem"] == "Poem"
    defaults = kind_defaults("poem", [], keyless=True)
    assert defaults.held_budget == PageFacts().keyless_budget and defaults.axis == "model"


def test_a_registered_kind_is_offered_and_runs_on_the_sweep_page(
    poem: ArtifactKind, served: Served, page: RecordedPage
) -> None:
    _open(page, served.url)
    page.click("text=Poem")
    pick_models(page, ["scripted/lorem?tps=300", "scripted/echo?tps=100"])
    _run(page, "the sea at night")
    assert _finished(page).startswith("2/2 variants")
    text = page.inner_text("#cell-grid")
    assert "Lorem ipsum" in text and "the sea at night" in text  # shown as text
    _assert_clean(page)
