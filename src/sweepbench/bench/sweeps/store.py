"""Benchmark sweeps in the store (``bench_sweeps``): which settings a sweep has and the
ordinary benchmark run of each. A setting's run is found by its settings hash, like any run,
so a sweep killed before it noted a run id still finds every run when it continues."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import RunRow
from sweepbench.store import Store
from sweepbench.store.engine import writer
from sweepbench.store.schema import bench_sweeps


@dataclass(frozen=True)
class SweepSettingRow:
    """One setting of a stored sweep."""

    label: str
    value: str
    """The axis value, as text."""
    config_hash: str
    run_id: str | None
    """The run noted for it (None: not started yet; found by ``config_hash`` then)."""
    model: str
    effort: str | None
    max_tokens: int
    prompt_version: str

    def as_json(self) -> dict[str, Any]:
        """The row as stored."""
        return {
            "label": self.label, "value": self.value, "config_hash": self.config_hash,
            "run_id": self.run_id, "model": self.model, "effort": self.effort,
            "max_tokens": self.max_tokens, "prompt_version": self.prompt_version,
        }  # fmt: skip


@dataclass(frozen=True)
class SweepRow:
    """A stored benchmark sweep."""

    id: str
    sweep_hash: str
    benchmark: str
    axis: str
    created_at: datetime
    updated_at: datetime
    held: dict[str, Any]
    """The settings every setting shares (model, effort, max tokens, prompt version, repeats,
    temperature, judge), as shown."""
    settings: tuple[SweepSettingRow, ...]
    request: dict[str, Any]
    """The held benchmark request (selection, judge, limits…), to run the sweep again."""

    def as_json(self) -> dict[str, Any]:
        """The sweep's row as plain JSON data."""
        return {
            "id": self.id,
            "benchmark": self.benchmark,
            "axis": self.axis,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "held": self.held,
            "settings": [s.as_json() for s in self.settings],
        }


def _row(row: Any) -> SweepRow:
    data = json.loads(row.settings)
    settings = tuple(SweepSettingRow(**s) for s in data["settings"])
    return SweepRow(
        id=row.id,
        sweep_hash=row.sweep_hash,
        benchmark=row.benchmark,
        axis=row.axis,
        created_at=row.created_at,
        updated_at=row.updated_at,
        held=data.get("held", {}),
        settings=settings,
        request=data.get("request", {}),
    )


class SweepStore:
    """Reads and writes ``bench_sweeps``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, sweep: SweepRow) -> None:
        """Insert the sweep, or replace the settings of the one with its id."""
        body = json.dumps(
            {
                "held": sweep.held,
                "settings": [s.as_json() for s in sweep.settings],
                "request": sweep.request,
            },
            ensure_ascii=False,
            default=str,
        )
        now = datetime.now(UTC)
        with writer(self.store.engine).begin() as conn:
            done = conn.execute(
                bench_sweeps.update()
                .where(bench_sweeps.c.id == sweep.id)
                .values(settings=body, updated_at=now)
            )
            if done.rowcount == 0:
                conn.execute(
                    bench_sweeps.insert().values(
                        id=sweep.id, sweep_hash=sweep.sweep_hash, benchmark=sweep.benchmark,
                        axis=sweep.axis, created_at=sweep.created_at, updated_at=now,
                        settings=body,
                    )
                )  # fmt: skip

    def find(self, sweep_hash: str) -> SweepRow | None:
        """The newest sweep with these settings (what running the same command continues)."""
        query = (
            sa.select(bench_sweeps)
            .where(bench_sweeps.c.sweep_hash == sweep_hash)
            .order_by(bench_sweeps.c.created_at.desc())
            .limit(1)
        )
        with self.store.engine.connect() as conn:
            row = conn.execute(query).first()
        return None if row is None else _row(row)

    def get(self, sweep_id: str) -> SweepRow | None:
        """The sweep with this id, or None."""
        with self.store.engine.connect() as conn:
            row = conn.execute(sa.select(bench_sweeps).where(bench_sweeps.c.id == sweep_id)).first()
        return None if row is None else _row(row)

    def sweeps(self, limit: int = 50) -> list[SweepRow]:
        """The newest sweeps first."""
        query = sa.select(bench_sweeps).order_by(bench_sweeps.c.created_at.desc()).limit(limit)
        with self.store.engine.connect() as conn:
            return [_row(r) for r in conn.execute(query)]

    def runs(self, sweep: SweepRow) -> list[RunRow | None]:
        """Each setting's run, in order: the noted one, else the newest with its settings hash
        (None: never started)."""
        bench = BenchStore(self.store)
        found: list[RunRow | None] = []
        for setting in sweep.settings:
            run = bench.run(setting.run_id) if setting.run_id else None
            if run is None:
                run = bench.resumable(setting.config_hash, include_completed=True)
            found.append(run)
        return found
