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
from sweepbench.sweeps.plan import default_model
from sweepbench.web.offer import Offer


def kinds_offered() -> dict[str, str]:
    """What the Kind control offers: every artifact kind registered now, by its own label."""
    return {name: artifact_kind(name).label for name in kind_names()}


AXIS_LABELS = {
    "effort": "Vary effort",
    "max_tokens": "Vary max tokens",
    "model": "Compare models",
    "prompt_version": "Vary prompt version",
}
LOCAL = "local/smollm2-135m"


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


def default_prompts() -> set[str]:
    """Every kind's prefilled prompt (a prompt still equal to one is replaced on a kind
    switch; anything the user wrote is kept)."""
    return {artifact_kind(name).page.prompt for name in kind_names()}


def kind_defaults(kind: str, offers: list[Offer], *, keyless: bool) -> KindDefaults:
    """The spec's defaults, or with no provider key: compare the scripted demo model with the
    bundled local model, at a budget the local model finishes in well under a minute."""
    artifact = artifact_kind(kind)
    page = artifact.page
    usable = [o.id for o in offers if o.available]
    versions = tuple(artifact.versions)
    budget, axis = artifact.defaults.held_max_tokens, artifact.defaults.axis
    models, budgets = page.models, page.budgets
    held_model = default_model()  # the first keyed provider's own default
    if keyless:
        models = tuple(m for m in (page.demo_model, LOCAL) if m in usable) or tuple(usable[:2])
        held_model = LOCAL if LOCAL in usable else (usable[0] if usable else page.demo_model)
        axis, budget = "model", page.keyless_budget
        budgets = page.small_budgets  # free models: show the cliff
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
        step=page.step,
        prompt=page.prompt,
        placeholder=page.placeholder,
    )


def budget_chips(kind: str, model: str | None, chosen: Iterable[int] = ()) -> list[int]:
    """The budgets the "Vary max tokens" chips offer: the kind's own, the small ones that show
    the cliff (text always; other kinds on a free model), and whatever is chosen already (a
    reopened sweep's budgets)."""
    artifact = artifact_kind(kind)
    chips = set(artifact.defaults.budget_chips) | set(chosen)
    if artifact.page.viewer == "text" or _free_to_call(model):
        chips |= set(artifact.page.small_budgets)
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
