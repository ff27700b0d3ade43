"""The dialogue estimate calibrated from the store's finished dialogues of the same models
(issue 14): nothing below five, the means of the ``calls`` rows from five on, and only from
dialogues played by the same teacher, student and evaluator."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from sweepbench.bench.dialogue.calibration import (
    CALIBRATE_AFTER,
    Models,
    calibrate,
    finished_dialogues,
)
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_turns, calls
from tests.helpers import cli

TUTOR = "scripted/tutor?end_after=3"
JUDGE = "scripted/evaluator"
STUDENT = "scripted/student"
MODELS = ["-m", TUTOR, "--judge", JUDGE, "--student", STUDENT]


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    code = cli(monkeypatch, *args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_sample(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *extra: str
) -> str:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample-teaching", *MODELS, "--no-resume",
        "--yes", "--json", *extra,
    )  # fmt: skip
    assert code == 0, err
    shown = json.loads(out)
    assert shown["status"] == "completed"
    return str(shown["run_id"])


def estimate(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *models: str
) -> dict[str, Any]:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample-teaching", *(models or MODELS),
        "--max-tokens", "2048", "--json",
    )  # fmt: skip
    assert code == 0, err
    return dict(json.loads(out))


def flows(shown: dict[str, Any]) -> dict[str, dict[str, Any]]:
    calibration = shown["dialogue_calibration"]
    assert calibration is not None and calibration["calibrate_after"] == CALIBRATE_AFTER
    return {f["flow"]: f for f in calibration["flows"]}


def expected_means(
    store: Store, dialogues: list[tuple[str, str]]
) -> tuple[dict[str, dict[str, float]], float, float]:
    """Each benchmark role's mean calls and tokens per dialogue, straight from ``calls``, and
    the mean steps and turns from ``bench_turns``."""
    totals: dict[str, dict[str, float]] = {}
    steps = turns = 0
    with store.engine.connect() as conn:
        for run_id, key in dialogues:
            rows = conn.execute(
                sa.select(calls.c.role, calls.c.input_tokens, calls.c.output_tokens).where(
                    calls.c.run_id == run_id, calls.c.item_key == key
                )
            ).all()
            for row in rows:
                total = totals.setdefault(
                    row.role, {"calls": 0, "input_tokens": 0, "output_tokens": 0}
                )
                total["calls"] += 1
                total["input_tokens"] += row.input_tokens
                total["output_tokens"] += row.output_tokens
            speakers = conn.scalars(
                sa.select(bench_turns.c.speaker).where(
                    bench_turns.c.run_id == run_id, bench_turns.c.key == key
                )
            ).all()
            turns += len(speakers)
            steps += sum(1 for s in speakers if s == "teacher")
    count = len(dialogues)
    means = {role: {k: v / count for k, v in t.items()} for role, t in totals.items()}
    return means, steps / count, turns / count


def test_below_five_finished_dialogues_the_estimate_is_not_calibrated(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (the estimate's other length limit makes it a new run: every dialogue is to run)
    shown = estimate(monkeypatch, capsys)
    before = flows(shown)
    assert {f: (v["finished"], v["calibrated"]) for f, v in before.items()} == {
        "guided": (0, False), "single": (0, False),
    }  # fmt: skip
    text = " ".join(shown["text"])
    assert "No finished guided lessons of these models yet to calibrate the estimate from." in text
    run_sample(monkeypatch, capsys)  # 2 guided lessons, 4 single-turn dialogues
    shown = estimate(monkeypatch, capsys)
    after = flows(shown)
    assert {f: (v["finished"], v["calibrated"], v["pending"]) for f, v in after.items()} == {
        "guided": (2, False, 2), "single": (4, False, 4),
    }  # fmt: skip
    assert "steps" not in after["guided"]
    text = " ".join(shown["text"])
    assert "Only 2 finished guided lessons of these models so far" in text
    assert "Only 4 finished single-turn teaching dialogues of these models so far" in text
    with Store.open() as store:
        assert calibrate(store, "guided", Models(TUTOR, JUDGE, STUDENT)) is None


def test_a_benchmark_without_dialogues_has_no_calibration(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "-m", "scripted/echo", "--json"
    )
    if code != 0:  # the sample may need a judge: only the automatically checked part
        code, out, err = run_cli(
            monkeypatch, capsys, "bench", "estimate", "sample", "-m", "scripted/echo",
            "--preset", "auto-checked", "--json",
        )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["dialogue_calibration"] is None


def test_five_finished_dialogues_calibrate_it_from_the_calls_rows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in range(3):  # 6 guided lessons, 12 single-turn dialogues
        run_sample(monkeypatch, capsys)
    shown = estimate(monkeypatch, capsys)
    found = flows(shown)
    assert found["guided"]["finished"] == 6 and found["single"]["finished"] == 12
    with Store.open() as store:
        for flow, student in (("guided", STUDENT), ("single", None)):
            dialogues = finished_dialogues(store, flow, Models(TUTOR, JUDGE, student))
            assert len(dialogues) == found[flow]["finished"]
            with store.engine.connect() as conn:  # every one of them was scored
                statuses = set(conn.scalars(sa.select(bench_answers.c.status)))
            assert statuses == {"scored"}
            means, steps, turns = expected_means(store, dialogues)
            shown_flow = found[flow]
            assert shown_flow["calibrated"] is True
            assert shown_flow["steps"] == pytest.approx(steps)
            assert shown_flow["turns"] == pytest.approx(turns)
            roles = shown_flow["roles"]
            assert set(roles) == set(means)
            for role, expected in means.items():
                for what, value in expected.items():
                    assert roles[role][what] == pytest.approx(value), (flow, role, what)
            assert shown_flow["usd_per_dialogue"] is not None
    guided = found["guided"]
    assert guided["steps"] == pytest.approx(3)  # the tutor ends the lesson at step 3
    assert set(guided["roles"]) == {"target", "student", "judge"}
    assert guided["roles"]["student"]["model"] == STUDENT
    assert found["single"]["steps"] == pytest.approx(1)
    assert set(found["single"]["roles"]) == {"target", "judge"}
    text = " ".join(shown["text"])
    assert "Guided lessons of these models so far (6 finished): about 3 steps (6 turns)" in text
    assert (
        "Single-turn teaching dialogues of these models so far (12 finished): about 1 step "
        "(1 turn) per dialogue" in text
    )
    assert "per dialogue" in text and "for the simulated student (2 calls)" in text
    # the text's token figures are the JSON's, rounded
    target_in = round(guided["roles"]["target"]["input_tokens"])
    assert f"{target_in:,} tokens in and" in text

    # another student (the judge, by default): the guided lessons were not played by it;
    # single-turn ones have no student, so they still calibrate
    other = estimate(monkeypatch, capsys, "-m", TUTOR, "--judge", JUDGE)
    other_flows = flows(other)
    assert other_flows["guided"]["finished"] == 0 and not other_flows["guided"]["calibrated"]
    assert other_flows["single"]["calibrated"] is True
    # another evaluator or teacher: nothing of theirs is finished
    nobody = flows(estimate(monkeypatch, capsys, "-m", "scripted/tutor?end_after=2",
                            "--judge", JUDGE, "--student", STUDENT))  # fmt: skip
    assert all(f["finished"] == 0 for f in nobody.values())


def test_only_dialogues_that_ended_and_were_evaluated_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [run_sample(monkeypatch, capsys, "--tasks", "guided") for _ in range(3)]
    played = Models(TUTOR, JUDGE, STUDENT)
    with Store.open() as store:
        assert len(finished_dialogues(store, "guided", played)) == 6
        assert finished_dialogues(store, "single", Models(TUTOR, JUDGE)) == []

        def mark(run_id: str, key: str, **values: object) -> None:
            with store.engine.begin() as conn:
                conn.execute(
                    bench_answers.update()
                    .where(bench_answers.c.run_id == run_id, bench_answers.c.key == key)
                    .values(**values)
                )

        keys = sorted(finished_dialogues(store, "guided", played))
        # an evaluation that held nothing usable still finished the dialogue
        mark(*keys[0], status="failed", error_type="judge_unparseable")
        assert len(finished_dialogues(store, "guided", played)) == 6
        # a dialogue stopped by a failed turn did not end
        mark(*keys[1], status="failed", error_type="timeout", stop_reason="end")
        assert len(finished_dialogues(store, "guided", played)) == 5
        assert calibrate(store, "guided", played) is not None
        mark(*keys[2], status="failed", error_type="judge_error")
        assert len(finished_dialogues(store, "guided", played)) == 4
        assert calibrate(store, "guided", played) is None
        # a dialogue's turns are part of it: a row with none is no dialogue
        with store.engine.begin() as conn:
            conn.execute(bench_turns.delete().where(bench_turns.c.run_id == runs[2]))
        assert {run for run, _ in finished_dialogues(store, "guided", played)} <= set(runs[:2])
