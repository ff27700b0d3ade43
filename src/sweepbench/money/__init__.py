"""Money: prices, estimates and the spend ledger. Money is a Decimal of US dollars."""

from sweepbench.money.estimate import CallEstimate, estimate_call
from sweepbench.money.ledger import Ceilings, Charge, Ledger, SpendSummary
from sweepbench.money.prices import Price, call_cost, format_usd, price_for

__all__ = [
    "CallEstimate",
    "Ceilings",
    "Charge",
    "Ledger",
    "Price",
    "SpendSummary",
    "call_cost",
    "estimate_call",
    "format_usd",
    "price_for",
]
