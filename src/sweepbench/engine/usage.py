"""Reject usage no request could produce. A provider (or a server pretending to be one) that
reports negative, non-finite or absurd usage or cost has given a broken reply: the call is a
provider error settled at its reservation, never a charge of $-5 or $5,000 taken at face value."""

from __future__ import annotations

from decimal import Decimal

from sweepbench.models.base import Usage

SLACK_TOKENS = 2048
"""Tokens allowed beyond a bound before usage counts as impossible (templates, tool framing)."""


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
        and given <= 2 * prompt_bound + SLACK_TOKENS
        and made <= 2 * max_tokens + SLACK_TOKENS
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
    if usage.input_tokens > 2 * prompt_bound + SLACK_TOKENS:
        return (
            f"it reported {usage.input_tokens:,} input tokens for a prompt of at most "
            f"{prompt_bound:,}"
        )
    if usage.output_tokens > 2 * max_tokens + SLACK_TOKENS:
        return f"it reported {usage.output_tokens:,} output tokens with a budget of {max_tokens:,}"
    return None
