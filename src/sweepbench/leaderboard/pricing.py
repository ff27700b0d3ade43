"""A published model's price by its OpenRouter id: the product's own price look-up first
(OpenRouter's catalogue when cached), then the ``genai-prices`` snapshot's OpenRouter table
(works offline). None when neither knows it — never $0."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from importlib.metadata import version

from sweepbench.leaderboard.rows import RowPrice


@cache
def openrouter_price(openrouter_id: str) -> RowPrice | None:
    """The price per million tokens of an OpenRouter model, or None when unknown."""
    from sweepbench.errors import SweepbenchError
    from sweepbench.models.registry import model_info
    from sweepbench.money.prices import price_for

    try:
        price = price_for(model_info(f"openrouter/{openrouter_id}"))
    except SweepbenchError:
        price = None
    if price is not None:
        return RowPrice(
            input_per_million=price.input,
            output_per_million=price.output,
            source=price.source,
            date=price.date or None,
        )
    return _from_genai_prices(openrouter_id)


def _from_genai_prices(openrouter_id: str) -> RowPrice | None:
    from genai_prices import data_snapshot

    try:
        _, model = data_snapshot.get_snapshot().find_provider_model(
            openrouter_id, None, "openrouter", None
        )
    except LookupError:
        return None
    prices = model.prices
    if isinstance(prices, list):  # time-conditional prices: the one in force now
        prices = model.get_prices(datetime.now(UTC))
    base_in = getattr(prices.input_mtok, "base", prices.input_mtok)
    base_out = getattr(prices.output_mtok, "base", prices.output_mtok)
    if base_in is None or base_out is None:
        return None
    return RowPrice(
        input_per_million=Decimal(str(base_in)),
        output_per_million=Decimal(str(base_out)),
        source=f"genai-prices {version('genai-prices')} (OpenRouter)",
        date=None,
    )
