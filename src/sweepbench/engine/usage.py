"""Reject usage and cost no request could produce. A provider (or a server pretending to be
one) that reports negative, non-finite or impossible usage, or a cost its usage cannot come to,
has given a broken reply: the call is a ``bad_response`` provider error settled at its
reservation and shown as an anomaly, never a charge of $-5 or $5,000 taken at face value.

The bounds (docs/architecture.md, "Money"): the prompt's tokens are at most its UTF-8 bytes and
the template's framing (:func:`~sweepbench.models.tokens.prompt_token_bound`) plus
:data:`INPUT_SLACK_TOKENS`; the output, reasoning included, at most the budget sent plus
:data:`OUTPUT_SLACK_TOKENS`; a reported cost at most :data:`REPORTED_COST_FACTOR` × what the
reported usage costs at the model's price."""

from __future__ import annotations

from decimal import Decimal

from sweepbench.models.base import Usage

INPUT_SLACK_TOKENS = 64
"""Prompt tokens a provider may count beyond the prompt's bound (a hidden system line)."""
OUTPUT_SLACK_TOKENS = 16
"""Output tokens a provider may count beyond the budget (an end-of-turn marker or two)."""
REPORTED_COST_FACTOR = Decimal("1.5")
"""A reported cost may be this much above its usage at the model's price: cache-write premiums
and rounding a catalogue price does not carry. Beyond it the figure is not believed."""
_ROUNDING = Decimal("0.000001")


def impossible_usage(usage: Usage, *, prompt_bound: int, max_tokens: int) -> str | None:
    """Why this usage is impossible for a request whose prompt is at most ``prompt_bound``
    tokens and whose output budget is ``max_tokens``; None when it is plausible."""
    given = usage.input_tokens
    made = usage.output_tokens
    reasoning = usage.reasoning_tokens
    read = usage.cache_read_tokens
    write = usage.cache_write_tokens
    cost = usage.cost_usd
    if (  # the common case at once: plain counts ≥ 0 within their bounds, no odd cost
        type(given) is int
        and type(made) is int
        and type(reasoning) is int
        and type(read) is int
        and type(write) is int
        and given >= 0
        and made >= 0
        and reasoning >= 0
        and read >= 0
        and write >= 0
        and (cost is None or (type(cost) is Decimal and cost.is_finite() and cost >= 0))
        and given <= prompt_bound + INPUT_SLACK_TOKENS
        and made <= max_tokens + OUTPUT_SLACK_TOKENS
        and reasoning <= max_tokens + OUTPUT_SLACK_TOKENS
        and read + write <= given
    ):
        return None
    counts = {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "reasoning": usage.reasoning_tokens,
        "cache read": usage.cache_read_tokens,
        "cache write": usage.cache_write_tokens,
    }
    for name, value in counts.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"it reported {value!r} {name} tokens"
    cost = usage.cost_usd
    if cost is not None and (not isinstance(cost, Decimal) or not cost.is_finite() or cost < 0):
        return f"it reported a cost of {cost}"
    if usage.input_tokens > prompt_bound + INPUT_SLACK_TOKENS:
        return (
            f"it reported {usage.input_tokens:,} input tokens for a prompt of at most "
            f"{prompt_bound:,}"
        )
    if usage.cache_read_tokens + usage.cache_write_tokens > usage.input_tokens:
        return (
            f"it reported {usage.cache_read_tokens + usage.cache_write_tokens:,} cached tokens "
            f"of {usage.input_tokens:,} input tokens"
        )
    for name, value in (("output", usage.output_tokens), ("reasoning", usage.reasoning_tokens)):
        if value > max_tokens + OUTPUT_SLACK_TOKENS:
            return f"it reported {value:,} {name} tokens with a budget of {max_tokens:,}"
    return None


def implausible_cost(reported: Decimal, worth: Decimal) -> str | None:
    """Why a provider's reported cost is not believed: above :data:`REPORTED_COST_FACTOR` ×
    ``worth``, what its reported usage costs at the model's price; None when plausible."""
    if reported <= worth * REPORTED_COST_FACTOR + _ROUNDING:
        return None
    return f"it reported a cost of ${reported:f} for usage worth ${worth:.6f} at its price"


ANOMALY = "anomaly"
"""How a call settled at its reservation because its reply was impossible starts its
``price_source`` (``sweepbench spend`` lists them)."""


def anomaly_source(reported: Decimal | None) -> str:
    """The ``price_source`` of a call whose reply was impossible: the provider's own figure,
    when it gave one, beside the rule that settled it."""
    said = "" if reported is None else f"; the provider reported ${_usd_text(reported)}"
    return f"{ANOMALY}: impossible usage or cost, counted at the reservation{said}"[:200]


def _usd_text(amount: Decimal) -> str:
    """A reported amount, short whatever its size (``5000``, ``0.000123``, ``1.000E+308``)."""
    if not amount.is_finite() or abs(amount) >= 1_000_000:
        return f"{amount:.3E}"
    return f"{amount:.6f}".rstrip("0").rstrip(".")
