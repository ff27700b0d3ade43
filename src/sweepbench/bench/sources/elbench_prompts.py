"""How ELBench items are turned into prompts and answer keys (spec §10.1 and §13, "Prompt
construction quirks kept for comparability"), and the check that a teaching template carries
no literal API key (spec §20 #18). Pure functions over plain values: no files are read here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_QUESTION_BLOCK = re.compile(r"(?m)^(?:Question:|问题[：:])\s*(.*?)\n(?:Options:|选项[：:])", re.S)
"""A question/options block of a stored few-shot input (English or Chinese markers). The
marker must start a line, so "以下是一些示例问题：" does not open a block."""
_TEMPLATE_FIELD = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


def option_letters(count: int) -> str:
    """The option letters of a question with ``count`` options, comma-separated ("A,B,C,D")."""
    return ",".join(chr(ord("A") + index) for index in range(count))


def last_question(text: str) -> str | None:
    """The question text of the LAST question/options block in ``text`` (None when there is
    none). The stored inputs are few-shot prompts; only the final block is the real question."""
    matches = _QUESTION_BLOCK.findall(text)
    if not matches:
        return None
    question = str(matches[-1]).strip()
    return question or None


def zero_shot_choice_prompt(question: str, choices: Sequence[str], language: str) -> str:
    """A zero-shot multiple-choice prompt rebuilt from one question and its options, printed
    "A) …". English asks for a final line ``ANSWER: [LETTER]``; Chinese (``zh``, C-Eval) for
    ``答案：[LETTER]``. The wording follows the framework's so that scores stay comparable."""
    letters = option_letters(len(choices))
    options = [f"{chr(ord('A') + index)}) {choice}" for index, choice in enumerate(choices)]
    if language == "zh":
        head = [
            "请回答以下单项选择题。",
            "请先逐步思考，再给出答案。",
            "你回答的最后一行必须严格使用格式：答案：[LETTER]，"
            f"其中 [LETTER] 是 {letters} 中的一个。",
            "",
            "问题：",
            question,
            "选项：",
        ]
    else:
        head = [
            "Answer the following multiple choice question.",
            "Think step by step before answering.",
            "The last line of your response must be exactly: ANSWER: [LETTER], "
            f"where [LETTER] is one of {letters}.",
            "",
            "Question:",
            question,
            "Options:",
        ]
    return "\n".join([*head, *options])


def with_answer_format(prompt: str, instruction: str, present_if: Iterable[str] = ()) -> str:
    """The prompt with a blank line, ``[Answer Format]`` and the task's answer instruction
    appended (spec §10.1), unless the instruction or an equivalent marker is already there."""
    if instruction in prompt or any(marker in prompt for marker in present_if):
        return prompt
    return f"{prompt.rstrip()}\n\n[Answer Format]\n{instruction}"


def render_template(template: str, record: Mapping[str, Any]) -> str:
    """``template`` with every ``{{ Field }}`` replaced by the record's value, then stripped.

    An empty or absent value is rendered as the literal text ``None``: the framework formatted
    empty spreadsheet cells with ``str()``, and the published adversarial-prompt answers were
    produced from prompts containing that text, so it is kept for comparability (§20 #10).
    """

    def value_of(match: re.Match[str]) -> str:
        return stringify(record.get(match.group(1)))

    return _TEMPLATE_FIELD.sub(value_of, template).strip()


def template_fields(template: str) -> list[str]:
    """The field names a template refers to, in order."""
    return [match.group(1) for match in _TEMPLATE_FIELD.finditer(template)]


def stringify(value: Any) -> str:
    """A field value as prompt text: strings as they are, lists and objects as JSON, anything
    else (numbers, None) with ``str``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def slug(text: str) -> str:
    """Lower-case ASCII letters and digits joined by "_" ("Level 2" → "level_2"); "default"
    when nothing is left (a non-Latin subject name)."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return cleaned or "default"


def safe_stem(name: str) -> str:
    """A file name usable in ids: "." and "/" (and "\\") replaced by "_"."""
    return name.replace(".", "_").replace("/", "_").replace("\\", "_")


# --- literal API keys in teaching templates (spec §20 #18) ---------------------------------

_ENV_REFERENCE = re.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|env:[A-Za-z_][A-Za-z0-9_]*|os\.environ/\w+"
    r"|\{\{.*\}\}|%\(?[A-Za-z_][A-Za-z0-9_]*\)?s?)$"
)
_PLACEHOLDER_WORDS = ("your", "placeholder", "changeme", "change-me", "replace", "example")
_PLACEHOLDER_VALUES = frozenset({"empty", "none", "null", "dummy", "fake", "test", "todo", "-"})


def is_placeholder_key(value: Any) -> bool:
    """True when an ``api_key`` value is not a real secret: empty, an ``<…>`` placeholder, an
    environment reference (``${VAR}``, ``$VAR``, ``env:VAR``), a stock word ("EMPTY",
    "YOUR_API_KEY"), or only x/* characters after an optional ``sk-``."""
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    text = value.strip()
    lowered = text.lower()
    if not text or lowered in _PLACEHOLDER_VALUES:
        return True
    if (text.startswith("<") and text.endswith(">")) or _ENV_REFERENCE.match(text):
        return True
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    return set(lowered.removeprefix("sk-")) <= set("x*.")


def literal_key_paths(document: Any, path: str = "") -> list[str]:
    """The dotted paths of every ``api_key`` in a parsed YAML document whose value is a
    literal key (not a placeholder). The values themselves are never returned."""
    found: list[str] = []
    if isinstance(document, Mapping):
        for key, value in document.items():
            where = f"{path}.{key}" if path else str(key)
            if str(key).lower() in ("api_key", "apikey") and not is_placeholder_key(value):
                found.append(where)
            else:
                found.extend(literal_key_paths(value, where))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(literal_key_paths(value, f"{path}[{index}]"))
    return found
