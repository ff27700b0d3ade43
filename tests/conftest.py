"""Test-wide guards: no test reaches the internet, spends money, or touches the user's home."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sweepbench.models.providers import PROVIDERS

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guard(address: Any) -> None:
    if isinstance(address, tuple) and address and str(address[0]) not in LOOPBACK:
        raise RuntimeError(f"tests may not reach the network (tried {address[0]})")


def _connect(self: socket.socket, address: Any) -> None:
    _guard(address)
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _guard(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def no_network() -> Iterator[None]:
    """Every outbound connection except to loopback raises (a global switch, as pydantic-ai)."""
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh SWEEPBENCH_HOME per test; no provider keys or endpoints from the environment."""
    home = tmp_path / "home"
    monkeypatch.setenv("SWEEPBENCH_HOME", str(home))
    for name in ("SWEEPBENCH_DB", "SWEEPBENCH_CONFIG", "SWEEPBENCH_COMPATIBLE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for entry in PROVIDERS.values():
        for variable in entry.key_variables:
            monkeypatch.delenv(variable, raising=False)
    # The bundled model samples (temperature 0.2); a fixed seed makes its answers repeatable.
    monkeypatch.setenv("SWEEPBENCH_LOCAL_SEED", "1234")
    for provider in ("ANTHROPIC", "OPENAI", "OPENROUTER"):
        monkeypatch.delenv(f"SWEEPBENCH_{provider}_BASE_URL", raising=False)
    return home
