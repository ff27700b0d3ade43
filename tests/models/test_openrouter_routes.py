"""The host each OpenRouter model runs on (issue 29 §2): its hosts are read from OpenRouter's
endpoints listing, the route is chosen as ELBench-live chooses it (the highest precision any
host states, on the cheapest such host, the others at that precision as the fallback; hosts
that don't say: the cheapest), sent with every call as OpenRouter's ``provider`` request
object, priced at the first host and held at the dearest one it may go to, said in the
estimate, kept in the run's settings and hash. Against the fake OpenRouter; no network."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from sweepbench.bench.storage import BenchStore
from sweepbench.cli.app import app
from sweepbench.errors import UserError
from sweepbench.models import openrouter
from sweepbench.models.base import Request
from sweepbench.models.registry import model_info, resolve, routed
from sweepbench.models.routes import Host, choose, parse_policy
from sweepbench.money.prices import price_for
from sweepbench.store import Store
from tests.adapters import run
from tests.servers import HttpError, OpenRouterServer
from tests.servers.openrouter import openrouter_endpoint

KEY = "test-only-openrouter-key-for-the-routes"
NAME = "mistralai/mistral-small-3.2"  # in the fake's catalogue
MODEL = f"openrouter/{NAME}"

MIXED = [  # prices per token: $/1M is ×1e6
    openrouter_endpoint(
        "Cheapfour", quantization="fp4", prompt="0.00000001", completion="0.00000002"
    ),
    openrouter_endpoint("Dear8", quantization="fp8", prompt="0.0000003", completion="0.0000009"),
    openrouter_endpoint("Cheap8", quantization="fp8", prompt="0.0000002", completion="0.0000008"),
    openrouter_endpoint(
        "Silent", quantization=None, prompt="0.000000001", completion="0.000000001"
    ),
]
"""Hosts of mixed precision: fp8 is the highest stated; Cheap8 the cheapest at it, Dear8 its
fallback; an fp4 and a host that doesn't say are cheaper still, and are not used."""
UNSTATED = [
    openrouter_endpoint(
        "Pricey", quantization="unknown", prompt="0.0000005", completion="0.000002"
    ),
    openrouter_endpoint("Thrifty", quantization=None, prompt="0.0000001", completion="0.0000004"),
]


pytestmark = pytest.mark.usefixtures("fresh_openrouter_memory")


def _fake(monkeypatch: pytest.MonkeyPatch, hosts: list[dict[str, object]]) -> OpenRouterServer:
    server = OpenRouterServer(api_key=KEY, endpoints={NAME: hosts})
    server.start()
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    return server


@pytest.fixture
def mixed(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    server = _fake(monkeypatch, MIXED)
    yield server
    server.stop()


@pytest.fixture
def unstated(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    server = _fake(monkeypatch, UNSTATED)
    yield server
    server.stop()


def _chat_bodies(server: OpenRouterServer) -> list[dict[str, object]]:
    return [r.json for r in server.requests if r.path.endswith("/chat/completions")]


# -- choosing ----------------------------------------------------------------------------------


def test_the_highest_precision_on_its_cheapest_host_with_a_same_precision_fallback() -> None:
    hosts = openrouter.parse_hosts({"data": {"endpoints": MIXED}})
    route = choose("precision", hosts)
    assert [h.provider for h in route.hosts] == ["Cheap8", "Dear8"]
    assert route.request_fields() == {
        "provider": {
            "order": ["cheap8/fp8", "dear8/fp8"],
            "quantizations": ["fp8"],
            "allow_fallbacks": False,
        }
    }
    assert route.hashed() == "fp8"
    assert route.describe() == "fp8 on Cheap8 at $0.20/$0.80 per 1M; fallback: Dear8"
    assert route.dearest == (Decimal("0.3"), Decimal("0.9"))


def test_hosts_at_the_same_bits_are_one_precision() -> None:
    def host(name: str, quantization: str, price: str) -> Host:
        return Host(name, name.lower(), quantization, Decimal(price), Decimal(price))

    route = choose(
        "precision", [host("A", "bf16", "2"), host("B", "fp16", "1"), host("C", "fp8", "0.5")]
    )
    assert [h.provider for h in route.hosts] == ["B", "A"]
    assert route.quantizations == ("bf16", "fp16") and route.hashed() == "bf16+fp16"


def test_hosts_that_dont_say_go_to_the_cheapest() -> None:
    route = choose("precision", openrouter.parse_hosts({"data": {"endpoints": UNSTATED}}))
    assert route.first is not None and route.first.provider == "Thrifty"
    assert route.request_fields() == {"provider": {"sort": "price"}}
    assert route.hashed() == "cheapest"
    assert "hosts don't state their precision: the cheapest on Thrifty" in route.describe()


def test_the_other_policies() -> None:
    hosts = openrouter.parse_hosts({"data": {"endpoints": MIXED}})
    cheapest = choose("cheapest", hosts)
    assert cheapest.first is not None and cheapest.first.provider == "Silent"
    assert cheapest.request_fields() == {"provider": {"sort": "price"}}
    none = choose("none", hosts)
    assert none.first is None and none.request_fields() == {} and none.hashed() is None
    assert none.dearest == (Decimal("0.3"), Decimal("0.9"))  # any host may answer: held so
    with pytest.raises(ValueError, match="choose precision, cheapest, none"):
        parse_policy("fastest")


def test_an_endpoint_without_a_provider_or_a_fixed_price_is_not_a_host() -> None:
    rows = [
        {"provider_name": "", "pricing": {"prompt": "0.1", "completion": "0.1"}},
        {"provider_name": "Varies", "pricing": {"prompt": "-1", "completion": "0.1"}},
        {
            "provider_name": "Fine",
            "quantization": "FP8",
            "pricing": {"prompt": "0", "completion": "0"},
        },
        "not an object",
    ]
    hosts = openrouter.parse_hosts({"data": {"endpoints": rows}})
    assert [(h.provider, h.quantization) for h in hosts] == [("Fine", "fp8")]
    assert openrouter.parse_hosts({"data": "nonsense"}) == []


# -- reading the hosts, pricing, sending -------------------------------------------------------


def test_the_route_is_priced_at_its_first_host_and_held_at_the_dearest(
    mixed: OpenRouterServer,
) -> None:
    info = routed(model_info(MODEL), "precision")
    price = price_for(info)
    assert price is not None
    assert (price.input, price.output) == (Decimal("0.2"), Decimal("0.8"))
    assert price.source == "OpenRouter host Cheap8"
    held = price.held()
    assert (held.input, held.output) == (Decimal("0.3"), Decimal("0.9"))
    routed(model_info(MODEL), "cheapest")  # cached on disk: not fetched again
    assert mixed.endpoints_fetches == {NAME: 1}


async def test_every_call_is_sent_with_its_route(mixed: OpenRouterServer) -> None:
    mixed.reply("Bonjour.")
    await run(MODEL, route="precision", max_tokens=50)
    (body,) = _chat_bodies(mixed)
    assert body["provider"] == {
        "order": ["cheap8/fp8", "dear8/fp8"],
        "quantizations": ["fp8"],
        "allow_fallbacks": False,
    }


async def test_no_route_sends_no_preference(mixed: OpenRouterServer) -> None:
    mixed.reply("Bonjour.")
    await run(MODEL)  # resolved without a route: as before routing existed
    mixed.reply("Bonjour.")
    await run(MODEL, route="none", max_tokens=50)
    assert all("provider" not in body for body in _chat_bodies(mixed))


def test_hosts_that_cannot_be_read_refuse_a_routed_call_and_say_how_to_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with OpenRouterServer(api_key=KEY) as server:  # lists the model, not this one's hosts
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        server.push(HttpError(503), route="endpoints")
        with pytest.raises(UserError, match=r"hosts could not be read.*--route none"):
            resolve(MODEL, route="precision")
        assert resolve(MODEL, route="none") is not None  # OpenRouter chooses: no hosts needed


# -- the estimate, the run, its settings and hash ----------------------------------------------

ESTIMATE = ["bench", "estimate", "sample", "--preset", "auto-checked", "--per-task", "1"]


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


def test_the_estimate_says_the_hosts(mixed: OpenRouterServer) -> None:
    result = CliRunner().invoke(app, [*ESTIMATE, "--model", MODEL])
    assert result.exit_code == 0, result.output
    said = _said(result)
    assert f"Hosts of {MODEL}: fp8 on Cheap8 at $0.20/$0.80 per 1M; fallback: Dear8." in said
    assert "at the host each call goes to first" in said
    cheapest = _said(CliRunner().invoke(app, [*ESTIMATE, "--model", MODEL, "--route", "cheapest"]))
    assert f"Hosts of {MODEL}: the cheapest on Silent" in cheapest
    bad = CliRunner().invoke(app, [*ESTIMATE, "--model", MODEL, "--route", "fastest"])
    assert bad.exit_code != 0 and "--route: 'fastest' is not a route" in str(bad.exception)


def test_a_run_keeps_its_route_in_its_settings_and_hash(mixed: OpenRouterServer) -> None:
    run_cmd = ["bench", "run", "sample", "--preset", "auto-checked", "--per-task", "1"]
    first = CliRunner().invoke(app, [*run_cmd, "--model", MODEL, "--yes"])
    assert first.exit_code == 0, first.output
    bodies = _chat_bodies(mixed)
    assert bodies and all(b["provider"]["quantizations"] == ["fp8"] for b in bodies)  # type: ignore[index]
    second = CliRunner().invoke(app, [*run_cmd, "--model", MODEL, "--route", "none", "--yes"])
    assert second.exit_code == 0, second.output
    with Store.open() as store:
        runs = BenchStore(store).runs()
    by_route = {json.dumps(r.settings["config"].get("routes")): r for r in runs}
    assert set(by_route) == {json.dumps({"target": "fp8"}), "null"}  # two runs: two hashes
    fp8 = by_route[json.dumps({"target": "fp8"})]
    hosts = fp8.settings["hosts"]["target"]
    assert hosts["described"] == "fp8 on Cheap8 at $0.20/$0.80 per 1M; fallback: Dear8"
    assert [h["provider"] for h in hosts["hosts"]] == ["Cheap8", "Dear8"]
    assert fp8.settings["request"]["route"] == "precision"
    shown = _said(CliRunner().invoke(app, ["bench", "show", fp8.id]))
    assert "Hosts of" in shown and "fp8 on Cheap8" in shown


def test_the_bundle_says_which_host_answered(mixed: OpenRouterServer) -> None:
    from sweepbench.leaderboard.bundle import build_bundle

    run_cmd = ["bench", "run", "sample", "--preset", "auto-checked", "--per-task", "1"]
    assert CliRunner().invoke(app, [*run_cmd, "--model", MODEL, "--yes"]).exit_code == 0
    with Store.open() as store:
        bench = BenchStore(store)
        (row,) = bench.runs()
        bundle = build_bundle(bench, row.id)
    assert bundle.hosts == {"target": "fp8 on Cheap8 at $0.20/$0.80 per 1M; fallback: Dear8"}
    assert bundle.record.settings.config["routes"] == {"target": "fp8"}


def test_a_sweep_says_and_sends_its_route(mixed: OpenRouterServer) -> None:
    sweep = ["sweep", "Say hi.", "--axis", "max_tokens", "--values", "50,60", "--model", MODEL]
    estimate = CliRunner().invoke(app, [*sweep, "--estimate-only"])
    assert estimate.exit_code == 0, estimate.output
    assert f"Hosts of {MODEL}: fp8 on Cheap8" in _said(estimate)
    mixed.reply("Hi.")
    mixed.reply("Hi.")
    ran = CliRunner().invoke(app, [*sweep, "--route", "cheapest", "--yes"])
    assert ran.exit_code == 0, ran.output
    bodies = _chat_bodies(mixed)
    assert len(bodies) == 2 and all(b["provider"] == {"sort": "price"} for b in bodies)


def test_the_engine_holds_a_routed_call_at_its_dearest_host(mixed: OpenRouterServer) -> None:
    from sweepbench.engine import Executor

    with Store.open() as store:
        executor = Executor(store, route="precision")
        model = executor.model(MODEL)
        request = Request.simple(MODEL, "Hello?", max_tokens=1000)
        bound, max_tokens, worst = executor.worst_case(model, request)
        assert worst == (bound * Decimal("0.3") + max_tokens * Decimal("0.9")) / 1_000_000
        price = executor.price(model)
        assert price is not None and price.input == Decimal("0.2")  # priced at Cheap8
