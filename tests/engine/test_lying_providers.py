"""No figure a provider reports is trusted beyond what the request could cost (issue 26 §1):
through each wire format's real SDK, a fake server that lies about usage or cost gets its call
settled at the hold as a ``bad_response`` anomaly — never charged beyond it — while a reply at
the documented slack is believed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sweepbench import CallSpec, Executor, Request
from sweepbench.engine import RetryPolicy
from sweepbench.engine.usage import OUTPUT_SLACK_TOKENS, REPORTED_COST_FACTOR
from sweepbench.models.openrouter import catalogue
from sweepbench.money.ledger import Ceilings, Ledger
from sweepbench.store import Store
from sweepbench.store.schema import spend_reservations
from tests.bench.helpers import CompatibleServer, set_prices
from tests.servers import AnthropicServer, FakeServer, OpenAIServer, OpenRouterServer

ONCE = RetryPolicy(max_attempts=1)
BUDGET = 50


@dataclass(frozen=True)
class Wire:
    """One provider wire format: its fake server, the model id and how to point at it."""

    name: str
    model: str
    reports_cost: bool

    def server(self) -> FakeServer:
        return {
            "anthropic": AnthropicServer,
            "openai": OpenAIServer,
            "openrouter": OpenRouterServer,
            "compatible": CompatibleServer,
        }[self.name]()

    def point(self, server: FakeServer, monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
        if self.name == "anthropic":
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
            monkeypatch.setenv("SWEEPBENCH_ANTHROPIC_BASE_URL", server.url)
        elif self.name == "openai":
            monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
            monkeypatch.setenv("SWEEPBENCH_OPENAI_BASE_URL", server.url + "/v1")
        elif self.name == "openrouter":
            monkeypatch.setenv("OPENROUTER_API_KEY", "test-openrouter-key")
            monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
            catalogue(refresh=True)
        else:  # an operator-priced endpoint that reports OpenRouter's usage.cost
            monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
            set_prices(home, {"compatible.lab": (2, 8)})


WIRES = [
    Wire("anthropic", "anthropic/claude-sonnet-4-5", reports_cost=False),
    Wire("openai", "openai/gpt-5-mini", reports_cost=False),
    Wire("openrouter", "openrouter/openai/gpt-5.6-luna", reports_cost=True),
    Wire("compatible", "compatible/lab", reports_cost=True),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'calls.db'}")
    yield opened
    opened.close()


@pytest.fixture(params=WIRES, ids=lambda w: w.name)
def wire(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Wire, FakeServer]]:
    chosen: Wire = request.param
    with chosen.server() as server:
        chosen.point(server, monkeypatch, Path(os.environ["SWEEPBENCH_HOME"]))
        yield chosen, server


def _settled(store: Store) -> sa.Row[Any]:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(spend_reservations)).all()
    assert len(rows) == 1
    return rows[0]


async def _call(store: Store, wire: Wire) -> tuple[Any, Decimal | None, int]:
    """One call; its outcome, its worst case and its prompt bound."""
    executor = Executor(
        store, ledger=Ledger(store, Ceilings(daily_usd=Decimal(100), calls_per_hour=10_000)),
        retry=ONCE,
    )  # fmt: skip
    request = Request.simple(wire.model, "Say hi", max_tokens=BUDGET)
    bound, _, worst = executor.worst_case(executor.model(wire.model), request)
    try:
        outcome = await executor.execute(CallSpec(request, "sweep"))
    finally:
        await executor.aclose()
    return outcome, worst, bound


def _bound(wire: Wire) -> int:
    from sweepbench.models.tokens import prompt_token_bound

    return prompt_token_bound(["Say hi"])


def _lies(wire: Wire) -> list[tuple[str, dict[str, Any], str]]:
    bound = _bound(wire)
    cases = [
        ("output above the budget", {"output_tokens": BUDGET + OUTPUT_SLACK_TOKENS + 1},
         "output tokens with a budget of 50"),
        ("input above the prompt", {"input_tokens": bound + 65}, "input tokens for a prompt"),
    ]  # fmt: skip
    if wire.reports_cost:
        cases.append(("a cost of $5,000", {"cost": 5000.0}, "reported a cost of $5000"))
    return cases


@pytest.mark.parametrize("case", range(3))
async def test_a_lying_reply_is_settled_at_its_hold_and_shown_as_an_anomaly(
    store: Store, wire: tuple[Wire, FakeServer], case: int
) -> None:
    chosen, server = wire
    lies = _lies(chosen)
    if case >= len(lies):
        pytest.skip(f"{chosen.name} reports no cost of its own")
    _, fields, problem = lies[case]
    server.push(_reply(chosen, "hi", **fields))
    outcome, worst, _ = await _call(store, chosen)
    error = outcome.result.error
    assert error is not None and error.kind.value == "bad_response", error
    assert problem in str(error)
    row = _settled(store)
    assert row.state == "settled" and row.settled_micro == row.reserved_micro  # the hold
    assert not row.overrun and worst is not None and outcome.cost_usd == worst
    count, anomalies = store.anomalous_calls(datetime.now(UTC) - timedelta(hours=1))
    assert count == 1 and anomalies[0].error_kind == "bad_response"
    if "cost" in fields:
        assert "the provider reported $5000" in (anomalies[0].price_source or "")


async def test_a_reply_at_the_documented_slack_is_believed(
    store: Store, wire: tuple[Wire, FakeServer]
) -> None:
    chosen, server = wire
    fields: dict[str, Any] = {"output_tokens": BUDGET + OUTPUT_SLACK_TOKENS}
    server.push(_reply(chosen, "hi", **fields))
    outcome, worst, _ = await _call(store, chosen)
    assert outcome.result.error is None
    assert outcome.cost_usd is not None and worst is not None
    assert outcome.cost_usd <= worst * REPORTED_COST_FACTOR
    assert store.anomalous_calls(datetime.now(UTC) - timedelta(hours=1))[0] == 0


def _reply(wire: Wire, text: str, **fields: Any) -> Any:
    from tests.servers import Reply

    if wire.reports_cost and "cost" not in fields:
        fields["cost"] = None  # priced from usage × price
    return Reply(text=text, **fields)


async def test_a_stream_dropped_without_usage_settles_at_an_upper_bound_of_what_came(
    store: Store, wire: tuple[Wire, FakeServer]
) -> None:
    chosen, server = wire
    pieces = [f"word{i:03d} " * 3 for i in range(49)]  # 49 deltas, 1,176 characters
    received = "".join(pieces[:48])
    server.push(_reply(chosen, pieces, drop_after=48, output_tokens=None))
    executor = Executor(
        store, ledger=Ledger(store, Ceilings(daily_usd=Decimal(100), calls_per_hour=10_000)),
        retry=ONCE,
    )  # fmt: skip
    request = Request.simple(chosen.model, "Write at length", max_tokens=2000)
    outcome = await executor.execute(CallSpec(request, "sweep"))
    await executor.aclose()
    assert outcome.result.error is not None  # the stream died: a failed attempt, still paid
    assert outcome.result.text == received
    # one delta is not one token: the received text is settled at its bytes, never below
    assert outcome.output_tokens >= len(received.encode("utf-8"))
    row = _settled(store)
    assert 0 < row.settled_micro <= row.reserved_micro
