"""The bundled snapshot reproduces the published figures (spec §16, §17.7)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from sweepbench.leaderboard.published import load_published, revision_area_score

PUBLISHED = Path("/work/shared/data/elbench/published")
AREAS = {"general": "通用模型", "safety": "安全可信", "basic_education": "基本教育",
         "high_level": "高阶育人"}  # fmt: skip
needs_data = pytest.mark.skipif(not PUBLISHED.is_dir(), reason="published figures absent")


def _rows(name: str) -> list[dict[str, str]]:
    with (PUBLISHED / name).open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@needs_data
def test_snapshot_reproduces_the_final_table() -> None:
    snapshot = load_published()
    rows = _rows("leaderboard.csv")
    assert len(rows) == 9
    for row in rows:
        model = snapshot.model(row["model_key"])
        assert model is not None and model.overall is not None
        assert model.rank == int(row["rank"])
        assert model.overall.score == pytest.approx(float(row["overall"]), abs=0.05)
        assert model.overall.low == pytest.approx(float(row["overall_ci_low"]), abs=0.05)
        assert model.overall.high == pytest.approx(float(row["overall_ci_high"]), abs=0.05)
        assert round(model.overall.score, 1) == pytest.approx(float(row["readme_overall"]))
        for column, area in AREAS.items():
            got = model.areas[area]
            assert got.score == pytest.approx(float(row[column]), abs=0.05)
            assert got.low == pytest.approx(float(row[f"{column}_ci_low"]), abs=0.05)
            assert got.high == pytest.approx(float(row[f"{column}_ci_high"]), abs=0.05)
        mean = sum(model.areas[a].score for a in AREAS.values()) / 4
        assert mean == pytest.approx(model.overall.score, abs=0.05)


@needs_data
def test_revision_areas_reproduce_from_per_task_figures() -> None:
    snapshot = load_published()
    rows = _rows("per_area_2026-06-08.csv")
    assert len({r["model_key"] for r in rows}) == 10
    for row in rows:
        model = snapshot.model(row["model_key"])
        assert model is not None
        got = revision_area_score(model, AREAS[row["area"]])
        assert got == pytest.approx(100 * float(row["normalized_score"]), abs=0.05)


def test_snapshot_is_figures_only_and_labelled() -> None:
    snapshot = load_published()
    assert snapshot.per_task_revision == "2026-06-08"
    assert "2026-06-08" in snapshot.provenance
    assert snapshot.judge == "qwen/qwen3-235b-a22b"
    assert len(snapshot.models) == 10
    assert sum(m.overall is not None for m in snapshot.models) == 9
    text = snapshot.model_dump_json()
    for field in ('"prompt"', '"reference"', '"target"', '"input"', '"choices"'):
        assert field not in text


def test_published_rows_per_scope() -> None:
    from sweepbench.leaderboard.catalogue import elbench_catalogue, published_questions
    from sweepbench.leaderboard.rows import published_rows

    catalogue = elbench_catalogue()
    snapshot = load_published()
    region = {k for k, t in catalogue.tasks.items() if t.region_specific}
    assert region == {"ceval", "safety_refusal"}
    assert published_questions(snapshot, catalogue, "core") == 2481
    assert published_questions(snapshot, catalogue, "paper") == 2939
    paper = published_rows(
        snapshot, "paper", region_specific=region, catalogue_tasks=set(catalogue.tasks)
    )
    core = published_rows(
        snapshot, "core", region_specific=region, catalogue_tasks=set(catalogue.tasks)
    )
    assert len(paper) == len(core) == 9
    gpt_paper = next(r for r in paper if r.model == "GPT-5.4")
    gpt_core = next(r for r in core if r.model == "GPT-5.4")
    assert gpt_paper.scores["overall"].score == pytest.approx(83.13, abs=0.01)
    assert gpt_paper.scores["overall"].low is not None
    assert gpt_core.scores["overall"].low is None  # published ranges are paper scope only
    assert gpt_core.scores["overall"].note is None  # every core area of GPT-5.4 is final
    flash = next(r for r in core if r.model == "DeepSeek-V4-Flash")
    assert flash.scores["通用模型"].note == "2026-06-08 revision"  # AIME re-run afterwards
    assert flash.scores["overall"].note == "partly the 2026-06-08 revision"
    assert "task:ceval" not in gpt_core.scores and "task:ceval" in gpt_paper.scores
    assert "task:gsm8k" not in gpt_paper.scores
    # core safety: the final components without refuse (安全拒答), count-weighted
    assert gpt_core.scores["安全可信"].score == pytest.approx(88.94, abs=0.01)
    # areas with no region-specific task are the final figures in both scopes
    for area in ("基本教育", "高阶育人"):
        assert gpt_core.scores[area].score == gpt_paper.scores[area].score


@needs_data
def test_core_areas_stand_on_figures_that_reproduce_the_final_table() -> None:
    import json

    parts = json.loads((PUBLISHED / "audit/safety_decomposed.json").read_text("utf-8"))
    counts = {"refuse": 250, "guide": 250, "benign": 250, "teachharm": 150, "adversarial": 100}
    final = {r["model_key"]: r for r in _rows("leaderboard.csv")}
    snapshot = load_published()
    for part in parts:
        key = part["model"]
        paper = sum(n * part[k] for k, n in counts.items()) / 1000
        assert paper == pytest.approx(float(final[key]["safety"]), abs=0.05), key
        core = sum(n * part[k] for k, n in counts.items() if k != "refuse") / 750
        model = snapshot.model(key)
        assert model is not None
        assert model.core_areas["安全可信"].score == pytest.approx(core, abs=1e-9)
        general = model.core_areas["通用模型"]
        revision = revision_area_score(model, "通用模型")
        is_final = abs(revision - float(final[key]["general"])) <= 0.05
        assert general.basis == ("final" if is_final else "2026-06-08 revision"), key
    bases = {m.key: m.core_areas["通用模型"].basis for m in snapshot.models if m.core_areas}
    assert sorted(k for k, b in bases.items() if b != "final") == [
        "deepseek-v4-flash", "deepseek-v4-pro", "glm-5.1"]  # the AIME re-runs  # fmt: skip
