"""A published model's price by its OpenRouter id: the product's own price look-up
(``money.prices.price_for``: OpenRouter's catalogue, then the ``genai-prices`` snapshot's
OpenRouter table, offline). None when neither knows it — never $0."""

from __future__ import annotations

from functools import cache

from sweepbench.leaderboard.rows import RowPrice


@cache
def openrouter_price(openrouter_id: str) -> RowPrice | None:
    """The price per million tokens of an OpenRouter model, or None when unknown."""
    from sweepbench.errors import SweepbenchError
    from sweepbench.models.openrouter import model_id
    from sweepbench.models.registry import model_info
    from sweepbench.money.prices import price_for

    try:
        price = price_for(model_info(model_id(openrouter_id)))
    except SweepbenchError:
        price = None
    if price is None:
        return None
    return RowPrice(
        input_per_million=price.input,
        output_per_million=price.output,
        source=price.source,
        date=price.date or None,
    )
