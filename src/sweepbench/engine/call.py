"""A call in progress, as a handle: ``await call.run()`` streams it to the end through the
executor; ``call.cancel()`` (from a signal handler, a Stop button, another task) closes the
provider stream, and the call ends ``cancelled`` with whatever was produced — recorded and
settled like any other."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from sweepbench.engine.executor import CallOutcome, CallSpec, EventCallback, Executor
from sweepbench.models.base import Result


class Call:
    """One call made through ``executor``."""

    def __init__(self, executor: Executor, spec: CallSpec) -> None:
        self.executor = executor
        self.spec = spec
        self.outcome = CallOutcome(Result(spec.request.model))
        self._task: asyncio.Task[CallOutcome] | None = None
        self._cancelled = False

    @property
    def result(self) -> Result:
        """The last attempt's result so far."""
        return self.outcome.result

    @property
    def call_id(self) -> str | None:
        """The last attempt's ``calls`` row (None before the call started)."""
        return self.outcome.call_id

    @property
    def cost_usd(self) -> Decimal | None:
        """What every attempt cost (None: no price on file)."""
        return self.outcome.cost_usd

    @property
    def price_source(self) -> str | None:
        """Where the price came from."""
        return self.outcome.price_source

    def cancel(self) -> None:
        """Stop the call now; safe to call at any time, more than once."""
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    async def run(self, on_event: EventCallback | None = None) -> Result:
        """Stream the call to its end and return the result (also when stopped or failed).
        UserError for bad settings, SpendRefused when a ceiling refuses it (nothing spent)."""
        self._task = asyncio.create_task(
            self.executor.execute(self.spec, on_event=on_event, outcome=self.outcome)
        )
        if self._cancelled:
            self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            if not self._cancelled:  # cancelled from outside: it was recorded; propagate
                raise
            self.outcome.result.stop_reason = "cancelled"
        return self.outcome.result
