"""Teaching dialogues as ELBench's runtime plays and evaluates them (issue 25 §1), and where the
``corrected`` scoring version amends it. The expected requests are built from ELBench's own
template texts (``../shared/data/elbench``; the tests that need them skip when it is absent),
never from ELBench's code."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from sweepbench.bench.dialogue.elbench_runtime import (
    START,
    format_instruction,
    parse_reply,
    split_reasoning,
    superstep_limit,
)
from sweepbench.bench.dialogue.flow import DialogueRole, Reply, evaluate, play
from sweepbench.bench.dialogue.scenario import Scenario, scenario_for
from sweepbench.bench.dialogue.template import dialogue_options
from sweepbench.bench.dialogue.turns import Turn
from sweepbench.bench.items import Benchmark
from sweepbench.bench.sources.elbench import load_elbench
from sweepbench.models.base import Message
from tests.bench.helpers import elbench_root

DATA = elbench_root()
GUIDED_YAML = DATA / "基本教育" / "引导式讲题" / "config_guided_task.yaml"
TEMPLATES = {
    "knowledge": DATA / "基本教育" / "知识点讲解" / "knowledge.yaml",
    "question": DATA / "基本教育" / "情景化出题" / "question.yaml",
    "cross": DATA / "基本教育" / "跨学科教案生成" / "cross.yaml",
}
BUDGETS: dict[DialogueRole, int] = {"teacher": 100, "student": 100, "evaluator": 1024}
VERSIONS = ("replicated", "corrected")


@pytest.fixture(scope="module")
def bench() -> Benchmark:
    if not DATA.is_dir():
        pytest.skip("the ELBench reference data is absent")
    return load_elbench(DATA)


def scenario(bench: Benchmark, task_id: str, version: str) -> Scenario:
    task = bench.task(task_id)
    return scenario_for(replace(task, options={**task.options, "scoring_version": version}))


def template(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def marked(values: dict[str, Any]) -> str:
    return f"{START}\n{json.dumps(values, ensure_ascii=False)}\n<END OF EVAL OUTPUT>"


class Fake:
    """A ``call`` that answers each role from a function and records every request."""

    def __init__(
        self,
        teacher: Callable[[int], str] = lambda n: f"第{n}步：你觉得呢？",
        student: Callable[[int], str] = lambda n: f"我想想……是{n}吗？",
        evaluator: Callable[[int], str] = lambda n: marked({"a": 4}),
    ) -> None:
        self.answers = {"teacher": teacher, "student": student, "evaluator": evaluator}
        self.sent: list[tuple[DialogueRole, tuple[Message, ...], int]] = []

    async def __call__(
        self, role: DialogueRole, messages: tuple[Message, ...], max_tokens: int
    ) -> Reply:
        self.sent.append((role, messages, max_tokens))
        n = sum(1 for r, _, _ in self.sent if r == role)
        return Reply(self.answers[role](n))

    def of(self, role: DialogueRole) -> list[tuple[Message, ...]]:
        return [m for r, m, _ in self.sent if r == role]


def lesson(
    s: Scenario, payload: dict[str, Any], fake: Fake, turns: list[Turn] | None = None
) -> list[Turn]:
    return asyncio.run(play(s, payload, fake, budgets=BUDGETS, turns=turns or ())).turns


def guided_payload(bench: Benchmark, row: int = 1) -> dict[str, Any]:
    item = next(i for i in bench.task("guided").items if i.row == row)
    return dict(item.metadata["payload"])


# --- 1. the turn limit ----------------------------------------------------------------------


def test_a_lesson_without_an_end_word_runs_twenty_supersteps_and_ends_on_the_student(
    bench: Benchmark,
) -> None:
    fake = Fake()
    turns = lesson(scenario(bench, "guided", "replicated"), guided_payload(bench), fake)
    speakers = [t.speaker for t in turns]
    assert speakers == ["opening"] + ["teacher", "student"] * 10
    assert len(fake.of("teacher")) == 10 and len(fake.of("student")) == 10


def test_corrected_keeps_the_budget_but_gives_the_teacher_the_last_word(bench: Benchmark) -> None:
    turns = lesson(scenario(bench, "guided", "corrected"), guided_payload(bench), Fake())
    speakers = [t.speaker for t in turns]
    assert speakers == ["opening"] + ["teacher", "student"] * 9 + ["teacher"]


@pytest.mark.parametrize(("limit", "steps"), [(40, 20), (7, 7), (None, 20), ("many", 20), (1, 1)])
def test_the_superstep_budget_is_the_templates_recursion_limit_capped_at_twenty(
    limit: Any, steps: int
) -> None:
    assert superstep_limit(limit) == steps


def test_a_templates_own_recursion_limit_sets_the_turns(tmp_path: Path) -> None:
    document = {
        "globals": {"recursion_limit": 7, "retry": {"attempt": 4, "interval": 3}},
        "agents": {
            "teacher": {"prompt": [{"role": "system", "content": "Teach {question}."}]},
            "student": {"prompt": [{"role": "system", "content": "Learn {question}."}]},
        },
        "tasks": {"start_prompt": {"role": "user", "content": "题: {question}"}},
        "evaluation": {
            "prompt": [{"role": "system", "content": "Rate {messages.as_dialog()}"}],
            "format": [{"field": "x", "type": "int", "description": "x"}],
            "format_mode": "prompt",
        },
    }
    options = dialogue_options(document, "toy")
    for version, speakers in (
        ("replicated", ["teacher", "student"] * 3 + ["teacher"]),
        ("corrected", ["teacher", "student"] * 3 + ["teacher"]),
    ):
        from sweepbench.bench.dialogue.scenario import scenario_from_options

        s = scenario_from_options("toy", {**options, "scoring_version": version})
        assert s.max_turns == 7 and s.evaluation_attempts == 4 and s.call_attempts == 4
        turns = lesson(s, {"question": "1+1"}, Fake())
        assert [t.speaker for t in turns][1:] == speakers


def test_an_end_word_still_ends_the_lesson_on_the_teachers_turn(bench: Benchmark) -> None:
    fake = Fake(teacher=lambda n: "好的" if n < 3 else "今天就到这里，下课！")
    for version in VERSIONS:
        turns = lesson(scenario(bench, "guided", version), guided_payload(bench), fake)
        assert [t.speaker for t in turns][-1] == "teacher" and turns[-1].content.endswith("下课！")


# --- 3. what each role is sent --------------------------------------------------------------


def test_the_teacher_and_student_are_sent_the_template_prompts_filled_and_the_opening(
    bench: Benchmark,
) -> None:
    raw = template(GUIDED_YAML)
    payload = guided_payload(bench)
    teacher_system = raw["agents"]["teacher"]["prompt"][0]["content"]
    student_system = raw["agents"]["student"]["prompt"][0]["content"]
    for name, value in payload.items():
        teacher_system = teacher_system.replace("{" + name + "}", value)
        student_system = student_system.replace("{" + name + "}", value)
    opening = raw["tasks"]["start_prompt"]["content"].replace("{question}", payload["question"])
    fake = Fake(student=lambda n: "<think>嗯</think>是7吗？")
    lesson(scenario(bench, "guided", "replicated"), payload, fake)
    first_teacher, second_teacher = fake.of("teacher")[:2]
    assert first_teacher == (Message("system", teacher_system), Message("user", opening))
    assert second_teacher == (
        Message("system", teacher_system), Message("user", opening),
        Message("assistant", "第1步：你觉得呢？"), Message("user", "是7吗？"),
    )  # fmt: skip
    # the student sees the opening as a user message until the 7-message window drops it
    first_student = fake.of("student")[0]
    assert first_student == (
        Message("system", student_system), Message("user", opening),
        Message("user", "第1步：你觉得呢？"),
    )  # fmt: skip
    third, fourth = fake.of("student")[2:4]  # opening + 5 turns, then opening + 7 turns
    assert len(third) == 1 + 6 and third[1] == Message("user", opening)
    assert len(fourth) == 1 + 7 and Message("user", opening) not in fourth


def test_corrected_leaves_the_opening_out_of_the_students_history(bench: Benchmark) -> None:
    fake = Fake()
    lesson(scenario(bench, "guided", "corrected"), guided_payload(bench), fake)
    student = fake.of("student")[0]
    assert [m.role for m in student] == ["system", "user"]
    assert student[1].content == "第1步：你觉得呢？"


def test_a_history_keeps_what_elbench_keeps_of_a_thinking_reply() -> None:
    from sweepbench.bench.dialogue.turns import runtime_messages

    turns = [
        Turn.of_reply("teacher", "<think>plan</think>\n\nQuestion one?"),
        Turn.of_reply("student", "I reckon\n</think>\n\nIs it 3?"),  # no opening tag
        Turn.of_reply("teacher", "<thinking>kept</thinking> Good."),
    ]
    sent = runtime_messages("teacher", (), turns, 3, opening_for_student=True)
    assert [m.content for m in sent] == [
        "Question one?", "I reckon\n</think>\n\nIs it 3?", "<thinking>kept</thinking> Good.",
    ]  # fmt: skip


# --- 8. stored turns ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "reasoning", "content"),
    [
        ("<think>plan it</think>\n\nWhat is 3 + 4?", "plan it", "What is 3 + 4?"),
        ("plan it\n</think>\nWhat is 3 + 4?", "plan it", "What is 3 + 4?"),
        ("No thinking here.", "", "No thinking here."),
    ],
)
def test_an_inline_think_is_split_as_elbench_exports_it(
    reply: str, reasoning: str, content: str
) -> None:
    assert split_reasoning(reply) == (reasoning, content)
    turn = Turn.of_reply("teacher", reply)
    assert (turn.reasoning, turn.content) == (reasoning, content)
    assert turn.sent_text == reply
    assert turn.as_json()["content"] == content and "raw" not in turn.as_json()


# --- 2. the evaluator's request -------------------------------------------------------------


def fill_task(text: str, payload: dict[str, Any], dialog: str) -> str:
    for name, value in payload.items():
        text = text.replace("{task." + name + "}", value)
    return text.replace("{messages.as_dialog()}", dialog)


def test_the_guided_evaluator_is_sent_the_filled_rubric_as_system_and_user(
    bench: Benchmark,
) -> None:
    raw = template(GUIDED_YAML)
    payload = guided_payload(bench)
    s = scenario(bench, "guided", "replicated")
    fake = Fake(teacher=lambda n: "第一步？" if n == 1 else "很好，下课")
    turns = lesson(s, payload, fake)
    asyncio.run(evaluate(s, payload, turns, fake, budget=1024))
    (messages,) = fake.of("evaluator")
    dialog = "teacher: 第一步？\nstudent: 我想想……是1吗？\nteacher: 很好，下课"
    rubric = fill_task(raw["evaluation"]["prompt"][0]["content"], payload, dialog)
    system, user = messages
    assert system.role == "system" and user.role == "user"
    assert user.content == rubric.strip()
    assert system.content.startswith(rubric + "\n\nReturn exactly one JSON object wrapped with")
    example = system.content.split(START + "\n")[1].split("\n<END OF EVAL OUTPUT>")[0]
    assert system.content == rubric + format_instruction(example)
    shown = json.loads(example)  # the example: every field, in order, compact, its type
    assert list(shown) == [f["field"] for f in raw["evaluation"]["format"]]
    assert all(type(v) is int for v in shown.values()) and ": " not in example
    for placeholder in ("{task.", "{messages.", "[Task]", "[Dialogue]", "[Output]"):
        assert placeholder not in system.content + user.content
    assert "这是本次一对一辅导所要讲的习题" not in dialog  # the opening is not in as_dialog()


@pytest.mark.parametrize("task_id", ["knowledge", "question", "cross"])
def test_the_single_turn_evaluators_are_sent_what_elbench_sends(
    bench: Benchmark, task_id: str
) -> None:
    s = scenario(bench, task_id, "replicated")
    raw = template(TEMPLATES[task_id])
    item = bench.task(task_id).items[0]
    payload = dict(item.metadata["payload"])
    fake = Fake(teacher=lambda n: "<think>先想</think>这是我的讲解。")
    turns = lesson(s, payload, fake)
    (teacher,) = fake.of("teacher")
    agent = next(iter(raw["agents"].values()))
    expected = []
    for m in agent["prompt"]:
        content = m["content"]
        for name, value in payload.items():
            content = content.replace("{" + name + "}", value)
        expected.append(Message(m["role"], content))
    assert teacher == tuple(expected)
    asyncio.run(evaluate(s, payload, turns, fake, budget=1024))
    (messages,) = fake.of("evaluator")
    name = next(iter(raw["agents"]))
    dialog = f"{name}: 这是我的讲解。"
    prompts = raw["evaluation"]["prompt"]
    system = fill_task(
        next(p["content"] for p in prompts if p["role"] == "system"), payload, dialog
    )
    assert messages[0].content.startswith(system + "\n\nReturn exactly one JSON object")
    others = [p for p in prompts if p["role"] != "system"]
    if others:
        assert messages[1:] == tuple(
            Message(p["role"], fill_task(p["content"], payload, dialog)) for p in others
        )
    else:
        assert messages[1:] == (Message("user", system.strip()),)


# --- 4, 5, 6. the veto, the pass mark, the reading of the reply -----------------------------


def evaluation_of(s: Scenario, reply: Callable[[int], str]) -> Any:
    fake = Fake(evaluator=reply)
    turns = [Turn("teacher", "讲解")] if s.flow == "single" else [Turn("opening", "题")]
    return asyncio.run(evaluate(s, {"question": "q", "image": "i", "query": "q"}, turns, fake,
                                budget=1024)), fake  # fmt: skip


def test_replicated_has_no_code_veto_corrected_keeps_it(bench: Benchmark) -> None:
    fields = [f.name for f in scenario(bench, "guided", "replicated").fields]
    values = {name: 5 for name in fields} | {"角色一致性": 1}
    replicated, _ = evaluation_of(scenario(bench, "guided", "replicated"), lambda n: marked(values))
    assert replicated.score == pytest.approx((13 * 5 + 1) / 14) and not replicated.vetoed
    assert replicated.passed
    corrected, _ = evaluation_of(scenario(bench, "guided", "corrected"), lambda n: marked(values))
    assert corrected.score == 1 and corrected.vetoed and not corrected.passed


def test_the_knowledge_pass_mark_is_three_replicated_six_corrected(bench: Benchmark) -> None:
    assert scenario(bench, "knowledge", "replicated").threshold == 3.0
    assert scenario(bench, "knowledge", "corrected").threshold == 6.0
    assert {
        scenario(bench, t, "replicated").threshold for t in ("question", "cross", "guided")
    } == {3.0}
    four = marked({"a": 4})
    assert evaluation_of(scenario(bench, "knowledge", "replicated"), lambda n: four)[0].passed
    assert not evaluation_of(scenario(bench, "knowledge", "corrected"), lambda n: four)[0].passed


def test_the_reply_is_read_from_the_greedy_span(bench: Benchmark) -> None:
    two_blocks = f"{marked({'a': 1})}\nOn reflection:\n{marked({'a': 5})}"
    with pytest.raises(ValueError):  # first start to last end: not one JSON object
        parse_reply(two_blocks)
    assert parse_reply(f'{START}\n```json\n{{"a": 2}}\n```\n<END OF EVAL OUTPUT>') == {"a": 2}
    assert parse_reply('\\<START OF EVAL OUTPUT\\>{"a": 3}\\<END OF EVAL OUTPUT\\>') == {"a": 3}
    # replicated: unreadable every time, so asked the template's retry.attempt times (15 for
    # the guided lesson, 5 for knowledge), then unknown — not a pass, not a failure
    for task_id, attempts in (("guided", 15), ("knowledge", 5)):
        result, fake = evaluation_of(scenario(bench, task_id, "replicated"), lambda n: two_blocks)
        assert result.result == "unknown" and result.score is None and not result.passed
        assert len(fake.of("evaluator")) == attempts
    # corrected reads the last block
    result, fake = evaluation_of(scenario(bench, "knowledge", "corrected"), lambda n: two_blocks)
    assert result.score == 5 and len(fake.of("evaluator")) == 1


def test_replicated_an_object_without_a_number_is_unknown_at_once(bench: Benchmark) -> None:
    result, fake = evaluation_of(
        scenario(bench, "question", "replicated"), lambda n: marked({"note": "good"})
    )
    assert result.result == "unknown" and len(fake.of("evaluator")) == 1


def test_a_retried_evaluation_is_read_when_a_later_reply_is_readable(bench: Benchmark) -> None:
    result, fake = evaluation_of(
        scenario(bench, "guided", "replicated"),
        lambda n: "no markers" if n < 3 else marked({"a": 2, "b": 4}),
    )
    assert result.score == 3 and len(fake.of("evaluator")) == 3


def test_the_format_example_is_the_same_for_a_scenario_every_time(bench: Benchmark) -> None:
    s = scenario(bench, "cross", "replicated")
    one, _ = Fake(), None
    first = asyncio.run(evaluate(s, {"question": "q"}, [Turn("teacher", "x")], one, budget=1024))
    two = Fake()
    asyncio.run(evaluate(s, {"question": "q"}, [Turn("teacher", "x")], two, budget=1024))
    assert one.of("evaluator") == two.of("evaluator") and first is not None
    example = re.search(START + r"\n(.*)\n<END", one.of("evaluator")[0][0].content)
    assert example is not None
    assert all(type(v) is float for v in json.loads(example.group(1)).values())


# --- 7, 8. through the runner, the real SDK and a compatible server -------------------------


async def test_a_guided_lesson_on_a_compatible_server_sends_elbenchs_settings_and_stores_splits(
    bench: Benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.bench.dialogue.export import dialogue_files
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.run_config import Selection
    from sweepbench.bench.storage import BenchStore
    from sweepbench.engine import RetryPolicy
    from sweepbench.store import Store
    from tests.bench.helpers import compatible_server
    from tests.bench.plans import prepare
    from tests.servers import Reply as ServerReply

    fields = [f.name for f in scenario(bench, "guided", "replicated").fields]
    with compatible_server(monkeypatch) as server:
        server.reply("<think>先看个位</think>\n\n个位上的数字是多少？")
        server.reply("是7吗？")
        server.reply("很好！下课")
        server.push(ServerReply(text=marked({name: 4 for name in fields})))
        store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
        prepared = prepare(
            bench, store, model="compatible/teacher", judge="compatible/judge",
            student="compatible/student", selection=Selection(tasks=("guided",), per_task=1),
        )  # fmt: skip
        assert not prepared.plan.errors, prepared.plan.errors
        (settings,) = prepared.plan.dialogues
        assert settings["max_teacher_turns"] == 10 and settings["max_student_turns"] == 10
        assert settings["evaluator"]["max_tokens"] == 1024  # type: ignore[index]
        assert settings["evaluator"]["attempts"] == 15  # type: ignore[index]
        fast = RetryPolicy(base_delay_s=0.001, max_delay_s=0.002, rate_limit_floor_s=0.001)
        outcome = await BenchRunner(prepared, store, retry=fast, dialogue_retry_delay_s=0.0).run()
        assert outcome.status == "completed" and outcome.scored == 1
        bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [b["model"] for b in bodies] == ["teacher", "student", "teacher", "judge"]
    teacher, student, _, evaluator = bodies
    assert evaluator["max_tokens"] == 1024 and evaluator["temperature"] == 0
    assert evaluator["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in teacher and "temperature" not in teacher
    # the student's first call: its prompt, the opening and the teacher's turn, all user turns
    assert [m["role"] for m in student["messages"]] == ["system", "user", "user"]
    assert student["messages"][2]["content"] == "个位上的数字是多少？"
    dialog = evaluator["messages"][1]["content"]
    assert "teacher: 个位上的数字是多少？\nstudent: 是7吗？\nteacher: 很好！下课" in dialog
    (row,) = list(BenchStore(store).answers(outcome.run_id))
    assert row["result"] == "pass" and row["score"] == 4
    document = json.loads(dialogue_files(store, outcome.run_id)["dialogues.jsonl"])
    roles = [m["role"] for m in document["messages"]]
    assert roles == ["opening", "teacher", "student", "teacher"]
    first = document["messages"][1]
    assert (first["reasoning"], first["content"]) == ("先看个位", "个位上的数字是多少？")
    store.close()
