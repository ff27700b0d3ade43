"""What a call had cost when its worker died: read back from the store (its finished row, else
its last usage report, else the deltas it had received), priced like any call."""

from __future__ import annotations

import json
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from sweepbench.models.base import Usage
from sweepbench.models.tokens import prompt_token_bound
from sweepbench.money.ceilings import usd_to_micro
from sweepbench.money.ledger_sql import ReceivedCost
from sweepbench.money.prices import price_for
from sweepbench.store.schema import call_events, calls


class StoredReceivedCost(ReceivedCost):
    """Prices a dead worker's call from what the store holds of it."""

    def __call__(self, conn: Connection, call_id: str | None, reserved: int) -> int:
        """Micro-dollars: $0 for a call that never started; its recorded cost when it
        finished; else its stored usage or deltas (the prompt counted at its upper bound);
        the reserved amount when the model has no price."""
        if call_id is None:
            return 0
        row = conn.execute(sa.select(calls).where(calls.c.id == call_id)).first()
        if row is None:
            return 0
        if row.finished_at is not None and row.cost_usd is not None:
            return usd_to_micro(row.cost_usd, up=False)
        usage = _stored_usage(conn, call_id, row.request_json)
        from sweepbench.models.registry import model_info  # the registry reads config files

        try:
            price = price_for(model_info(row.model))
        except Exception:  # an id this install no longer knows: count the worst case
            return reserved
        if price is None:
            return reserved
        cost = price.cost(usage)
        return usd_to_micro(cost if cost >= 0 else Decimal(0), up=True)


def _stored_usage(conn: Connection, call_id: str, request_json: str) -> Usage:
    events = conn.execute(
        sa.select(call_events.c.kind, call_events.c.data)
        .where(call_events.c.call_id == call_id)
        .order_by(call_events.c.seq)
    ).all()
    reported: Usage | None = None
    deltas = 0
    for kind, data in events:
        if kind in ("text", "reasoning"):
            deltas += 1
        elif kind == "usage":
            try:
                raw = json.loads(data)
                reported = Usage(
                    input_tokens=int(raw.get("input_tokens", 0)),
                    output_tokens=int(raw.get("output_tokens", 0)),
                )
            except (ValueError, TypeError, AttributeError):
                continue
    try:
        messages = json.loads(request_json).get("messages", [])
        prompt = prompt_token_bound([str(m.get("content", "")) for m in messages])
    except (ValueError, TypeError, AttributeError):
        prompt = 0
    if reported is not None:
        return Usage(
            input_tokens=max(reported.input_tokens, 0) or prompt,
            output_tokens=max(reported.output_tokens, deltas),
        )
    return Usage(input_tokens=prompt, output_tokens=deltas)
