"""A deterministic fake model, registered like any other (``scripted/...``).

Its behaviour is set by options in the id, as a query string::

    scripted/echo                      echo the last user message
    scripted/lorem?words=200           fixed lorem-ipsum text of 200 words
    scripted/echo?text=Hello%20there   say exactly this
    scripted/echo?ttft=0.5&tps=40      first token after 0.5 s, then 40 tokens/s
    scripted/echo?fail=429             fail before the first token
                                       (429, 401, 402, 400, 413, 500, 529)
    scripted/lorem?disconnect_after=5  drop the "connection" after 5 tokens
    scripted/echo?refuse=1             refuse (stop_reason=refusal)
    scripted/echo?fixture=diagram      answer with a packaged answer file (scripted_answers/)
    scripted/sketch                    draw a small Excalidraw diagram, 120 tokens/s
    scripted/sculpt                    build a small sculpture (a brazier), 120 tokens/s
    scripted/guess                     answer in a benchmark's format with a deterministic
                                       guess: a choice letter, a boxed number, a judge verdict,
                                       a teaching evaluation (scores 1-5)
    scripted/guess?accuracy=0.85       answer right with probability 0.85 where the prompt
                                       carries a reference marker (see below)
    scripted/guess?accuracy=0.85&seed=2  the same, an independent draw per item

Teaching dialogues (spec §15) have three more, one for each dialogue role::

    scripted/tutor                     a tutor asking one numbered question a turn
                                       ("(step 3) …"); it never ends the lesson, so a
                                       guided dialogue runs to its step limit
    scripted/tutor?end_after=4         the same, saying 下课 on its 4th turn (the step number
                                       is read from its own last turn, which every memory
                                       window keeps)
    scripted/student                   a learner's hesitant reply, deterministic per turn
    scripted/evaluator?score=4         the evaluation in the marked JSON format: every field
                                       of the prompt's example set to the score (default 4)
    scripted/evaluator?score=5&veto=1  the same, with the first field (role consistency) 1

A token is one whitespace-separated word. Output beyond ``max_tokens`` is cut off with
``stop_reason=max_tokens``, exactly like a real budget. An effort level adds reasoning tokens
(low ¼, medium ½, high 1× the answer's length) that come first and count against the budget.
Used for demos, tests and benchmarks; it never touches the network.

**Accuracy** (``accuracy=P``, 0–1, for offline tests that a sweep detects a worse setting):
a request carries no reference answer (``Request`` and ``GenerateSettings`` have no
metadata field, and the benchmark runner sends only the prompt), so ``scripted/guess`` reads
it from a marker, ``[scripted-reference: X]``, that only tests put into an item's prompt;
real benchmark prompts never contain it, and without it ``accuracy`` changes nothing (the
plain guess). With it, the answer is ``X`` with probability ``P`` and otherwise a wrong one in
the same format (another option letter of the prompt, a different number, ``not X``),
decided by a sha256 of the prompt and ``seed`` (default 0): the same prompt always gets the
same answer, and different seeds draw independently; so do a request's repeats
(``GenerateSettings.sample``, set by ``--repeats``). A smaller ``P`` with the same seed
answers right on a subset of the items a larger one does (one uniform draw per item).

**A gate** (``gate=NAME``, for tests that need several processes to be in a state at once, not a
race against time): every call waits before its first token until the file
``$SWEEPBENCH_HOME/gates/NAME`` exists (``NAME``: letters, digits, ``.``, ``_``, ``-``), and
fails (a bad request) if it does not appear within :data:`GATE_MAX_S`. With ``gate_after=K`` the
first ``K`` calls of each process pass without waiting; with ``gate_at=T`` a call streams its
reasoning and the first ``T`` tokens of its answer and waits there (a stop that must land
mid-answer). A test opens the gate once the store shows the state it needs — e.g. every worker
of a shared run holding claims — and nothing can finish before that, however loaded the machine.
The estimate ignores the wait::

    scripted/guess?gate=go               every call waits for $SWEEPBENCH_HOME/gates/go
    scripted/guess?gate=go&gate_after=5  each process answers 5 calls, then waits
    scripted/sketch?gate=go&gate_at=200  every call streams 200 answer tokens, then waits
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import AsyncGenerator
from pathlib import Path
from urllib.parse import parse_qsl

from sweepbench.errors import ErrorKind, ProviderError, UserError
from sweepbench.models.base import (
    Event,
    Finish,
    Model,
    ReasoningDelta,
    Request,
    TextDelta,
    Usage,
    UsageEvent,
    last_user_text,
)
from sweepbench.models.catalog import ModelInfo

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation "
    "ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in "
    "reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur."
).split()

EFFORT_REASONING = {"low": 0.25, "medium": 0.5, "high": 1.0}

FAULTS: dict[int, tuple[ErrorKind, str]] = {
    400: (ErrorKind.BAD_REQUEST, "scripted bad request"),
    401: (ErrorKind.AUTH, "scripted authentication failure"),
    402: (ErrorKind.QUOTA, "scripted: insufficient credit"),
    413: (ErrorKind.CONTEXT_OVERFLOW, "scripted: prompt is too long"),
    429: (ErrorKind.RETRYABLE, "scripted rate limit"),
    500: (ErrorKind.RETRYABLE, "scripted server error"),
    529: (ErrorKind.RETRYABLE, "scripted overload"),
}

OPTIONS = {
    "text",
    "fixture",
    "words",
    "ttft",
    "tps",
    "fail",
    "retry_after",
    "disconnect_after",
    "refuse",
    "end_after",
    "score",
    "veto",
    "accuracy",
    "seed",
    "gate",
    "gate_after",
    "gate_at",
}
BOUNDS: dict[str, tuple[type[int] | type[float], float, float]] = {
    "words": (int, 0, 100_000),
    "ttft": (float, 0.0, 60.0),
    "tps": (float, 0.0, 100_000.0),
    "fail": (int, 0, 999),
    "retry_after": (float, 0.0, 600.0),
    "disconnect_after": (int, 0, 100_000),
    "end_after": (int, 1, 1_000),
    "score": (float, 0.0, 10.0),
    "veto": (int, 0, 1),
    "accuracy": (float, 0.0, 1.0),
    "seed": (int, 0, 2**31 - 1),
    "gate_after": (int, 0, 100_000),
    "gate_at": (int, 0, 100_000),
}
"""Each numeric option's type and range: a scripted model is free, so nothing else bounds what
it may cost the machine (a ``words=300000000`` answer, a ``ttft`` holding a slot for hours)."""
MIN_TPS = 1.0
"""A ``tps`` above 0 (0 = as fast as possible) is at least this: no call trickles for hours."""
ANSWERS = Path(__file__).with_name("scripted_answers")
"""Packaged answers (``fixture=NAME`` reads ``NAME.json``)."""
DEMOS = {"sketch": "diagram", "sculpt": "brazier"}
"""Models that answer with a packaged artifact, for keyless demos of the drawing and sculpture
pages; they stream at a visible pace unless ``tps`` says otherwise."""
DEMO_TPS = 120.0
GATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
GATE_POLL_S = 0.05
GATE_MAX_S = 600.0
"""How long a call waits at a closed gate before it fails (a test that never opens it)."""
_gate_passes: dict[str, int] = {}
"""Calls of this process that passed each gate without waiting (``gate_after``), by path."""


def gate_path(name: str) -> Path:
    """The file whose existence opens the gate ``name`` (under ``SWEEPBENCH_HOME``)."""
    from sweepbench.settings import home

    return home() / "gates" / name


_LETTERS = re.compile(r"(?<![A-Za-z0-9])\(?([A-J])[).．、]")
"""Option labels such as "A)", "(B)", "C." or "D、", inline or at the start of a line."""


def _pick(text: str, count: int) -> int:
    """A stable choice among ``count`` options, from the text (not Python's salted hash)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % count


EVAL_START = "<START OF EVAL OUTPUT>"
EVAL_END = "<END OF EVAL OUTPUT>"
_STEP = re.compile(r"\(step (\d+)\)")


def evaluation_fields(prompt: str) -> list[str]:
    """The field names of the example object a teaching evaluation prompt shows (the last
    marked block), or ``["score"]`` when there is none."""
    start = prompt.rfind(EVAL_START)
    if start >= 0:
        body = prompt[start + len(EVAL_START) :].split(EVAL_END)[0]
        try:
            example = json.loads(body)
        except ValueError:
            example = None
        if isinstance(example, dict) and example:
            return [str(k) for k in example]
    return ["score"]


def evaluation_prompt(request: Request) -> str:
    """The text that shows a teaching evaluation's format: the last user message, or — where
    the example sits in the system prompt, as ELBench's evaluator sends it — every message."""
    prompt = last_user_text(request.messages)
    if EVAL_START in prompt:
        return prompt
    return "\n".join(m.content for m in request.messages)


def evaluation(prompt: str, score: float, *, veto: bool = False) -> str:
    """A teaching evaluation in the marked format: every field at ``score`` (the first at 1
    with ``veto``)."""
    fields = evaluation_fields(prompt)
    value: float | int = int(score) if float(score).is_integer() else score
    values = {name: (1 if veto and i == 0 else value) for i, name in enumerate(fields)}
    return f"Evaluated.\n{EVAL_START}\n{json.dumps(values, ensure_ascii=False)}\n{EVAL_END}"


def tutor(request: Request, end_after: int | None) -> str:
    """A tutor's turn: the next numbered question, or the end of the lesson."""
    last = next((m.content for m in reversed(request.messages) if m.role == "assistant"), "")
    found = _STEP.search(last)
    step = int(found.group(1)) + 1 if found else 1
    if end_after is not None and step >= end_after:
        return f"(step {step}) Well done, you worked it out yourself! 下课"
    return f"(step {step}) Good. What do you think the next step is?"


def student(request: Request) -> str:
    """A learner's hesitant reply (deterministic per prompt)."""
    guess_number = _pick(last_user_text(request.messages), 10)
    return f"Hmm, I am not sure. Is it {guess_number}? Could you give me a hint?"


def guess(request: Request) -> str:
    """What ``scripted/guess`` answers: a verdict when asked for one (its JSON schema names
    the labels), an ``ANSWER: X`` line when the question lists options, a boxed number when
    it asks for ``\\boxed{}``, a number alone on the last line when it asks for the final
    number, otherwise a short plain sentence. Deterministic per prompt."""
    prompt = last_user_text(request.messages)
    if EVAL_START in (shown := evaluation_prompt(request)):
        return evaluation(shown, _pick(prompt, 5) + 1)
    schema = request.settings.response_format or {}
    labels = schema.get("properties", {}).get("judge_result", {}).get("enum")
    if labels:
        label = labels[_pick(prompt, len(labels))]
        if "score" not in schema.get("properties", {}):
            return json.dumps({"judge_result": label})
        score = 1.0 if label == labels[0] else 0.0
        return json.dumps({"judge_result": label, "score": score, "judge_reason": "a guess"})
    letters = sorted(set(_LETTERS.findall(prompt))) or (
        ["A", "B", "C", "D"] if "[LETTER" in prompt else []
    )
    if letters:
        letter = letters[_pick(prompt, len(letters))]
        return f"答案：{letter}" if "答案" in prompt else f"ANSWER: {letter}"
    if "boxed" in prompt:
        return f"The answer is \\boxed{{{_pick(prompt, 100)}}}."
    # "write only the final number on the last line" (the sample's arithmetic) and the like
    number_asked = r"\b(?:final|last)\b[^.\n]*\bnumber\b|\bnumber\b[^.\n]*\blast line\b"
    if re.search(number_asked, prompt, re.IGNORECASE):
        return f"A guess.\n{_pick(prompt, 100)}"
    return "This is a scripted answer."


REFERENCE = re.compile(r"\[scripted-reference:\s*([^\]]+?)\s*\]")
"""The marker a test puts in a prompt to tell ``accuracy=P`` the item's reference answer."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _unit(text: str) -> float:
    """A stable uniform draw in [0, 1) from the text."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:13], 16) / 16**13


def wrong_answer(reference: str, prompt: str) -> str:
    """A deterministic wrong answer in the reference's form: another option letter of the
    prompt, a different number, or ``not X``."""
    letters: list[str] = sorted(set(_LETTERS.findall(prompt)) - {reference})
    if len(reference) == 1 and reference in "ABCDEFGHIJ":
        others = letters or [x for x in "ABCD" if x != reference]
        return others[_pick(prompt, len(others))]
    if _NUMBER.fullmatch(reference):
        step = 1 + _pick(prompt, 9)
        if "." in reference:
            return f"{float(reference) + step:g}"
        return str(int(reference) + step)
    return f"not {reference}"


def accurate_guess(request: Request, accuracy: float, seed: int) -> str:
    """``scripted/guess?accuracy=P``: the marked reference with probability ``P`` (seeded per
    prompt), otherwise a wrong answer, in the format :func:`guess` would answer in; the
    plain guess when the prompt has no marker."""
    prompt = last_user_text(request.messages)
    found = REFERENCE.search(prompt)
    if found is None:
        return guess(request)
    reference = found.group(1)
    sample = request.settings.sample  # a repeat draws anew; the first keeps the old draw
    draw = f"{seed}\x00{prompt}" if not sample else f"{seed}\x00{sample}\x00{prompt}"
    right = _unit(draw) < accuracy
    value = reference if right else wrong_answer(reference, prompt)
    return _formatted(prompt, value)


def _formatted(prompt: str, value: str) -> str:
    """``value`` in the answer format the prompt asks for (as :func:`guess` answers)."""
    if len(value) == 1 and value in "ABCDEFGHIJ":
        return f"答案：{value}" if "答案" in prompt else f"ANSWER: {value}"
    if "boxed" in prompt:
        return f"The answer is \\boxed{{{value}}}."
    return f"A guess.\n{value}"


def answer_file(name: str) -> str:
    """The text of a packaged answer; an unknown name is a UserError listing the known ones."""
    known = sorted(p.stem for p in ANSWERS.glob("*.json"))
    if name not in known:
        raise UserError(f"no scripted answer {name!r}; known: {', '.join(known)}")
    return (ANSWERS / f"{name}.json").read_text("utf-8")


def parse_options(name: str) -> tuple[str, dict[str, str]]:
    """Split ``echo?tps=40`` into ``("echo", {"tps": "40"})``. An unknown option, a number
    that is not one, or one outside its range (:data:`BOUNDS`) is a UserError naming it."""
    base, _, query = name.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True))
    unknown = set(options) - OPTIONS
    if unknown:
        raise UserError(
            f"unknown option(s) {', '.join(sorted(unknown))} for scripted/{base}; "
            f"known: {', '.join(sorted(OPTIONS))}"
        )
    for option, text in options.items():
        if option in BOUNDS:
            _bounded(base, option, text)
    return base, options


def _bounded(base: str, option: str, text: str) -> float:
    """The value of a numeric option, checked against its range."""
    kind, low, high = BOUNDS[option]
    where = f"scripted/{base}: {option}={text!r}"
    try:
        value = float(int(text)) if kind is int else float(text)
    except ValueError:
        raise UserError(
            f"{where} is not {'a whole number' if kind is int else 'a number'}"
        ) from None
    if not math.isfinite(value) or not low <= value <= high:
        raise UserError(f"{where} is out of range: it must be between {low:g} and {high:g}")
    if option == "tps" and 0 < value < MIN_TPS:
        raise UserError(f"{where} is too slow: use 0 (as fast as possible) or at least {MIN_TPS:g}")
    return value


class ScriptedModel(Model):
    """The deterministic fake model."""

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """Every token it makes streams, its reasoning included."""
        return True

    provider = "scripted"

    def __init__(self, info: ModelInfo) -> None:
        super().__init__(info)
        self.base, options = parse_options(info.name)  # every number checked and bounded

        def number(option: str) -> float | None:
            return float(options[option]) if option in options else None

        def whole(option: str) -> int | None:
            return int(options[option]) if option in options else None

        self.ttft = number("ttft") or 0.0
        tps = number("tps")  # 0 = as fast as possible
        self.tps = (DEMO_TPS if self.base in DEMOS else 0.0) if tps is None else tps
        self.words = whole("words")
        self.fail = whole("fail")
        self.retry_after = number("retry_after")
        self.disconnect_after = whole("disconnect_after")
        self.refuse = options.get("refuse", "") not in ("", "0")
        self.end_after = whole("end_after")
        self.score = number("score")
        self.veto = options.get("veto", "") not in ("", "0")
        self.accuracy = number("accuracy")
        self.seed = whole("seed") or 0
        self.text = options.get("text")
        fixture = options.get("fixture") or DEMOS.get(self.base)
        if self.text is None and fixture:
            self.text = answer_file(fixture)
        self._fixed: dict[str | None, list[Event]] = {}
        self.gate = options.get("gate")
        self.gate_after = whole("gate_after") or 0
        self.gate_at = whole("gate_at") or 0
        if self.gate is not None and not GATE_NAME.fullmatch(self.gate):
            raise UserError(
                f"scripted: gate={self.gate!r} is not a plain name (letters, digits, . _ -)"
            )
        for needs_gate in ("gate_after", "gate_at"):
            if self.gate is None and needs_gate in options:
                raise UserError(f"scripted: {needs_gate} needs gate=NAME")
        if self.fail is not None and self.fail not in FAULTS:
            raise UserError(f"scripted: fail={self.fail} is not one of {sorted(FAULTS)}")

    def answer_words(self, request: Request) -> list[str]:
        """The whole answer the model would give with an unlimited budget."""
        if self.text is not None:
            words = self.text.split()
        elif self.base == "guess" and self.accuracy is not None:
            words = accurate_guess(request, self.accuracy, self.seed).split(" ")
        elif self.base == "guess":
            words = guess(request).split(" ")
        elif self.base == "tutor":
            words = tutor(request, self.end_after).split(" ")
        elif self.base == "student":
            words = student(request).split(" ")
        elif self.base == "evaluator":
            prompt = evaluation_prompt(request)
            score = 4.0 if self.score is None else self.score
            words = evaluation(prompt, score, veto=self.veto).split(" ")
        elif self.base == "lorem":
            count = self.words or len(LOREM)
            words = [LOREM[i % len(LOREM)] for i in range(count)]
        else:
            words = last_user_text(request.messages).split()
        return words[: self.words] if self.words is not None else words

    def script(self, request: Request, effort: str | None) -> list[Event]:
        """The deltas a call streams with an unlimited budget: reasoning first (by effort),
        then the answer, one word a token. A fixed answer (``text=``, a fixture) is the same
        script for every request of one effort: made once (the events are immutable)."""
        if self.text is not None:
            fixed = self._fixed.get(effort)
            if fixed is None:
                fixed = self._fixed[effort] = self._script(request, effort)
            return fixed
        return self._script(request, effort)

    def _script(self, request: Request, effort: str | None) -> list[Event]:
        words = self.answer_words(request)
        thinking = int(len(words) * EFFORT_REASONING.get(effort or "", 0.0))
        plan: list[Event] = [ReasoningDelta(f"step{i + 1} ") for i in range(thinking)]
        return plan + [TextDelta(word if i == 0 else " " + word) for i, word in enumerate(words)]

    def expected_seconds(self, request: Request, effort: str | None) -> float:
        """The time a call takes, from the options: ``ttft``, then one token every ``1/tps``
        seconds (``tps=0``: no wait), up to the budget or the scripted disconnect."""
        if self.fail is not None or self.refuse:
            return self.ttft
        tokens = min(len(self.script(request, effort)), self.max_tokens(request))
        if self.disconnect_after is not None:
            tokens = min(tokens, self.disconnect_after)
        return self.ttft + (tokens / self.tps if self.tps > 0 else 0.0)

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        budget = self.max_tokens(request)
        input_tokens = 0
        for sent in request.messages:
            input_tokens += len(sent.content.split())
        if self.gate is not None and not self.gate_at:
            await self._pass_gate(self.gate)
        if self.ttft:
            await asyncio.sleep(self.ttft)
        if self.fail is not None:
            kind, message = FAULTS[self.fail]
            raise ProviderError(
                message,
                kind=kind,
                provider=self.provider,
                status=self.fail,
                retry_after=self.retry_after,
            )
        if self.refuse:
            yield UsageEvent(Usage(input_tokens=input_tokens))
            yield Finish("refusal", provider_reason="refusal")
            return
        plan = self.script(request, effort)
        delay = 1.0 / self.tps if self.tps > 0 else 0.0
        count = reasoning = 0
        for count, event in enumerate(plan[:budget], start=1):
            held_here = self.gate_at and count - reasoning == self.gate_at + 1
            if self.gate is not None and held_here and not isinstance(event, ReasoningDelta):
                await self._pass_gate(self.gate)  # T answer tokens are out: this one waits
            if delay:
                await asyncio.sleep(delay)
            elif count % 64 == 0:
                await asyncio.sleep(0)  # stay cancellable on huge outputs
            reasoning += event.kind == "reasoning"
            yield event
            if self.disconnect_after is not None and count >= self.disconnect_after:
                yield UsageEvent(Usage(input_tokens, count, reasoning))
                raise ProviderError(
                    f"scripted disconnect after {count} tokens",
                    kind=ErrorKind.RETRYABLE,
                    provider=self.provider,
                )
        yield UsageEvent(Usage(input_tokens, count, reasoning))
        truncated = len(plan) > budget
        yield Finish(
            "max_tokens" if truncated else "end",
            provider_reason="max_tokens" if truncated else "end",
        )

    async def _pass_gate(self, name: str) -> None:
        """Wait until the gate's file exists (the first ``gate_after`` calls of this process
        pass at once); a gate that stays shut for :data:`GATE_MAX_S` fails the call."""
        path = gate_path(name)
        passed = _gate_passes.get(str(path), 0)
        if passed < self.gate_after:
            _gate_passes[str(path)] = passed + 1
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GATE_MAX_S
        while not path.exists():
            if loop.time() > deadline:
                raise ProviderError(
                    f"scripted: gate {name!r} did not open within {GATE_MAX_S:g} s",
                    kind=ErrorKind.BAD_REQUEST,
                    provider=self.provider,
                )
            await asyncio.sleep(GATE_POLL_S)
