"""The Run a benchmark page's model picker and its filters (issue 29 §4).

Every listed model — the catalogue, configured local files and endpoints, and OpenRouter's
catalogue (:func:`~sweepbench.models.registry.listed_models` fetches it when missing or stale)
— is an option shown as "<name> · $in in / $out out per 1M tokens · <size>" whose value is the
model id; the picker stays an Autocomplete, so any typed id is taken too. The options are drawn
and searched by two small browser functions (``assets/model_picker.js``): Mantine's
Autocomplete would put an option's label in the field, and the field holds the id.

The filters are the leaderboard's (:func:`~sweepbench.web.leaderboard_data.filters_of`): the
blended 3:1 price (:func:`~sweepbench.money.prices.blended`), the size in billions of
parameters (:func:`~sweepbench.models.gguf_size.model_size_b`), a checkbox for the models that
don't publish their size, and sliders whose right-hand end is no limit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import dash_mantine_components as dmc

from sweepbench.leaderboard.board import Filters
from sweepbench.models.gguf_size import model_size_b
from sweepbench.models.registry import listed_models
from sweepbench.money.prices import Price, format_usd, price_for
from sweepbench.web.leaderboard_data import PRICE_OFF, SIZE_OFF, filters_of

RENDER_OPTION = {"function": "sweepbenchModelOption"}
"""The browser function that draws an option (``assets/model_picker.js``)."""
FILTER_OPTIONS = {"function": "sweepbenchModelFilter"}
"""The browser function that finds the options matching what is typed (id or text)."""
UNDISCLOSED_LABEL = "Include models that don't publish their size"


@dataclass(frozen=True)
class PickerModel:
    """One model as the picker offers it."""

    id: str
    name: str
    price: Price | None
    """USD per 1M tokens (None: no price on file)."""
    size_b: float | None
    """Total parameters in billions (None: not published)."""

    @property
    def blended(self) -> Decimal | None:
        """The blended 3:1 price the filter compares (the leaderboard's)."""
        return None if self.price is None else self.price.blended

    @property
    def text(self) -> str:
        """ "<name> · $in in / $out out per 1M tokens · <size>"."""
        return f"{self.name} · {price_text(self.price)} · {size_text(self.size_b)}"

    def option(self) -> dict[str, str]:
        """The Autocomplete option: the id as its value and label (what the field holds once
        it is picked), the text for ``sweepbenchModelOption`` to show."""
        return {"value": self.id, "label": self.id, "text": self.text}


def price_text(price: Price | None) -> str:
    """ "$0.25 in / $2.00 out per 1M tokens" (the one money formatter), or that there is none."""
    if price is None:
        return "no listed price"
    shown_in = format_usd(price.input, small_digits=4)
    shown_out = format_usd(price.output, small_digits=4)
    return f"{shown_in} in / {shown_out} out per 1M tokens"


def size_text(size_b: float | None) -> str:
    """ "135M", "7.6B", "1,000B", or that the model does not publish its size."""
    if size_b is None:
        return "size not published"
    if size_b < 1:
        return f"{round(size_b * 1000):,}M"
    return f"{round(size_b, 1):,g}B"


def picker_models() -> list[PickerModel]:
    """Every listed model once (the first listing of an id wins), in the listing's order,
    priced (:func:`~sweepbench.money.prices.price_for`) and sized
    (:func:`~sweepbench.models.gguf_size.model_size_b`: the catalogue's, else a local
    model's own file)."""
    seen: dict[str, PickerModel] = {}
    for info in listed_models():
        if info.id in seen:
            continue
        size = info.size_b if info.size_b is not None else model_size_b(info.id)
        seen[info.id] = PickerModel(info.id, info.label or info.name, price_for(info), size)
    return list(seen.values())


def hidden(model: PickerModel, filters: Filters) -> bool:
    """Whether the filters hide ``model``, as they hide a leaderboard row: above the highest
    blended price (a model with no price too, once a price limit is set), above the largest
    size, or not publishing its size while such models are left out."""
    if filters.max_price is not None:
        price = model.blended
        if price is None or price > filters.max_price:
            return True
    if model.size_b is None:
        return not filters.include_undisclosed
    return filters.max_size_b is not None and model.size_b > filters.max_size_b


def shown_models(
    models: Iterable[PickerModel], max_price: object, max_size: object, undisclosed: object
) -> list[PickerModel]:
    """The models the filters keep (the sliders' values as the page sends them: at a slider's
    right-hand end, no limit; ``undisclosed``: the checkbox)."""
    filters = filters_of(max_price, max_size, undisclosed)
    return [m for m in models if not hidden(m, filters)]


def picker_note(shown: int, total: int) -> str:
    """ "Showing N of M models." (how many the filters keep, of all)."""
    return f"Showing {shown:,} of {total:,} models."


def filter_controls() -> Any:
    """The price and size sliders (right-hand end: no limit) and the undisclosed checkbox."""

    def slider(id_: str, title: str, low: float, top: float, step: float, first: str) -> Any:
        marks = [{"value": low, "label": first}, {"value": top, "label": "no limit"}]
        return dmc.Stack(
            [
                dmc.Text(title, size="sm"),
                dmc.Slider(id=id_, min=low, max=top, step=step, value=top, marks=marks, w=260),
            ],
            gap=4,
        )

    return dmc.Group(
        [
            slider(
                "bp-max-price", f"Highest price ($/1M tokens, blended 3:1; {PRICE_OFF:g} = no "
                "limit)", 0, PRICE_OFF, 0.1, "$0",
            ),
            slider(
                "bp-max-size", f"Largest model size (billions; {SIZE_OFF:,g} = no limit)", 1,
                SIZE_OFF, 1, "1B",
            ),
            dmc.Checkbox(id="bp-undisclosed", label=UNDISCLOSED_LABEL, checked=True),
        ],
        align="flex-start",
        gap="xl",
        mb="xs",
    )  # fmt: skip


__all__ = [
    "FILTER_OPTIONS",
    "RENDER_OPTION",
    "PickerModel",
    "filter_controls",
    "hidden",
    "picker_models",
    "picker_note",
    "price_text",
    "shown_models",
    "size_text",
]
