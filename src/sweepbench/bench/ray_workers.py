"""The Ray executor of a shared run (``bench run --executor ray --workers N``): the other
``N - 1`` workers are Ray actors, each running :func:`~sweepbench.bench.workers.answer_share` —
the same worker loop as ``--join`` — against the same store. Ray only places and runs them;
which worker answers which item is decided in the store (claims), so nothing here schedules.

The command never connects to Ray itself: a driver process does
(:mod:`~sweepbench.bench.ray_driver`), so Ray's global state, threads and printing stay out of
the command (its ``--json`` output is one document, whatever Ray says).

Without ``--ray-address`` a local Ray cluster is started for the run and stopped after it. With
one, the actors run wherever the cluster puts them: every node needs sweepbench, the
benchmark's files at the same path, the provider keys in its environment (they are never sent
through Ray), and ``SWEEPBENCH_DB`` naming the same PostgreSQL store. A SQLite store cannot be
shared by machines, so a cluster of more than one node is refused with it.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
from typing import IO, Any
from urllib.parse import urlsplit

from sweepbench.bench.ray_driver import INSTALL_HINT
from sweepbench.errors import UserError

DRIVER = "from sweepbench.bench.ray_driver import main; main()"
PROBE_TIMEOUT_S = 5.0
"""How long the cluster's address may take to accept a connection before it is called
unreachable (Ray itself would retry for minutes)."""
NAMED_ADDRESSES = ("auto", "local")
"""Addresses Ray resolves itself (the cluster this machine's ``ray start`` left running)."""


class RayWorkers:
    """``count`` Ray actors joining a shared run, through a driver process. :meth:`connect`
    first (it refuses a setup that cannot work before anything is spent), :meth:`start` once
    the items are queued, :meth:`wait` for them all."""

    def __init__(
        self, count: int, request: Any, *, address: str | None, sqlite_store: bool
    ) -> None:
        self.count = count
        self.address = address
        self.sqlite_store = sqlite_store
        # the actors' request: the spending was confirmed here; they continue this run
        self._request = request.model_copy(update={"confirmed": True, "resume": True})
        self._proc: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None
        self._started = False

    def connect(self) -> None:
        """Start the driver, which connects to Ray. UserError when Ray is not installed, the
        cluster cannot be reached, or it spans several machines while the store is SQLite."""
        if self.count == 0:
            return
        if importlib.util.find_spec("ray") is None:  # said at once, not by the driver
            raise UserError(f"--executor ray needs Ray: {INSTALL_HINT}")
        if self.address is not None:
            check_reachable(self.address)
        self._log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed)
        self._proc = subprocess.Popen(
            [sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._log, text=True, encoding="utf-8",
        )  # fmt: skip
        self._send({
            "count": self.count, "address": self.address, "sqlite_store": self.sqlite_store,
            "request": self._request.model_dump(mode="json"),
        })  # fmt: skip
        answer = self._receive()
        if answer.get("ready"):
            return
        self.close()
        raise UserError(str(answer.get("error") or "the Ray driver could not start"))

    def start(self, run_id: str) -> None:
        self._send({"start": run_id})
        self._started = True

    def wait(self) -> list[str]:
        if self._proc is None:
            return []
        try:
            if not self._started:
                return []
            answer = self._receive()
            if "problems" not in answer:
                return [str(answer.get("error") or "the Ray driver ended without an answer")]
            return [str(p) for p in answer["problems"]]
        finally:
            self.close()

    def close(self) -> None:
        """End the driver (it stops the cluster it started)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None and not proc.stdin.closed:
                proc.stdin.close()  # a driver still waiting for "start": the run did not start
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(message) + "\n")
        self._proc.stdin.flush()

    def _receive(self) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            return {"error": f"the Ray driver ended (exit code {self._proc.returncode}): "
                             f"{self._log_tail()}"}  # fmt: skip
        return dict(json.loads(line))

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return " / ".join(self._log.read().strip().splitlines()[-3:])


def ray_host_port(address: str) -> tuple[str, int] | None:
    """The host and port an ``--ray-address`` names (``HOST:PORT``, ``ray://HOST:PORT``,
    ``[IPv6]:PORT``); None for one Ray resolves itself (``auto``, ``local``). UserError for
    anything else."""
    text = address.strip()
    if text.lower() in NAMED_ADDRESSES:
        return None
    parts = urlsplit(text if "://" in text else f"ray://{text}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number, or out of range
        host, port = None, None
    if not host or port is None:
        raise UserError(
            f"--ray-address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379, "
            "ray://10.0.0.5:10001 or auto)"
        )
    return host, port


def check_reachable(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Refuse at once (UserError) a cluster address nothing answers at — connection refused,
    no answer within ``timeout_s``, an unknown host — instead of leaving Ray to retry for
    minutes; nothing is spent or started yet."""
    target = ray_host_port(address)
    if target is None:
        return
    host, port = target
    why: str | None = None
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except ConnectionRefusedError:
        why = "the connection was refused (no Ray cluster listens there)"
    except TimeoutError:
        why = f"nothing answered within {timeout_s:g} s"
    except socket.gaierror as exc:
        why = f"the host is unknown ({exc.strerror or exc})"
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
    raise UserError(
        f"cannot connect to the Ray cluster at {address}: {why}. Start one there with "
        "`ray start --head`, or leave out --ray-address to run a local cluster."
    )
