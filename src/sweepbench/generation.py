"""One prompt, one answer, through the engine: what ``sweepbench generate`` and
:func:`sweepbench.generate` share.

From Python (a notebook, a script)::

    import sweepbench
    result = sweepbench.generate("scripted/echo", "Say hi.", max_tokens=20)
    print(result.text, result.stop_reason, result.usage)

Inside a running event loop (Jupyter) use ``await sweepbench.agenerate(...)``.

A generation is an ordinary engine call (``engine/executor.py``), role ``generate``: its worst
case is held in the ledger before it is sent (a $0 model holds nothing), it counts against the
daily, total and hourly-call ceilings, it is a ``calls`` row with its events, every text of it
is scrubbed of the keys the process knows, it is settled at what it cost, retried only before
its first token, and has an hour's deadline. (``sweepbench.models.resolve`` and
``sweepbench.models.collect`` call an adapter directly: unrecorded, no ledger, no limits.)
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any, TypedDict, Unpack

from sweepbench.axes.cells import MAX_BUDGET, budget_in_range, clamp_budget
from sweepbench.engine import Call, CallSpec, Executor, RetryPolicy
from sweepbench.engine.executor import INTERACTIVE_TIMEOUT_S, EventCallback
from sweepbench.errors import UserError
from sweepbench.models.base import Event, Request, Result, TextDelta
from sweepbench.models.registry import model_info
from sweepbench.store import Store
from sweepbench.toml_keys import refuse_unknown_settings


class GenerationSettings(TypedDict, total=False):
    """The settings of one generation, declared once (``None``: the model's default): the
    command, :func:`generate` and :func:`agenerate` pass them whole."""

    system: str | None
    """A system prompt."""
    max_tokens: int | None
    """The output budget; above the model's limit it is lowered to it, with a note."""
    effort: str | None
    """``none, low, medium, high, xhigh, max``."""
    temperature: float | None
    response_format: dict[str, Any] | None
    """A JSON schema the answer must follow."""


def generation_request(
    model: str, prompt: str, **settings: Unpack[GenerationSettings]
) -> tuple[Request, str | None]:
    """The request of one generation, and a note when its budget had to move to the model's
    limit (:func:`~sweepbench.axes.cells.clamp_budget`, the sweep plan's rule). A blank prompt,
    an unknown model (when a budget is given) or a budget outside 1 to ``MAX_BUDGET`` tokens is
    a UserError; the model's own check of the other settings comes with the call."""
    refuse_unknown_settings(settings, GenerationSettings, "a generation")
    if not prompt.strip():
        raise UserError("the prompt is empty: give the text to send")
    system, max_tokens = settings.get("system"), settings.get("max_tokens")
    effort, temperature = settings.get("effort"), settings.get("temperature")
    response_format = settings.get("response_format")
    budget, note = None, None
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
            raise UserError(f"max tokens must be a whole number of tokens, got {max_tokens!r}")
        if not budget_in_range(max_tokens):
            raise UserError(
                f"max tokens {max_tokens} out of range: a budget is 1 to {MAX_BUDGET:,} tokens"
            )
        budget, note = clamp_budget(max_tokens, model_info(model))
    request = Request.simple(
        model,
        prompt,
        system=system,
        max_tokens=budget,
        effort=effort,
        temperature=temperature,
        response_format=response_format,
    )
    return request, note


class Generation:
    """One generation made through the engine on ``store``: an executor of its own (retries
    only before the first token, the interactive deadline) and one :class:`Call`, so a surface
    can stop it (Ctrl-C, a signal) and still have it recorded and settled.

    An unknown model is a UserError here, before anything else."""

    def __init__(self, store: Store, request: Request) -> None:
        self.executor = Executor(
            store, retry=RetryPolicy(after_output=False), timeout_s=INTERACTIVE_TIMEOUT_S
        )
        self.executor.model(request.model)
        self.call = Call(self.executor, CallSpec(request, "generate"))

    def cancel(self) -> None:
        """Stop the call now (what was produced is kept, recorded and settled)."""
        self.call.cancel()

    async def run(self, on_event: EventCallback | None = None) -> Result:
        """Stream the call to its end through the executor (``on_event`` sees each event,
        scrubbed) and return its result, also when it failed or was stopped. UserError for
        settings the model cannot honour; BudgetExceeded (``SpendRefused``) when a ceiling
        refuses its worst case, before any traffic."""
        try:
            return await self.call.run(on_event)
        finally:
            await self.executor.aclose()


async def agenerate(
    model: str,
    prompt: str,
    *,
    on_text: Callable[[str], object] | None = None,
    **settings: Unpack[GenerationSettings],
) -> Result:
    """Ask ``model`` (``provider/model``) one prompt through the engine and return the result:
    priced and held in the ledger first, recorded as a ``calls`` row (role ``generate``),
    scrubbed of keys, settled at its cost. ``on_text`` receives the answer's text as it
    streams (scrubbed too).

    Settings: ``max_tokens`` (the output budget; above the model's limit it is lowered to it,
    with a warning), ``effort`` (``none, low, medium, high, xhigh, max``), ``temperature``,
    ``system`` (a system prompt), ``response_format`` (a JSON schema the answer must follow).
    ``None``: the model's default.

    A provider failure is data, as everywhere in sweepbench: ``result.error`` and
    ``stop_reason == "error"`` (the call is recorded and settled). Raises UserError for an
    unknown model, a missing key or a setting the model cannot honour, and BudgetExceeded
    when a spending ceiling refuses the call's worst case; in both cases nothing is spent."""
    return await _run(_request(model, prompt, **settings), on_text)


def generate(
    model: str,
    prompt: str,
    *,
    on_text: Callable[[str], object] | None = None,
    **settings: Unpack[GenerationSettings],
) -> Result:
    """:func:`agenerate` for code without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_run(_request(model, prompt, **settings), on_text))
    raise UserError(
        "an event loop is running here (Jupyter?): use `await sweepbench.agenerate(...)`"
    )


def _request(model: str, prompt: str, **settings: Unpack[GenerationSettings]) -> Request:
    """:func:`generation_request`, its note a warning pointing at the caller of
    :func:`generate` or :func:`agenerate`."""
    request, note = generation_request(model, prompt, **settings)
    if note:
        warnings.warn(note, UserWarning, stacklevel=3)
    return request


async def _run(request: Request, on_text: Callable[[str], object] | None) -> Result:
    def show(event: Event) -> None:
        if on_text is not None and isinstance(event, TextDelta) and event.text:
            on_text(event.text)

    with Store.open() as store:
        return await Generation(store, request).run(show)


__all__ = ["Generation", "GenerationSettings", "agenerate", "generate", "generation_request"]
