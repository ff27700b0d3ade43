"""Strict and loose IFEval evaluation of one response, and the Score the runner records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.ifeval.instructions import INSTRUCTIONS, Check
from sweepbench.bench.scoring.ifeval.kwargs import parse_kwargs_entry, validate_kwargs
from sweepbench.bench.scoring.registry import scorer
from sweepbench.errors import DataError

KwargsEntry = Mapping[str, Any] | str | None


@dataclass(frozen=True)
class IFEvalResult:
    """Per-instruction and prompt-level verdicts, strict and loose."""

    strict: list[bool]
    loose: list[bool]
    prompt_strict: bool
    prompt_loose: bool


def build_check(instruction_id: str, kwargs: KwargsEntry, prompt: str = "") -> Check:
    """Validate one instruction's kwargs and return its check.

    ``combination:repeat_prompt`` without ``prompt_to_repeat`` repeats ``prompt`` instead.
    Raises DataError for an unknown id or bad kwargs."""
    spec = INSTRUCTIONS.get(instruction_id)
    if spec is None:
        raise DataError(f"unknown IFEval instruction id {instruction_id!r}")
    args = validate_kwargs(instruction_id, parse_kwargs_entry(kwargs, instruction_id), spec.kwargs)
    if instruction_id == "combination:repeat_prompt" and "prompt_to_repeat" not in args:
        if not prompt.strip():
            raise DataError(
                "IFEval instruction 'combination:repeat_prompt' needs kwarg 'prompt_to_repeat' "
                "or a prompt"
            )
        args["prompt_to_repeat"] = prompt
    return spec.build(args)


def build_checks(
    instruction_ids: Sequence[str], kwargs: Sequence[KwargsEntry], prompt: str = ""
) -> list[Check]:
    """Build the checks of one item; the two lists must have the same length."""
    if isinstance(instruction_ids, str) or isinstance(kwargs, str):
        raise DataError("IFEval instruction ids and kwargs must be lists, not a string")
    if len(instruction_ids) != len(kwargs):
        raise DataError(
            f"IFEval item has {len(instruction_ids)} instruction ids but {len(kwargs)} kwargs"
        )
    return [
        build_check(instruction_id, entry, prompt)
        for instruction_id, entry in zip(instruction_ids, kwargs, strict=True)
    ]


def loose_variants(response: str) -> list[str]:
    """The 8 texts loose scoring tries: the response with its first line, last line, both or
    neither removed, each as is and with every ``*`` deleted."""
    lines = response.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    bases = [response, without_first, without_last, without_both]
    return bases + [text.replace("*", "") for text in bases]


def _passes(check: Check, text: str) -> bool:
    """A check passes only on a text that is not blank."""
    return bool(text.strip()) and check(text)


def check_instructions(
    response: str,
    instruction_ids: Sequence[str],
    kwargs: Sequence[KwargsEntry],
    prompt: str = "",
) -> IFEvalResult:
    """Check a response against an item's instructions, strictly and loosely.

    Strict: each check on the response itself (a blank response fails all). Loose: a check
    passes when any of :func:`loose_variants` passes it. Raises DataError for bad items."""
    checks = build_checks(instruction_ids, kwargs, prompt)
    variants = loose_variants(response)
    strict = [_passes(check, response) for check in checks]
    loose = [
        passed or any(_passes(check, text) for text in variants)
        for check, passed in zip(checks, strict, strict=True)
    ]
    return IFEvalResult(strict, loose, all(strict), all(loose))


def score_ifeval(
    response: str,
    instruction_ids: Sequence[str],
    kwargs: Sequence[KwargsEntry],
    prompt: str = "",
) -> Score:
    """Grade an IFEval answer: 1/pass when every instruction is followed strictly, else 0/fail.

    The metadata keeps the instruction-level strict and loose verdicts and prompt-level loose."""
    result = check_instructions(response, instruction_ids, kwargs, prompt)
    failed = [
        instruction_id
        for instruction_id, passed in zip(instruction_ids, result.strict, strict=True)
        if not passed
    ]
    reason = "all instructions followed" if not failed else "not followed: " + ", ".join(failed)
    return Score.binary(
        result.prompt_strict,
        reason,
        instruction_strict=result.strict,
        instruction_loose=result.loose,
        prompt_loose=result.prompt_loose,
        instruction_ids=list(instruction_ids),
    )


@scorer("ifeval")
def ifeval_task(task: Task, item: Item, response: str) -> Score:
    """An IFEval answer, by :func:`score_ifeval`, with the item's instructions and their
    arguments (and its original prompt, which some checks read)."""
    meta = item.metadata
    return score_ifeval(
        response,
        meta.get("instruction_id_list") or [],
        meta.get("kwargs") or [],
        prompt=str(meta.get("ifeval_prompt") or item.prompt),
    )
