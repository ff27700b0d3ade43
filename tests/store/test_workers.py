"""Which processes count as alive: a process that has exited is dead even before its parent
reaps it (a zombie still answers ``kill(pid, 0)``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sweepbench.store.workers import pid_alive
from tests.bench.gate_helpers import wait_until

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _state(pid: int) -> str:
    text = Path(f"/proc/{pid}/stat").read_bytes()
    return text.rpartition(b")")[2].split()[0].decode()


def test_a_running_process_is_alive_and_an_exited_unreaped_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)  # fmt: skip
    try:
        assert pid_alive(child.pid)
        assert child.stdin is not None
        child.stdin.close()  # it exits; nobody reaps it until wait() below
        wait_until(lambda: _state(child.pid) == "Z", "the child to exit unreaped")
        assert not pid_alive(child.pid)
    finally:
        child.wait()
    assert not pid_alive(child.pid)  # reaped: gone
