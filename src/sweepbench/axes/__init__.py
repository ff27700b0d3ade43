"""What a sweep can vary: its axes and their words (light: a command's ``--help`` reads them
without loading the planner)."""

from __future__ import annotations

from typing import Literal

Axis = Literal["model", "effort", "max_tokens", "prompt_version"]
AXES: tuple[Axis, ...] = ("model", "effort", "max_tokens", "prompt_version")
AXIS_WORDS: dict[str, str] = {
    "model": "models",
    "effort": "effort",
    "max_tokens": "max tokens",
    "prompt_version": "prompt version",
}
