"""Which models the page offers, computed when the page is viewed (spec sweeps.md §14): the
catalogue, configured local files and endpoints, each marked usable now or not (and why)."""

from __future__ import annotations

from dataclasses import dataclass

from sweepbench.models.catalog import ModelInfo
from sweepbench.models.registry import KEYED_PROVIDERS, listed_models, provider_status

PROVIDER_NAMES = {
    "anthropic": "Claude",
    "openai": "OpenAI",
    "openrouter": "OpenRouter",
    "local": "local",
    "scripted": "scripted",
}


@dataclass(frozen=True)
class Offer:
    """A model as the pickers show it."""

    id: str
    label: str
    provider: str
    available: bool

    def option(self) -> dict[str, str]:
        """A Mantine select option; unusable models stay listed, marked "(no key)"."""
        mark = "" if self.available else " (no key)"
        return {"value": self.id, "label": f"{self.label}{mark}"}


def offered_models() -> list[Offer]:
    """Every model the pickers list, usable ones first (catalogue order within each group).
    OpenRouter's long catalogue is left to typed ids unless a key is set."""
    status: dict[str, bool] = {}
    offers: list[Offer] = []
    for info in listed_models():
        if info.provider not in status:
            status[info.provider] = provider_status(info.provider).available
        if info.provider == "openrouter" and not status["openrouter"]:
            continue
        offers.append(_offer(info, status[info.provider]))
    unique = list({o.id: o for o in offers}.values())
    return [o for o in unique if o.available] + [o for o in unique if not o.available]


def _offer(info: ModelInfo, available: bool) -> Offer:
    label = info.label or info.id
    if info.label and info.label != info.id:
        label = f"{info.label} · {info.id}"
    return Offer(info.id, label, info.provider, available)


def has_provider_key() -> bool:
    """Any paid provider usable (decides the keyless notice and the spending warning)."""
    return any(provider_status(p).available for p in KEYED_PROVIDERS)


def situation(offers: list[Offer]) -> str:
    """One line under the pickers saying what can run here (spec §14)."""
    usable = {o.provider for o in offers if o.available}
    counts = {p: sum(1 for o in offers if o.available and o.provider == p) for p in usable}
    free = [PROVIDER_NAMES.get(p, p) for p in ("local", "scripted") if p in usable]
    free_text = f"; {' and '.join(free)} models run free" if free else ""
    if not usable & set(KEYED_PROVIDERS):
        return f"No provider keys: paid models are listed but cannot run{free_text}."
    if usable >= {"anthropic", "openai"}:
        return f"Claude models, plus {counts['openai']} OpenAI models{free_text}."
    if "anthropic" in usable:
        return f"Claude models only (no OpenAI key){free_text}."
    if "openai" in usable:
        return f"OpenAI models only (no Anthropic key){free_text}."
    return f"OpenRouter models{free_text}."
