"""How long a sweep's calls will take, told before it runs, and how they queue while it runs.

* A **scripted** model's options give a call's time exactly (``ttft``, then one token every
  ``1/tps`` seconds): no history is needed (:meth:`Model.expected_seconds
  <sweepbench.models.base.Model.expected_seconds>`).
* Any other model's **pace** comes from this machine's own finished calls of it (the store's
  ``calls`` rows: ``ttft_s``, ``wall_s``, ``output_tokens``): tokens per second is the median
  of each call's output over its time after the first token; the time to first token is the
  lower quartile (older local calls counted their wait in the queue in it). A call takes the
  time to first token plus the tokens it is expected to write — the budget times the share the
  cost estimate assumes, at most the room the context leaves — at that pace. Fewer than
  :data:`TIMING_MIN_CALLS` such calls: no timing history, no figure.
* **Queueing**: a provider whose calls run one at a time (the local model) runs a sweep's calls
  to it one after the other, so they add up; any other provider takes :func:`calls_at_once`
  calls at once and the rest wait for a free slot. The sweep takes as long as its slowest
  provider's queue. The runner (``run.py``) queues its calls the same way, so a queued cell is
  shown as queued, and its time counts from its own start.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sweepbench.models.base import Request
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import provider
from sweepbench.models.registry import resolve
from sweepbench.store import CallTiming, Store

TIMING_MIN_CALLS = 2
"""Finished calls of a model needed before its pace is trusted."""
TIMING_WINDOW = 200
"""The newest finished calls a pace is learned from."""
MIN_DECODE_S = 0.05
"""A call that wrote its whole answer faster than this after its first token tells no pace."""


@dataclass(frozen=True)
class Pace:
    """How fast a model answers on this machine, from its recorded calls."""

    ttft_s: float
    """Typical seconds to the first token (the lower quartile)."""
    tokens_per_s: float
    """Median output tokens per second after the first token."""
    calls: int
    """Recorded calls behind these figures."""

    def seconds(self, tokens: int) -> float:
        """The time of a call that writes ``tokens``."""
        return self.ttft_s + tokens / self.tokens_per_s


def pace_of(timings: Sequence[CallTiming]) -> Pace | None:
    """The pace the timings show (None below :data:`TIMING_MIN_CALLS` usable calls)."""
    rates = [
        t.output_tokens / (t.wall_s - t.ttft_s)
        for t in timings
        if t.output_tokens > 0 and t.wall_s - t.ttft_s >= MIN_DECODE_S
    ]
    if len(rates) < TIMING_MIN_CALLS:
        return None
    firsts = sorted(t.ttft_s for t in timings)
    return Pace(firsts[len(firsts) // 4], statistics.median(rates), len(rates))


def observed_pace(store: Store, model: str) -> Pace | None:
    """The pace of ``model``'s newest finished calls in the store."""
    return pace_of(store.call_timings(model, TIMING_WINDOW))


def one_at_a_time(model: str) -> bool:
    """Whether calls to ``model``'s provider run one at a time on this machine (local)."""
    return provider(model.split("/", 1)[0]).one_at_a_time


def calls_at_once(max_variants: int) -> int:
    """How many calls of one provider a sweep runs at once (``max_variants``: the artifact
    kind's cap on cells); one-at-a-time providers take one."""
    return 2 * max(max_variants, 1)


def queue_of(model: str) -> str:
    """The queue a sweep's call to ``model`` waits in: its provider's."""
    return model.split("/", 1)[0]


def slots(model: str, max_variants: int) -> int:
    """How many calls of ``model``'s queue run at once."""
    return 1 if one_at_a_time(model) else calls_at_once(max_variants)


def context_room(info: ModelInfo, input_tokens: int) -> int | None:
    """How many tokens the context leaves for the answer (None: no known window). A local
    model's context is the one llama.cpp allocates (capped by ``SWEEPBENCH_LOCAL_CTX``)."""
    window = info.context_window
    if provider(info.provider).needs == "llama.cpp":
        from sweepbench.models.local import context_size

        window = context_size(info)
    return None if not window else max(window - input_tokens, 1)


def expected_tokens(info: ModelInfo, max_tokens: int, fraction: float, input_tokens: int) -> int:
    """Output tokens a call is expected to write: the budget times the share used, at most the
    room the context leaves."""
    tokens = math.ceil(max_tokens * fraction)
    room = context_room(info, input_tokens)
    return tokens if room is None else min(tokens, room)


def exact_seconds(info: ModelInfo, request: Request, effort: str) -> float | None:
    """A call's time from its model id's options (scripted models), else None."""
    if not provider(info.provider).paced_by_options:
        return None
    return resolve(info.id).expected_seconds(request, info.resolve_effort(effort, strict=False))


def schedule(calls: Sequence[tuple[str, int, float]]) -> float:
    """How long ``calls`` take when each queue runs its calls in order, as many at once as it
    has slots: ``(queue, slots, seconds)`` per call, in the order they are started. The
    result is the slowest queue's end."""
    free_at: dict[str, list[float]] = {}
    end = 0.0
    for queue, width, seconds in calls:
        slots_free = free_at.setdefault(queue, [0.0] * max(width, 1))
        start = heapq.heappop(slots_free)
        heapq.heappush(slots_free, start + seconds)
        end = max(end, start + seconds)
    return end


def duration_words(seconds: float) -> str:
    """``under 1 s``, ``7 s``, ``40 s``, ``1 min 10 s``, ``25 min``, ``1 h 5 min``."""
    if seconds < 1:
        return "under 1 s"
    if seconds < 10:
        return f"{round(seconds)} s"
    if seconds < 57.5:
        return f"{round(seconds / 5) * 5} s"
    if seconds < 595:
        minutes, rest = divmod(round(seconds / 10) * 10, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    if seconds < 3570:
        return f"{round(seconds / 60)} min"
    hours, minutes = divmod(round(seconds / 300) * 5, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def approximately(seconds: float, mark: str = "about ") -> str:
    """``about 40 s`` (or ``~40 s`` with ``mark="~"``); ``under 1 s`` needs no mark."""
    words = duration_words(seconds)
    return words if seconds < 1 else f"{mark}{words}"


SERIAL_MARGIN = 1.2
"""A stored sweep without ``ran_at_once`` overlapped when its serial time is this much above
its wall clock."""


def ran_at_once(view: dict[str, Any]) -> bool:
    """Whether any of a sweep's calls overlapped, from a live view or a stored document: it says
    so (``ran_at_once``); an older stored sweep is judged by its figures (only local calls: one
    at a time)."""
    said = view.get("ran_at_once")
    if said is not None:
        return bool(said)
    if all(one_at_a_time(s["model"]) for s in view["cells"]):
        return False
    wall, serial = float(view.get("wall_s") or 0), float(view.get("serial_s") or 0)
    return serial >= wall * SERIAL_MARGIN


def serial_clause(view: dict[str, Any]) -> str:
    """ " (≈24.9s if run one at a time)", only when the calls did not run one at a time."""
    if not ran_at_once(view):
        return ""
    return f" (≈{float(view.get('serial_s') or 0):.1f}s if run one at a time)"
