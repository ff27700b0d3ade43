"""A key checked before the run (issue 29 §3): `bench run` with an OpenRouter model asks
OpenRouter's free key check first (nothing spent), says what it answered, refuses a rejected
key or credit below the run's lowest estimate before any model is called, and goes on when the
check cannot be made. Against the fake OpenRouter; no network."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from sweepbench.bench.start import KEY_REJECTED, KEY_UNCHECKED, check_openrouter_key
from sweepbench.cli.app import app
from sweepbench.models import openrouter
from tests.servers import OpenRouterServer

KEY = "test-only-openrouter-key-for-the-check"
MODEL = "openrouter/openai/gpt-5.6-luna"  # in the fake's catalogue: priced
RUN = ["bench", "run", "sample", "--preset", "auto-checked", "--per-task", "1", "--model", MODEL]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    openrouter._failed.clear()
    with OpenRouterServer(api_key=KEY) as server:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
        yield server
    openrouter._failed.clear()


def _chats(server: OpenRouterServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/chat/completions"))


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


def test_an_accepted_key_is_said_with_its_credit_and_the_run_goes_on(
    fake: OpenRouterServer,
) -> None:
    result = CliRunner().invoke(app, [*RUN, "--yes"])
    assert "Key accepted. This key has $9.75 of credit left." in _said(result)
    assert fake.key_fetches == 1 and _chats(fake) > 0


def test_a_rejected_key_refuses_the_run_before_any_call(
    fake: OpenRouterServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "test-only-not-the-right-key")
    result = CliRunner().invoke(app, [*RUN, "--yes"])
    assert result.exit_code == 2
    assert KEY_REJECTED in _said(result)
    assert _chats(fake) == 0


def test_credit_below_the_lowest_estimate_is_refused_saying_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    openrouter._failed.clear()
    with OpenRouterServer(api_key=KEY, key_info={"limit_remaining": 0.000001}) as server:
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
        result = CliRunner().invoke(app, [*RUN, "--yes"])
        assert result.exit_code == 2
        said = _said(result)
        assert "This key has $0.000001 of credit left" in said
        assert "less than the run's lowest estimate ($" in said
        assert _chats(server) == 0


def test_a_check_that_cannot_be_made_lets_the_run_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # the tests' OpenRouter is a closed port: the check fails to connect
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    check = check_openrouter_key([MODEL], Decimal("0.01"))
    assert check is not None and check.said == KEY_UNCHECKED and check.refusal is None


def test_no_check_without_an_openrouter_model_or_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_openrouter_key(["scripted/guess"], None) is None
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    assert check_openrouter_key([MODEL], None) is None
