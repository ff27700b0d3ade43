"""Issue 26 §5: ``bench run --executor ray --ray-address`` naming an address nothing listens at
says it cannot connect and ends, instead of leaving Ray to retry for minutes; nothing is
recorded or spent."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sweepbench.bench.ray_workers import check_reachable, ray_host_port
from sweepbench.errors import UserError

HANG_GUARD_S = 300
"""Only so that a regression fails instead of hanging the suite; no duration is asserted."""
SWEEPBENCH = [sys.executable, "-c", "from sweepbench.cli import main; main()"]


@pytest.fixture
def refused_address() -> Iterator[str]:
    """A loopback port that is bound but not listening: connecting to it is refused, and no
    other process can take it while the test runs."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{holder.getsockname()[1]}"


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray")
def test_an_address_that_refuses_is_said_and_the_command_ends(
    refused_address: str, isolated_home: Path
) -> None:
    command = [
        *SWEEPBENCH, "bench", "run", "sample",
        "-m", "scripted/echo?text=ANSWER: B", "--preset", "auto", "--executor", "ray",
        "--workers", "2", "--ray-address", refused_address, "--yes",
    ]  # fmt: skip
    env = {**os.environ, "SWEEPBENCH_HOME": str(isolated_home), "COLUMNS": "200"}
    ended = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=HANG_GUARD_S, check=False
    )
    said = " ".join(ended.stderr.split())
    assert ended.returncode != 0
    assert f"cannot connect to the Ray cluster at {refused_address}" in said
    assert "the connection was refused" in said
    runs = subprocess.run(
        [*SWEEPBENCH, "bench", "runs", "--json"],
        env=env, capture_output=True, text=True, timeout=HANG_GUARD_S, check=True,
    )  # fmt: skip
    assert runs.stdout.strip() == "[]"  # refused before the run was recorded


def test_check_reachable_names_the_address_and_why(refused_address: str) -> None:
    with pytest.raises(UserError, match="the connection was refused") as caught:
        check_reachable(refused_address)
    assert refused_address in str(caught.value)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:  # one that listens
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        check_reachable(f"ray://127.0.0.1:{server.getsockname()[1]}")


@pytest.mark.parametrize(
    ("address", "target"),
    [
        ("10.0.0.5:6379", ("10.0.0.5", 6379)),
        ("ray://head.example:10001", ("head.example", 10001)),
        ("[::1]:6379", ("::1", 6379)),
        ("auto", None),
        ("LOCAL", None),
    ],
)
def test_addresses_are_read_as_host_and_port(address: str, target: tuple[str, int] | None) -> None:
    assert ray_host_port(address) == target


@pytest.mark.parametrize("address", ["bogus", "10.0.0.5", "10.0.0.5:port", "host:99999", ""])
def test_an_address_without_a_port_is_refused_with_the_form_it_takes(address: str) -> None:
    with pytest.raises(UserError, match="is not HOST:PORT"):
        ray_host_port(address)
