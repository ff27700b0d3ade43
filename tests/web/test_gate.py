"""Who may spend from the web app (spec §13.2): loopback yes; elsewhere only with the token."""

from __future__ import annotations

import pytest

from sweepbench.web.gate import Gate, is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "::", "example.org"])
def test_other_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_loopback_runs_without_a_token() -> None:
    assert Gate("127.0.0.1").why_closed(None, spends=True) is None


def test_a_public_server_without_a_token_refuses_paid_runs_but_not_free_ones() -> None:
    gate = Gate("0.0.0.0")
    assert gate.guarded
    reason = gate.why_closed(None, spends=True)
    assert reason is not None and "SWEEPBENCH_TOKEN" in reason
    assert gate.why_closed(None, spends=False) is None


def test_the_token_must_match() -> None:
    gate = Gate("0.0.0.0", token="s3cret")
    assert gate.why_closed("s3cret", spends=True) is None
    assert gate.why_closed("wrong", spends=True) is not None
    assert gate.why_closed("", spends=True) is not None


def test_production_fails_closed_even_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_ENV", "production")
    monkeypatch.delenv("SWEEPBENCH_TOKEN", raising=False)
    gate = Gate.for_host("127.0.0.1")
    assert gate.guarded and gate.why_closed(None, spends=True) is not None
