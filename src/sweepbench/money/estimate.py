"""What a call will cost, before it runs: a *typical* figure and a *ceiling*.

* ceiling = input + the whole output budget (what the spend ledger reserves);
* typical = input + the budget × the share of it calls at that effort usually use — the
  spec's utilisation table, or, where the user has ≥ 5 finished calls of the same model and
  effort in the store, the median share those calls actually used ("calibrated from N runs").
Input tokens are estimated at four characters a token plus 200 for the message framing.

What the ledger *holds* for a call (``hold``) is stricter than the ceiling: the prompt at the most
tokens it can be (:func:`~sweepbench.models.tokens.prompt_token_bound`) plus the whole output
budget, so no settlement can exceed its reservation whatever the prompt's language.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

from sweepbench.models.base import Request
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.tokens import prompt_token_bound, typical_prompt_tokens
from sweepbench.money.prices import MILLION, price_for
from sweepbench.store import Store

#: Share of the output budget used, by applied effort (spec sweeps.md §6.1; low and high were
#: measured once on Claude Opus 5, the rest interpolated).
UTILISATION: dict[str, float] = {
    "none": 0.70,
    "low": 0.51,
    "medium": 0.60,
    "high": 0.68,
    "xhigh": 0.85,
    "max": 0.95,
}
CALIBRATION_MIN_CALLS = 5
CALIBRATION_WINDOW = 200


@dataclass(frozen=True)
class CallEstimate:
    """The estimate of one call. ``typical``/``ceiling`` are None when there is no price."""

    model: str
    input_tokens: int
    max_tokens: int
    fraction: float
    calibrated_from: int
    """How many recorded calls set ``fraction`` (0: the default table)."""
    typical: Decimal | None
    ceiling: Decimal | None
    free: bool = False
    """Anyone may start it: $0 and no key the operator holds (:attr:`Price.free
    <sweepbench.money.prices.Price.free>`); a $0 call sent a key is not free, though it holds
    nothing."""
    hold: Decimal | None = None
    """What the ledger reserves: the prompt at its token upper bound plus the whole budget."""

    @property
    def priced(self) -> bool:
        """False when there is no price on file."""
        return self.ceiling is not None


def estimate_input_tokens(request: Request) -> int:
    """Prompt tokens, estimated from characters (the spec's rule, provider-independent)."""
    return typical_prompt_tokens(m.content for m in request.messages)


def observed_utilisation(store: Store, model: str, effort: str) -> tuple[float, int] | None:
    """Median share of the budget used by this user's finished calls of ``model`` at
    ``effort`` (newest first, up to 200), when there are at least five."""
    shares: list[float] = []
    for call in store.list_calls(limit=CALIBRATION_WINDOW, model=model):
        settings = call.request.get("settings", {})
        budget = settings.get("max_tokens")
        if call.stop_reason not in ("end", "max_tokens") or not budget:
            continue
        if (settings.get("effort") or "none") != effort:
            continue
        shares.append(min(call.output_tokens / int(budget), 1.0))
    if len(shares) < CALIBRATION_MIN_CALLS:
        return None
    return statistics.median(shares), len(shares)


def estimate_call(
    info: ModelInfo,
    request: Request,
    *,
    effort: str,
    max_tokens: int,
    store: Store | None = None,
    observed: dict[tuple[str, str], tuple[float, int] | None] | None = None,
) -> CallEstimate:
    """Typical and ceiling cost of one call (``effort`` is the applied level). ``observed``
    remembers each model and effort's :func:`observed_utilisation` across the calls of one
    plan, so that its cells read the store once, not once each."""
    input_tokens = estimate_input_tokens(request)
    fraction = UTILISATION.get(effort, UTILISATION["none"])
    calibrated = 0
    if store is not None:
        memo = {} if observed is None else observed
        if (info.id, effort) not in memo:
            memo[info.id, effort] = observed_utilisation(store, info.id, effort)
        found = memo[info.id, effort]
        if found is not None:
            fraction, calibrated = found
    price = price_for(info)
    if price is None:
        return CallEstimate(info.id, input_tokens, max_tokens, fraction, calibrated, None, None)
    input_cost = input_tokens * price.input / MILLION
    out_rate = price.output / MILLION
    ceiling = input_cost + max_tokens * out_rate
    typical = (
        input_cost
        + (Decimal(max_tokens) * Decimal(str(fraction))).quantize(Decimal(1), rounding=ROUND_UP)
        * out_rate
    )
    bound = prompt_token_bound(m.content for m in request.messages)
    held = price.held()  # a routed call is held at the dearest host it may go to
    hold = (bound * held.input + max_tokens * held.output) / MILLION
    return CallEstimate(
        info.id, input_tokens, max_tokens, fraction, calibrated, typical, ceiling, price.free,
        hold,
    )  # fmt: skip
