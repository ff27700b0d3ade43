"""A prepared run's estimate as one JSON object: what ``bench estimate --json`` and
``bench run --json`` print and the web page's Technical details show, so every surface reads
the same plan."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sweepbench.bench.dialogue.calibration import CALIBRATE_AFTER
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.wording import estimate_lines


def plan_json(prepared: PreparedRun) -> dict[str, Any]:
    """The estimate as one JSON object (``--json``)."""
    plan = prepared.plan

    def usd(value: Decimal | None) -> str | None:
        return None if value is None else str(value)

    return {
        "benchmark": plan.benchmark.id,
        "config_hash": plan.config.hash,
        "config": plan.config.as_json(),
        "questions": len(plan.items),
        "already_done": plan.already_done,
        "judged": plan.judged,
        "per_task": dict(plan.counts),
        "roles": [
            {
                "role": r.role,
                "model": r.model,
                "calls": r.calls,
                "input_tokens": r.input_tokens,
                "low_usd": usd(r.low),
                "high_usd": usd(r.high),
                "limit_usd": usd(r.limit),
                "spent_usd": usd(r.spent),
            }
            for r in plan.roles
        ],
        "low_usd": usd(plan.low),
        "high_usd": usd(plan.high),
        "limits": plan.limits.as_json(),
        "errors": list(plan.errors),
        "blocked": list(plan.blocked),
        "limit_problems": list(plan.limit_problems),
        "notes": list(plan.notes),
        "needs_price_ack": plan.needs_price_ack,
        "resumes": None if prepared.previous is None else prepared.previous.id,
        "dialogues": [dict(d) for d in plan.dialogues],
        "dialogue_calibration": (
            {
                "calibrate_after": CALIBRATE_AFTER,
                "flows": [c.as_json() for c in prepared.dialogue_calibration],
            }
            if prepared.dialogue_calibration
            else None
        ),
        "text": estimate_lines(prepared),
    }
