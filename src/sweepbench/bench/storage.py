"""Benchmark runs in the store: the run row, one answer row per item, and the spend lines.

Answers and spend lines are written in one transaction per batch (:meth:`BenchStore.write`):
an answer is never stored without the cost of the calls that made it. The reverse can happen:
a call's cost is queued as soon as the call ends, so a crash between a judged item's answer
and its grade keeps the answer's cost line without the answer; the resumed run asks again and
that second call is counted too — it was paid for. (A Stop keeps the answer instead, as a
``judge_not_run`` failure that a resume re-grades.) A retried item's row is
replaced (its key is the primary key within a run), so an item is never stored twice.

The rows, as values, and a batch's writes are :mod:`.storage_rows`; whether a run is being run
and by whom, :mod:`.run_liveness`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.bench.run_liveness import (
    ACTIVE_RUNS,
    ACTIVE_RUNS_LOCK,
    run_is_live,
    run_workers,
    this_worker,
    worker_alive,
)
from sweepbench.bench.storage_rows import (
    AnswerRow,
    RunRow,
    SpendLine,
    json_text,
    write_portable,
    write_sqlite,
)
from sweepbench.errors import UserError
from sweepbench.money.ceilings import micro_to_usd
from sweepbench.store import Store
from sweepbench.store.engine import writer
from sweepbench.store.schema import bench_answers, bench_reports, bench_runs, bench_spend

RUN_STATES = ("running", "completed", "completed_with_errors", "paused_budget", "interrupted")

STOP_REQUEST = "stop_request"
"""The key of a run's settings under which another process asks its session to stop
(``host``, ``pid``, ``via``, ``at``); a new session of the run clears it as it claims the run."""
STOP_VIA_CLI = "`bench stop`"
STOP_VIA_PAGE = "a web page's Stop"


def stop_reason(request: dict[str, Any]) -> str:
    """The reason a run stopped by a recorded stop request gives: who asked, from where."""
    via = request.get("via") or STOP_VIA_CLI
    return f"stopped by {via} from process {request.get('pid')} on {request.get('host')}"


ANSWER_BATCH = 1_000
"""Answers read at a time where a command touches them all (export, rescore)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp_text(moment: Any) -> str:
    """A stored time as text, the same whatever the driver returns (datetime or string)."""
    return moment.isoformat() if isinstance(moment, datetime) else str(moment)


def _run_row(row: Any) -> RunRow:
    data = dict(row._mapping)
    data["settings"] = json.loads(data["settings"])
    return RunRow(**data)


class BenchStore:
    """Benchmark tables of a :class:`Store`."""

    def __init__(self, store: Store, *, fast_sqlite: bool = True) -> None:
        self.store = store
        self.fast_sqlite = fast_sqlite
        """On SQLite, write through the driver's own ``executemany`` (False: SQLAlchemy Core,
        the path PostgreSQL takes)."""
        self._writer = writer(store.engine)

    # -- runs --------------------------------------------------------------------------------

    def create_run(self, run: RunRow) -> None:
        """Insert a new run row."""
        with self._writer.begin() as conn:
            conn.execute(
                bench_runs.insert().values({**run.__dict__, "settings": json_text(run.settings)})
            )

    def start_run(self, run: RunRow) -> str:
        """Insert a new run, atomically: refused (UserError) while another live process runs
        the same settings — two sessions started together never both pay for them — and given
        the next free id (``<id>-2``, …) when its id is taken. Returns the id used."""
        with self._writer.begin() as conn:
            _lock_runs(conn)
            running = conn.execute(
                sa.select(bench_runs).where(
                    bench_runs.c.config_hash == run.config_hash, bench_runs.c.status == "running"
                )
            ).all()
            for row in running:
                other = _run_row(row)
                if run_is_live(other):
                    raise UserError(_busy(other))
            run_id, n = run.id, 1
            while conn.scalar(sa.select(bench_runs.c.id).where(bench_runs.c.id == run_id)):
                n += 1
                run_id = f"{run.id}-{n}"
            with ACTIVE_RUNS_LOCK:
                if run.config_hash in ACTIVE_RUNS.values():
                    raise UserError(
                        "a run with these settings is being run by another session of this "
                        "process; wait for it or stop it"
                    )
                values = {**run.__dict__, "id": run_id, "settings": json_text(run.settings)}
                conn.execute(bench_runs.insert().values(values))
                ACTIVE_RUNS[run_id] = run.config_hash
        return run_id

    def claim_run(self, run_id: str, **settings: Any) -> None:
        """Mark a stopped run ``running`` for this process, atomically (the check that no live
        process continues it and the claim are one transaction); ``settings`` are merged into
        its stored settings. UserError when a live process holds it."""
        with self._writer.begin() as conn:
            current = _locked_run(conn, run_id)
            if current is None:
                raise UserError(f"no benchmark run {run_id!r}")
            if run_is_live(current):
                raise UserError(_busy(current))
            merged = {**current.settings, **settings}
            merged.pop(STOP_REQUEST, None)  # a new session: an old `bench stop` is spent
            conn.execute(
                bench_runs.update()
                .where(bench_runs.c.id == run_id)
                .values(
                    status="running", reason=None, updated_at=_now(), settings=json_text(merged)
                )
            )
            with ACTIVE_RUNS_LOCK:
                ACTIVE_RUNS[run_id] = current.config_hash

    def join_run(self, run_id: str) -> None:
        """Join a run shared between workers through item claims (started with
        ``--workers``): this process becomes one more of its workers. A run that no live
        worker holds is claimed as :meth:`claim_run` does. UserError for an unknown run, or a
        live run that is not shared."""
        with self._writer.begin() as conn:
            current = _locked_run(conn, run_id)
            if current is None:
                raise UserError(f"no benchmark run {run_id!r}")
            me = this_worker()
            if not run_is_live(current):
                merged = {**current.settings, "worker": me, "joined": []}
                merged.pop(STOP_REQUEST, None)
            elif not current.settings.get("claims"):
                raise UserError(_busy(current))
            else:
                _same_machine_on_sqlite(conn, current, me)
                joined = [w for w in current.settings.get("joined") or [] if w != me]
                merged = {**current.settings, "joined": [*joined, me]}
            conn.execute(
                bench_runs.update()
                .where(bench_runs.c.id == run_id)
                .values(status="running", updated_at=_now(), settings=json_text(merged))
            )
            with ACTIVE_RUNS_LOCK:
                ACTIVE_RUNS[run_id] = current.config_hash

    def leave_run(self, run_id: str) -> bool:
        """This process's part of a shared run is done: it is taken off the run's workers.
        True when no other worker of the run is alive, so this one ends the run (its status
        and record); decided in one write transaction, so exactly one worker ends it."""
        me = this_worker()
        with self._writer.begin() as conn:
            current = _locked_run(conn, run_id)
            if current is None:
                return True
            with ACTIVE_RUNS_LOCK:  # this process is leaving: it no longer keeps the run alive
                ACTIVE_RUNS.pop(run_id, None)
            others = [w for w in run_workers(current) if w and w != me]
            alive = [w for w in others if worker_alive(current, w, None)]
            settings = dict(current.settings)
            if alive:
                settings["worker"] = alive[0]
                settings["joined"] = alive[1:]
            else:
                settings["worker"], settings["joined"] = me, []
            conn.execute(
                bench_runs.update()
                .where(bench_runs.c.id == run_id)
                .values(settings=json_text(settings))
            )
            if alive:  # still running elsewhere: keep it claimed for the ones going on
                return False
            with ACTIVE_RUNS_LOCK:
                ACTIVE_RUNS[run_id] = current.config_hash  # released by the caller's release_run
        return True

    def set_record(self, run_id: str, record: str) -> None:
        """Store a run's record (JSON) as its session ends."""
        with self._writer.begin() as conn:
            conn.execute(bench_runs.update().where(bench_runs.c.id == run_id).values(record=record))

    def set_status(
        self, run_id: str, status: str, reason: str | None = None, **settings: Any
    ) -> None:
        """Record a run's status (and the reason it stopped); ``settings`` are merged into its
        stored settings (the limits last used, say)."""
        if status not in RUN_STATES:
            raise ValueError(f"unknown run status {status!r}")
        with self._writer.begin() as conn:
            values: dict[str, Any] = {"status": status, "reason": reason, "updated_at": _now()}
            if settings:
                stored = conn.scalar(
                    sa.select(bench_runs.c.settings).where(bench_runs.c.id == run_id)
                )
                merged = {**json.loads(stored or "{}"), **settings}
                values["settings"] = json_text(merged)
            conn.execute(bench_runs.update().where(bench_runs.c.id == run_id).values(values))

    def exists(self, run_id: str) -> bool:
        """True when a run has exactly this id."""
        query = sa.select(bench_runs.c.id).where(bench_runs.c.id == run_id)
        with self.store.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def run(self, run_id: str) -> RunRow | None:
        """A run by id (a unique prefix works too)."""
        with self.store.engine.connect() as conn:
            row = conn.execute(sa.select(bench_runs).where(bench_runs.c.id == run_id)).first()
            if row is None:
                rows = conn.execute(
                    sa.select(bench_runs).where(bench_runs.c.id.startswith(run_id, autoescape=True))
                ).fetchall()
                if len(rows) > 1:
                    names = ", ".join(sorted(r.id for r in rows)[:5])
                    raise UserError(
                        f"{run_id!r} matches {len(rows)} runs ({names}…); give more of the id"
                    )
                row = rows[0] if rows else None
        return None if row is None else _run_row(row)

    def runs(self, limit: int = 50) -> list[RunRow]:
        """The newest runs first."""
        query = sa.select(bench_runs).order_by(bench_runs.c.created_at.desc()).limit(limit)
        with self.store.engine.connect() as conn:
            return [_run_row(r) for r in conn.execute(query)]

    def resumable(self, config_hash: str, *, include_completed: bool = False) -> RunRow | None:
        """The newest run with these settings that has not completed (or any, when
        ``include_completed``)."""
        query = (
            sa.select(bench_runs)
            .where(bench_runs.c.config_hash == config_hash)
            .order_by(bench_runs.c.created_at.desc())
        )
        if not include_completed:
            query = query.where(bench_runs.c.status != "completed")
        with self.store.engine.connect() as conn:
            row = conn.execute(query.limit(1)).first()
        return None if row is None else _run_row(row)

    def touch(self, run_id: str) -> None:
        """Mark a running run as alive now (its heartbeat)."""
        with self._writer.begin() as conn:
            conn.execute(
                bench_runs.update().where(bench_runs.c.id == run_id).values(updated_at=_now())
            )

    def request_stop(self, run_id: str, *, via: str = STOP_VIA_CLI) -> tuple[RunRow, bool] | None:
        """Ask the live session of a run — in any process, on any machine that reaches this
        store — to stop, as Ctrl-C does (finished answers kept): the request (who asks, when,
        ``via`` what) is recorded in the run's settings in one write transaction, and the
        runner picks it up within about a second (:meth:`stop_request`). Returns the run as
        found and whether the request was recorded (False: the run is not running); None for
        an unknown run id (a unique prefix works too)."""
        found = self.run(run_id)
        if found is None:
            return None
        request = {**this_worker(), "via": via, "at": _now().isoformat()}
        with self._writer.begin() as conn:
            current = _locked_run(conn, found.id)
            if current is None:
                return None
            if not run_is_live(current):
                return current, False
            settings = {**current.settings, STOP_REQUEST: request}
            conn.execute(  # not updated_at: that is the runner's own heartbeat
                bench_runs.update()
                .where(bench_runs.c.id == current.id)
                .values(settings=json_text(settings))
            )
        return current, True

    def stop_request(self, run_id: str) -> dict[str, Any] | None:
        """The stop request recorded for a run's current session (None: none) — one read of
        the run's row by its key, parsed only when a request is there."""
        query = sa.select(bench_runs.c.settings).where(bench_runs.c.id == run_id)
        with self.store.engine.connect() as conn:
            text = conn.scalar(query)
        if not text or f'"{STOP_REQUEST}"' not in text:
            return None
        value = json.loads(text).get(STOP_REQUEST)
        return value if isinstance(value, dict) else None

    def delete_run(self, run_id: str) -> None:
        """Delete a run with its answers and spend lines."""
        with self._writer.begin() as conn:
            for table in (bench_answers, bench_spend, bench_reports):
                conn.execute(table.delete().where(table.c.run_id == run_id))
            conn.execute(bench_runs.delete().where(bench_runs.c.id == run_id))

    # -- the stored report ---------------------------------------------------------------------

    def answers_stamp(self, run_id: str) -> tuple[int, str | None]:
        """How many answers a run has stored and when the newest was written: what a stored
        report must match to still be the run's."""
        t = bench_answers.c
        query = sa.select(sa.func.count(), sa.func.max(t.updated_at)).where(t.run_id == run_id)
        with self.store.engine.connect() as conn:
            count, newest = conn.execute(query).one()
        return int(count), None if newest is None else _stamp_text(newest)

    def save_report(
        self, run_id: str, stamp: tuple[int, str | None], resamples: int, document: str
    ) -> None:
        """Store a run's computed report with the stamp of the answers it was computed from."""
        values = {"answers": stamp[0], "last_answer_at": stamp[1], "resamples": resamples,
                  "document": document}  # fmt: skip
        with self._writer.begin() as conn:
            done = conn.execute(
                bench_reports.update().where(bench_reports.c.run_id == run_id).values(**values)
            )
            if not done.rowcount:
                conn.execute(bench_reports.insert().values(run_id=run_id, **values))

    def saved_report(self, run_id: str, resamples: int) -> str | None:
        """The stored report of a run, if it was computed with ``resamples`` from the answers
        the run has now (None otherwise: compute it again)."""
        t = bench_reports.c
        query = sa.select(t.answers, t.last_answer_at, t.document).where(
            t.run_id == run_id, t.resamples == resamples
        )
        with self.store.engine.connect() as conn:
            found = conn.execute(query).one_or_none()
        if found is None or (found.answers, found.last_answer_at) != self.answers_stamp(run_id):
            return None
        return str(found.document)

    # -- answers and spend -------------------------------------------------------------------

    def write(
        self,
        run_id: str,
        answers: Sequence[AnswerRow],
        spend: Sequence[SpendLine],
        *,
        also: Callable[[Connection], None] | None = None,
    ) -> None:
        """Store a batch of answers (replacing earlier rows of the same keys) and their spend
        lines, in one transaction; ``also`` writes more in the same transaction (the calls'
        rows and the ledger's settlements)."""
        if not answers and not spend and also is None:
            return
        now = _now()
        with self._writer.begin() as conn:
            if conn.dialect.name == "sqlite" and self.fast_sqlite:
                write_sqlite(conn, run_id, now, answers, spend)
            else:
                write_portable(conn, run_id, now, answers, spend)
            if also is not None:
                also(conn)
            conn.execute(
                bench_runs.update().where(bench_runs.c.id == run_id).values(updated_at=now)
            )

    def statuses(self, run_id: str) -> dict[str, str]:
        """Every stored key of a run with its status (``scored`` or ``failed``)."""
        query = sa.select(bench_answers.c.key, bench_answers.c.status).where(
            bench_answers.c.run_id == run_id
        )
        with self.store.engine.connect() as conn:
            return {key: status for key, status in conn.execute(query)}

    def counts(self, run_id: str) -> dict[str, int]:
        """How many stored answers of a run have each status (one grouped count: the live
        progress of a run shared by several workers)."""
        query = (
            sa.select(bench_answers.c.status, sa.func.count())
            .where(bench_answers.c.run_id == run_id)
            .group_by(bench_answers.c.status)
        )
        with self.store.engine.connect() as conn:
            return {status: int(n) for status, n in conn.execute(query)}

    def tasks_answered(self, run_id: str) -> set[str]:
        """The tasks a run has stored answers for (scored or failed)."""
        query = sa.select(bench_answers.c.task).where(bench_answers.c.run_id == run_id).distinct()
        with self.store.engine.connect() as conn:
            return set(conn.scalars(query))

    def answers(self, run_id: str, *, status: str | None = None) -> Iterator[dict[str, Any]]:
        """A run's answer rows as dicts (``score_metadata`` parsed), streamed from the store in
        batches of :data:`ANSWER_BATCH` (a server-side cursor on PostgreSQL)."""
        query = sa.select(bench_answers).where(bench_answers.c.run_id == run_id)
        if status is not None:
            query = query.where(bench_answers.c.status == status)
        query = query.order_by(bench_answers.c.task, bench_answers.c.key)
        with self.store.engine.connect() as conn:
            for row in conn.execution_options(yield_per=ANSWER_BATCH).execute(query):
                data = dict(row._mapping)
                for column in ("score_metadata", "retries"):
                    text = data.get(column)
                    data[column] = json.loads(text) if text else None
                yield data

    def outcomes(self, run_id: str) -> list[dict[str, Any]]:
        """Per answer of a run only what scores and counts need: ``key``, ``task``,
        ``dimension``, ``status``, ``score``, ``passed``, ``error_type`` (no texts, no JSON)."""
        t = bench_answers.c
        names = ("key", "task", "dimension", "status", "score", "passed", "error_type")
        query = sa.select(t.key, t.task, t.dimension, t.status, t.score, t.passed, t.error_type)
        with self.store.engine.connect() as conn:
            rows = conn.execute(query.where(t.run_id == run_id).order_by(t.task, t.key)).all()
            return [dict(zip(names, row, strict=True)) for row in rows]

    def usage(self, run_id: str) -> dict[str, int]:
        """A run's answers counted: ``answers``, ``input_tokens``, ``output_tokens``,
        ``reasoning_tokens`` (the model under test's, over every attempt stored) and
        ``truncated`` (answers cut at the token limit)."""
        t = bench_answers.c
        cut = sa.func.sum(sa.case((t.stop_reason == "max_tokens", 1), else_=0))
        query = sa.select(
            sa.func.count(), sa.func.sum(t.input_tokens), sa.func.sum(t.output_tokens),
            sa.func.sum(t.reasoning_tokens), cut,
        ).where(t.run_id == run_id)  # fmt: skip
        with self.store.engine.connect() as conn:
            row = conn.execute(query).one()
        names = ("answers", "input_tokens", "output_tokens", "reasoning_tokens", "truncated")
        return {name: int(value or 0) for name, value in zip(names, row, strict=True)}

    def failed_answers(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The failed rows of a run by key (their answers are kept for re-grading)."""
        return {row["key"]: row for row in self.answers(run_id, status="failed")}

    def spent(self, run_id: str) -> dict[str, Decimal]:
        """What each role of a run has spent so far, across every session (unpriced calls
        count $0 here; the run reports them)."""
        query = (
            sa.select(bench_spend.c.role, sa.func.coalesce(sa.func.sum(bench_spend.c.micro_usd), 0))
            .where(bench_spend.c.run_id == run_id)
            .group_by(bench_spend.c.role)
        )
        with self.store.engine.connect() as conn:
            return {role: micro_to_usd(int(total)) for role, total in conn.execute(query)}

    def spend_lines(self, run_id: str) -> Iterator[dict[str, Any]]:
        """A run's spend lines in order, money as a decimal string."""
        query = (
            sa.select(bench_spend).where(bench_spend.c.run_id == run_id).order_by(bench_spend.c.id)
        )
        with self.store.engine.connect() as conn:
            for row in conn.execute(query):
                data = dict(row._mapping)
                micro = data.pop("micro_usd")
                data["usd"] = None if micro is None else str(micro_to_usd(micro))
                data.pop("id")
                yield data


def _same_machine_on_sqlite(conn: Connection, run: RunRow, me: Mapping[str, Any]) -> None:
    """A SQLite store cannot be shared by machines (its locks hold only on one): joining a
    live run whose workers are on another host is refused, saying what to use instead."""
    if conn.dialect.name != "sqlite":
        return
    live = [w for w in run_workers(run) if w and worker_alive(run, w, None)]
    hosts = {str(w.get("host")) for w in live} - {str(me["host"])}
    if hosts:
        raise UserError(
            f"run {run.id} is running on {', '.join(sorted(hosts))} and the store is a SQLite "
            "file, which machines cannot share: use one PostgreSQL store for every machine "
            "(SWEEPBENCH_DB=postgresql+psycopg://…, see docs/scale.md)"
        )


_PG_RUNS_LOCK = 0x5357_5255  # "SWRU": serialises run claims on PostgreSQL


def _locked_run(conn: Connection, run_id: str) -> RunRow | None:
    """A run read under the runs' lock, in the caller's write transaction (None: no such
    run): what every change of a run's workers or state decides from."""
    _lock_runs(conn)
    row = conn.execute(sa.select(bench_runs).where(bench_runs.c.id == run_id)).first()
    return None if row is None else _run_row(row)


def _lock_runs(conn: Connection) -> None:
    """Serialise run claims (SQLite's writer already holds the database's write lock)."""
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_RUNS_LOCK})


def _busy(run: RunRow) -> str:
    worker = run.settings.get("worker") or {}
    return (
        f"run {run.id} is being run by another session (process {worker.get('pid')} on "
        f"{worker.get('host')}); wait for it or stop it"
    )
