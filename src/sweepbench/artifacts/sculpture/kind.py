"""The sculpture kind (spec artifacts.md §3): a model's parts list becomes a clamped manifest,
then a byte-deterministic .glb, then metrics read back from that file. ``build`` never raises:
every failure is an outcome with a reason (§3.14)."""

from __future__ import annotations

from typing import Any

from sweepbench.artifacts.base import ArtifactKind, ArtifactOutcome, PageFacts, SweepDefaults
from sweepbench.artifacts.sculpture import clamp, structure
from sweepbench.artifacts.sculpture.expand import expand
from sweepbench.artifacts.sculpture.glb import TooLarge, build_glb
from sweepbench.artifacts.sculpture.manifest import ManifestError, loads, stamp
from sweepbench.artifacts.sculpture.metrics import blend, blend_words, distinct, glb_metrics
from sweepbench.artifacts.sculpture.parser import AnswerError, PartsParser, parse_answer, salvage
from sweepbench.artifacts.sculpture.prompts import PROMPTS
from sweepbench.artifacts.sculpture.schema import SCHEMAS

TRUNCATED = "stop=max_tokens: the budget ran out mid-object — raise max tokens"
NO_PARTS = "no usable parts in the scene"
DECLINED = "The request was declined by the provider's safety system."
_TOP = ("name", "notes", "parts", "defs", "version")


class NoUsableParts(ValueError):
    """Nothing survived the clamps and repairs."""


def lenient(data: Any) -> tuple[dict[str, Any], list[str]]:
    """Model output as a canonical manifest (§3.6, §3.8 leniency), with a note per change.
    Flat output is stamped version 1; output using defs, refs or groups version 2."""
    if not isinstance(data, dict):
        raise NoUsableParts(NO_PARTS)
    notes: list[str] = []
    for key in data:
        if key not in _TOP:
            notes.append(f"{key} dropped (unknown field)")
    raw_parts = data.get("parts")
    flat = isinstance(raw_parts, list) and not any(
        isinstance(p, dict)
        and (
            p.get("ref") is not None or p.get("group") is not None or p.get("children") is not None
        )
        for p in raw_parts
    )
    if flat and isinstance(raw_parts, list) and len(raw_parts) > structure.MAX_LEAVES:
        notes.append(f"kept the first {structure.MAX_LEAVES} of {len(raw_parts)} parts")
        raw_parts = raw_parts[: structure.MAX_LEAVES]
    defs = clamp.defs(data.get("defs"), notes, structure.MAX_DEFS)
    parts = clamp.entries(raw_parts, "parts", notes)
    parts, defs = structure.repair(parts, defs, notes)
    if not parts:
        raise NoUsableParts(NO_PARTS)
    v2 = bool(defs) or any(structure.kind_of(p) != "leaf" for p in parts)
    manifest: dict[str, Any] = {"version": 2 if v2 else 1, "parts": parts}
    if v2:
        manifest["defs"] = defs
    for key in ("name", "notes"):
        value = data.get(key)
        if isinstance(value, str):
            manifest[key] = value
        elif value is not None:
            notes.append(f"{key} {clamp.show(value)} dropped — not a string")
    return manifest, notes


def render(manifest: dict[str, Any], notes: list[str]) -> ArtifactOutcome:
    """Expand, drop parts that are copies of another at the same place, write the .glb and
    measure it; ``notes`` gains the world-position clamps and the copies dropped."""
    expanded, moved = expand(manifest)
    placements, copies = distinct(expanded)
    clamps = [*notes, *moved]
    notes = [*clamps, *copies]
    try:
        glb = build_glb(placements)
    except TooLarge as exc:
        return ArtifactOutcome(ok=False, reason=str(exc), notes=notes, artifact=manifest)
    metrics = glb_metrics(glb)
    metrics["clamped"] = len(clamps)
    metrics["copies_dropped"] = len(expanded) - len(placements)
    metrics["blend"] = blend(placements)
    metrics["blend_text"] = blend_words(metrics["blend"])
    return ArtifactOutcome(
        ok=True, notes=notes, artifact=manifest, files={"glb": glb}, metrics=metrics
    )


def from_data(data: Any) -> ArtifactOutcome:
    """A sculpture from parsed model output (the lenient path)."""
    try:
        manifest, notes = lenient(data)
    except NoUsableParts as exc:
        return ArtifactOutcome(ok=False, reason=str(exc))
    return render(manifest, notes)


def from_file(text: str | bytes) -> ArtifactOutcome:
    """A sculpture from a manifest file (the strict path): a refusal names the bad path; world
    clamps after composition are import warnings, listed in ``notes``."""
    try:
        manifest = loads(text)
    except ManifestError as exc:
        return ArtifactOutcome(ok=False, reason=str(exc))
    return render(manifest, [])


def _stop_words(stop_reason: str) -> str:
    return {"max_tokens": TRUNCATED, "cancelled": "stopped", "refusal": DECLINED}.get(
        stop_reason, f"stop={stop_reason}"
    )


def build(text: str, stop_reason: str, prompt_version: str) -> ArtifactOutcome:
    """The final sculpture of an answer (§3.14). Never raises. ``prompt_version`` needs no
    branch: the lenient reader accepts flat v1 output and v2 output alike."""
    try:
        return _build(text, stop_reason)
    except Exception as exc:  # a bug here must not take the cell down
        return ArtifactOutcome(
            ok=False, reason=f"could not build the sculpture: {type(exc).__name__}: {exc}"
        )


def _build(text: str, stop_reason: str) -> ArtifactOutcome:
    if stop_reason == "refusal":
        return ArtifactOutcome(ok=False, reason=DECLINED)
    if not text.strip():
        reason = "the model returned nothing" if stop_reason == "end" else _stop_words(stop_reason)
        return ArtifactOutcome(ok=False, reason=reason)
    try:
        data = parse_answer(text)
    except AnswerError as exc:
        reason = (
            f"The model did not return usable JSON: {exc}"
            if stop_reason == "end"
            else _stop_words(stop_reason)
        )
        recovered, count = salvage(text)
        if count == 0:
            return ArtifactOutcome(ok=False, reason=reason)
        return _partial(from_data(recovered), reason)
    outcome = from_data(data)
    if stop_reason in ("end", "max_tokens") or not outcome.ok:
        return outcome  # a complete object is complete, even when the budget ended with it
    return _partial(outcome, _stop_words(stop_reason))


def _partial(outcome: ArtifactOutcome, reason: str) -> ArtifactOutcome:
    """Mark what survived a cut-off, an error or a Stop as partial."""
    if not outcome.ok:
        return ArtifactOutcome(ok=False, reason=reason, notes=outcome.notes)
    outcome.metrics["partial"] = True
    outcome.ok, outcome.partial, outcome.reason = False, True, reason
    return outcome


SCULPTURE = ArtifactKind(
    item_noun="parts",
    stamp=stamp,
    name="sculpture",
    label="Sculpture",
    suffix=".manifest.json",
    prompts=PROMPTS,
    default_version="v1",
    defaults=SweepDefaults(
        axis="model",
        max_variants=4,
        held_max_tokens=4000,
        budget_chips=(2000, 4000, 8000, 16000),
        prompt_cap=400,
    ),
    page=PageFacts(
        working="building…",
        verb="Building",
        kept="What was built is kept",
        nouns=("part", "parts"),
        viewer="model",
        demo_model="scripted/sculpt",
        keyless_budget=1000,
        small_budgets=(250, 500, 1000),
        models=("anthropic/claude-haiku-4-5", "anthropic/claude-opus-5"),
        budgets=(2000, 8000),
        step=1000,
        prompt="a desert observatory, sandstone and brass, dish pointed at the sky",
        placeholder="",
    ),
    schemas=SCHEMAS,
    parser=PartsParser,
    build=build,
)
