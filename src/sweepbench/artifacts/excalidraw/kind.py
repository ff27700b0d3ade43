"""The drawing kind: its registration, the final build of an answer, metrics and failure
wording (spec artifacts.md §2.7, §2.8; sweeps.md §3.2 drawing column)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from typing import Any

from sweepbench.artifacts.base import ArtifactKind, ArtifactOutcome, PageFacts, SweepDefaults
from sweepbench.artifacts.excalidraw.parser import (
    ElementStream,
    fill_envelope,
    load_scene_object,
    parse_response,
)
from sweepbench.artifacts.excalidraw.prompt import PLACEHOLDER_PROMPT, SYSTEM_PROMPT_V1
from sweepbench.artifacts.excalidraw.render import render_svg
from sweepbench.artifacts.excalidraw.repair import draws_something
from sweepbench.artifacts.excalidraw.schema import LOCAL_SCENE_SCHEMA
from sweepbench.models.providers import grammar_providers

NO_ELEMENTS = "the model returned no drawable elements"
REFUSED = "refusal: the provider's safety system declined this request; nothing was generated"


def build(
    text: str, stop_reason: str, prompt_version: str = "v1", *, rng: random.Random | None = None
) -> ArtifactOutcome:
    """The final scene of an answer: its elements as the stream parser reads them (the same
    ids the live canvas showed), or, if that finds none, as the whole-answer parser reads
    them; the envelope, metrics, an SVG rendering, and what went wrong in words.

    Never raises: a failure is an outcome with ``ok`` false and a reason. A budget that ran
    out is ``stop=max_tokens``, never "invalid JSON", and keeps every complete element.
    """
    del prompt_version  # v1 is the only version; parsing does not depend on it
    try:
        return _build(text or "", stop_reason, rng)
    except Exception as exc:  # the last line of defence: an outcome, never a crash
        return ArtifactOutcome(
            ok=False, reason=f"internal error while building the drawing: {exc!r}"
        )


def _build(text: str, stop_reason: str, rng: random.Random | None) -> ArtifactOutcome:
    seed = rng.getrandbits(64) if rng is not None else None
    stream = ElementStream(None if seed is None else random.Random(seed))
    elements = stream.feed(text)
    notes = list(stream.notes)
    renamed = stream.renamed
    closed = stream.closed
    if elements:
        if stream.dropped:
            notes.append(f"{stream.dropped} malformed element(s) dropped")
        raw, _ = load_scene_object(text)
        scene = fill_envelope(raw, elements, notes)
    else:
        parsed = parse_response(text, None if seed is None else random.Random(seed))
        if parsed.scene is not None:
            scene, renamed, closed = parsed.scene, parsed.renamed, True
            notes = list(parsed.notes)  # the whole answer again: the stream's notes repeat
        else:
            scene = fill_envelope(None, [], notes)
            if stop_reason == "end" and text.strip():
                notes.append(f"no scene in the answer ({parsed.error})")
    elements = scene["elements"]
    metrics = drawing_metrics(elements, renamed)
    drawn = metrics["elements"]
    ok, partial, reason = _verdict(stop_reason, drawn, closed, stream.pending)
    return ArtifactOutcome(
        ok=ok,
        partial=partial,
        reason=reason,
        notes=notes,
        artifact=scene,
        files={"svg": render_svg(scene)},
        metrics=metrics,
    )


def _verdict(stop_reason: str, drawn: int, closed: bool, pending: bool) -> tuple[bool, bool, str]:
    """ok, partial and the reason, per §2.8."""
    kept = f"; {drawn} complete element{'s' if drawn != 1 else ''} kept" if drawn else ""
    if stop_reason == "end":
        if not drawn:
            return False, False, NO_ELEMENTS
        if not closed:
            # A normal end inside the array: whatever followed the last complete element
            # is lost, so the scene is not the one the model meant.
            cut = "mid-element" if pending else "before the elements array closed"
            return False, True, f"the answer ended {cut}{kept}"
        return True, False, ""
    if stop_reason == "max_tokens":
        if drawn:
            when = "after the elements were complete" if closed else "mid-scene"
            return False, True, f"stop=max_tokens: the budget ran out {when}{kept}"
        return False, False, "stop=max_tokens: the budget ran out before any element was complete"
    if stop_reason == "cancelled":
        return False, bool(drawn), "stopped"
    if stop_reason == "refusal":
        return False, bool(drawn), REFUSED
    return False, bool(drawn), f"stop={stop_reason}{kept}"


def drawing_metrics(elements: Iterable[dict[str, Any]], renamed: int = 0) -> dict[str, Any]:
    """Numbers read from the scene itself (§2.7): elements that draw something (not deleted,
    not invisible: :func:`~sweepbench.artifacts.excalidraw.repair.draws_something`), counts
    per type, text elements, arrows bound at either end, renamed ids, and ``invisible``: the
    elements kept in the scene that draw nothing. ``lost`` (elements expired from the
    in-flight buffer) belongs to the runner."""
    present = [e for e in elements if e.get("isDeleted") is not True]
    live = [e for e in present if draws_something(e)]
    by_type = Counter(str(e.get("type")) if e.get("type") is not None else "?" for e in live)
    return {
        "elements": len(live),
        "invisible": len(present) - len(live),
        "by_type": dict(sorted(by_type.items())),
        "text_elements": by_type.get("text", 0),
        "bound_arrows": sum(
            1
            for e in live
            if e.get("type") == "arrow"
            and (e.get("startBinding") is not None or e.get("endBinding") is not None)
        ),
        "renamed_ids": renamed,
    }


EXCALIDRAW = ArtifactKind(
    name="excalidraw",
    label="Drawing",
    suffix=".excalidraw",
    prompts={"v1": SYSTEM_PROMPT_V1},
    defaults=SweepDefaults(
        axis="effort",
        max_variants=6,
        held_max_tokens=24000,
        budget_chips=(4000, 8000, 16000, 24000, 48000, 64000),
        prompt_cap=4000,
    ),
    page=PageFacts(
        working="drawing…",
        verb="Drawing",
        kept="What was drawn is kept",
        nouns=("element", "elements"),
        viewer="canvas",
        demo_model="scripted/sketch",
        keyless_budget=1200,  # sketch: 822 words + 205 of low-effort thinking; local ends ~860
        small_budgets=(500, 1000, 2000),
        budgets=(8000, 24000),
        step=4000,
        placeholder=PLACEHOLDER_PROMPT,
    ),
    # Spec §2.1 sends drawings to remote models free (the stream parser tolerates prose
    # around the JSON); the tiny local model gets LOCAL_SCENE_SCHEMA (the scene cut down to
    # what decides the drawing) as a llama.cpp grammar.
    response_schema=LOCAL_SCENE_SCHEMA,
    schema_providers=grammar_providers(),
    item_noun="elements",
    parser=ElementStream,
    build=build,
)
"""The drawing kind: ``excalidraw`` in :mod:`sweepbench.artifacts.registry`."""
