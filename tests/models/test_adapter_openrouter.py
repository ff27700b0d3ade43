"""OpenRouter: chat streaming with its reported cost, the cached catalogue, the key check."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from sweepbench import ErrorKind
from sweepbench.models import model_info
from sweepbench.models.openrouter import cache_file, catalogue, check_key
from sweepbench.money import call_cost, price_for
from tests.adapters import cancel_after, run
from tests.servers import OpenRouterServer

KEY = "sk-or-v1-fake"
MODEL = "openrouter/openai/gpt-5.6-luna"


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    with OpenRouterServer(api_key=KEY) as server:
        monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        yield server


async def test_stream_with_reasoning_and_reported_cost(srv: OpenRouterServer) -> None:
    catalogue(refresh=True)  # knows the model is reasoning-capable
    srv.reply(
        "Paris.", reasoning="Capital of France", input_tokens=20, output_tokens=6, cost=0.00042
    )
    result = await run(MODEL, "Capital of France?", effort="medium", max_tokens=100)
    assert result.text == "Paris."
    assert result.reasoning == "Capital of France"
    assert result.usage.cost_usd == Decimal("0.00042")
    cost = call_cost(model_info(MODEL), result.usage)
    assert cost.usd == Decimal("0.00042") and cost.source == "reported by openrouter"
    body = srv.last_request.json
    assert body["model"] == "openai/gpt-5.6-luna"
    assert body["reasoning"] == {"effort": "medium"}
    assert srv.last_request.path == "/api/v1/chat/completions"


async def test_effort_is_refused_for_a_model_without_reasoning(srv: OpenRouterServer) -> None:
    from sweepbench import UserError

    entries = catalogue(refresh=True)
    plain = next(e for e in entries.values() if "reasoning" not in e.supported_parameters)
    with pytest.raises(UserError, match="does not accept an effort"):
        await run(f"openrouter/{plain.id}", effort="high")


async def test_insufficient_credits_is_a_quota_error(srv: OpenRouterServer) -> None:
    srv.error(402)
    result = await run(MODEL)
    assert result.error is not None and result.error.kind is ErrorKind.QUOTA


async def test_in_band_error_chunk_is_an_error(srv: OpenRouterServer) -> None:
    srv.fail(after=0, message="Provider returned error")
    result = await run(MODEL)
    assert result.stop_reason == "error"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (502, ErrorKind.RETRYABLE),
        (429, ErrorKind.RETRYABLE),
        (401, ErrorKind.AUTH),
        (402, ErrorKind.QUOTA),
        (400, ErrorKind.BAD_REQUEST),
    ],
)
async def test_in_band_error_chunk_is_classified_by_its_code(
    srv: OpenRouterServer, code: int, kind: ErrorKind
) -> None:
    """OpenRouter's mid-stream ``error.code`` is the HTTP status the failure stands for."""
    srv.fail(after=1, message="upstream said no", code=code)
    result = await run(MODEL)
    assert result.stop_reason == "error" and result.error is not None
    assert (result.error.kind, result.error.status) == (kind, code)
    assert str(result.error).startswith("openrouter: upstream said no")


async def test_cancel_disconnects(srv: OpenRouterServer) -> None:
    assert await cancel_after(MODEL, srv) == 3
    assert srv.wait_disconnect(3)


def test_catalogue_is_cached_on_disk_and_used_offline(
    srv: OpenRouterServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = catalogue()
    assert "openai/gpt-5.6-luna" in first
    entry = first["openai/gpt-5.6-luna"]
    assert entry.price_in == Decimal("0.25") and entry.price_out == Decimal("2")
    assert entry.context_length == 400_000 and entry.max_completion_tokens == 128_000
    assert catalogue() == first
    assert srv.models_fetches == 1  # the second read came from the cache
    assert json.loads(cache_file().read_text())["payload"]["data"]
    # Offline (server gone): the stale cache is still used, and prices come from it.
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_TTL", "0")
    srv.stop()
    assert catalogue() == first
    price = price_for(model_info(MODEL))
    assert price is not None and price.source == "OpenRouter catalogue"
    assert price.input == Decimal("0.25")


def test_catalogue_refetches_after_ttl(srv: OpenRouterServer) -> None:
    catalogue()
    stamp = json.loads(cache_file().read_text())
    stamp["fetched_at"] = time.time() - 2 * 24 * 3600
    cache_file().write_text(json.dumps(stamp))
    catalogue()
    assert srv.models_fetches == 2


def test_unpriced_openrouter_model_has_no_price_on_file(srv: OpenRouterServer) -> None:
    catalogue()
    assert price_for(model_info("openrouter/vendor/not-listed")) is None


def test_key_check(srv: OpenRouterServer) -> None:
    status = check_key()
    assert status.valid
    assert status.limit_remaining == Decimal("9.75") and status.usage == Decimal("0.25")
    bad = check_key("sk-or-v1-wrong")
    assert not bad.valid
    assert srv.key_fetches == 2


def test_key_is_never_written_to_the_cache(srv: OpenRouterServer) -> None:
    catalogue()
    for path in cache_file().parent.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="ignore")
    assert os.environ["OPENROUTER_API_KEY"] == KEY
