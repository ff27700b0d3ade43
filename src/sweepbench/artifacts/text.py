"""Plain text answers: the default sweep task."""

from __future__ import annotations

from sweepbench.artifacts.base import ArtifactKind, SweepDefaults

TEXT = ArtifactKind(
    name="text",
    label="Text",
    prompts={
        # v1 sends the user's prompt as it is: the baseline every other version is read against.
        "v1": None,
        "v2": (
            "Answer the user's request accurately and concisely. If it needs reasoning, "
            "work it out step by step first, then give the final answer on its own line."
        ),
    },
    defaults=SweepDefaults(
        axis="effort",
        max_variants=6,
        held_max_tokens=4000,
        budget_chips=(256, 1000, 4000, 8000, 16000),
        prompt_cap=20000,
    ),
)
