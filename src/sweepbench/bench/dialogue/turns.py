"""A dialogue's turns and the messages each role is sent (spec §15.1).

A role sees its prompt list, then the history: its own past turns as ``assistant`` messages
and the other's as ``user`` messages (the seeded opening counts as the student's), thinking
stripped, empty ones dropped, only the last ``keep_turns × 2 + 1`` of them (the memory
window). Reasoning is stored with a turn but never sent back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sweepbench.bench.dialogue.elbench_runtime import split_reasoning, without_think_pairs
from sweepbench.bench.dialogue.ending import without_thinking
from sweepbench.models.base import Message

Speaker = Literal["opening", "teacher", "student"]
"""Who said a turn: the seeded opening (the exercise, shown to the teacher as the student's
side), the teacher (the model under test) or the simulated student."""


@dataclass(frozen=True)
class Turn:
    """One finished turn of a dialogue."""

    speaker: Speaker
    content: str
    reasoning: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    """Tokens of the call that made it (input, output, reasoning); empty for the opening."""
    raw: str = ""
    """The reply as the model wrote it, when its content and reasoning were split from it at
    an inline ``</think>`` (empty otherwise): ELBench sends earlier turns back from it."""

    @classmethod
    def of_reply(
        cls, speaker: Speaker, text: str, reasoning: str = "", usage: dict[str, Any] | None = None
    ) -> Turn:
        """A turn from a call's reply, an inline ``</think>`` split off as ELBench's export
        splits it (reasoning before it, content after); the adapter's own reasoning first."""
        if "</think>" not in text:
            return cls(speaker, text, reasoning, dict(usage or {}))
        thought, content = split_reasoning(text)
        joined = "\n\n".join(part for part in (reasoning, thought) if part)
        return cls(speaker, content, joined, dict(usage or {}), raw=text)

    @property
    def sent_text(self) -> str:
        """The text as the model wrote it (what a history is built from)."""
        return self.raw or self.content

    def as_json(self) -> dict[str, Any]:
        """The exported form: ``{role, content, reasoning, usage_metadata}``."""
        return {
            "role": self.speaker,
            "content": self.content,
            "reasoning": self.reasoning,
            "usage_metadata": dict(self.usage),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        """A turn from :meth:`as_json`."""
        speaker = data["role"]
        if speaker not in ("opening", "teacher", "student"):
            raise ValueError(f"unknown speaker {speaker!r}")
        return cls(
            speaker, str(data.get("content") or ""), str(data.get("reasoning") or ""),
            dict(data.get("usage_metadata") or {}), str(data.get("raw") or ""),
        )  # fmt: skip


def window_size(keep_turns: int) -> int:
    """How many history messages a role sees: ``keep_turns × 2 + 1`` (3 → 7)."""
    return keep_turns * 2 + 1


def messages_for(
    speaker: Literal["teacher", "student"],
    prompts: Sequence[Message],
    turns: Sequence[Turn],
    keep_turns: int,
) -> tuple[Message, ...]:
    """What ``speaker`` is sent for its next turn: its prompts, then the windowed history."""
    history: list[Message] = []
    for turn in turns:
        text = without_thinking(turn.content)
        if not text:
            continue
        # the seeded opening speaks for the student (the exercise it brings)
        mine = turn.speaker == speaker or (turn.speaker == "opening" and speaker == "student")
        history.append(Message("assistant" if mine else "user", text))
    size = window_size(keep_turns)
    kept = history[-size:] if size > 0 else []
    return tuple(m for m in prompts if m.content.strip()) + tuple(kept)


def runtime_messages(
    speaker: Literal["teacher", "student"],
    prompts: Sequence[Message],
    turns: Sequence[Turn],
    keep_turns: int,
    *,
    opening_for_student: bool,
) -> tuple[Message, ...]:
    """What ``speaker`` is sent in ELBench's runtime: its prompts as the template wrote them,
    then the last ``keep_turns × 2 + 1`` turns with text (``<think>`` pairs removed), its own
    as assistant messages and every other — the seeded opening included — as user messages.
    Without ``opening_for_student`` (corrected) the student's history leaves the opening out:
    it is the student's own exercise, already in its prompt."""
    history: list[Message] = []
    for turn in turns:
        if turn.speaker == "opening" and speaker == "student" and not opening_for_student:
            continue
        text = without_think_pairs(turn.sent_text)
        if not text.strip():
            continue
        history.append(Message("assistant" if turn.speaker == speaker else "user", text))
    size = window_size(keep_turns)
    if len(history) > size:
        history = history[-size:]
    return (*prompts, *history)


def transcript(turns: Sequence[Turn], names: dict[str, str] | None = None) -> str:
    """The dialogue as ``role: content`` lines (what the evaluator reads and results show)."""
    names = names or {}
    lines = []
    for turn in turns:
        text = without_thinking(turn.content)
        if text:
            lines.append(f"{names.get(turn.speaker, turn.speaker)}: {text}")
    return "\n".join(lines)
