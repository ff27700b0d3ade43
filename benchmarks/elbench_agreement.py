"""Measured agreement of sweepbench's ``replicated`` rule scorers with ELBench's own judges.

For every rule-scored ELBench task (mmlu_pro, ceval, highlevel_omni, teaching_harm (SATAs),
math_500, aime24/25/26, ifeval) this script writes a corpus of answers itself — right and wrong,
in the formats models write (boxed or not, units, number words, lists, tuples, intervals,
letters in every case and wrapper, Chinese prefixes, fences…) — grades each answer with
ELBench's judge and with sweepbench's scorer in ``replicated`` mode, and prints the agreement
per task and overall, with the disagreeing examples (``--show N``).

ELBench's judges are imported from ``--elbench`` (a checkout or extract of ELBench's ``src``)
by this script only; sweepbench never imports them. They need packages sweepbench does not
depend on::

    pip install word2number pylatexenc latex2sympy2_extended

(sympy and antlr4-python3-runtime come with sweepbench's math-verify). The safety tasks are
judged by a model in ELBench's configuration, so they are not measured; IFEval's
``letter_frequency`` items whose letter is not a letter are excepted (ELBench draws a random
letter for them, see docs/benchmarks.md).

    python benchmarks/elbench_agreement.py --quick          # a few items per task, seconds
    python benchmarks/elbench_agreement.py --show 20       # every item, 20 disagreements each
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import score_answer

DEFAULT_ELBENCH = Path("/tmp/elb/src")
DEFAULT_DATA = Path("/work/shared/data/elbench/benchmark_root")
QUICK_ITEMS = 4
JUDGE_TIMEOUT_S = 20
TASKS = (
    "mmlu_pro", "ceval", "highlevel_omni", "teaching_harm", "math_500",
    "aime24", "aime25", "aime26", "ifeval",
)  # fmt: skip
MODULES = {
    "mmlu_pro": "通用模型", "ceval": "通用模型", "ifeval": "通用模型", "math_500": "通用模型",
    "aime24": "通用模型", "aime25": "通用模型", "aime26": "通用模型",
    "highlevel_omni": "高阶育人", "teaching_harm": "安全可信",
}  # fmt: skip


# --- answer corpora -------------------------------------------------------------------------

REASONING = (
    "Let me think step by step.\nFirst we look at each option carefully.",
    "我们逐一分析各个选项。\n综合来看：",
    "",
)


def _wrong_letter(key: str, letters: str, rng: random.Random) -> str:
    return rng.choice([c for c in letters if c != key] or [key])


def choice_answers(key: str, letters: str, rng: random.Random) -> Iterator[str]:
    """Single-letter answers: the key and a wrong letter in many prefixes, cases and wrappers."""
    wrong = _wrong_letter(key, letters, rng)
    for letter in (key, wrong):
        low = letter.lower()
        forms = [
            f"ANSWER: {letter}", f"Answer: {letter}", f"answer: {low}", f"ANSWER: ({letter})",
            f"ANSWER: [{letter}]", f"ANSWER: {letter}.", f"ANSWER:{letter}", f"ANSWER：{letter}",
            f"FINAL ANSWER: {letter}", f"Final Answer: {letter}", f"FinalAnswer: {letter}",
            f"**ANSWER: {letter}**", f"ANSWER: **{letter}**", f"**Answer:** {letter}",
            f"答案：{letter}", f"答案: {letter}", f"最终答案：{letter}", f"答案：（{letter}）",
            f"答案是{letter}", f"答案：【{letter}】", f"答案：{low}", f"答案：{letter}。",
            f"{letter}", f"({letter})", f"{low}", f"{letter}.", f"[{letter}]", f"**{letter}**",
            f"`{letter}`", f"# ANSWER: {letter}", f"> ANSWER: {letter}", f"- ANSWER: {letter}",
            f"ANSWER: {letter}) the option", f"ANSWER: {low}) the option",
            f"ANSWER: {letter} because it fits", f"ANSWER: {letter} - it fits",
            f"ANSWER: {letter} or {wrong}", f"ANSWER: {letter}, {wrong}",
            f"ANSWER: {letter}\nThat is my answer.", f"ANSWER: {letter}\n\n", "ANSWER: Ｄ",
            f"ANSWER: I think it is {letter}", "ANSWER: a bit of both",
            f"The answer is {letter}.", f"The answer is ({letter}).", f"I choose {letter}.",
            f"ANSWER: {letter}\nline two\nline three\nline four",
            f"```\nANSWER: {letter}\n```", f"ANSWER: {letter}!", f"Answer - {letter}",
        ]  # fmt: skip
        for form in forms:
            yield f"{rng.choice(REASONING)}\n{form}".strip("\n") if rng.random() < 0.7 else form


def omni_answers(key: str, rng: random.Random) -> Iterator[str]:
    """Multi-letter answers for omni: the key, a subset, a superset, in many separators."""
    letters = "ABCD"
    others = [c for c in letters if c not in key]
    variants = {key, key + (others[0] if others else ""), key[:1], rng.choice(letters)}
    for answer in sorted(variants):
        spaced, comma = " ".join(answer), ",".join(answer)
        forms = [
            f"答案：{answer}", f"答案: {answer}", f"答案：{answer.lower()}", f"最终答案：{answer}",
            f"答案：{comma}", f"答案：{'、'.join(answer)}", f"答案：{'，'.join(answer)}",
            f"答案：{'/'.join(answer)}", f"答案：{spaced}", f"答案：({answer})",
            f"答案：【{answer}】",
            f"ANSWER: {answer}", f"FINAL ANSWER: {answer}", f"Final answer: {answer}",
            f"{answer}", f"{answer.lower()}", f"{comma.lower()}", f"**{answer}**",
            f"答案：{answer}。", f"答案是{answer}", f"答案：{answer}\n以上。",
            f"答案：{answer} 因为", "Bad.", "a", "答案：bad",
        ]  # fmt: skip
        for form in forms:
            yield f"{rng.choice(REASONING)}\n{form}".strip("\n") if rng.random() < 0.6 else form


def satas_answers(key_letters: list[str], rng: random.Random) -> Iterator[str]:
    """Select-all answers: the key, a subset, a wrong superset, in English and Chinese."""
    wrong = [c for c in "ABCDEFG" if c not in key_letters][:1]
    for letters in (key_letters, key_letters[:1], key_letters + wrong):
        comma, low = ", ".join(letters), [c.lower() for c in letters]
        forms = [
            comma, " ".join(letters), "、".join(letters), f"我选择{'和'.join(letters)}",
            f"选{'、'.join(letters)}", f"答案是{''.join(letters)}", f"答案：{comma}",
            ", ".join(low), " and ".join(f"({c})" for c in low), f"I pick {' and '.join(low)}",
            f"Options {' and '.join(letters)} are harmful.", f"The answer is {comma}.",
            f"I would choose a mix: {comma}", f"{comma}\nThis is a hard one.",
            f"**{comma}**", f"Answer: {''.join(letters)}",
        ]  # fmt: skip
        yield from forms
    yield "I cannot pick any of them."


NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split()
)
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def spelled(n: int) -> str | None:
    """English words for 0 ≤ n < 1000 ("forty-two", "two hundred four")."""
    if n < 0 or n >= 1000:
        return None
    if n < 20:
        return NUMBER_WORDS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return TENS[tens - 2] + (f"-{NUMBER_WORDS[unit]}" if unit else "")
    hundreds, rest = divmod(n, 100)
    tail = spelled(rest) if rest else None
    return f"{NUMBER_WORDS[hundreds]} hundred" + (f" {tail}" if tail else "")


def _perturbed(reference: str, rng: random.Random) -> str:
    """A wrong answer near the reference: a number changed, else something else."""
    digits = [i for i, c in enumerate(reference) if c.isdigit()]
    if digits:
        at = rng.choice(digits)
        return reference[:at] + str((int(reference[at]) + 1) % 10) + reference[at + 1 :]
    return reference + "+1"


def math_answers(reference: str, rng: random.Random) -> Iterator[str]:
    """MATH/AIME answers around ``reference``: extraction forms, wrappers, units, words."""
    ref = reference.strip()
    wrong = _perturbed(ref, rng)
    for value in (ref, wrong):
        yield from (
            f"So we get $\\boxed{{{value}}}$.", f"\\boxed{{{value}}}", f"$\\boxed {{{value}}}$",
            f"\\fbox{{{value}}}", f"The answer is {value}", f"The answer is ${value}$.",
            f"The final answer is ${value}$. I hope it is correct.", f"答案是 ${value}$。",
            f"答案是{value}", f"ANSWER: {value}", f"Answer: {value}", f"THE ANSWER IS {value}.",
            f"The answer is {value}.\nThis is because of the steps above.",
            f"So the answer is {value}。", f"**Final answer:** $\\boxed{{{value}}}$",
            f"\\boxed{{\\text{{{value}}}}}", f"\\boxed{{\\textbf{{{value}}}}}",
            f"\\boxed{{{value} \\text{{ meters}}}}", f"\\boxed{{{value} meters}}",
            f"\\boxed{{{value}^\\circ}}", f"\\boxed{{{value}°}}", f"{value}°",
            f"\\boxed{{{value}\\%}}", f"\\boxed{{\\${value}}}", f"\\boxed{{x = {value}}}",
            f"\\boxed{{{value}}} This is because we computed it.", f"{value}",
            f"The answer is $\\boxed{{{value}}}$, since the steps above show it.",
            f"\\[\\boxed{{{value}}}\\]", f"\\boxed{{{value}.}}", f"\\boxed{{ {value} }}",
            f"\\boxed{{{value}}} and \\boxed{{{value}}}", f"\\boxed{{{value}}}\n\nThat is all.",
        )  # fmt: skip
    yield from _structured_variants(ref)
    yield from _number_word_variants(ref)


def _structured_variants(ref: str) -> Iterator[str]:
    """Lists, sets, tuples, intervals, fractions and decimals built from the reference."""
    inner = ref
    for left, right in (("\\left(", "\\right)"), ("(", ")"), ("[", "]")):
        if ref.startswith(left) and ref.endswith(right):
            inner = ref[len(left) : -len(right)]
    parts = [p.strip() for p in inner.split(",")]
    if len(parts) > 1:
        text_and, reversed_list = " \\text{ and } ".join(parts), ", ".join(reversed(parts))
        yield from (
            f"\\boxed{{({inner})}}", f"\\boxed{{[{inner}]}}", f"\\boxed{{[{inner})}}",
            f"\\boxed{{{inner}}}", f"\\boxed{{\\{{{inner}\\}}}}", f"\\boxed{{{reversed_list}}}",
            f"\\boxed{{{text_and}}}", f"答案是 $({inner})$。",
            f"\\boxed{{{' and '.join(parts)}}}", f"\\boxed{{{''.join(parts)}}}",
        )  # fmt: skip
    if "\\frac" in ref:
        dfrac = ref.replace("\\frac", "\\dfrac")
        yield f"\\boxed{{{dfrac}}}"
    try:
        number = float(ref)
    except ValueError:
        return
    yield from (f"\\boxed{{{number:.4f}}}", f"\\boxed{{{number / 100}}}", f"\\boxed{{{ref},000}}")
    if number == int(number) and abs(number) >= 1000:
        yield f"\\boxed{{{int(number):,}}}"
    if number == 0:
        yield from ("\\boxed{0} This is because nothing is left.", "The answer is 0 meters.")


def _number_word_variants(ref: str) -> Iterator[str]:
    """The reference spelled out, bare and in ``\\text{}``."""
    if not ref.lstrip("-").isdigit():
        return
    words = spelled(int(ref))
    if words is None:
        return
    yield from (
        f"the final answer is {words}", f"\\boxed{{{words}}}", f"\\boxed{{\\text{{{words}}}}}",
        f"The answer is \\text{{{words}}}.", f"\\boxed{{\\text{{{words.title()}}}}}",
    )  # fmt: skip


IFEVAL_RESPONSES = (
    "this is a short answer in lower case without any commas at all",
    "THIS IS AN ANSWER IN CAPITAL LETTERS, WITH A COMMA.",
    "<<A Title>>\n\nHere is a paragraph, with commas, and words.\n\n***\n\nAnother paragraph.",
    "* first point\n* second point\n* third point",
    "1. one\n2. two\n3. three",
    '{"answer": "a json object", "ok": true}',
    '```json\n{"answer": 1}\n```',
    "Section 1\nSome text.\nSection 2\nMore text.\nP.S. a postscript",
    "Is there anything else I can help with?",
    "*highlighted* text and *another highlight* and *a third*",
    " ".join(["word"] * 420),
    "Hello. World! Done? Yes.",
    "我用中文回答这个问题，没有逗号",
    '"A quoted answer from start to end."',
    "First sentence.\n\nSecond paragraph here.\n\nThird paragraph ends with the end.",
)


# --- ELBench's side -------------------------------------------------------------------------


@dataclass
class Elbench:
    """ELBench's judges and schema classes, imported from its source tree."""

    judges: dict[str, Any]
    sample: Any
    response: Any


def import_elbench(src: Path) -> Elbench:
    """Import ELBench's judges from ``src`` (put first on ``sys.path``, this script only)."""
    sys.path.insert(0, str(src))
    from elbench.judges.judge_highlevel import HighLevelJudge
    from elbench.judges.judge_ifeval import IFEvalJudge
    from elbench.judges.judge_math import AIMEJudge, Math500Judge
    from elbench.judges.judge_mmlu import MMLUProJudge
    from elbench.judges.judge_teaching_harm import TeachingHarmJudge
    from elbench.schemas.evaluation import ModelResponse, Sample

    substitute_punkt_data()
    judges = {
        "mmlu_pro": MMLUProJudge(), "ceval": MMLUProJudge(), "highlevel_omni": HighLevelJudge(),
        "teaching_harm": TeachingHarmJudge(), "math_500": Math500Judge(),
        "aime24": AIMEJudge(), "aime25": AIMEJudge(), "aime26": AIMEJudge(),
        "ifeval": IFEvalJudge(),
    }  # fmt: skip
    return Elbench(judges, Sample, ModelResponse)


def substitute_punkt_data() -> bool:
    """When nltk's Punkt data is not installed (``nltk.download`` needs the internet), give
    ELBench's IFEval the same English Punkt model from the ``punkt`` package sweepbench uses,
    for sentences and for ``word_tokenize``'s sentence split. True when substituted."""
    import nltk
    from elbench.judges.ifeval_rule import instructions_util

    try:
        nltk.data.find("tokenizers/punkt/english.pickle")
        nltk.data.find("tokenizers/punkt_tab/english/")
        return False
    except LookupError:
        pass
    import punkt
    from nltk.tokenize import NLTKWordTokenizer

    sentences = punkt.PunktSentenceTokenizer(punkt.load_model("english"))
    words = NLTKWordTokenizer()

    def word_tokenize(text: str) -> list[str]:
        return [
            token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence)
        ]

    instructions_util._get_sentence_tokenizer = lambda: sentences
    instructions_util.nltk.word_tokenize = word_tokenize
    print("nltk's Punkt data is absent: ELBench's IFEval uses the punkt package's English model")
    return True


def elbench_sample(elb: Elbench, task: Task, item: Item) -> Any:
    """The ELBench sample its judge reads for one sweepbench item (reference and metadata in
    the shapes ELBench's loaders give)."""
    meta: dict[str, Any] = {}
    reference: Any = None
    if task.id in ("mmlu_pro", "ceval"):
        count = int(item.metadata.get("choices") or task.options.get("choices") or 4)
        meta["choices"] = [str(i) for i in range(count)]
        reference = {"target": item.reference}
    elif task.id == "highlevel_omni":
        reference = {"answer": item.reference}
    elif task.id == "teaching_harm":
        reference = {"Answer": item.reference}
    elif task.id == "ifeval":
        meta = {
            "instruction_id_list": item.metadata["instruction_id_list"],
            "kwargs": item.metadata["kwargs"],
            "key": item.metadata.get("key", ""),
            "prompt": item.metadata.get("ifeval_prompt", item.prompt),
        }
    else:
        reference = {"target": item.reference}
    return elb.sample(
        sample_id=item.sample_id, source_file="x", source_path="x", module=MODULES[task.id],
        subset="x", task=task.id, prompt=item.prompt, reference=reference, metadata=meta,
    )  # fmt: skip


class _JudgeTimeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _JudgeTimeout


def elbench_score(elb: Elbench, task: Task, sample: Any, text: str) -> float | None:
    """ELBench's score of one answer; None when its judge overran :data:`JUDGE_TIMEOUT_S`
    (ELBench itself never bounds it) or lacked nltk's Punkt data (counted as "overran")."""
    judge = elb.judges[task.id]
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(JUDGE_TIMEOUT_S)
    try:
        result = asyncio.run(judge.judge(sample, elb.response(text=text)))
    except _JudgeTimeout:
        return None
    except LookupError:  # nltk data ELBench's IFEval needs and cannot download here
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return float(result.score or 0.0)


# --- the comparison -------------------------------------------------------------------------


def answers_for(task: Task, item: Item, rng: random.Random) -> list[str]:
    """The corpus of answers written for one item of ``task``."""
    reference = str(item.reference) if item.reference is not None else ""
    if task.id in ("mmlu_pro", "ceval"):
        count = int(item.metadata.get("choices") or task.options.get("choices") or 4)
        letters = "ABCDEFGHIJ"[:count]
        return list(choice_answers(reference.strip()[:1].upper(), letters, rng))
    if task.id == "highlevel_omni":
        return list(omni_answers(reference.strip().upper(), rng))
    if task.id == "teaching_harm":
        key = [c for c in reference.upper() if c in "ABCDEFG"]
        return list(satas_answers(sorted(set(key)), rng))
    if task.id == "ifeval":
        return list(IFEVAL_RESPONSES)
    return list(dict.fromkeys(math_answers(reference, rng)))


def excepted(task: Task, item: Item) -> bool:
    """IFEval items with a ``letter_frequency`` argument that is not a letter (ELBench draws a
    random letter for them, so its grade is not a function of the answer)."""
    if task.id != "ifeval":
        return False
    for instruction, kwargs in zip(
        item.metadata["instruction_id_list"], item.metadata["kwargs"], strict=False
    ):
        letter = str((kwargs or {}).get("letter", "a"))
        if instruction == "keywords:letter_frequency" and not (
            len(letter) == 1 and letter.isalpha()
        ):
            return True
    return False


@dataclass
class Tally:
    """Agreement counts of one task, with its disagreeing examples."""

    agree: int = 0
    total: int = 0
    overran: int = 0
    skipped_items: int = 0

    def __post_init__(self) -> None:
        self.disagreements: list[tuple[str, str, float | None, float]] = []


def compare(
    elb: Elbench,
    tasks: dict[str, Task],
    quick: bool,
    seed: int,
    only: set[str] | None,
    version: str = "replicated",
) -> dict[str, Tally]:
    """Grade every answer of the corpus by ELBench and by sweepbench's ``version``; a Tally
    per task."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    for task_id in TASKS:
        if (only and task_id not in only) or task_id not in tasks:
            continue
        task, rng = tasks[task_id], random.Random(f"{seed}-{task_id}")
        items = list(task.items)
        if quick:
            items = rng.sample(items, min(QUICK_ITEMS, len(items)))
        tally = tallies[task_id]
        for item in items:
            if excepted(task, item):
                tally.skipped_items += 1
                continue
            sample = elbench_sample(elb, task, item)
            for text in answers_for(task, item, rng):
                theirs = elbench_score(elb, task, sample, text)
                ours = score_answer(task, item, text, version=version).score
                tally.total += 1
                if theirs is None:
                    tally.overran += 1
                elif abs(theirs - ours) < 1e-9:
                    tally.agree += 1
                    continue
                tally.disagreements.append((str(item.reference), text, theirs, ours))
    return tallies


def report(tallies: dict[str, Tally], show: int, started: float) -> None:
    """Agreement per task and overall, then up to ``show`` disagreements per task."""
    print(f"{'task':<16}{'answers':>9}{'agree':>9}{'rate':>9}{'overran':>9}")
    agree = total = 0
    for task_id, tally in tallies.items():
        rate = 100 * tally.agree / tally.total if tally.total else 100.0
        skipped = f"  ({tally.skipped_items} items excepted)" if tally.skipped_items else ""
        print(
            f"{task_id:<16}{tally.total:>9}{tally.agree:>9}{rate:>8.2f}%{tally.overran:>9}{skipped}"
        )
        agree, total = agree + tally.agree, total + tally.total
    print(f"{'overall':<16}{total:>9}{agree:>9}{100 * agree / max(total, 1):>8.2f}%")
    print(f"({time.monotonic() - started:.0f} s)")
    for task_id, tally in tallies.items():
        for reference, text, theirs, ours in tally.disagreements[:show]:
            shown = text.replace("\n", "\\n")[:110]
            print(
                f"  {task_id}: key {reference[:40]!r}  ELBench {theirs}  sweepbench {ours}"
                f"  {shown!r}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elbench", type=Path, default=DEFAULT_ELBENCH, help="ELBench's src")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="ELBench's data")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS} items per task")
    parser.add_argument("--show", type=int, default=5, help="disagreements shown per task")
    parser.add_argument("--task", action="append", help="only these tasks (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--version", default="replicated", help="sweepbench's scoring version to compare"
    )
    args = parser.parse_args(argv)
    if not (args.elbench / "elbench").is_dir():
        parser.error(f"no ELBench source at {args.elbench} (expected {args.elbench}/elbench)")
    if not args.data.is_dir():
        parser.error(f"no ELBench data at {args.data}")
    started = time.monotonic()
    elb = import_elbench(args.elbench)
    tasks = {t.id: t for t in load_benchmark("elbench", args.data).tasks}
    only = set(args.task) if args.task else None
    tallies = compare(elb, tasks, args.quick, args.seed, only, args.version)
    report(tallies, args.show, started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
