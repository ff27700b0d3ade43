"""Prices from genai-prices / OpenRouter / zero for local; costs as Decimal; never a fake $0."""

from __future__ import annotations

from decimal import Decimal

from sweepbench.models import Usage, model_info
from sweepbench.money.prices import call_cost, format_usd, price_for


def test_anthropic_prices_come_from_genai_prices() -> None:
    price = price_for(model_info("anthropic/claude-opus-5"))
    assert price is not None
    assert (price.input, price.output) == (Decimal(5), Decimal(25))
    assert price.source.startswith("genai-prices ")


def test_cost_uses_cache_rates_and_is_exact() -> None:
    info = model_info("anthropic/claude-opus-5")
    usage = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=500)
    cost = call_cost(info, usage)
    # 500 uncached × $5 + 500 cached × $0.50 + 500 out × $25, per million
    assert cost.usd == Decimal("0.01525")


def test_local_is_free_and_says_so() -> None:
    price = price_for(model_info("local/smollm2-135m"))
    assert price is not None and price.free and "free" in price.source


def test_unknown_model_has_no_price_on_file_never_zero() -> None:
    info = model_info("openai/gpt-99-preview")
    assert price_for(info) is None
    cost = call_cost(info, Usage(input_tokens=10, output_tokens=10))
    assert cost.usd is None
    assert format_usd(cost.usd) == "no price on file"


def test_provider_reported_cost_wins() -> None:
    info = model_info("openrouter/some/model")
    cost = call_cost(info, Usage(input_tokens=1, output_tokens=1, cost_usd=Decimal("0.0042")))
    assert cost.usd == Decimal("0.0042")
    assert cost.source == "reported by openrouter"


def test_money_formatting() -> None:
    assert format_usd(Decimal("0")) == "$0"
    assert format_usd(Decimal("0.3135")) == "$0.31"
    assert format_usd(Decimal("0.0034")) == "$0.003"
    assert format_usd(Decimal("0.0000123")) == "<$0.001"
    assert format_usd(Decimal("1234.5")) == "$1,234.50"
    assert format_usd(None) == "no price on file"
