"""Prices per model and the cost of a call.

Sources, in order: an operator override in the catalogue; then what the provider table
(:mod:`sweepbench.models.providers`) says of the model's provider: zero for models that run on
the user's own hardware (the bundled local model, scripted models, configured endpoints),
OpenRouter's catalogue, or the ``genai-prices`` package's bundled snapshot (works offline).
A model none of them knows has *no price on file* — ``None``, never $0.

A price also says whether the call is made with a key the operator holds (``keyed``: a keyed
provider, or an endpoint sent a key and not marked ``free = true``). Such a call is not *free*
even at $0 — the web app's gate treats it as spending — while the ledger, which decides by the
amount held, still counts a $0 call against no ceiling.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from importlib.metadata import version
from typing import Literal

from sweepbench.models.base import Usage
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import provider
from sweepbench.models.registry import uses_operator_key
from sweepbench.models.routes import RoutePolicy

MILLION = Decimal(1_000_000)
ZERO = Decimal(0)


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens, with where the figure came from."""

    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None
    cache_write: Decimal | None = None
    source: str = ""
    date: str = ""
    """When the source was published or fetched (a version for package snapshots)."""
    keyed: bool = False
    """The call is made with a key the operator holds
    (:func:`~sweepbench.models.registry.uses_operator_key`)."""
    hold_input: Decimal | None = None
    """What a call is held at per 1M input tokens when that is more than :attr:`input`: a
    routed OpenRouter call is priced at the host it goes to first and held at the dearest
    host it may fall back to (None: held at :attr:`input`)."""
    hold_output: Decimal | None = None

    def held(self) -> Price:
        """The price a call's hold (its worst case) is counted at."""
        if self.hold_input is None and self.hold_output is None:
            return self
        return replace(
            self,
            input=max(self.input, self.hold_input or ZERO),
            output=max(self.output, self.hold_output or ZERO),
            hold_input=None,
            hold_output=None,
        )

    @property
    def zero(self) -> bool:
        """Priced at $0 (what the ledger holds and settles for such a call)."""
        return self.input == 0 and self.output == 0

    @property
    def free(self) -> bool:
        """True for calls anyone may start: $0 and made with no key the operator holds
        (local and scripted models, own servers sent no key or marked ``free = true``)."""
        return self.zero and not self.keyed

    def cost(self, usage: Usage) -> Decimal:
        """The cost of a call with this usage (cache reads/writes at their own rates)."""
        read = usage.cache_read_tokens
        write = usage.cache_write_tokens
        uncached = max(usage.input_tokens - read - write, 0)
        total = (
            uncached * self.input
            + read * (self.input if self.cache_read is None else self.cache_read)
            + write * (self.input if self.cache_write is None else self.cache_write)
            + usage.output_tokens * self.output
        )
        return total / MILLION

    @property
    def blended(self) -> Decimal:
        """USD per 1M tokens, blended 3:1 input:output (:func:`blended`)."""
        return blended(self.input, self.output)


def blended(input_per_million: Decimal, output_per_million: Decimal) -> Decimal:
    """The blended price, USD per 1M tokens, 3:1 input:output: the one such price (the
    leaderboard's boards and filters, the Run a benchmark page's price filter)."""
    return (3 * input_per_million + output_per_million) / 4


@cache
def _genai_prices_version() -> str:
    return f"genai-prices {version('genai-prices')}"


def _from_genai_prices(info: ModelInfo) -> Price | None:
    from genai_prices import data_snapshot

    try:
        _, model = data_snapshot.get_snapshot().find_provider_model(
            info.name, None, info.provider, None
        )
    except LookupError:
        return None
    prices = model.prices
    if isinstance(prices, list):  # time-conditional prices: the one in force now
        prices = model.get_prices(datetime.now(UTC))
    if prices.input_mtok is None or prices.output_mtok is None:
        return None

    def flat(value: object) -> Decimal | None:
        # Tiered prices (by prompt length) are shown at their base tier.
        base = getattr(value, "base", value)
        return None if base is None else Decimal(str(base))

    input_price, output_price = flat(prices.input_mtok), flat(prices.output_mtok)
    if input_price is None or output_price is None:
        return None
    return Price(
        input=input_price,
        output=output_price,
        cache_read=flat(prices.cache_read_mtok),
        cache_write=flat(prices.cache_write_mtok),
        source=_genai_prices_version(),
    )


OWN_SERVER = "own server: free"
OWN_SERVER_KEYED = "own server: $0, but sent a key (not free)"


def price_for(info: ModelInfo) -> Price | None:
    """The price of a model, or None when there is no price on file."""
    price = _price_for(info)
    if price is None or not uses_operator_key(info.provider):
        return price
    if price.source == OWN_SERVER:
        return replace(price, keyed=True, source=OWN_SERVER_KEYED)
    return replace(price, keyed=True)


def _price_for(info: ModelInfo) -> Price | None:
    if info.price_in is not None and info.price_out is not None:
        return Price(info.price_in, info.price_out, source="operator override")
    how = provider(info.provider)
    if how.pricing == "free":
        return Price(ZERO, ZERO, source=how.free_source)
    if how.pricing == "openrouter-catalogue":
        return _routed_price(info, _openrouter_price(info.name))
    if how.pricing == "genai-prices":
        return _from_genai_prices(info)
    # An OpenAI-compatible endpoint runs on the user's own hardware.
    return Price(ZERO, ZERO, source=OWN_SERVER)


OPENROUTER_CATALOGUE = "OpenRouter catalogue"
OPENROUTER_HOST = "OpenRouter host"
"""The source of a routed OpenRouter model's price: the host it goes to first."""


def _openrouter_price(name: str) -> Price | None:
    """An OpenRouter model's price, from the first source that has it: OpenRouter's catalogue
    (fetched when the cache is missing or stale; a stale one when OpenRouter cannot be
    reached), then the ``genai-prices`` snapshot's OpenRouter table (offline). None when
    neither lists it — never $0."""
    from sweepbench.models.openrouter import catalogue, fetched_at, snapshot_price

    entry = catalogue().get(name)
    if entry is not None and entry.price_in is not None and entry.price_out is not None:
        when = fetched_at()
        date = "" if when is None else when.date().isoformat()
        return Price(entry.price_in, entry.price_out, source=OPENROUTER_CATALOGUE, date=date)
    snapshot = snapshot_price(name)
    if snapshot is None:
        return None
    price_in, price_out, source = snapshot
    return Price(price_in, price_out, source=source)


def _routed_price(info: ModelInfo, listed: Price | None) -> Price | None:
    """An OpenRouter model's price on its route: its first host's, held at the dearest host it
    may go to; with no host chosen (``--route none``, or hosts unknown), the listed price,
    held at the dearest host when the hosts are known."""
    route = info.route
    if route is None:
        return listed
    first, dearest = route.first, route.dearest
    if first is not None and route.known:
        return Price(
            first.price_in, first.price_out, source=f"{OPENROUTER_HOST} {first.provider}",
            hold_input=dearest[0] if dearest else None,
            hold_output=dearest[1] if dearest else None,
        )  # fmt: skip
    if listed is None or dearest is None:
        return listed
    return replace(listed, hold_input=dearest[0], hold_output=dearest[1])


def openrouter_price_line(models: Iterable[str], *, route: RoutePolicy | None = None) -> str | None:
    """Where the prices of the OpenRouter models among ``models`` came from, as an estimate
    says it ("Prices from OpenRouter, fetched 01 Dec 2026 14:00 UTC." / "… from genai-prices
    0.2.3 (OpenRouter could not be reached)."); None when none of them is an OpenRouter
    model. ``route``: the models' calls are routed so (priced at their first host)."""
    from sweepbench.errors import SweepbenchError
    from sweepbench.models.openrouter import NAME, fetched_at, unreachable
    from sweepbench.models.registry import model_info, routed

    by_source: dict[str, list[str]] = {}
    for model in dict.fromkeys(models):
        if not model.startswith(f"{NAME}/"):
            continue
        try:
            info = model_info(model)
            price = price_for(info if route is None else routed(info, route))
        except SweepbenchError:
            continue
        source = "no price listed" if price is None else price.source
        if source.startswith(OPENROUTER_HOST):
            source = OPENROUTER_HOST
        by_source.setdefault(source, []).append(model)
    if not by_source:
        return None
    away = " (OpenRouter could not be reached just now)" if unreachable() else ""

    def where(source: str) -> str:
        if source == OPENROUTER_CATALOGUE:
            when = fetched_at()
            return "from OpenRouter" + (f", fetched {when:%d %b %Y %H:%M} UTC" if when else "")
        if source == OPENROUTER_HOST:
            return "from OpenRouter, at the host each call goes to first (see Hosts)"
        return "none listed" if source == "no price listed" else f"from {source}"

    if len(by_source) == 1:
        return f"Prices {where(next(iter(by_source)))}{away}."
    parts = [f"{where(source)} for {', '.join(named)}" for source, named in by_source.items()]
    return f"Prices: {'; '.join(parts)}{away}."


@dataclass(frozen=True)
class Cost:
    """What a call cost, and how we know."""

    usd: Decimal | None
    source: str | None


def call_cost(
    info: ModelInfo, usage: Usage, *, price: Price | Literal["look up"] | None = "look up"
) -> Cost:
    """The cost of a finished (or stopped) call — the one cost rule: the provider's own figure
    when it reports one (OpenRouter does), else usage × price; ``usd=None`` when there is no
    price on file. ``price`` saves the look-up when the caller already has it."""
    if usage.cost_usd is not None:
        return Cost(usage.cost_usd, f"reported by {info.provider}")
    known = price_for(info) if price == "look up" else price
    if known is None:
        return Cost(None, None)
    return Cost(known.cost(usage), known.source)


def format_usd(
    amount: Decimal | None, *, none: str = "no price on file", small_digits: int = 3
) -> str:
    """Money as the specs write it — the one money formatter: ``$1,234.56`` from a cent up,
    ``$0`` for exactly zero, and below a cent ``small_digits`` decimals: three (sweeps:
    ``$0.003``, ``<$0.001`` for a non-zero sliver) or more (benchmarks §6.2: six, trailing
    zeros dropped). ``none`` is shown for an unknown amount."""
    if amount is None:
        return none
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    if value == 0:
        return "$0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value >= Decimal("0.01"):
        return f"{sign}${value.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"
    if small_digits <= 3:
        if value < Decimal("0.0005"):
            return f"{sign}<$0.001"
        return f"{sign}${value.quantize(Decimal('0.001'), rounding=ROUND_HALF_UP)}"
    step = Decimal(10) ** -small_digits
    small = f"{value.quantize(step, rounding=ROUND_HALF_UP):.{small_digits}f}"
    return f"{sign}${small.rstrip('0').rstrip('.')}"
