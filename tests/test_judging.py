"""The judge contract below both runs layers (issue 28 §2): one module that benchmarks and
judge-scored sweeps import, and that imports neither of them."""

from __future__ import annotations

from sweepbench.bench.items import Item, JudgeSpec, Task
from sweepbench.judging import contract
from sweepbench.judging.contract import PlainItem, PlainTask, judge_messages, verdict_schema
from tests.test_imports import import_graph, package_graph

SPEC = JudgeSpec(rubric="Says 4.", template="sweep")


def test_the_contract_imports_neither_runs_layer() -> None:
    packages = package_graph(import_graph())
    below = set(packages["sweepbench.judging"])
    assert below <= {"sweepbench.models", "sweepbench.errors"}, below
    assert "sweepbench.judging" in packages["sweepbench.bench"]
    assert "sweepbench.judging" in packages["sweepbench.sweeps"]


def test_bench_and_sweeps_use_the_contracts_own_names() -> None:
    from sweepbench.bench import answers, items
    from sweepbench.bench.scoring import base
    from sweepbench.bench.scoring import judge as bench_judge
    from sweepbench.sweeps import judge as sweep_judge

    assert items.JudgeSpec is contract.JudgeSpec
    assert base.Score is contract.Score
    assert answers.verdict_schema is contract.verdict_schema
    for name in ("judge_messages", "parse_verdict", "JUDGE_MAX_TOKENS", "JUDGE_SYSTEM"):
        assert getattr(bench_judge, name) is getattr(contract, name), name
    for name in ("judge_messages", "parse_verdict", "verdict_schema", "JudgeSpec"):
        assert getattr(sweep_judge, name) is getattr(contract, name), name


def test_a_plain_task_asks_exactly_what_a_benchmark_task_asks() -> None:
    """A sweep's one-item task (the contract's plain shapes) gives the judge the very bytes a
    benchmark ``Task`` and ``Item`` with the same fields give."""
    task = Task("sweep-text", "sweep", "single-prompt sweep", "judge", "judge", judge=SPEC)
    item = Item("sweep", "sweep", "sweep-text", "text", "2+2?", "4", {"kind": "text"})
    plain_task = PlainTask("sweep-text", "sweep", SPEC)
    plain_item = PlainItem("2+2?", "text", "4", {"kind": "text"})
    for decision in (False, True):
        assert judge_messages(plain_task, plain_item, "4", decision=decision) == judge_messages(
            task, item, "4", decision=decision
        )
        assert verdict_schema(plain_task, decision) == verdict_schema(task, decision)


def test_a_sweep_judge_request_is_pinned() -> None:
    from sweepbench.sweeps.judge import SweepJudge, judge_request

    request = judge_request(SweepJudge("scripted/judge", rubric="Says 4."), "text", "2+2?", "4")
    system, user = request.messages
    assert (system.role, system.content) == ("system", "Return JSON only. No reasoning text.")
    assert user.content == (
        "You are grading one answer given by a model under test. Return exactly one JSON object "
        "and nothing else: the first character of your reply must be `{` and the last must be "
        "`}`. No markdown fences, no text before or after the object.\n\n"
        "[JUDGE_TASK] sweep\n[MODULE] sweep\n[SUBSET] \n[TASK] sweep-text\n[DIMENSION] text\n"
        '[REFERENCE] null\n[METADATA] {"kind": "text"}\n[PROMPT]\n2+2?\n[MODEL_RESPONSE]\n4\n'
        "[RUBRIC]\nSays 4.\n"
        "[OUTPUT_FORMAT] keys: judge_result, score (0..1), judge_reason, judge_metadata (object)\n"
        'judge_result is "pass" or "fail"; score is a number from 0 to 1; judge_reason is a '
        "short string; judge_metadata is a JSON object."
    )
    assert request.settings.response_format == {
        "type": "object",
        "properties": {
            "judge_result": {"type": "string", "enum": ["pass", "fail"]},
            "score": {"type": "number"},
            "judge_reason": {"type": "string"},
        },
        "required": ["judge_result", "score", "judge_reason"],
        "additionalProperties": False,
    }
