"""The Ray driver of a shared run, in a process of its own (``bench run --executor ray``).

Ray's driver keeps global state and threads in the process that connects (and prints its
workers' deaths on that process's standard output), so the command that runs the benchmark
never connects itself: it starts this process, which connects to Ray, starts the actors and
waits for them, speaking one JSON line at a time over its standard input and output:

1. the command writes ``{"count", "address", "sqlite_store", "request"}``;
2. this process connects (a local cluster, or the one at ``address``) and answers
   ``{"ready": true}``, or ``{"error": "…"}`` and ends (nothing was spent yet);
3. the command writes ``{"start": RUN_ID}`` once the run's items are queued (or closes the
   pipe: the run did not start);
4. this process starts ``count`` actors running :func:`~sweepbench.bench.workers.answer_share`,
   waits for every one and answers ``{"problems": [...]}``, then stops the cluster it started.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

from sweepbench.errors import UserError

INSTALL_HINT = "pip install 'sweepbench[ray]'"


class BenchWorkerActor:
    """One worker of a shared run, as a Ray actor (wrapped with ``ray.remote`` on use, so
    this module imports without Ray)."""

    def pid(self) -> int:
        """The actor's process id."""
        return os.getpid()

    def run(self, request: Any) -> str:
        """Answer the run's items until none is left; the status it left the run in."""
        from sweepbench.bench.workers import answer_share

        return answer_share(request)


def ray_module() -> Any:
    """Ray, or UserError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise UserError(f"--executor ray needs Ray: {INSTALL_HINT}") from exc
    return ray


def connect_cluster(address: str | None, count: int, *, sqlite_store: bool) -> bool:
    """Connect to the Ray cluster at ``address``, or start a local one (True: started here,
    to be stopped after). UserError when Ray is missing or unreachable, or when the cluster
    spans several machines and the store is a SQLite file."""
    ray = ray_module()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage reports
    started = False
    try:
        if address is None:
            ray.init(num_cpus=max(2, count), include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR")  # fmt: skip
            started = True
        else:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UserError(
            f"cannot start Ray workers on {address or 'a local cluster'}: {exc}"
        ) from exc
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if len(nodes) > 1 and sqlite_store:
        ray.shutdown()
        raise UserError(
            f"the Ray cluster has {len(nodes)} machines but the store is a SQLite file, "
            "which machines cannot share: set SWEEPBENCH_DB=postgresql+psycopg://… on "
            "every node (see docs/scale.md)"
        )
    return started


def run_actors(count: int, request: Any) -> list[str]:
    """Start ``count`` actors answering the shared run and wait for every one; a line for
    each that died or failed."""
    ray = ray_module()
    actor = ray.remote(num_cpus=1, max_restarts=0)(BenchWorkerActor)
    actors = [actor.remote() for _ in range(count)]
    runs = [a.run.remote(request) for a in actors]
    problems: list[str] = []
    for ref in runs:
        try:
            ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            problems.append(f"a Ray worker died: {_first_line(exc)}")
        except ray.exceptions.RayTaskError as exc:
            problems.append(f"a Ray worker failed: {_first_line(exc)}")
    for each in actors:
        ray.kill(each, no_restart=True)
    return problems


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _say(out: IO[str], **message: Any) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def main() -> None:
    """The driver process (see the module's docstring)."""
    from sweepbench.bench.request import BenchRequest

    channel = sys.stdout
    sys.stdout = sys.stderr  # Ray's own prints go to the log, never into the channel
    order = json.loads(sys.stdin.readline())
    count = int(order["count"])
    try:
        started = connect_cluster(order["address"], count, sqlite_store=order["sqlite_store"])
    except UserError as exc:
        _say(channel, error=str(exc))
        raise SystemExit(2) from None
    _say(channel, ready=True)
    line = sys.stdin.readline()
    problems: list[str] = []
    if line.strip():
        request = BenchRequest.model_validate(order["request"])
        problems = run_actors(count, request)
    _say(channel, problems=problems)
    if started:
        ray_module().shutdown()
