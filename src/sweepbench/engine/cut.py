"""Calls that hold less than their worst case, and where their streams are cut
(docs/architecture.md, the ledger: "Cut at the hold").

When no ceiling leaves room for a benchmark call's worst case, the call may still run if its
whole output streams in sight (:meth:`~sweepbench.models.base.Model.streams_what_it_bills`): it
holds what is left — at least its *floor* — and the executor stops its stream when what it has
received, counted at an upper bound (a token is at least one UTF-8 byte), comes within
:data:`CUT_MARGIN_TOKENS` of what the hold can pay for. The margin covers the tokens in flight at
the cut: produced and billed, never received — or, for a fast stream, what it makes in
:data:`IN_FLIGHT_SECONDS` at the rate received. Such a call is settled at what was received plus
that margin: within its hold while deltas are at most :data:`DELTA_RESERVE_TOKENS` long and the
provider makes tokens no faster than they are read (``benchmarks/cut_overshoot.py`` measures
both); beyond, the settlement says so (an overrun), never hides it. Its item is "stopped at the
limit" — not scored, asked again when the run continues with more money.
"""

from __future__ import annotations

from decimal import Decimal

from sweepbench.money.prices import Price

MILLION = Decimal(1_000_000)
CUT_MARGIN_TOKENS = 64
"""Output tokens a provider may bill after the last delta received before a cut (in flight)."""
MIN_OUTPUT_TOKENS = 256
"""A call that cannot pay for this much output beyond the margin is not started at all."""
IN_FLIGHT_SECONDS = 0.25
"""How long a stream may go on being made after the cut before the provider sees the connection
close: the margin grows to the tokens the stream makes in that time at the rate received."""
DELTA_RESERVE_TOKENS = 32
"""The cut is checked as each delta arrives, so it lands up to one delta past its point: this
much is kept back for that delta (a delta longer than 32 bytes carries the settlement past the
hold by its excess, recorded as an overrun)."""


def floor_usd(prompt_bound: int, max_tokens: int, price: Price) -> Decimal | None:
    """The least a call may hold and still be started: its prompt at its bound plus
    :data:`MIN_OUTPUT_TOKENS`, the margin and the delta reserve of output; None when that is
    its whole worst case
    (a call with a budget that small always holds it all)."""
    output = CUT_MARGIN_TOKENS + DELTA_RESERVE_TOKENS + MIN_OUTPUT_TOKENS
    if output >= max_tokens:
        return None
    return (prompt_bound * price.input + output * price.output) / MILLION


def affordable(cap_usd: Decimal, prompt_bound: int, price: Price) -> int:
    """Output tokens a call holding ``cap_usd`` can pay for, less the delta reserve: it is cut
    once what it received and what may be in flight reach this (:func:`in_flight`)."""
    if price.output <= 0:
        return 2**62
    left = cap_usd * MILLION - prompt_bound * price.input
    return max(int(left / price.output) - DELTA_RESERVE_TOKENS, 0)


def in_flight(received: int, streaming_s: float) -> int:
    """Tokens that may be made and billed after a cut, unseen: :data:`CUT_MARGIN_TOKENS`, or
    :data:`IN_FLIGHT_SECONDS` of the stream at the rate it was received, whichever is more
    (``received``: tokens at an upper bound, over ``streaming_s`` since the first)."""
    # over less than IN_FLIGHT_SECONDS a burst's rate says nothing: at most what came in it
    rate = received / max(streaming_s, IN_FLIGHT_SECONDS)
    return max(CUT_MARGIN_TOKENS, int(rate * IN_FLIGHT_SECONDS))


def utf8_bytes(text: str) -> int:
    """An upper bound of the tokens in ``text``: its UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))
