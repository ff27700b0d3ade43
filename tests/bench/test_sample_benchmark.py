"""The built-in sample benchmark: it loads cleanly, covers every area, and its items suit the
scorers that grade them (and the small offline default model)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sweepbench.bench.items import Benchmark
from sweepbench.bench.scoring import format_checker, score_answer
from sweepbench.bench.scoring.ifeval import build_checks, score_ifeval
from sweepbench.bench.sources.declared import SAMPLE_FOLDER, SCORERS, sample_benchmark


@pytest.fixture(scope="module")
def sample() -> Benchmark:
    return sample_benchmark()


def test_the_sample_loads_about_forty_items_without_problems(sample: Benchmark) -> None:
    assert (sample.id, sample.name, sample.source) == ("sample", "sweepbench sample", "built in")
    assert sample.overall == "mean_of_areas" and len(sample.version) == 12
    counts = {task.id: len(task.items) for task in sample.tasks}
    assert counts == {"arithmetic": 12, "multiple_choice": 10, "instructions": 10, "explain": 8}
    assert all(task.problems == () and task.available for task in sample.tasks)
    assert sample.problems == ()


def test_every_area_has_items_and_every_scorer_is_known(sample: Benchmark) -> None:
    assert [area.label for area in sample.areas] == [
        "Arithmetic", "Multiple choice", "Instruction following", "Judged"]  # fmt: skip
    assert all(sum(len(t.items) for t in area.tasks) > 0 for area in sample.areas)
    assert {task.scorer for task in sample.tasks} == {"numeric", "choice_free", "ifeval", "judge"}
    assert all(task.scorer in SCORERS for task in sample.tasks)
    assert [t.grading for t in sample.tasks] == ["auto", "auto", "auto", "judge"]
    explain = sample.task("explain")
    assert explain.judge is not None and explain.judge.rubric.count(".") == 1


def test_item_keys_are_unique_and_prompts_are_short(sample: Benchmark) -> None:
    items = [item for task in sample.tasks for item in task.items]
    assert len({item.key for item in items}) == len(items)
    # Well under 300 tokens for a small local model: a generous 4 characters per token.
    assert max(len(item.prompt) + len(item.system or "") for item in items) < 600
    assert all("{{" not in item.prompt and "}}" not in item.prompt for item in items)


def test_the_data_uses_jsonl_csv_and_yaml_files(sample: Benchmark) -> None:
    suffixes = {Path(task.source_file).suffix for task in sample.tasks}
    assert suffixes == {".jsonl", ".csv", ".yaml"}
    assert all((SAMPLE_FOLDER / task.source_file).is_file() for task in sample.tasks)


def test_arithmetic_prompts_ask_for_the_final_number(sample: Benchmark) -> None:
    task = sample.task("arithmetic")
    assert all(item.prompt.endswith("final number on the last line.") for item in task.items)
    assert all(isinstance(float(item.reference), float) for item in task.items)
    assert task.items[1].reference == 7.5 and task.items[11].reference == "12.5"


def test_multiple_choice_answers_are_spread_and_gradable(sample: Benchmark) -> None:
    task = sample.task("multiple_choice")
    letters = Counter(item.reference for item in task.items)
    assert set(letters) == {"A", "B", "C", "D"} and max(letters.values()) <= 3
    for item in task.items:
        assert "\nA) " in item.prompt and "\nD) " in item.prompt
        assert item.prompt.endswith("Answer with the letter of the right option: A, B, C or D.")
        key = str(item.reference)
        text = str(item.metadata[key])
        wrong = "A" if key != "A" else "B"
        for reply in (f"Let me think.\nANSWER: {key}", f"{key}) {text}", f"**{key}**", text):
            assert score_answer(task, item, reply).passed, (item.sample_id, reply)
        assert not score_answer(task, item, f"{wrong}) {item.metadata[wrong]}").passed


SAMPLE_REPLIES = [  # (reply, passes for key B, a choice is read)
    ("B) Mercury", True, True),
    ("B. Mercury", True, True),
    ("**B**", True, True),
    ("The answer is B", True, True),
    ("The answer is B.", True, True),
    ("B: Mercury", True, True),
    ("Mercury", True, True),
    ("mercury.", True, True),
    ("Mercury is the closest planet to the Sun.", True, True),
    ("I think it is B) Mercury.", True, True),
    ("(B)", True, True),
    ("b", True, True),
    ("ANSWER: B", True, True),
    ("Answer: b) Mercury", True, True),
    ("Venus is second, so the answer is B.", True, True),
    ("A) Venus", False, True),
    ("Venus", False, True),
    ("A spider has eight legs.", False, False),
    ("Mercury or Venus", False, False),
    ("", False, False),
    (
        "A) Venus\nB) Mercury\nC) Mars\nD) Earth\n\nAnswer with the letter: A, B, C or D.",
        False,
        False,
    ),  # an echoed question names no choice
]


@pytest.mark.parametrize("version", ["replicated", "corrected"])
@pytest.mark.parametrize(("reply", "passed", "read"), SAMPLE_REPLIES)
def test_the_sample_reads_the_answers_models_write(
    sample: Benchmark, version: str, reply: str, passed: bool, read: bool
) -> None:
    task = sample.task("multiple_choice")
    item = next(i for i in task.items if i.sample_id == "mc-01")  # Mercury, key B
    assert score_answer(task, item, reply, version=version).passed is passed
    check = format_checker(task, item, version=version)
    assert check is not None
    assert check(reply) is read  # no reminder when a choice was read


def test_instruction_items_use_real_ifeval_checks(sample: Benchmark) -> None:
    task = sample.task("instructions")
    used = {i for item in task.items for i in item.metadata["instruction_id_list"]}
    assert {
        "punctuation:no_comma",
        "change_case:english_lowercase",
        "length_constraints:number_words",
        "detectable_format:number_bullet_lists",
        "startend:end_checker",
        "keywords:existence",
        "detectable_format:title",
    } <= used
    for item in task.items:
        meta = item.metadata
        assert len(build_checks(meta["instruction_id_list"], meta["kwargs"], item.prompt)) >= 1
    first, words = task.items[0], task.items[2]
    assert score_ifeval(
        "Spring is mild and green. Birds sing.", ["punctuation:no_comma"], [{}]
    ).passed
    assert not score_ifeval("Spring, oh spring.", first.metadata["instruction_id_list"],
                            first.metadata["kwargs"]).passed  # fmt: skip
    assert words.metadata["kwargs"] == [{"relation": "less than", "num_words": 50}]
    long_answer = " ".join(["word"] * 60)
    assert not score_ifeval(long_answer, ["length_constraints:number_words"],
                            words.metadata["kwargs"]).passed  # fmt: skip
