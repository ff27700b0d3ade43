"""Test-wide guards: no test reaches the internet, spends money, or touches the user's home."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from sweepbench.models.providers import PROVIDERS

# Hypothesis fails an example that takes over 200 ms by default: a timing bound, which a loaded
# machine crosses (test_excalidraw's random text did at load 11). No test here is about speed.
settings.register_profile("sweepbench", deadline=None)
settings.load_profile("sweepbench")

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


UNREACHABLE_OPENROUTER = "http://127.0.0.1:9/api/v1"
"""Where OpenRouter is in the tests that start no fake of it: a closed port."""


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
    for provider in ("ANTHROPIC", "OPENAI"):
        monkeypatch.delenv(f"SWEEPBENCH_{provider}_BASE_URL", raising=False)
    # OpenRouter's catalogue is fetched when a price needs it: in this process the network
    # switch refuses it; a command run as a child process is sent to a closed loopback port
    # (refused at once), never to openrouter.ai. Tests with a fake server set their own.
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", UNREACHABLE_OPENROUTER)
    return home


RAY_MODULES = {"test_bench_ray.py", "test_bench_stop.py", "test_ray_address_unreachable.py"}
"""Test files that start (or aim at) a local Ray cluster."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``), the tests that start a local Ray cluster run on
    one worker, one after another, so two clusters never share the machine."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.path.name in RAY_MODULES:
            item.add_marker(pytest.mark.xdist_group("ray"))
