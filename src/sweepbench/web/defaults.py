"""The Sweep page's starting values per artifact kind (spec sweeps.md §3.2), adjusted to the
models this host can run: with no provider key the page starts on the bundled local model and
the scripted demo model, so Run works out of the box."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sweepbench.artifacts import artifact_kind
from sweepbench.artifacts.registry import names as kind_names
from sweepbench.errors import SweepbenchError
from sweepbench.models.providers import free
from sweepbench.models.registry import model_info
from sweepbench.web.offer import Offer

KINDS = {name: artifact_kind(name).label for name in kind_names()}
"""What the Kind control offers: every artifact kind by its own label."""
AXIS_LABELS = {
    "effort": "Vary effort",
    "max_tokens": "Vary max tokens",
    "model": "Compare models",
    "prompt_version": "Vary prompt version",
}
LOCAL = "local/smollm2-135m"
SMALL_BUDGETS = {
    "text": (16, 64, 256),
    "excalidraw": (500, 1000, 2000),
    "sculpture": (250, 500, 1000),
}
"""Budgets small enough to cut an answer off, so the max-tokens cliff can be shown: offered
for text always, for the other kinds when the held model is free to call (local, scripted)."""


@dataclass(frozen=True)
class KindDefaults:
    """What the controls hold when a kind is chosen."""

    axis: str
    efforts: tuple[str, ...]
    budgets: tuple[int, ...]
    models: tuple[str, ...]
    versions: tuple[str, ...]
    held_model: str
    held_effort: str
    held_budget: int
    held_version: str
    step: int
    prompt: str
    placeholder: str


@dataclass(frozen=True)
class _Spec:
    axis: str
    budgets: tuple[int, ...]
    models: tuple[str, ...]
    held_budget: int
    step: int
    prompt: str
    placeholder: str
    demo: str
    """The scripted model that answers in this kind (keyless demo)."""
    keyless_budget: int


_SPEC = {
    "text": _Spec(
        axis="effort",
        budgets=(1000, 4000),
        models=("anthropic/claude-opus-5", "openai/gpt-6-astra"),
        held_budget=4000,
        step=1000,
        prompt="",
        placeholder="Explain the difference between a mutex and a semaphore in three sentences.",
        demo="scripted/lorem",
        keyless_budget=256,
    ),
    "excalidraw": _Spec(
        axis="effort",
        budgets=(8000, 24000),
        models=("anthropic/claude-opus-5", "openai/gpt-6-astra"),
        held_budget=24000,
        step=4000,
        prompt="",
        placeholder="an architecture diagram of a payments service: api, ledger, queue, two "
        "databases, with retry paths",
        demo="scripted/sketch",
        keyless_budget=1200,  # sketch: 822 words + 205 of low-effort thinking; local ends ~860
    ),
    "sculpture": _Spec(
        axis="model",
        budgets=(2000, 8000),
        models=("anthropic/claude-haiku-4-5", "anthropic/claude-opus-5"),
        held_budget=4000,
        step=1000,
        prompt="a desert observatory, sandstone and brass, dish pointed at the sky",
        placeholder="",
        demo="scripted/sculpt",
        keyless_budget=1000,
    ),
}


def default_prompts() -> set[str]:
    """Every kind's prefilled prompt (a prompt still equal to one is replaced on a kind
    switch; anything the user wrote is kept)."""
    return {spec.prompt for spec in _SPEC.values()}


def kind_defaults(kind: str, offers: list[Offer], *, keyless: bool) -> KindDefaults:
    """The spec's defaults, or with no provider key: compare the scripted demo model with the
    bundled local model, at a budget the local model finishes in well under a minute."""
    spec = _SPEC[kind]
    artifact = artifact_kind(kind)
    usable = [o.id for o in offers if o.available]
    versions = tuple(artifact.versions)
    budget, axis, models, budgets = spec.held_budget, spec.axis, spec.models, spec.budgets
    held_model = "anthropic/claude-opus-5"
    if keyless:
        models = tuple(m for m in (spec.demo, LOCAL) if m in usable) or tuple(usable[:2])
        held_model = LOCAL if LOCAL in usable else (usable[0] if usable else spec.demo)
        axis, budget = "model", spec.keyless_budget
        budgets = SMALL_BUDGETS.get(kind, budgets)  # free models: show the cliff
    elif held_model not in usable and usable:
        held_model = usable[0]
    if axis == "effort" and not model_info(held_model).effort_capable:
        axis = "max_tokens"
    return KindDefaults(
        axis=axis,
        efforts=("low", "high"),
        budgets=budgets,
        models=models,
        versions=versions if len(versions) > 1 else (),
        held_model=held_model,
        held_effort="low",
        held_budget=budget,
        held_version=artifact.default_version,
        step=spec.step,
        prompt=spec.prompt,
        placeholder=spec.placeholder,
    )


def budget_chips(kind: str, model: str | None, chosen: Iterable[int] = ()) -> list[int]:
    """The budgets the "Vary max tokens" chips offer: the kind's own, the small ones that show
    the cliff (text always; other kinds on a free model), and whatever is chosen already (a
    reopened sweep's budgets)."""
    chips = set(artifact_kind(kind).defaults.budget_chips) | set(chosen)
    if kind == "text" or _free_to_call(model):
        chips |= set(SMALL_BUDGETS.get(kind, ()))
    return sorted(chips)


def _free_to_call(model: str | None) -> bool:
    try:
        provider = model_info(model or "").provider
    except SweepbenchError:
        return False
    return provider in {p.name for p in free()}


def axes_for(kind: str) -> list[str]:
    """The axis choices: "Vary prompt version" only for kinds with two or more versions."""
    axes = ["effort", "max_tokens", "model"]
    if len(artifact_kind(kind).versions) > 1:
        axes.append("prompt_version")
    return axes
