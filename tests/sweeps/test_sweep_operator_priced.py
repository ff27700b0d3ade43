"""Issue 26 §2: a sweep on an endpoint the operator priced needs no provider key and costs
money. Its estimate never says "nothing will be spent" — it says what the sweep costs — and the
ledger is charged what the cells cost; a sweep that cannot run for want of a key still says
nothing will be spent."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.pricing import estimate_plan
from tests.bench.helpers import compatible_server, set_prices
from tests.helpers import run_cli
from tests.servers import Reply

MODEL = "compatible/priced-model"
NOTHING = "nothing will be spent"


def flat(text: str) -> str:
    """Text with rich's line wrapping undone."""
    return " ".join(text.split())


@pytest.fixture
def priced_endpoint(isolated_home: Path) -> None:
    """The operator priced the endpoint's model: $100 in and $100 out per 1M tokens."""
    set_prices(isolated_home, {"compatible.priced-model": (100, 100)})


def test_an_operator_priced_endpoint_is_estimated_at_its_price(
    priced_endpoint: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")  # never called
    plan = build_plan("Say hi", "max_tokens", ["100", "200"], model=MODEL)
    estimate = estimate_plan(plan)
    assert estimate.ceiling is not None and estimate.ceiling > 0 and not estimate.free
    assert not plan.blocking()  # no key needed: it can run, so it would spend
    line = estimate.line()
    assert NOTHING not in line and "No provider keys" not in line
    assert line.startswith("2 variants varying max tokens · about $")


def test_the_sweep_says_what_it_costs_and_the_ledger_is_charged(
    priced_endpoint: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reply = Reply(text="hi there", input_tokens=40, output_tokens=60)
    with compatible_server(monkeypatch, default=reply) as server:
        args = ("sweep", "Say hi", "--axis", "max_tokens", "--values", "100,200", "--model", MODEL)
        code, _, err = run_cli(monkeypatch, capsys, *args, "--estimate-only")
        assert code == 0, err
        assert NOTHING not in flat(err) and "at most $" in flat(err)
        code, _, err = run_cli(monkeypatch, capsys, *args, "--yes")
        assert code == 0, err
        assert NOTHING not in flat(err)
        assert len(server.requests) == 2
    with Store.open() as store:
        spent = Ledger(store).summary().spent_today
    # two cells, each 40 tokens in and 60 out at $100 per 1M: $0.01 a cell
    assert spent == Decimal("0.02")


def test_a_sweep_that_needs_a_missing_key_still_says_nothing_is_spent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "sweep", "hi", "--axis", "max_tokens", "--values", "100,200",
        "--model", "anthropic/claude-opus-5", "--estimate-only", "--json",
    )  # fmt: skip
    assert code == 0, err
    line = json.loads(out)["estimate"]["line"]
    assert line.startswith("No provider keys here — nothing will be spent. With keys, this")
