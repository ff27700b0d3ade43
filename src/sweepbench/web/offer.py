"""Which models the page offers, computed when the page is viewed (spec sweeps.md §14): the
catalogue, configured local files and endpoints, each marked usable now or not (and why)."""

from __future__ import annotations

from dataclasses import dataclass

from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import default_models, free, keyed, provider
from sweepbench.models.registry import listed_models, provider_status


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
    A catalogue too long to list (OpenRouter's) is left to typed ids unless a key is set."""
    status: dict[str, bool] = {}
    offers: list[Offer] = []
    for info in listed_models():
        if info.provider not in status:
            status[info.provider] = provider_status(info.provider).available
        if not status[info.provider] and not provider(info.provider).listed_without_key:
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
    return any(provider_status(p.name).available for p in keyed())


def situation(offers: list[Offer]) -> str:
    """One line under the pickers saying what can run here (spec §14). The providers with a
    default model (Claude, then OpenAI) are named first; other keyed ones only without them."""
    usable = {o.provider for o in offers if o.available}
    counts = {p: sum(1 for o in offers if o.available and o.provider == p) for p in usable}
    gratis = [p.label for p in free() if p.name in usable]
    free_text = f"; {' and '.join(gratis)} models run free" if gratis else ""
    paid = [p for p in keyed() if p.name in usable]
    if not paid:
        return f"No provider keys: paid models are listed but cannot run{free_text}."
    leading = [provider(name) for name, _ in default_models()]
    shown = [p for p in leading if p.name in usable]
    if not shown:
        return f"{' and '.join(p.label for p in paid)} models{free_text}."
    text = f"{shown[0].label} models"
    text += "".join(f", plus {counts[p.name]} {p.label} models" for p in shown[1:])
    missing = [p for p in leading if p.name not in usable]
    if missing:
        text += f" only (no {' or '.join(p.key_owner for p in missing)} key)"
    return f"{text}{free_text}."
