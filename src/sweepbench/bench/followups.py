"""What to ask the model under test a second time (spec §10.3), and when a provider's refusal
is itself the answer (§10.2's upstream content filter)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring import retries_when_cut
from sweepbench.errors import ProviderError
from sweepbench.models.base import GenerateSettings, Message, Request, Result

FORMAT_REMINDER = (
    "Your reply did not end with the required answer line. Reply again with only that final "
    "line, exactly in the requested format (for example ANSWER: B)."
)
EMPTY_REMINDER = "Your reply was empty. Answer the question, ending with the required answer line."

_FILTER_CODES = re.compile(
    r"content[_ ]filter|invalid_prompt|data_inspection_failed|content_policy|"
    r"risky|inappropriate content|sensitive",
    re.IGNORECASE,
)


def filter_code(error: ProviderError) -> str | None:
    """The content-filter code of a 400/403 that refused the prompt itself, else None."""
    if error.status not in (400, 403):
        return None
    found = _FILTER_CODES.search(str(error.args[0]))
    return None if found is None else found.group(0).lower().replace(" ", "_")


_STEP_BY_STEP = re.compile(
    r"(?:let'?s |please )?think step[- ]by[- ]step[,.:]?\s*|一步一步地?思考[，。]?", re.IGNORECASE
)
CONCISE_CHOICE = {
    "en": "Answer with exactly one uppercase option letter ({letters}). Reply with only the "
    "final line: ANSWER: [LETTER]",
    "zh": "请只用一个大写选项字母（{letters}）作答。只输出最后一行：答案：[LETTER]",
}
MATH_FINAL = (
    "Skip the reasoning. Output only the final answer, in \\boxed{}, for example \\boxed{42}."
)
CONCISE_TOKENS = 64
MATH_RETRY_TOKENS = 512


def second_try(
    task: Task,
    item: Item,
    messages: tuple[Message, ...],
    result: Result,
    max_tokens: int,
    check: Callable[[str], bool] | None,
) -> Request | None:
    """The one extra request of spec §10.3, or None:

    - a choice answer without an extractable letter: cut by the length limit (with text, or
      after ≥ 512 reasoning tokens) → a concise prompt asking only for the letter (64 tokens);
      otherwise → the conversation so far plus a reminder of the required final line;
    - a math or AIME answer cut by the length limit → the prompt without "think step by step",
      asking only for the boxed answer (at most 512 tokens)."""
    cut = result.stop_reason == "max_tokens"
    invalid = check is not None and not check(result.text)
    if not invalid and not (cut and retries_when_cut(task)):
        return None  # the common case, first and cheap
    model = result.model
    system = tuple(m for m in messages if m.role == "system")
    if invalid:
        if cut and (result.text.strip() or result.usage.reasoning_tokens >= 512):
            choices = int(item.metadata.get("choices") or task.options.get("choices") or 4)
            letters = "".join(chr(ord("A") + i) for i in range(choices))
            language = "zh" if str(task.options.get("prefixes", "en")) == "zh" else "en"
            prompt = f"{item.prompt}\n\n{CONCISE_CHOICE[language].format(letters=letters)}"
            return Request(
                model,
                (*system, Message("user", prompt)),
                GenerateSettings(max_tokens=CONCISE_TOKENS),
            )
        reminder = EMPTY_REMINDER if not result.text.strip() else FORMAT_REMINDER
        follow = messages
        if result.text.strip():
            follow += (Message("assistant", result.text),)
        return Request(
            model, (*follow, Message("user", reminder)), GenerateSettings(max_tokens=max_tokens)
        )
    if cut and retries_when_cut(task):
        prompt = _STEP_BY_STEP.sub("", item.prompt).strip() + "\n\n" + MATH_FINAL
        budget = min(max_tokens, MATH_RETRY_TOKENS)
        return Request(
            model, (*system, Message("user", prompt)), GenerateSettings(max_tokens=budget)
        )
    return None
