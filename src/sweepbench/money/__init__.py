"""Money: prices, estimates and (later) the spend ledger. Money is a Decimal of US dollars."""

from sweepbench.money.prices import Price, call_cost, format_usd, price_for

__all__ = ["Price", "call_cost", "format_usd", "price_for"]
