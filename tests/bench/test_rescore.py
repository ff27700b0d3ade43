"""Scoring versions in the settings, and ``sweepbench bench rescore`` on stored runs: of a
small declared benchmark whose multiple choice reads differently in the two versions, and of
the sample (scripted models, offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.record import load_record, rules_version_of, scoring_label
from sweepbench.bench.scoring.rescore import (
    BEFORE_VERSIONS,
    config_with_scoring,
    settings_hash,
    source_scoring,
)
from sweepbench.bench.storage import BenchStore
from sweepbench.store import Store
from tests.bench.plans import build_plan
from tests.helpers import run_cli

# Replicated reads "B or C" as B; corrected reads no letter at all (the `choice` scorer; the
# sample's `choice_free` reads it the same in both versions).
AMBIGUOUS = "scripted/echo?text=ANSWER: B or C"
PASS_JUDGE = 'scripted/echo?text={"judge_result":"pass","score":1,"judge_reason":"ok"}'


def _answers(run_id: str) -> dict[str, dict[str, Any]]:
    with Store.open() as store:
        rows = BenchStore(store).answers(run_id)
        return {r["key"]: {k: v for k, v in r.items() if k != "updated_at"} for r in rows}


def _run(run_id: str) -> Any:
    with Store.open() as store:
        return BenchStore(store).run(run_id)


def _sample_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """A finished run of the whole sample (judged tasks too), scored by the default rules."""
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "--model", AMBIGUOUS,
        "--judge", PASS_JUDGE, "--yes",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    assert code == 0, err
    runs = json.loads(out)
    assert len(runs) == 1
    return str(runs[0]["run_id"])


# A declared benchmark whose multiple choice (the `choice` scorer) reads "ANSWER: B or C"
# differently in the two versions, and a judged task whose verdicts a rescore keeps.
DECLARATION = """\
id: flips
name: Flips
areas:
  - {key: choice, label: Multiple choice}
  - {key: judged, label: Judged}
tasks:
  - id: pick
    area: choice
    name: Pick one
    data: pick.jsonl
    fields:
      id: id
      prompt_template: |-
        {{ question }}
        A) one  B) two  C) three  D) four
        Answer with a line ANSWER: X.
      reference: answer
    scorer: choice
  - id: explain
    area: judged
    name: Explain
    data: explain.jsonl
    fields: {id: id, prompt: prompt}
    scorer: judge
    judge:
      rubric: The explanation is right.
      positive_label: pass
      negative_label: fail
"""
KEYS = "BABDCB"  # the right letter of each multiple-choice question


def _declared_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: Path
) -> str:
    """A finished run of the declaration above (judged task too), scored by the default
    rules: each answer is "ANSWER: B or C"."""
    (folder / "flips.yaml").write_text(DECLARATION, encoding="utf-8")
    rows = [{"id": f"q{i}", "question": f"Question {i}?", "answer": key}
            for i, key in enumerate(KEYS)]  # fmt: skip
    (folder / "pick.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    explain = [{"id": f"e{i}", "prompt": f"Explain thing {i}."} for i in range(2)]
    (folder / "explain.jsonl").write_text("".join(json.dumps(r) + "\n" for r in explain))
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "run", str(folder / "flips.yaml"), "--model", AMBIGUOUS,
        "--judge", PASS_JUDGE, "--yes",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run_cli(monkeypatch, capsys, "bench", "runs", "--json")
    assert code == 0, err
    runs = json.loads(out)
    assert len(runs) == 1
    return str(runs[0]["run_id"])


def test_the_scoring_version_is_in_the_plan_and_the_hash() -> None:
    sample = load_benchmark("sample")
    replicated = build_plan(sample, model="scripted/echo", judge="scripted/echo")
    corrected = build_plan(
        sample, model="scripted/echo", judge="scripted/echo", scoring="corrected"
    )
    assert replicated.config.scoring == "replicated"
    assert "scoring" not in replicated.config.as_json()  # stored runs keep their hash
    assert corrected.config.as_json()["scoring"] == "corrected"
    assert corrected.config.hash != replicated.config.hash
    assert {t.options["scoring_version"] for t in corrected.tasks} == {"corrected"}
    as_stored = config_with_scoring(replicated.config.as_json(), "corrected")
    assert settings_hash(as_stored) == corrected.config.hash
    assert scoring_label("corrected") == "1+corrected"
    assert rules_version_of("1+replicated") == "replicated" and rules_version_of("1") is None


def test_rescore_reports_flips_into_a_new_run_and_leaves_the_original(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = _declared_run(monkeypatch, capsys, tmp_path)
    before = _answers(source)
    original = _run(source)
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "rescore", source, "--scoring", "corrected", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    new_id = result["run_id"]
    assert new_id == f"{source}-rescored-corrected"
    assert (result["scoring"], result["source_scoring"]) == ("corrected", "replicated")

    # the multiple-choice items whose key is B passed on "B or C" and now fail
    choice_b = {k for k, r in before.items() if r["task"] == "pick" and r["passed"]}
    assert len(choice_b) == KEYS.count("B")
    assert not any(
        r["passed"] for k, r in before.items() if r["task"] == "pick" and k not in choice_b
    )
    flipped = {f["key"]: f for f in result["flips"]}
    assert set(flipped) == choice_b
    assert all(
        (f["old_score"], f["new_score"], f["old_result"], f["new_result"])
        == (1.0, 0.0, "pass", "fail")
        for f in flipped.values()
    )

    # the original run is untouched: answers, scores, hash and record
    assert _answers(source) == before
    unchanged = _run(source)
    assert (unchanged.config_hash, unchanged.record) == (original.config_hash, original.record)
    assert load_record(unchanged.record).scoring.version == "1+replicated"

    # the copy: its own hash and labelled record; judged verdicts kept; same answers
    copy = _run(new_id)
    assert copy.config_hash != original.config_hash
    assert copy.settings["config"]["scoring"] == "corrected"
    assert copy.settings["rescored_from"] == source
    assert result["record"] and load_record(copy.record).scoring.version == "1+corrected"
    after = _answers(new_id)
    assert set(after) == set(before)
    assert any(row["task"] == "explain" for row in before.values())
    for key, row in before.items():
        assert after[key]["answer"] == row["answer"]
        if row["task"] == "explain":  # the judged task
            assert (after[key]["score"], after[key]["result"], after[key]["judge"]) == (
                row["score"], row["result"], row["judge"],
            )  # fmt: skip
        if key in choice_b:
            assert not after[key]["passed"]
    with Store.open() as store:
        assert not any(BenchStore(store).spent(new_id).values())  # rescoring asks no model


def test_rescore_prints_a_table_and_refuses_the_same_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = _declared_run(monkeypatch, capsys, tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "bench", "rescore", source)
    assert code == 0, err
    text = " ".join(out.split())
    assert f"{KEYS.count('B')} answers changed grade" in text and "1 pass → 0 fail" in text
    assert f"{source}-rescored-corrected" in text and "The original run is unchanged" in text
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "rescore", source, "--scoring", "replicated"
    )
    assert code != 0 and "already scored by the replicated scoring version" in " ".join(err.split())
    code, _, err = run_cli(monkeypatch, capsys, "bench", "rescore", source, "--scoring", "x")
    assert code != 0 and "unknown scoring version" in err
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "rescore", "nope", "--scoring", "corrected"
    )
    assert code != 0 and "no benchmark run" in err


def test_a_run_recorded_before_scoring_versions_may_be_rescored_by_either(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _sample_run(monkeypatch, capsys)
    with Store.open() as store:
        runs = BenchStore(store)
        run = runs.run(source)
        assert run is not None and run.record is not None
        record = json.loads(run.record)
        record["scoring"]["version"] = "1"  # as records were written before versions
        runs.set_record(source, json.dumps(record))
        assert source_scoring(runs.run(source)) == BEFORE_VERSIONS  # type: ignore[arg-type]
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "rescore", source, "--scoring", "replicated", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["source_scoring"] == BEFORE_VERSIONS and result["flips"] == []
    assert load_record(_run(result["run_id"]).record).scoring.version == "1+replicated"


def test_bench_run_takes_the_scoring_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a run can be scored by the corrected rules from the start, hashed apart from replicated
    run = ["bench", "run", "sample", "--preset", "auto", "-m", AMBIGUOUS, "--yes", "--json"]
    hashes = {}
    for version in ("corrected", "replicated"):
        code, out, _ = run_cli(monkeypatch, capsys, *run, "--scoring", version)
        assert code == 0
        report = json.loads(out)
        hashes[version] = report["config_hash"]
        row = BenchStore(Store.open()).run(report["run_id"])
        assert row is not None and row.record is not None
        assert json.loads(row.record)["scoring"]["version"] == f"1+{version}"
    assert hashes["corrected"] != hashes["replicated"]
    code, _, err = run_cli(monkeypatch, capsys, *run, "--scoring", "lenient")
    assert code == 2 and "--scoring" in err
