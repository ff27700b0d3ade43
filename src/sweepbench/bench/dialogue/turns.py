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
            dict(data.get("usage_metadata") or {}),
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


def transcript(turns: Sequence[Turn], names: dict[str, str] | None = None) -> str:
    """The dialogue as ``role: content`` lines (what the evaluator reads and results show)."""
    names = names or {}
    lines = []
    for turn in turns:
        text = without_thinking(turn.content)
        if text:
            lines.append(f"{names.get(turn.speaker, turn.speaker)}: {text}")
    return "\n".join(lines)
