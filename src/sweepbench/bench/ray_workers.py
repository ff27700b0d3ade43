"""The Ray executor of a shared run (``bench run --executor ray --workers N``): the other
``N - 1`` workers are Ray actors, each running :func:`~sweepbench.bench.workers.answer_share` —
the same worker loop as ``--join`` — against the same store. Ray only places and runs them;
which worker answers which item is decided in the store (claims), so nothing here schedules.

Without ``--ray-address`` a local Ray cluster is started for the run and stopped after it. With
one, the actors run wherever the cluster puts them: every node needs sweepbench, the
benchmark's files at the same path, the provider keys in its environment (they are never sent
through Ray), and ``SWEEPBENCH_DB`` naming the same PostgreSQL store. A SQLite store cannot be
shared by machines, so a cluster of more than one node is refused with it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from sweepbench.bench.request import BenchRequest
from sweepbench.bench.workers import answer_share
from sweepbench.errors import UserError

INSTALL_HINT = "pip install 'sweepbench[ray]'"


class BenchWorkerActor:
    """One worker of a shared run, as a Ray actor (wrapped with ``ray.remote`` on use, so
    this module imports without Ray)."""

    def pid(self) -> int:
        """The actor's process id (to find it, or to kill it in a test)."""
        return os.getpid()

    def run(self, request: BenchRequest) -> str:
        """Answer the run's items until none is left; the status it left the run in."""
        return answer_share(request)


class RayWorkers:
    """``count`` Ray actors joining a shared run. :meth:`connect` first (it refuses a setup
    that cannot work before anything is spent), :meth:`start` once the items are queued."""

    def __init__(
        self, count: int, request: BenchRequest, *, address: str | None, sqlite_store: bool
    ) -> None:
        self.count = count
        self.address = address
        # the actors' request: the spending was confirmed here; they continue this run
        self._request = request.model_copy(update={"confirmed": True, "resume": True})
        self._sqlite_store = sqlite_store
        self._started_cluster = False
        self._actors: list[Any] = []
        self._runs: list[Any] = []
        # Ray's driver prints its workers' deaths on stdout from a thread of its own; while it
        # is connected stdout goes to stderr, so that ``--json`` output stays one document
        self._stdout_to_stderr = contextlib.ExitStack()

    def connect(self) -> None:
        """Start a local Ray cluster, or connect to the one at ``address``. UserError when
        Ray is not installed, the cluster cannot be reached, or it spans several machines
        while the store is a SQLite file."""
        ray = _ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage reports
        if self.count == 0:
            return
        self._stdout_to_stderr.enter_context(contextlib.redirect_stdout(sys.stderr))
        try:
            if ray.is_initialized():
                pass
            elif self.address is None:
                ray.init(num_cpus=max(2, self.count), include_dashboard=False,
                         log_to_driver=False, logging_level="ERROR")  # fmt: skip
                self._started_cluster = True
            else:
                ray.init(address=self.address, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            self._stdout_to_stderr.close()
            where = self.address or "a local cluster"
            raise UserError(f"cannot start Ray workers on {where}: {exc}") from exc
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        if len(nodes) > 1 and self._sqlite_store:
            self.close()
            raise UserError(
                f"the Ray cluster has {len(nodes)} machines but the store is a SQLite file, "
                "which machines cannot share: set SWEEPBENCH_DB=postgresql+psycopg://… on "
                "every node (see docs/scale.md)"
            )

    def start(self, run_id: str) -> None:
        ray = _ray()
        actor = ray.remote(num_cpus=1, max_restarts=0)(BenchWorkerActor)
        self._actors = [actor.remote() for _ in range(self.count)]
        self._runs = [a.run.remote(self._request) for a in self._actors]

    def pids(self) -> list[int]:
        """The actors' process ids."""
        ray = _ray()
        return list(ray.get([a.pid.remote() for a in self._actors]))

    def wait(self) -> list[str]:
        ray = _ray()
        problems: list[str] = []
        try:
            for ref in self._runs:
                try:
                    ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    problems.append(f"a Ray worker died: {_first_line(exc)}")
                except ray.exceptions.RayTaskError as exc:
                    problems.append(f"a Ray worker failed: {_first_line(exc)}")
        finally:
            self.close()
        return problems

    def close(self) -> None:
        """Let the actors go; stop the cluster this run started."""
        ray = _ray()
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors, self._runs = [], []
        if self._started_cluster:
            ray.shutdown()
            self._started_cluster = False
        self._stdout_to_stderr.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise UserError(f"--executor ray needs Ray: {INSTALL_HINT}") from exc
    return ray
