"""The bundled snapshot of ELBench's published figures (spec §17.7) and its loader.

Figures only — scores, counts and 95% ranges, with a provenance line — never a benchmark item.
The final table (overall and areas, 0–100, with ranges) is the paper's scope; the per-task
figures are the authors' 2026-06-08 revision, which does not add up to the final table
(``scripts/build_published_snapshot.py`` writes the file; the data's README says why).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SNAPSHOT_FILE = "published_elbench.json"
PER_TASK_REVISION = "2026-06-08"
PAPER_JUDGE = "qwen/qwen3-235b-a22b"
"""The closest OpenRouter model to the paper's own hosted Qwen judge: the default board."""
TASK_FIGURES_MARK = "† Task figures: 2026-06-08 revision, which does not add up to the final table."
"""What † beside a published task figure means (never part of an area or overall figure)."""
TEACHING_PROVENANCE = (
    "Teaching: a run is scored by ELBench's runtime evaluator, as the published 2026-06-08 "
    "per-task figures were, and that is all a run can replicate; the final published Teaching "
    "figures come from a per-dialogue re-judge of the guided-teaching dialogues (one score per "
    "dialogue, SCORED / VETO / INVALID verdicts, the pass rate over the valid ones) and a "
    "recomputed area, whose procedure is not in ELBench's repository. A run's Teaching score "
    "and a published one are not the same measurement."
)
"""What the published Teaching figure is made of, said wherever a run's Teaching score stands
beside a published one (data: the snapshot's ``audit/guided_full_rejudge.json`` and
``audit/basic_ed_recomputed.json``)."""
TEACHING_MARK = f"‡ {TEACHING_PROVENANCE}"
"""What ‡ beside a Teaching row of a comparison (or its Overall) means."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class PublishedScore(_Frozen):
    """A published score on 0–100 with its 95% range (paper scope; None when not given)."""

    score: float = Field(ge=0, le=100)
    low: float | None = Field(default=None, ge=0, le=100)
    high: float | None = Field(default=None, ge=0, le=100)


class PublishedTask(_Frozen):
    """One task's figures of the 2026-06-08 revision."""

    area: str
    """The task's area key (the catalogue's canonical key)."""
    file: str
    """The published file name the figures are keyed by."""
    count: int = Field(ge=0)
    """Questions scored."""
    score: float = Field(ge=0, le=1)
    """The normalised task score (0–1)."""
    pass_rate: float = Field(ge=0, le=1)
    mean_raw: float
    """The mean raw score on the task's own scale."""


class CoreAreaScore(_Frozen):
    """An area's score in the core scope (without the region-specific sets), 0–100, no range
    (the published ranges cover the paper's scope only), and where it comes from."""

    score: float = Field(ge=0, le=100)
    basis: str
    """``final``: the final figures (the area has no region-specific task, or its final
    per-component figures are published); ``2026-06-08 revision``: recomputed from that
    revision's per-task figures because the final ones cannot be reconstructed."""


class PublishedModel(_Frozen):
    """One published model."""

    key: str
    """The model's key in the published files (``gpt-5.4``)."""
    display_name: str
    openrouter_id: str | None
    """Its OpenRouter id, for prices; None when no priced id is known."""
    size_b: float | None = None
    """Total parameters in billions when disclosed; None when not."""
    rank: int | None
    """Its rank in the final table; None when it is not in it."""
    overall: PublishedScore | None
    """The final overall score (paper scope); None when not in the final table."""
    areas: dict[str, PublishedScore]
    """The final area scores by area key (paper scope)."""
    tasks: dict[str, PublishedTask]
    """Per-task figures of the 2026-06-08 revision, by task id (``gsm8k`` included: the
    revision counted its 3 items in the knowledge area)."""
    core_areas: dict[str, CoreAreaScore] = Field(default_factory=dict)
    """The core-scope area scores by area key, reconstructed by the build script."""


class PublishedSnapshot(_Frozen):
    """The whole snapshot."""

    format: Literal["sweepbench-published-elbench"]
    version: Literal[1]
    provenance: str
    """Where the figures come from (shown with them)."""
    scope: Literal["paper"]
    """The scope of the final table and its ranges."""
    judge: str
    """The board the published results sit on."""
    bootstrap_resamples: int
    per_task_revision: str
    """The revision the per-task figures belong to."""
    models: list[PublishedModel]
    """In final-table order, then models only in the revision."""

    def model(self, key: str) -> PublishedModel | None:
        """The model with this key (or display name, case-insensitive), or None."""
        wanted = key.casefold()
        for model in self.models:
            if wanted in (model.key.casefold(), model.display_name.casefold()):
                return model
        return None


@cache
def load_published() -> PublishedSnapshot:
    """The bundled snapshot."""
    text = files("sweepbench.leaderboard").joinpath(SNAPSHOT_FILE).read_text("utf-8")
    return PublishedSnapshot.model_validate_json(text)


def revision_area_score(model: PublishedModel, area: str, tasks: set[str] | None = None) -> float:
    """An area's 2026-06-08 score on 0–100: the count-weighted mean of its tasks' normalised
    scores (only ``tasks`` when given). ValueError when the area has no such task."""
    chosen = [
        t
        for task_id, t in model.tasks.items()
        if t.area == area and (tasks is None or task_id in tasks)
    ]
    total = sum(t.count for t in chosen)
    if not total:
        raise ValueError(f"{model.key}: no 2026-06-08 tasks in {area}")
    return 100 * sum(t.count * t.score for t in chosen) / total
