"""``sweepbench bench estimate|run``: price a run, then run it with a progress bar. The rules
(what is refused, what needs confirming) are ``bench.request``'s; this renders them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sweepbench.bench.workers import (
    EXECUTORS,
    LOCAL_EXECUTOR,
    RAY_EXECUTOR,
    ProcessWorkers,
    WorkerPool,
)
from sweepbench.cli.bench_options import (
    JsonOpt,
    RunOptions,
    build_request,
    confirm_spending,
    err,
    print_estimate,
    refuse,
    run_options,
)
from sweepbench.cli.bench_show import show_run

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.resume import PreparedRun
    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.run_progress import Progress as RunProgress
    from sweepbench.store import Store


@run_options("estimate")
def estimate_command(options: RunOptions, as_json: JsonOpt = False) -> None:
    """Price a run without calling any model: every problem at once, low and high per role.

    Exit codes: 0 the run could start; 2 it could not (the reasons are printed)."""
    from sweepbench.bench.start import load, prepare
    from sweepbench.store import Store

    request = build_request(options)
    benchmark = load(request)
    with Store.open() as store:
        prepared = prepare(request, store, benchmark=benchmark)
    if as_json:
        typer.echo(json.dumps(_plan_json(prepared), indent=2, ensure_ascii=False))
    else:
        print_estimate(prepared)
    if not prepared.plan.ok:
        raise typer.Exit(2)


@run_options("run")
def run_command(
    options: RunOptions,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            help="Worker processes sharing the run (1–64): each claims items in the store, "
            "with --concurrency requests at once of its own.",
        ),
    ] = 1,
    join: Annotated[
        bool,
        typer.Option(
            "--join", help="Join the live shared run with these settings as one more worker."
        ),
    ] = False,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help="Where the other workers run: local (processes of this machine) or ray "
            "(Ray actors; pip install 'sweepbench[ray]').",
        ),
    ] = LOCAL_EXECUTOR,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="The Ray cluster to run workers on (default: start a local one).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a benchmark: estimate, confirm, answer and score every item, store as it goes.

    Running the same settings again continues an unfinished run. Ctrl-C stops it, keeping
    every finished answer. Exit codes: 0 finished; 1 paused, stopped or finished with errors;
    2 refused."""
    from sweepbench.bench.run_liveness import run_is_live
    from sweepbench.bench.start import (
        KEY_REJECTED,
        StartDecision,
        check_openrouter_key,
        load,
        prepare,
        start_check,
    )
    from sweepbench.bench.storage import BenchStore
    from sweepbench.store import Store

    if not 1 <= workers <= MAX_WORKERS:
        err.print(
            f"[red]refused:[/red] --workers must be between 1 and {MAX_WORKERS}, not {workers}"
        )
        raise typer.Exit(2)
    if executor not in EXECUTORS:
        err.print(f"[red]refused:[/red] --executor is local or ray, not {executor!r}")
        raise typer.Exit(2)
    if ray_address is not None and executor != RAY_EXECUTOR:
        err.print("[red]refused:[/red] --ray-address needs --executor ray")
        raise typer.Exit(2)
    request = build_request(options)
    benchmark = load(request)
    shared = workers > 1 or join
    with Store.open() as store:
        prepared = prepare(request, store, benchmark=benchmark, join=join)
        plan = prepared.plan
        decision = start_check(prepared, request)
        if not as_json:
            print_estimate(prepared)
        if decision.refused:
            if as_json and not plan.ok:
                typer.echo(json.dumps(_plan_json(prepared), indent=2, ensure_ascii=False))
            refuse(decision, {*plan.errors, *plan.blocked, *plan.limit_problems})  # listed already
        if decision.nothing_left:
            err.print("Nothing left to run: every selected item is already scored.")
            if prepared.previous is not None:
                show_run(store, prepared.previous.id, as_json=as_json, benchmark=benchmark)
            return
        key = check_openrouter_key(list(plan.config.models.values()), plan.low)
        if key is not None:
            err.print(key.said, markup=False, highlight=False)
            if key.refusal is not None:
                refuse(StartDecision("refused", reasons=(key.refusal,)), {KEY_REJECTED})
        confirm_spending(decision, noun="run", question="Spend up to {high}?")
        from sweepbench.bench.run import BenchRunner  # only now: a finished run needs none
        from sweepbench.settings import scrub

        def start_helpers(run_id: str) -> None:
            helpers.start(run_id)
            err.print(f"{helpers.count} more worker(s) ({executor}) joined run {run_id}.")

        runner = BenchRunner.for_request(
            prepared, store, request, shared=shared,
            on_started=start_helpers if workers > 1 else None,
        )  # fmt: skip
        # connected after the runner is made (a run that cannot start leaves no cluster up)
        helpers = _worker_pool(executor, workers, request, ray_address, store)
        waited: list[list[str]] = []

        def wait_for_helpers() -> list[str]:
            waited.append(helpers.wait())
            return waited[-1]

        try:
            outcome = _run_with_progress(
                runner, quiet=as_json, then=wait_for_helpers if helpers.count else None
            )
        finally:
            if helpers.count and not waited:  # not waited for yet: the run raised
                wait_for_helpers()
            for problem in (p for found in waited for p in found):  # the last worker ends it
                err.print(scrub(problem), markup=False, highlight=False)  # other processes' words
        if join and outcome.status == "running":  # a joined worker's share is done
            return
        status = outcome.status
        if status == "running":  # another worker was to end the run: did it, and how?
            stored = BenchStore(store).run(outcome.run_id)
            status = stored.status if stored is not None else status
            if stored is not None and status == "running" and not run_is_live(stored):
                err.print(
                    "The run's other workers ended without finishing it (one was killed?): "
                    "run the same command again to answer what is left and end it."
                )
                raise typer.Exit(1)
        show_run(store, outcome.run_id, as_json=as_json, benchmark=benchmark)
    if status not in ("completed", "running"):
        raise typer.Exit(1)


MAX_WORKERS = 64


def _worker_pool(
    executor: str, workers: int, request: BenchRequest, address: str | None, store: Store
) -> WorkerPool:
    """The other workers of a shared run, on the executor asked for (connected now: a setup
    that cannot work is refused before anything is spent)."""
    if executor == LOCAL_EXECUTOR:
        return ProcessWorkers(workers - 1)
    from sweepbench.bench.ray_workers import RayWorkers

    sqlite_store = store.engine.url.get_backend_name() == "sqlite"
    pool = RayWorkers(workers - 1, request, address=address, sqlite_store=sqlite_store)
    pool.connect()
    return pool


def _run_with_progress(
    runner: BenchRunner, *, quiet: bool, then: Callable[[], object] | None = None
) -> Any:
    """Run, with a progress bar unless ``quiet``. ``then``: wait for the run's other workers;
    meanwhile, and for the whole of a shared run, the bar counts every worker's answers as the
    store has them."""
    from sweepbench.bench.results import format_money
    from sweepbench.engine.signals import stop_on_signals, stop_on_signals_while_blocked

    total = runner.progress.total
    limit = runner.progress.limit

    def describe(p: RunProgress) -> str:
        spent = format_money(p.spent)
        money = f"{spent} of {format_money(limit)}" if limit is not None else spent
        errors = f" · [red]{p.failed} errors[/red]" if p.failed else ""
        return f"{p.scored:,} scored{errors} · {money}"

    async def go() -> Any:
        with stop_on_signals(runner.stop):  # Ctrl-C or SIGTERM: stop, keeping every answer
            return await runner.run()

    def run_and_wait() -> Any:
        outcome = asyncio.run(go())
        if then is not None:

            def stop_the_others() -> None:  # Ctrl-C now asks them through the store
                runner.runs.request_stop(runner.run_id)

            with stop_on_signals_while_blocked(stop_the_others):
                then()
        return outcome

    if quiet:
        return run_and_wait()
    verb = "Continuing" if runner.progress.resumed else "Running"
    with Progress(
        TextColumn(f"{verb} {runner.run_id}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as bar:
        task = bar.add_task(describe(runner.progress), total=total)

        def update(p: RunProgress) -> None:
            bar.update(task, completed=p.done, description=describe(p))

        if not runner.shared:
            runner.on_progress = update
            return run_and_wait()
        with SharedProgress(runner, update):
            return run_and_wait()


class SharedProgress:
    """The progress of a shared run as the store counts it (every worker's answers and the
    run's spending), polled from a thread while this process answers and waits."""

    POLL_S = 0.5

    def __init__(self, runner: BenchRunner, update: Callable[[RunProgress], None]) -> None:
        self._runner = runner
        self._update = update
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="sweepbench-progress", daemon=True)
        self._scored_before = 0

    def __enter__(self) -> SharedProgress:
        previous = self._runner.prepared.previous  # answers of earlier sessions: not this one's
        if previous is not None:
            self._scored_before = self._runner.runs.counts(previous.id).get("scored", 0)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)
        self._show()

    def _poll(self) -> None:
        while not self._done.wait(self.POLL_S):
            self._show()

    def _show(self) -> None:
        from sweepbench.bench.claims import ItemClaims

        runner = self._runner
        run_id = runner.progress.run_id
        if not run_id:
            return
        try:
            free, claimed = ItemClaims(runner.store, run_id).counts()
            scored = runner.runs.counts(run_id).get("scored", 0) - self._scored_before
            spent = runner.ledger.run_spent(run_id)
        except Exception:  # a failed read never stops the run: the next poll tries again
            return
        own = runner.progress
        done = max(own.done, own.total - free - claimed)  # the queue is this session's items
        scored = min(max(scored, own.scored), done)
        shown = dataclasses.replace(own, scored=scored, failed=done - scored,
                                    spent=max(spent, own.spent))  # fmt: skip
        self._update(shown)


def _plan_json(prepared: PreparedRun) -> dict[str, Any]:
    """The plan ``--json`` prints (imported when asked: ``--help`` loads no store)."""
    from sweepbench.bench.plan_json import plan_json

    return plan_json(prepared)


def register(app: typer.Typer) -> None:
    """Add ``bench estimate`` and ``bench run`` (loaded by ``cli.bench.BENCH_COMMANDS``)."""
    app.command("estimate")(estimate_command)
    app.command("run")(run_command)
