"""Which OpenRouter host answers a model's calls: the route, chosen from the model's hosts.

OpenRouter serves most open-weight models from several hosts (providers), each at its own
price and often at its own precision (``quantization``: ``bf16``, ``fp8``, ``fp4``, …). A run
whose answers came from an fp4 host does not stand beside a published figure that came from an
fp8 one, and a call priced at the catalogue's price may be charged another host's. So a model's
calls are routed by a *policy*:

* ``precision`` (the default, as ELBench-live runs its models): the highest precision any of
  the model's hosts states, on the cheapest host at it; the other hosts at that precision, by
  price, are the fallback, and no other host is used. A model none of whose hosts states its
  precision goes to the cheapest host (OpenRouter's price order).
* ``cheapest``: the cheapest host, whatever its precision (OpenRouter's price order).
* ``none``: no preference sent; OpenRouter balances the load among all hosts.

The route is chosen once from the model's endpoints listing (:func:`sweepbench.models.
openrouter.hosts`), sent with every call (:meth:`Route.request_fields`: OpenRouter's
``provider`` request object), priced at the first host (:meth:`Route.first`) and held at the
dearest host the calls may go to (:meth:`Route.dearest`), so that a fallback never costs more
than was held.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, get_args

RoutePolicy = Literal["precision", "cheapest", "none"]
ROUTE_POLICIES: tuple[RoutePolicy, ...] = get_args(RoutePolicy)
DEFAULT_ROUTE: RoutePolicy = "precision"
"""As ELBench-live: the highest precision a model's hosts offer, on the cheapest such host."""

POLICY_HELP = (
    "precision: the highest precision any host of the model offers, on the cheapest such host "
    "(as ELBench-live); cheapest: the cheapest host; none: OpenRouter chooses"
)

BITS: dict[str, int] = {
    "fp32": 32,
    "bf16": 16,
    "fp16": 16,
    "fp8": 8,
    "int8": 8,
    "fp6": 6,
    "fp4": 4,
    "int4": 4,
}
"""Each quantization OpenRouter names, by its bits per weight: hosts at the same bits are at
the same precision (bf16 and fp16; fp8 and int8). Any other value (``unknown``, none) is a host
that does not say."""


def parse_policy(text: str) -> RoutePolicy:
    """A route policy from text; a ValueError naming the choices otherwise."""
    choice = text.strip().lower()
    for policy in ROUTE_POLICIES:
        if choice == policy:
            return policy
    raise ValueError(f"{text!r} is not a route; choose {', '.join(ROUTE_POLICIES)}")


@dataclass(frozen=True)
class Host:
    """One host (OpenRouter endpoint) of a model."""

    provider: str
    """Its provider's name (``DeepInfra``)."""
    tag: str
    """The slug OpenRouter routes by (``deepinfra/fp8``; the provider's slug when untagged)."""
    quantization: str | None
    """Its stated precision (``fp8``); None when it does not say."""
    price_in: Decimal
    """USD per 1M input tokens."""
    price_out: Decimal
    """USD per 1M output tokens."""

    @property
    def bits(self) -> int | None:
        """Bits per weight of its stated precision (None: not stated)."""
        return None if self.quantization is None else BITS.get(self.quantization)

    @property
    def blended(self) -> Decimal:
        """Its price blended 3:1 input:output, the order "cheapest" goes by."""
        return (3 * self.price_in + self.price_out) / 4


@dataclass(frozen=True)
class Route:
    """How a model's calls are routed among its hosts."""

    policy: RoutePolicy
    hosts: tuple[Host, ...] = ()
    """The hosts the calls may go to, in the order they are tried (``none``: every host, by
    price — any may answer)."""
    quantizations: tuple[str, ...] = ()
    """The precisions the calls are kept to (empty: not pinned)."""
    known: bool = True
    """False when the model's hosts could not be read (:attr:`why`): nothing is sent, and a
    run under a policy other than ``none`` is refused."""
    why: str = ""

    @property
    def first(self) -> Host | None:
        """The host a call goes to first (None: OpenRouter chooses, or nothing is known)."""
        if self.policy == "none" or not self.hosts:
            return None
        return self.hosts[0]

    @property
    def dearest(self) -> tuple[Decimal, Decimal] | None:
        """The highest input and output prices among the hosts a call may go to: what a call
        is held at (None: no host known)."""
        if not self.hosts:
            return None
        return max(h.price_in for h in self.hosts), max(h.price_out for h in self.hosts)

    @property
    def pinned(self) -> bool:
        """Whether the route keeps the calls to hosts it chose (a policy applied to known
        hosts), so that they are priced at its first host."""
        return self.known and self.first is not None

    def request_fields(self) -> dict[str, Any]:
        """OpenRouter's ``provider`` request object for this route (empty: send none)."""
        if not self.pinned:
            return {}
        if self.quantizations:
            return {
                "provider": {
                    "order": [h.tag for h in self.hosts],
                    "quantizations": list(self.quantizations),
                    "allow_fallbacks": False,
                }
            }
        return {"provider": {"sort": "price"}}

    def hashed(self) -> str | None:
        """What of the route changes answers, as a run's hash keeps it: the precision the
        calls are kept to, or ``cheapest``; None for OpenRouter's own choice."""
        if not self.pinned:
            return None
        return "+".join(self.quantizations) if self.quantizations else "cheapest"

    def describe(self) -> str:
        """The route in words, as an estimate's Hosts line says it ("fp8 on DeepInfra at
        $0.20/$0.80 per 1M; fallback: Novita")."""
        if not self.known:
            return f"could not be read ({self.why}), so priced at the model's listed price"
        if self.policy == "none":
            return "OpenRouter chooses among its hosts (--route none)"
        first = self.first
        if first is None:
            return "no host listed"
        precision = "/".join(self.quantizations) if self.quantizations else "precision unstated"
        if not self.quantizations and self.policy == "precision":
            precision = "hosts don't state their precision: the cheapest"
        elif not self.quantizations:
            precision = "the cheapest"
        text = (
            f"{precision} on {first.provider} at {_per_million(first.price_in)}/"
            f"{_per_million(first.price_out)} per 1M"
        )
        fallback = [h.provider for h in self.hosts[1:]] if self.quantizations else []
        if fallback:
            text += f"; fallback: {', '.join(dict.fromkeys(fallback))}"
        elif not self.quantizations and len(self.hosts) > 1:
            text += "; fallback: the next cheapest"
        return text

    def as_json(self) -> dict[str, Any]:
        """The route as a run's settings store it."""
        return {
            "policy": self.policy,
            "quantizations": list(self.quantizations),
            "hosts": [
                {
                    "provider": h.provider,
                    "tag": h.tag,
                    "quantization": h.quantization,
                    "price_in": str(h.price_in),
                    "price_out": str(h.price_out),
                }
                for h in self.hosts
            ],
            "known": self.known,
            "why": self.why,
            "described": self.describe(),
        }


def _per_million(price: Decimal) -> str:
    """A price per 1M tokens: cents from a cent up ("$0.20"), every digit below ("$0.0015")."""
    if price == 0:
        return "$0"
    if price >= Decimal("0.01"):
        return f"${price.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"
    return f"${price.normalize():f}"


def choose(policy: RoutePolicy, hosts: list[Host]) -> Route:
    """The route a policy takes among a model's hosts (see the module's doc)."""
    by_price = tuple(sorted(hosts, key=lambda h: (h.blended, h.price_out, h.provider)))
    if policy == "none" or not by_price:
        return Route(policy, by_price)
    if policy == "cheapest":
        return Route(policy, by_price)
    stated = [h for h in by_price if h.bits is not None]
    if not stated:
        return Route(policy, by_price)  # hosts that don't say: the cheapest
    best = max(h.bits or 0 for h in stated)
    level = tuple(h for h in stated if h.bits == best)
    quantizations = tuple(sorted({h.quantization for h in level if h.quantization}))
    return Route(policy, level, quantizations)


def unknown(policy: RoutePolicy, why: str) -> Route:
    """The route of a model whose hosts could not be read."""
    return Route(policy, known=False, why=why)
