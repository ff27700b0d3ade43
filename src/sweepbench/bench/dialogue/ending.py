"""When a guided lesson is over (spec §15.1): the teacher said one of the end keywords."""

from __future__ import annotations

import re

END_KEYWORDS: tuple[str, ...] = (
    "下课",
    "这节课就上到这里",
    "今天的课程结束",
    "本节课结束",
    "课程到此结束",
    "同学们，今天这节课就上到这里",
    "今天的课程就讲到这里",
    "再见",
    "祝你学习顺利",
    "随时联系我",
    "下次课见",
    "大家再见",
    "期待下次课",
    "<end>",
)
"""Any of these in the teacher's text (lower-cased, thinking removed) ends the dialogue."""

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|\Z)", re.DOTALL | re.IGNORECASE)


def without_thinking(text: str) -> str:
    """The text with ``<think>…</think>`` (and ``<thinking>``, ``<reasoning>``) blocks removed;
    an unclosed block runs to the end."""
    return _THINK.sub("", text).strip()


def ends_lesson(teacher_text: str, keywords: tuple[str, ...] = END_KEYWORDS) -> bool:
    """True when the teacher's turn closes the lesson."""
    said = without_thinking(teacher_text).lower()
    return any(keyword.lower() in said for keyword in keywords)
