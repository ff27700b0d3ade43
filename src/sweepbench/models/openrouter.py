"""OpenRouter: the Chat Completions adapter plus OpenRouter's own facts.

* its model catalogue (``GET /api/v1/models``: prices, context, supported parameters; no key
  needed), fetched when it is needed and the disk cache is missing or older than its TTL — with
  a short timeout, and at most one failed attempt per process — and used from the (stale)
  cache when OpenRouter cannot be reached;
* the free key check (``GET /api/v1/key``: valid? credit left?);
* the ``usage.cost`` it returns with every completion (the charged figure, preferred over our
  own estimate).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from sweepbench.errors import ErrorKind, ProviderError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.openai import ChatCompletionsModel
from sweepbench.settings import base_url_override, home, provider_key
from sweepbench.variables import OPENROUTER_TTL

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
"""The (API root, listing) fetches that failed in this process, with why: not tried again."""
_parsed: dict[tuple[str, int, int], tuple[float, dict[str, CatalogueEntry]]] = {}
"""Each cache file's fetch time and entries by (path, mtime_ns, size): read once per version."""
_lock = threading.Lock()


def _read_cache(path: Path) -> tuple[float, dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
        return float(data["fetched_at"]), dict(data["payload"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _cached_entries(listing: str) -> tuple[float, dict[str, CatalogueEntry]] | None:
    """A cached listing's fetch time and entries, read and parsed once per version of its file
    (a price look-up per call must not re-read a megabyte of JSON)."""
    path = cache_file(listing)
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _lock:
        known = _parsed.get(key)
    if known is not None:
        return known
    cached = _read_cache(path)
    if cached is None:
        return None
    found = (cached[0], parse_catalogue(cached[1]))
    with _lock:
        for old in [k for k in _parsed if k[0] == key[0]]:
            del _parsed[old]
        _parsed[key] = found
    return found


def fetched_at(listing: str = CHAT) -> datetime | None:
    """When a cached listing was fetched (None: there is none)."""
    cached = _cached_entries(listing)
    return None if cached is None else datetime.fromtimestamp(cached[0], UTC)


def unreachable(listing: str = CHAT) -> str | None:
    """Why a listing could not be fetched in this process (None: it was not tried, or it was
    fetched)."""
    return _failed.get((base_url(), listing))


def catalogue(
    *, refresh: bool = False, offline: bool = False, listing: str = CHAT
) -> dict[str, CatalogueEntry]:
    """OpenRouter's catalogue (its chat models; ``listing=DECISIONS``: its decision models):
    from the disk cache while fresh, else fetched (no key; within :data:`FETCH_TIMEOUT_S`) and
    cached. When the fetch fails, the stale cache is used, with no cache the result is empty,
    and this process does not try again (``refresh`` does). ``offline`` never touches the
    network."""
    cached = _cached_entries(listing)
    fresh = cached is not None and time.time() - cached[0] < ttl_s()
    tried = (base_url(), listing)
    if offline or (fresh and not refresh) or (tried in _failed and not refresh):
        return cached[1] if cached is not None else {}
    try:
        payload = _get_json(LISTINGS[listing][0], key=None, timeout=FETCH_TIMEOUT_S)
        if not isinstance(payload.get("data"), list):
            raise ProviderError(
                "OpenRouter's model list has no data", kind=ErrorKind.RETRYABLE,
                provider="openrouter",
            )  # fmt: skip
    except ProviderError as exc:
        _failed[tried] = str(exc)
        return cached[1] if cached is not None else {}
    _failed.pop(tried, None)
    path = cache_file(listing)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"fetched_at": time.time(), "payload": payload}), "utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file
    return parse_catalogue(payload)


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
