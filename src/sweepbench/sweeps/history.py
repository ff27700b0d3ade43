"""Sweeps kept in the store: every sweep with its plan, estimate and cells, written when it
starts, again as each cell finishes and when it ends, so a crash keeps every finished cell and a
finished sweep can be listed, shown and exported. A sweep stored as running whose worker has
died is read back as ``interrupted`` (its unfinished cells too). The stored document is the
export format (spec sweeps.md §18.3)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from sweepbench.artifacts import artifact_kind
from sweepbench.errors import UserError
from sweepbench.models.registry import model_info
from sweepbench.money.prices import price_for
from sweepbench.settings import scrub, secret_values
from sweepbench.store import Store
from sweepbench.store.schema import sweeps as sweeps_table
from sweepbench.store.workers import dead_workers

if TYPE_CHECKING:
    from sweepbench.sweeps.results import Sample, SweepResult

FORMAT = "sweepbench-sweep"
VERSION = 1


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def sample_document(sample: Sample, *, with_files: bool = True) -> dict[str, Any]:
    """One call of a cell as exported (the CLI's ``--json`` cells, one per sample), with its
    artifact and the metrics computed from it (and its binary files unless ``with_files`` is
    false)."""
    cell, result = sample.cell, sample.result
    usage = result.usage if result is not None else None
    return {
        "cell": cell.index,
        "label": cell.label,
        "model": cell.model,
        "effort": cell.effort_applied,
        "effort_requested": cell.effort_requested,
        "effort_ignored": cell.effort_ignored,
        "max_tokens": cell.max_tokens,
        "prompt_version": cell.prompt_version,
        "repeat": sample.repeat,
        "status": sample.status,
        "stop_reason": result.stop_reason if result is not None else None,
        "provider_reason": result.provider_reason if result is not None else None,
        "truncated": sample.truncated,
        "usage": {
            "input_tokens": usage.input_tokens if usage else 0,
            "output_tokens": usage.output_tokens if usage else 0,
            "reasoning_tokens": usage.reasoning_tokens if usage else 0,
            "cache_read_tokens": usage.cache_read_tokens if usage else 0,
            "estimated": bool(result and result.usage_estimated),
        },
        "cost_usd": _money(sample.cost_usd),
        "ttft_s": result.ttft_s if result is not None else None,
        "wall_s": round(sample.seconds, 4),
        "text": result.text if result is not None else "",
        "reasoning": result.reasoning if result is not None else "",
        "error": sample.error,
        "call_id": sample.call_id,
        "grade": None if sample.grade is None else sample.grade.as_json(),
        **_outcome_document(sample, with_files),
    }


def _outcome_document(sample: Sample, with_files: bool = True) -> dict[str, Any]:
    """The artifact part of a sample: ok/partial/reason, notes, metrics, the artifact itself
    and its binary files (base64, so the document stays JSON)."""
    outcome = sample.outcome
    if outcome is None:
        return {
            "ok": False,
            "partial": False,
            "reason": "",
            "notes": [],
            "metrics": {},
            "artifact": {},
            "files": {},
        }
    return {
        "ok": outcome.ok,
        "partial": outcome.partial,
        "reason": outcome.reason,
        "notes": list(outcome.notes),
        "metrics": outcome.metrics,
        "artifact": outcome.artifact,
        "files": {
            ext: base64.b64encode(data).decode("ascii") for ext, data in outcome.files.items()
        }
        if with_files
        else {},
    }


def sweep_header(result: SweepResult) -> dict[str, Any]:
    """What a sweep is (id, date, kind, axis, prompt, held settings, samples per cell): the
    fields the stored document and the live view share."""
    plan = result.plan
    return {
        "id": result.id,
        "created": result.created_at.isoformat(),
        "kind": plan.kind_name,
        "axis": plan.axis,
        "prompt": plan.prompt,
        "held": plan.held,
        "repeats": plan.repeats,
        "judge": None if plan.judge is None else plan.judge.as_json(),
    }


AXIS_FIELDS = {
    "model": "model",
    "effort": "effort_requested",
    "max_tokens": "max_tokens",
    "prompt_version": "prompt_version",
}
"""Which field of a cell holds the value of each axis."""


@dataclass(frozen=True)
class SweepSettings:
    """What a sweep was asked to run: enough to set the controls again and rerun it."""

    kind: str
    axis: str
    values: tuple[str, ...]
    """The varied values, in cell order (budgets as they ran: after clamping)."""
    held: dict[str, str | int]
    repeats: int
    prompt: str


def sweep_settings(document: dict[str, Any]) -> SweepSettings:
    """The settings of a stored sweep document or a live view (both carry the header and one
    entry per sample, each naming its cell and that cell's settings)."""
    axis = str(document.get("axis") or "model")
    field = AXIS_FIELDS.get(axis, "model")
    values: dict[int, str] = {}
    for sample in document.get("cells") or []:
        if isinstance(sample, dict) and sample.get(field) is not None:
            values.setdefault(int(sample.get("cell", len(values))), str(sample[field]))
    held = document.get("held")
    return SweepSettings(
        kind=str(document.get("kind") or "text"),
        axis=axis,
        values=tuple(values[index] for index in sorted(values)),
        held=dict(held) if isinstance(held, dict) else {},
        repeats=int(document.get("repeats") or 1),
        prompt=str(document.get("prompt") or ""),
    )


def sweep_document(result: SweepResult) -> dict[str, Any]:
    """The whole sweep as stored and exported."""
    fixed = result.fixed_document
    if fixed is None:  # what cannot change while the sweep runs is built once, at its first save
        fixed = result.fixed_document = _fixed_parts(result)
    cost = result.cost_usd
    samples = _samples(result)
    return {
        "format": FORMAT,
        "version": VERSION,
        **sweep_header(result),
        "notes": fixed["notes"],
        "variants": fixed["variants"],
        "estimate": fixed["estimate"],
        "status": sweep_status(result),
        "stopped": result.stopped,
        "worker": result.worker,
        "wall_s": round(result.wall_s, 4),
        "serial_s": round(result.serial_s, 4),
        "ran_at_once": result.ran_at_once,
        "totals": {
            "input_tokens": sum(s["usage"]["input_tokens"] for s in samples),
            "output_tokens": sum(s["usage"]["output_tokens"] for s in samples),
            "cost_usd": _money(cost),
            "judge_cost_usd": _money(result.judge_cost_usd),
        },
        "prices_used": fixed["prices_used"],
        "cells": samples,
        "comparison": result.comparison,
    }


def _fixed_parts(result: SweepResult) -> dict[str, Any]:
    """The parts of a sweep's document that its run does not change: the plan's notes and
    variants, the estimate, and the price of each model (looked up once a sweep, not once a
    write: a sweep of twelve calls is written fourteen times)."""
    plan, estimate = result.plan, result.estimate
    prices: dict[str, Any] = {}
    models = [cell.model for cell in plan.cells] + ([plan.judge.model] if plan.judge else [])
    for model in models:
        if model in prices:
            continue
        price = price_for(model_info(model))
        prices[model] = (
            None
            if price is None
            else {"in": str(price.input), "out": str(price.output), "source": price.source}
        )
    return {
        "notes": list(plan.notes),
        "variants": [
            {
                "index": c.index,
                "label": c.label,
                "model": c.model,
                "effort_requested": c.effort_requested,
                "effort_applied": c.effort_applied,
                "max_tokens": c.max_tokens,
                "prompt_version": c.prompt_version,
            }
            for c in plan.cells
        ],
        "estimate": {
            "typical_usd": _money(estimate.typical),
            "ceiling_usd": _money(estimate.ceiling),
            "line": estimate.line(),
            "cells": [
                {
                    "typical_usd": _money(c.typical),
                    "ceiling_usd": _money(c.ceiling),
                    "judge_ceiling_usd": _money(c.judge_ceiling),
                }
                for c in estimate.cells
            ],
            "judge_ceiling_usd": _money(estimate.judge_ceiling),
        },
        "prices_used": prices,
    }


def _samples(result: SweepResult) -> list[dict[str, Any]]:
    return [sample_document(s) for s in result.samples]


def sweep_status(result: SweepResult) -> str:
    """running, stopped, failed, some failed or done."""
    states = {s.status for s in result.samples}
    if states & {"queued", "running"}:
        return "running"
    if result.stopped:
        return "stopped"
    if "failed" in states:
        return "failed" if states == {"failed"} else "some failed"
    return "done"


def save_sweep(store: Store, result: SweepResult) -> None:
    """Insert or update the sweep's row with its current document."""
    document = sweep_document(result)
    secrets = secret_values()  # read once for both scrubbed columns
    values = {
        "task": result.plan.kind_name,  # the column keeps its name
        "axis": result.plan.axis,
        "prompt": scrub(result.plan.prompt, secrets),
        "status": document["status"],
        "cells": len(result.plan.cells),
        "wall_s": result.wall_s,
        "serial_s": result.serial_s,
        "cost_usd": result.cost_usd,
        # no key is ever stored
        "document": scrub(json.dumps(document, ensure_ascii=False), secrets),
        "finished_at": None if document["status"] == "running" else datetime.now(UTC),
        "worker": result.worker,
    }
    with store.begin() as conn:  # an update, and an insert the first time (one statement after)
        where = sweeps_table.c.id == result.id
        if not conn.execute(sweeps_table.update().where(where).values(values)).rowcount:
            conn.execute(
                sweeps_table.insert().values(id=result.id, created_at=result.created_at, **values)
            )


@dataclass(frozen=True)
class SweepSummary:
    """A row of ``sweepbench sweeps list``."""

    id: str
    created_at: datetime
    kind: str
    """What the cells produced (``text``, ``excalidraw``, ``sculpture``)."""
    axis: str
    prompt: str
    status: str
    cells: int
    cost_usd: Decimal | None
    wall_s: float | None


def list_sweeps(store: Store, limit: int = 20) -> list[SweepSummary]:
    """Newest first."""
    columns = [c for c in sweeps_table.c if c.name != "document"]  # documents carry GLBs
    query = sa.select(*columns).order_by(sweeps_table.c.created_at.desc()).limit(limit)
    with store.engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
        dead = _dead(conn, rows)
    return [
        SweepSummary(
            id=row["id"],
            created_at=row["created_at"],
            kind=row["task"],
            axis=row["axis"],
            prompt=row["prompt"],
            status="interrupted" if row["id"] in dead else row["status"],
            cells=row["cells"],
            cost_usd=row["cost_usd"],
            wall_s=row["wall_s"],
        )
        for row in rows
    ]


def load_sweep(store: Store, sweep_id: str) -> dict[str, Any]:
    """A stored sweep's document, by id or unique id prefix."""
    key = sweep_id.strip().lower()
    if not key:
        raise UserError("give a sweep id (see `sweepbench sweeps list`)")
    query = sa.select(
        sweeps_table.c.id, sweeps_table.c.document, sweeps_table.c.status, sweeps_table.c.worker
    ).where(sweeps_table.c.id.startswith(key, autoescape=True))  # "%" and "_" are literal
    with store.engine.connect() as conn:
        rows = conn.execute(query.limit(2)).mappings().all()
        dead = _dead(conn, rows)
    if not rows:
        raise UserError(f"no sweep {sweep_id!r} (see `sweepbench sweeps list`)")
    if len(rows) > 1:
        raise UserError(f"sweep id {sweep_id!r} is ambiguous; give more characters")
    document: dict[str, Any] = json.loads(rows[0]["document"])
    if rows[0]["id"] in dead:
        document["status"] = "interrupted"
        for sample in document.get("cells", []):
            if sample.get("status") in ("queued", "running"):
                sample["status"] = "interrupted"
    return document


def _dead(conn: sa.Connection, rows: Any) -> set[str]:
    """The ids of sweeps stored as running whose worker is dead."""
    running = {r["id"]: r["worker"] for r in rows if r["status"] == "running" and r["worker"]}
    dead = dead_workers(conn, set(running.values()))
    return {sweep_id for sweep_id, worker in running.items() if worker in dead}


def write_artifacts(document: dict[str, Any], folder: Path) -> list[Path]:
    """Write each sample's artifact (and its binary files) as ``cellN[-sampleK].<ext>``."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for sample in document["cells"]:
        stem = f"cell{sample['cell'] + 1}"
        if document.get("repeats", 1) > 1:
            stem += f"-sample{sample['repeat'] + 1}"
        kind = document["kind"]
        if kind != "text" and sample.get("artifact"):  # the kind names its own file suffix
            path = folder / (stem + artifact_kind(kind).suffix)
            path.write_text(json.dumps(sample["artifact"], ensure_ascii=False, indent=2), "utf-8")
        else:
            path = folder / f"{stem}.txt"
            path.write_text(sample.get("text") or "", "utf-8")
        written.append(path)
        for ext, data in (sample.get("files") or {}).items():
            binary = folder / f"{stem}.{ext}"
            binary.write_bytes(base64.b64decode(data))
            written.append(binary)
    return written


def delete_sweep(store: Store, sweep_id: str) -> bool:
    """Remove a stored sweep (its calls and spend records stay: the ledger keeps its totals)."""
    with store.begin() as conn:
        deleted = conn.execute(sweeps_table.delete().where(sweeps_table.c.id == sweep_id))
    return bool(deleted.rowcount)
