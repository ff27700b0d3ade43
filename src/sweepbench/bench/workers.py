"""The other workers of a shared run (``bench run --workers N``), behind one seam.

The command's own process is the run's first worker: it records the run, queues its items in
the store (:mod:`.claims`) and answers like any other. Once the items are queued it starts
``N - 1`` more workers through a :class:`WorkerPool`, which only hands them to an engine that
runs processes — no scheduler of our own:

- :class:`ProcessWorkers` (``--executor local``): this command again with ``--join``, as
  child processes of this one, on this machine;
- :class:`~sweepbench.bench.ray_workers.RayWorkers` (``--executor ray``): Ray actors on a local
  Ray cluster or the one at ``--ray-address``, each running :func:`answer_share`.

Every worker claims batches of items until none is left, spends through the shared ledger and
counts the shared rate limits in the store; the last one to leave ends the run. A worker that
dies loses only its in-flight calls: its claims and leases are freed when it is found dead.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import threading
from typing import IO, Protocol

from sweepbench.errors import UserError

LOCAL_EXECUTOR = "local"
"""``--executor local``: worker processes on this machine (not the ``local/`` model provider)."""
RAY_EXECUTOR = "ray"
"""``--executor ray``: Ray actors on a local Ray cluster or the one at ``--ray-address``."""
EXECUTORS = (LOCAL_EXECUTOR, RAY_EXECUTOR)


class WorkerPool(Protocol):
    """Starts the other workers of a shared run and waits for them."""

    count: int

    def start(self, run_id: str) -> None:
        """Start the workers: the run is recorded and its items are queued."""

    def wait(self) -> list[str]:
        """Wait for every worker to end; a line for each that ended badly."""


def answer_share(request: object) -> str:
    """One joined worker, in this process: continue the live shared run the request names,
    answering the items it claims until none is left; the status it left the run in. What a
    Ray actor runs (the local executor runs the same through ``bench run --join``)."""
    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.start import load, prepare, start_check
    from sweepbench.store import Store

    if not isinstance(request, BenchRequest):
        raise TypeError(f"a BenchRequest, not {type(request).__name__}")
    benchmark = load(request)
    with Store.open() as store:
        prepared = prepare(request, store, benchmark=benchmark, join=True)
        decision = start_check(prepared, request)
        if decision.nothing_left:
            return "completed"
        if decision.refused:
            raise UserError("this worker cannot join: " + "; ".join(decision.reasons))
        runner = BenchRunner.for_request(prepared, store, request, shared=True)
        return asyncio.run(runner.run()).status


class ProcessWorkers:
    """The other worker processes of a shared run on this machine (``--executor local``):
    this command again with ``--join`` (and ``--yes``: the spending was confirmed here)."""

    def __init__(self, count: int, argv: list[str] | None = None) -> None:
        self.count = count
        self._argv = list(sys.argv[1:] if argv is None else argv)
        self._procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []

    def start(self, run_id: str) -> None:
        args = without_workers(self._argv)
        command = [sys.executable, "-c", "from sweepbench.cli import main; main()", *args,
                   "--join", "--yes", "--json"]  # fmt: skip
        for _ in range(self.count):
            log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in wait())
            self._logs.append(log)
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
            self._procs.append(proc)
            # reaped the moment it ends: a dead worker left as a zombie would look alive (its
            # pid exists), so its claims would never be freed nor the run ended
            threading.Thread(target=proc.wait, name="sweepbench-worker-reaper", daemon=True).start()

    def wait(self) -> list[str]:
        problems: list[str] = []
        for proc, log in zip(self._procs, self._logs, strict=True):
            code = proc.wait()
            if code not in (0, 1):  # 1: paused or stopped, said by the run itself
                log.seek(0)
                tail = log.read().decode("utf-8", "replace").strip().splitlines()[-3:]
                said = " / ".join(tail)
                problems.append(f"a worker process ended with exit code {code}: {said}")
            log.close()
        return problems


def without_workers(args: list[str]) -> list[str]:
    """A command's arguments without the options that start workers (``--workers N``,
    ``--executor``, ``--ray-address``) and ``--no-resume`` (a joining worker continues the
    run this one started)."""
    valued = ("--workers", "--executor", "--ray-address")
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in valued:
            skip = True
            continue
        if arg.startswith(tuple(f"{name}=" for name in valued)) or arg == "--no-resume":
            continue
        out.append(arg)
    return out
