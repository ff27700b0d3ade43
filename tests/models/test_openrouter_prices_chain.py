"""OpenRouter's prices are always there (issue 29 §1): the catalogue is fetched when a price
needs it (no key, a short timeout, one failed attempt a process), and when OpenRouter cannot
be reached — refused, slow or answering nonsense — a stale cache, then the ``genai-prices``
snapshot's OpenRouter table price the model, and the estimate says where each price came
from. Against a fake OpenRouter and local servers that misbehave; no network."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from sweepbench.cli.app import app
from sweepbench.models import openrouter
from sweepbench.models.openrouter import cache_file, catalogue
from sweepbench.models.registry import model_info
from sweepbench.money.prices import OPENROUTER_CATALOGUE, openrouter_price_line, price_for
from tests.servers import OpenRouterServer

LUNA = "openrouter/openai/gpt-5.6-luna"  # in the fake's catalogue: $0.25 / $2
GPT = "openrouter/openai/gpt-5.4"  # the paper's default target: genai-prices lists it
JUDGE = "openrouter/qwen/qwen3-235b-a22b"  # the paper's judge: genai-prices lists it


pytestmark = pytest.mark.usefixtures("fresh_openrouter_memory")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    with OpenRouterServer() as server:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        yield server


class _Misbehaving(BaseHTTPRequestHandler):
    """``/api/v1/models`` answered with ``server.body`` (after ``server.release`` is set when
    ``server.hold``); every request counted."""

    def do_GET(self) -> None:
        server = self.server
        server.requests += 1  # type: ignore[attr-defined]
        if server.hold:  # type: ignore[attr-defined]
            server.release.wait()  # type: ignore[attr-defined]
        body = server.body  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def misbehaving(monkeypatch: pytest.MonkeyPatch) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    server.requests = 0  # type: ignore[attr-defined]
    server.hold = False  # type: ignore[attr-defined]
    server.release = threading.Event()  # type: ignore[attr-defined]
    server.body = b"not json"  # type: ignore[attr-defined]
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(
        "SWEEPBENCH_OPENROUTER_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/api/v1"
    )
    yield server
    server.release.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def _stale_cache(entries: list[dict[str, object]]) -> None:
    cache_file().parent.mkdir(parents=True, exist_ok=True)
    stamp = {"fetched_at": time.time() - 3 * 24 * 3600, "payload": {"data": entries}}
    cache_file().write_text(json.dumps(stamp))


def test_a_fresh_home_fetches_the_catalogue_when_a_price_needs_it(fake: OpenRouterServer) -> None:
    assert not cache_file().exists()
    price = price_for(model_info(LUNA))
    assert price is not None and price.source == OPENROUTER_CATALOGUE
    assert (price.input, price.output) == (Decimal("0.25"), Decimal("2"))
    price_for(model_info(LUNA))
    assert fake.models_fetches == 1 and cache_file().exists()  # then read from the cache
    line = openrouter_price_line([LUNA])
    assert line is not None and line.startswith("Prices from OpenRouter, fetched ")
    assert line.endswith(" UTC.")


def test_unreachable_prices_come_from_genai_prices_and_the_estimate_says_so() -> None:
    # the tests' OpenRouter is a closed port: refused at once
    price = price_for(model_info(GPT))
    assert price is not None and price.source.startswith("genai-prices ")
    assert (price.input, price.output) == (Decimal("2.5"), Decimal("15"))
    assert openrouter.unreachable() is not None
    line = openrouter_price_line([GPT, JUDGE])
    assert line is not None and line.startswith("Prices from genai-prices ")
    assert line.endswith("(OpenRouter could not be reached just now).")


def test_a_failed_fetch_is_not_tried_again_in_the_same_process(
    misbehaving: ThreadingHTTPServer,
) -> None:
    for _ in range(3):
        assert price_for(model_info(GPT)) is not None  # genai-prices
    assert misbehaving.requests == 1  # type: ignore[attr-defined]
    catalogue(refresh=True)  # asked for explicitly: tried again
    assert misbehaving.requests == 2  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body", [b"not json", b'{"data": "not a list"}', b"[1, 2]", b'{"error": {"message": "x"}}']
)
def test_a_malformed_catalogue_keeps_the_stale_cache(
    misbehaving: ThreadingHTTPServer, body: bytes
) -> None:
    misbehaving.body = body  # type: ignore[attr-defined]
    _stale_cache([{"id": "openai/gpt-5.4", "pricing": {"prompt": "0.000003", "completion": "0"}}])
    before = cache_file().read_text()
    price = price_for(model_info(GPT))
    assert price is not None and price.source == OPENROUTER_CATALOGUE  # the stale catalogue
    assert price.input == Decimal("3")
    assert cache_file().read_text() == before  # never overwritten by nonsense
    line = openrouter_price_line([GPT])
    assert line is not None and "could not be reached" in line


def test_a_slow_catalogue_gives_up_after_the_short_timeout(
    misbehaving: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    misbehaving.hold = True  # type: ignore[attr-defined]  # answers only once released
    monkeypatch.setattr(openrouter, "FETCH_TIMEOUT_S", 0.2)
    price = price_for(model_info(JUDGE))
    assert price is not None and price.source.startswith("genai-prices ")
    assert openrouter.unreachable() is not None
    assert misbehaving.requests == 1  # type: ignore[attr-defined]


def test_a_model_no_source_lists_has_no_price() -> None:
    assert price_for(model_info("openrouter/vendor/not-listed-anywhere")) is None
    assert openrouter_price_line(["openrouter/vendor/not-listed-anywhere"]) == (
        "Prices none listed (OpenRouter could not be reached just now)."
    )


def test_the_papers_target_and_judge_are_priced_on_a_fresh_home_offline() -> None:
    """The issue's case, on the sample benchmark: `bench estimate` prices the paper's default
    target and judge with OpenRouter unreachable and no cache, saying where the prices came
    from (before: "No cost estimate: no price is listed …")."""
    result = CliRunner().invoke(
        app,
        ["bench", "estimate", "sample", "--preset", "quick", "--model", GPT, "--judge", JUDGE],
    )
    text = " ".join(result.output.split())
    assert "No cost estimate" not in text
    assert "Estimated cost: $" in text
    assert "Prices from genai-prices " in text and "could not be reached" in text


def test_nothing_listens_on_the_tests_openrouter() -> None:
    """The suite's OpenRouter (conftest) is a closed loopback port, so a command run as a child
    process never reaches openrouter.ai."""
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", 9)) != 0


def test_the_decision_models_are_fetched_and_cached_as_their_own_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sweepbench.models.openrouter import DECISIONS, decision_models
    from tests.servers.openrouter import openrouter_model

    verdict = openrouter_model("openrouter/judge-decider", name="A decision model")
    with OpenRouterServer(decision_models=[verdict]) as server:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        assert list(decision_models()) == ["openrouter/judge-decider"]
        assert "openrouter/judge-decider" not in catalogue()  # not a chat model
        asked = [r.query for r in server.requests if r.path.endswith("/models")]
        assert {"output_modalities": "decisions"} in asked and {} in asked
        decision_models()
        assert server.models_fetches == 2  # each listing once, then from its cache
    assert cache_file(DECISIONS).exists() and cache_file(DECISIONS) != cache_file()
    assert list(decision_models()) == ["openrouter/judge-decider"]  # offline: the cache
