"""The About page (/about): the sections of spec §17.10 and the §20 decisions a user should
know, built from the library's constants; it loads nothing from outside 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sweepbench.bench.scoring.option_set import PARTIAL_CREDIT
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, SCORING_VERSIONS
from sweepbench.bench.sources.elbench_registry import load_registry
from sweepbench.leaderboard.published import TEACHING_PROVENANCE, load_published
from sweepbench.stats.paired import RESAMPLES
from sweepbench.store import Store
from tests.bench.helpers import elbench_root
from tests.web.browser import RecordedPage, serve
from tests.web.conftest import Served

SECTIONS = ("measures", "region", "scores", "versions", "sweeps", "runs", "keys", "links")


def test_about_renders_its_sections(served: Served, page: RecordedPage) -> None:
    page.goto(f"{served.url}/about")
    page.wait_for_selector("#ab-links")
    for key in SECTIONS:
        assert page.locator(f"#ab-{key}").is_visible(), key
    registry = load_registry()
    areas = page.inner_text("#ab-areas-table")
    for area in registry.areas:  # the areas come from the shipped catalogue
        assert area.label in areas
    region = page.inner_text("#ab-region")
    assert "off by default" in region
    for task in registry.tasks:
        if task.region_specific:
            assert task.name in region
    versions = page.inner_text("#ab-versions")
    for version in SCORING_VERSIONS:
        assert version in versions
    assert f"{DEFAULT_SCORING_VERSION} (the default)" in versions
    scores = page.inner_text("#ab-scores")
    assert f"partial credit: {PARTIAL_CREDIT}" in scores
    assert "Judged tasks" in scores and "Rule-scored tasks" in scores
    assert f"{RESAMPLES:,} resamples" in page.inner_text("#ab-sweeps")
    assert "McNemar" in page.inner_text("#ab-sweeps")
    runs = page.inner_text("#ab-runs")
    assert TEACHING_PROVENANCE in runs  # what the published Teaching figure is made of
    assert "2026-06-08 revision, which does not add up to the final table" in runs
    keys = page.inner_text("#ab-keys")
    assert "never saved" in keys and "opt-in" in keys
    assert page.get_attribute("#ab-link-paper", "href") == "https://arxiv.org/abs/2608.09548"
    assert page.errors == []
    assert page.failures == []
    assert page.non_local() == []  # the links are only followed when clicked


LINKS = {
    "paper": "https://arxiv.org/abs/2608.09548",
    "code": "https://github.com/ZeroLoss-Lab/ELBench",
    "questions": "https://huggingface.co/datasets/ZeroLoss-Lab/ELBench",
    "results": "https://huggingface.co/datasets/ZeroLoss-Lab/ELBench-results",
}
"""The links ELBench's own README gives (the AI for Education leaderboard's address is
written nowhere, so it is not linked)."""


def _area_counts(page: RecordedPage) -> dict[str, str]:
    """The areas table's Questions column by area."""
    rows: list[list[str]] = page.evaluate(
        "() => Array.from(document.querySelectorAll('#ab-areas-table tbody tr'))"
        ".map(tr => Array.from(tr.cells).map(td => td.innerText.trim()))"
    )
    head = page.evaluate(
        "() => Array.from(document.querySelectorAll('#ab-areas-table thead th'))"
        ".map(th => th.innerText.trim())"
    )
    column = head.index("Questions")
    return {row[0]: row[column] for row in rows}


def test_about_links_the_paper_code_questions_and_published_results(
    served: Served, page: RecordedPage
) -> None:
    page.goto(f"{served.url}/about")
    page.wait_for_selector("#ab-links")
    for key, url in LINKS.items():
        assert page.get_attribute(f"#ab-link-{key}", "href") == url, key
    text = page.inner_text("#ab-links")
    assert "published results and audits" in text and "questions" in text
    assert page.non_local() == [] and page.errors == []


def test_about_counts_the_published_questions_per_area_without_the_data(
    served: Served, page: RecordedPage
) -> None:
    """No ELBench data in the server's benchmark folders: each area's questions are the
    published per-task counts, and the page says so."""
    page.goto(f"{served.url}/about")
    page.wait_for_selector("#ab-areas-table")
    registry = load_registry()
    counts = next(m.tasks for m in load_published().models if m.tasks)
    expected = {
        area.label: f"{sum(counts[t.id].count for t in registry.tasks if t.area == area.key):,}"
        for area in registry.areas
    }
    assert _area_counts(page) == expected
    assert "published results" in page.inner_text("#ab-counts-source")
    assert "not in this server's benchmark folders" in page.inner_text("#ab-counts-source")
    core = sum(counts[t.id].count for t in registry.tasks if not t.region_specific)
    assert f"Without them: {core:,} questions" in page.inner_text("#ab-region")
    assert page.errors == [] and page.non_local() == []


@pytest.fixture
def served_with_data(tmp_path: Path) -> Iterator[str]:
    """The app with ELBench's reference data in its benchmark folders (the folder holding
    ``benchmark_root``); skips when the data is absent."""
    from sweepbench.web.app import create_app

    root = elbench_root()
    if not root.is_dir():
        pytest.skip("the ELBench reference data is absent")
    store = Store.open()
    app = create_app(store, benchmark_folders=[root.parent])
    try:
        with serve(app) as url:
            yield url
    finally:
        app.server.config["sweepbench.context"].close()
        store.close()


def test_about_counts_each_areas_questions_from_the_data(
    served_with_data: str, page: RecordedPage
) -> None:
    """ELBench's data in the server's benchmark folders: each area's questions are counted from
    its items (what a run asks), and the page says where from."""
    from sweepbench.bench.sources.elbench import load_elbench

    page.goto(f"{served_with_data}/about")
    page.wait_for_selector("#ab-areas-table")
    benchmark = load_elbench(elbench_root())
    expected = {a.label: f"{sum(len(t.items) for t in a.tasks):,}" for a in benchmark.areas}
    assert _area_counts(page) == expected
    source = page.inner_text("#ab-counts-source")
    assert "counted from the ELBench data" in source and "benchmark_root" in source
    assert page.errors == [] and page.non_local() == []
