"""The About page (/about): the sections of spec §17.10 and the §20 decisions a user should
know, built from the library's constants; it loads nothing from outside 127.0.0.1."""

from __future__ import annotations

from sweepbench.bench.scoring.option_set import PARTIAL_CREDIT
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, SCORING_VERSIONS
from sweepbench.bench.sources.elbench_registry import load_registry
from sweepbench.leaderboard.published import TEACHING_PROVENANCE
from sweepbench.stats.paired import RESAMPLES
from tests.web.browser import RecordedPage
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
