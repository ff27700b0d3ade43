"""Sweeps with --kind excalidraw / sculpture: cells carry parsed artifacts and their metrics."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from sweepbench.store import Store
from sweepbench.sweeps.history import load_sweep
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.run import Sweep, SweepEvent
from tests.helpers import cli

FIXTURES = Path(__file__).resolve().parents[2] / "src/sweepbench/artifacts/sculpture/fixtures"

SCENE = {
    "type": "excalidraw",
    "elements": [
        {"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 200, "height": 80},
        {"id": "b", "type": "text", "x": 20, "y": 20, "text": "API {v1}", "fontSize": 20},
        {"id": "a", "type": "ellipse", "x": 300, "y": 0, "width": 120, "height": 80},
    ],
}


def scripted(text: str, tps: int = 0) -> str:
    """A scripted model that says exactly ``text`` (one word = one token)."""
    safe = '{}[]:,"'  # readable in the id; & = # and spaces are still escaped
    return f"scripted/echo?text={quote(text, safe=safe)}" + (f"&tps={tps}" if tps else "")


async def test_drawing_cells_grow_while_streaming_and_keep_their_scene() -> None:
    text = "Here you go: " + json.dumps(SCENE)
    plan = build_plan("draw", "max_tokens", ["1000", "12"], kind="excalidraw", model=scripted(text))
    grown: list[int] = []

    def on_event(event: SweepEvent) -> None:
        if event.cell_index == 1 and event.items:
            grown.append(len(event.items))

    result = await Sweep(plan, store=Store.open(), on_event=on_event).run()
    small, whole = result.samples  # budgets ascend: 12 tokens, then 1000
    assert whole.outcome is not None and whole.outcome.ok
    assert whole.outcome.metrics["elements"] == 3
    assert whole.outcome.metrics["renamed_ids"] == 1  # the duplicate id "a"
    assert whole.items == 3 and sum(grown) == 3  # elements emitted as their braces closed
    assert whole.outcome.files["svg"].startswith(b"<svg") or b"<svg" in whole.outcome.files["svg"]
    assert small.outcome is not None and not small.outcome.ok
    assert small.outcome.reason.startswith("stop=max_tokens")
    assert "invalid JSON" not in small.outcome.reason


async def test_sculpture_cells_build_glb_and_stored_documents_carry_metrics(tmp_path: Path) -> None:
    manifest = (FIXTURES / "lighthouse.manifest.json").read_text()
    text = " ".join(manifest.split())
    plan = build_plan(
        "a lighthouse", "prompt_version", ["v1", "v2"], kind="sculpture", model=scripted(text)
    )
    store = Store.open()
    result = await Sweep(plan, store=store).run()
    for sample in result.samples:
        assert sample.outcome is not None and sample.outcome.ok, sample.outcome
        assert sample.outcome.files["glb"][:4] == b"glTF"
        assert sample.outcome.metrics["part_count"] == 2
        provenance = sample.outcome.artifact["provenance"]
        assert provenance["prompt"] == "a lighthouse" and provenance["model"] == sample.cell.model
    document = load_sweep(store, result.id)
    assert document["cells"][0]["metrics"]["palette"] == 2
    assert document["cells"][0]["files"]["glb"]


def test_export_writes_the_artifact_files(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    small = {
        "elements": [
            {"type": "rectangle", "x": 0, "y": 0, "width": 90, "height": 40},
            {"type": "text", "x": 9, "y": 9, "text": "hi"},
        ]
    }
    text = json.dumps(small, separators=(",", ":"))
    assert (
        cli(
            monkeypatch,
            "sweep",
            "draw",
            "--kind",
            "excalidraw",
            "--axis",
            "max_tokens",
            "--values",
            "1000",
            "--model",
            scripted(text),
            "--json",
        )
        == 0
    )
    sweep_id = json.loads(capsys.readouterr().out)["id"]
    out = tmp_path / "cells"
    assert (
        cli(
            monkeypatch,
            "sweeps",
            "export",
            sweep_id,
            "--artifacts",
            str(out),
            "--html",
            str(tmp_path / "s.html"),
        )
        == 0
    )
    scene = json.loads((out / "cell1.excalidraw").read_text())
    assert len(scene["elements"]) == 2
    assert (out / "cell1.svg").read_text().lstrip().startswith(("<svg", "<?xml"))
    assert cli(monkeypatch, "sweeps", "show", sweep_id) == 0
    shown = capsys.readouterr().out
    assert 'text "hi" at (9, 9)' in shown and "rectangle at (0, 0) 90×40" in shown
    assert "elements 2" in shown
    page = (tmp_path / "s.html").read_text()
    assert "<svg" in page and "elements 2" in page


@pytest.mark.local_model
def test_local_sculpture_sweep_gives_parseable_artifacts() -> None:
    plan = build_plan(
        "a small lighthouse on a rock", "max_tokens", ["300", "600"], kind="sculpture"
    )
    result = _run(plan)
    for sample in result.samples:
        outcome = sample.outcome
        assert outcome is not None and sample.result is not None
        if sample.result.stop_reason == "max_tokens":
            assert outcome.reason.startswith("stop=max_tokens")
        else:
            assert outcome.ok, outcome.reason  # the grammar makes the tiny model's JSON parse
            assert outcome.files["glb"][:4] == b"glTF" and outcome.metrics["part_count"] >= 1
    assert any(s.outcome and s.outcome.files.get("glb") for s in result.samples)


@pytest.mark.local_model
def test_local_drawing_sweep_gives_parseable_artifacts() -> None:
    plan = build_plan(
        "a login flow: user, web app, database", "max_tokens", ["1500"], kind="excalidraw"
    )
    [sample] = _run(plan).samples
    outcome = sample.outcome
    assert outcome is not None and sample.result is not None
    if sample.result.stop_reason == "max_tokens":
        assert outcome.reason.startswith("stop=max_tokens")
    else:
        assert outcome.ok, outcome.reason
    assert outcome.metrics["elements"] >= 1  # complete elements are kept either way
    assert b"<svg" in outcome.files["svg"]


def _run(plan):  # type: ignore[no-untyped-def]
    import asyncio

    return asyncio.run(Sweep(plan, store=Store.open()).run())


def test_outline_previews_sculpture_parts() -> None:
    from sweepbench.sweeps.outline import outline

    manifest = json.loads((FIXTURES / "lighthouse.manifest.json").read_text())
    lines = outline("sculpture", manifest)
    assert lines[0] == "cylinder tower #f1ede4 0.6×1.6×0.6 m at (0, 0.8, 0)"
    assert outline("text", {"text": "hi"}) == []
