"""OpenRouter: the Chat Completions adapter plus OpenRouter's own facts.

* its model catalogue (``GET /api/v1/models``: prices, context, supported parameters; no key
  needed), fetched when it is needed and the disk cache is missing or older than its TTL — with
  a short timeout, and at most one failed attempt per process — and used from the (stale)
  cache when OpenRouter cannot be reached;
* each model's hosts (``GET /api/v1/models/{author}/{slug}/endpoints``: provider, precision,
  prices), fetched and cached the same way, from which a run's route is chosen
  (:mod:`sweepbench.models.routes`) and sent with every call;
* the free key check (``GET /api/v1/key``: valid? credit left?);
* the ``usage.cost`` it returns with every completion (the charged figure, preferred over our
  own estimate).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar, cast

from sweepbench.errors import ErrorKind, ProviderError
from sweepbench.models.base import Request
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.openai import ChatCompletionsModel
from sweepbench.models.routes import BITS, Host, Route, RoutePolicy
from sweepbench.models.routes import choose as choose_route
from sweepbench.models.routes import unknown as unknown_route
from sweepbench.settings import base_url_override, home, provider_key
from sweepbench.variables import OPENROUTER_TTL

T = TypeVar("T")

BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_TTL_S = OPENROUTER_TTL.default
#: OpenRouter normalises reasoning effort across vendors to these levels.
EFFORT_LEVELS = ("low", "medium", "high")


def base_url() -> str:
    """OpenRouter's API root (``SWEEPBENCH_OPENROUTER_BASE_URL`` overrides, e.g. in tests)."""
    return (base_url_override("openrouter") or BASE_URL).rstrip("/")


class OpenRouterModel(ChatCompletionsModel):
    """``openrouter/<vendor>/<model>``."""

    provider = "openrouter"
    default_base_url = BASE_URL

    def effort_params(self, effort: str) -> dict[str, Any]:
        # OpenRouter's unified reasoning parameter (it translates per upstream vendor).
        return {"extra_body": {"reasoning": {"effort": effort}}}

    def params(self, request: Request, effort: str | None) -> dict[str, Any]:
        """Chat Completions' arguments plus the route's host preferences (``provider``)."""
        params = super().params(request, effort)
        fields = self.info.route.request_fields() if self.info.route is not None else {}
        if fields:
            params["extra_body"] = {**params.get("extra_body", {}), **fields}
        return params


@dataclass(frozen=True)
class CatalogueEntry:
    """One model of OpenRouter's catalogue."""

    id: str
    name: str
    context_length: int | None
    max_completion_tokens: int | None
    price_in: Decimal | None
    """USD per 1M input tokens."""
    price_out: Decimal | None
    supported_parameters: tuple[str, ...]

    def info(self) -> ModelInfo:
        """The entry as a catalogue ModelInfo."""
        reasoning = "reasoning" in self.supported_parameters
        return ModelInfo(
            provider="openrouter",
            name=self.id,
            label=self.name,
            effort_levels=EFFORT_LEVELS if reasoning else (),
            default_max_tokens=min(self.max_completion_tokens or 4096, 16000),
            max_output_tokens=self.max_completion_tokens,
            context_window=self.context_length,
        )


def _per_million(value: Any) -> Decimal | None:
    try:
        price = Decimal(str(value))
    except (ArithmeticError, ValueError):
        return None
    return None if price < 0 else price * 1_000_000  # "-1" marks a variable price


def parse_catalogue(payload: dict[str, Any]) -> dict[str, CatalogueEntry]:
    """Entries by id from the ``/models`` JSON; rows without an id are skipped."""
    entries: dict[str, CatalogueEntry] = {}
    for row in payload.get("data", []):
        if not isinstance(row, dict) or not row.get("id"):
            continue
        pricing = row.get("pricing") or {}
        top = row.get("top_provider") or {}
        entries[row["id"]] = CatalogueEntry(
            id=str(row["id"]),
            name=str(row.get("name") or row["id"]),
            context_length=row.get("context_length") or top.get("context_length"),
            max_completion_tokens=top.get("max_completion_tokens"),
            price_in=_per_million(pricing.get("prompt")),
            price_out=_per_million(pricing.get("completion")),
            supported_parameters=tuple(row.get("supported_parameters") or ()),
        )
    return entries


CHAT = "chat"
DECISIONS = "decisions"
LISTINGS: dict[str, tuple[str, str]] = {
    CHAT: ("/models", "openrouter-models.json"),
    DECISIONS: ("/models?output_modalities=decisions", "openrouter-decision-models.json"),
}
"""Each listing of OpenRouter's catalogue: its path under the API root and its cache file —
the chat models, and the decision models (verdict-only judges)."""


def cache_file(listing: str = CHAT) -> Path:
    """Where a listing of the catalogue is cached."""
    return home() / "cache" / LISTINGS[listing][1]


def ttl_s() -> float:
    """Cache lifetime: ``SWEEPBENCH_OPENROUTER_TTL`` seconds (0 or more), default a day; a
    value that is not a number is warned about and the default used."""
    return OPENROUTER_TTL.value()


FETCH_TIMEOUT_S = 5.0
"""How long a catalogue fetch may take: a price look-up never waits long on the network."""

_failed: dict[tuple[str, str], str] = {}
"""The (API root, path) fetches that failed in this process, with why: not tried again."""
_parsed: dict[tuple[str, int, int], tuple[float, Any]] = {}
"""Each cache file's fetch time and parsed content by (path, mtime_ns, size): read once per
version."""
_lock = threading.Lock()


def _read_cache(path: Path) -> tuple[float, dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
        return float(data["fetched_at"]), dict(data["payload"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cached(path: Path, parse: Callable[[dict[str, Any]], T]) -> tuple[float, T] | None:
    """A cache file's fetch time and parsed content, read and parsed once per version of the
    file (a price look-up per call must not re-read a megabyte of JSON)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _lock:
        known = _parsed.get(key)
    if known is not None:
        return cast(tuple[float, T], known)
    cached = _read_cache(path)
    if cached is None:
        return None
    found = (cached[0], parse(cached[1]))
    with _lock:
        for old in [k for k in _parsed if k[0] == key[0]]:
            del _parsed[old]
        _parsed[key] = found
    return found


def _listing(
    api_path: str,
    path: Path,
    parse: Callable[[dict[str, Any]], T],
    *,
    shape: Callable[[dict[str, Any]], bool],
    refresh: bool = False,
    offline: bool = False,
    key: str | None = None,
) -> tuple[float, T] | None:
    """One of OpenRouter's listings, with when it was fetched: from its disk cache while
    fresh, else fetched (within :data:`FETCH_TIMEOUT_S`) and cached. When the fetch fails (or
    its payload is not of the ``shape`` expected), the stale cache is used, None without one,
    and this process does not try again (``refresh`` does). ``offline`` never touches the
    network."""
    cached = _cached(path, parse)
    fresh = cached is not None and time.time() - cached[0] < ttl_s()
    tried = (base_url(), api_path)
    if offline or (fresh and not refresh) or (tried in _failed and not refresh):
        return cached
    try:
        payload = _get_json(api_path, key=key, timeout=FETCH_TIMEOUT_S)
        if not shape(payload):
            raise ProviderError(
                f"OpenRouter's {api_path} listing is not of the shape it documents",
                kind=ErrorKind.RETRYABLE, provider="openrouter",
            )  # fmt: skip
    except ProviderError as exc:
        _failed[tried] = str(exc)
        return cached
    _failed.pop(tried, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    now = time.time()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fetched_at": now, "payload": payload}), "utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file
    return now, parse(payload)


def fetched_at(listing: str = CHAT) -> datetime | None:
    """When a cached listing was fetched (None: there is none)."""
    cached = _cached(cache_file(listing), parse_catalogue)
    return None if cached is None else datetime.fromtimestamp(cached[0], UTC)


def unreachable(listing: str = CHAT) -> str | None:
    """Why a listing could not be fetched in this process (None: it was not tried, or it was
    fetched)."""
    return _failed.get((base_url(), LISTINGS[listing][0]))


def catalogue(
    *, refresh: bool = False, offline: bool = False, listing: str = CHAT
) -> dict[str, CatalogueEntry]:
    """OpenRouter's catalogue (its chat models; ``listing=DECISIONS``: its decision models):
    from the disk cache while fresh, else fetched (no key; within :data:`FETCH_TIMEOUT_S`) and
    cached. When the fetch fails, the stale cache is used, with no cache the result is empty,
    and this process does not try again (``refresh`` does). ``offline`` never touches the
    network."""
    found = _listing(
        LISTINGS[listing][0], cache_file(listing), parse_catalogue,
        shape=lambda payload: isinstance(payload.get("data"), list),
        refresh=refresh, offline=offline,
    )  # fmt: skip
    return {} if found is None else found[1]


# -- the hosts of a model ----------------------------------------------------------------------


def parse_hosts(payload: dict[str, Any]) -> list[Host]:
    """The hosts of a model from its endpoints listing (``{"data": {"endpoints": [...]}}``);
    an endpoint without a provider or a fixed price is skipped (it cannot be routed to or
    held for)."""
    data = payload.get("data")
    rows = data.get("endpoints") if isinstance(data, dict) else None
    hosts: list[Host] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict) or not row.get("provider_name"):
            continue
        listed = row.get("pricing")
        pricing: dict[str, Any] = listed if isinstance(listed, dict) else {}
        price_in = _per_million(pricing.get("prompt"))
        price_out = _per_million(pricing.get("completion"))
        if price_in is None or price_out is None:
            continue
        provider = str(row["provider_name"])
        quantization = str(row.get("quantization") or "").strip().lower() or None
        hosts.append(
            Host(
                provider=provider,
                tag=str(row.get("tag") or provider.lower()),
                quantization=quantization if quantization in BITS else None,
                price_in=price_in,
                price_out=price_out,
            )
        )
    return hosts


def hosts_file(name: str) -> Path:
    """Where a model's endpoints listing is cached."""
    return home() / "cache" / "openrouter-endpoints" / f"{name.replace('/', '--')}.json"


def hosts(name: str, *, refresh: bool = False) -> tuple[list[Host] | None, str]:
    """An OpenRouter model's hosts (``GET /api/v1/models/{name}/endpoints``), fetched and
    cached as the catalogue is (the key is sent when there is one); ``(None, why)`` when they
    could not be read."""
    api_path = f"/models/{name}/endpoints"
    found = _listing(
        api_path, hosts_file(name), parse_hosts,
        shape=lambda payload: isinstance(payload.get("data"), dict),
        refresh=refresh, key=provider_key("openrouter"),
    )  # fmt: skip
    if found is not None:
        return found[1], ""
    why = _failed.get((base_url(), api_path), "not listed")
    return None, why.removeprefix(f"{NAME}: ")


def route(name: str, policy: RoutePolicy) -> Route:
    """The route of an OpenRouter model's calls under ``policy`` (:mod:`.routes`)."""
    found, why = hosts(name)
    if found is None:
        return unknown_route(policy, why) if policy != "none" else Route(policy)
    return choose_route(policy, found)


def decision_models(*, refresh: bool = False) -> dict[str, CatalogueEntry]:
    """OpenRouter's decision models (verdict-only judges), as :func:`catalogue` fetches and
    caches them."""
    return catalogue(refresh=refresh, listing=DECISIONS)


@dataclass(frozen=True)
class KeyStatus:
    """What ``/api/v1/key`` says about a key (the check itself is free)."""

    valid: bool
    label: str | None = None
    limit: Decimal | None = None
    limit_remaining: Decimal | None = None
    usage: Decimal | None = None
    is_free_tier: bool | None = None
    message: str | None = None


def check_key(key: str | None = None) -> KeyStatus:
    """Is the key valid, and how much credit is left? Never raises for a bad key."""
    key = key or provider_key("openrouter")
    if not key:
        return KeyStatus(valid=False, message="no key: set OPENROUTER_API_KEY")
    try:
        data = _get_json("/key", key=key).get("data") or {}
    except ProviderError as exc:
        if exc.kind in (ErrorKind.AUTH, ErrorKind.NOT_FOUND):
            return KeyStatus(valid=False, message=str(exc))
        raise

    def dec(name: str) -> Decimal | None:
        value = data.get(name)
        return None if value is None else Decimal(str(value))

    return KeyStatus(
        valid=True,
        label=data.get("label"),
        limit=dec("limit"),
        limit_remaining=dec("limit_remaining"),
        usage=dec("usage"),
        is_free_tier=data.get("is_free_tier"),
    )


def _get_json(path: str, *, key: str | None, timeout: float = 15.0) -> dict[str, Any]:
    import httpx2

    from sweepbench.models.http_errors import classify, retry_after

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx2.get(base_url() + path, headers=headers, timeout=timeout)
    except httpx2.HTTPError as exc:
        raise ProviderError(
            f"could not reach OpenRouter: {exc}", kind=ErrorKind.RETRYABLE, provider="openrouter"
        ) from exc
    if response.status_code >= 400:
        try:
            message = str(response.json().get("error", {}).get("message", response.text))
        except ValueError:
            message = response.text[:200]
        raise ProviderError(
            message,
            kind=classify(response.status_code, message),
            provider="openrouter",
            status=response.status_code,
            retry_after=retry_after(dict(response.headers)),
        )
    try:
        payload = response.json()
    except ValueError as exc:
        raise ProviderError(
            f"OpenRouter {path} did not return JSON",
            kind=ErrorKind.RETRYABLE,
            provider="openrouter",
        ) from exc
    return payload if isinstance(payload, dict) else {}


NAME = "openrouter"
"""The provider's name: the ``openrouter/…`` prefix of its model ids."""


def model_id(name: str) -> str:
    """The full model id of an OpenRouter model name (``openai/gpt-5.4`` → ``openrouter/…``)."""
    return f"{NAME}/{name}"


def snapshot_price(name: str) -> tuple[Decimal, Decimal, str] | None:
    """An OpenRouter model's price per million input and output tokens from the
    ``genai-prices`` snapshot's OpenRouter table (offline, when no catalogue is cached), with
    its source label; None when the snapshot does not know it."""
    from importlib.metadata import version

    from genai_prices import data_snapshot

    try:
        _, model = data_snapshot.get_snapshot().find_provider_model(name, None, NAME, None)
    except LookupError:
        return None
    prices = model.prices
    if isinstance(prices, list):  # time-conditional prices: the one in force now
        prices = model.get_prices(datetime.now(UTC))
    base_in = getattr(prices.input_mtok, "base", prices.input_mtok)
    base_out = getattr(prices.output_mtok, "base", prices.output_mtok)
    if base_in is None or base_out is None:
        return None
    source = f"genai-prices {version('genai-prices')} (OpenRouter)"
    return Decimal(str(base_in)), Decimal(str(base_out)), source
