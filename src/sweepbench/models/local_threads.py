"""How many threads the embedded llama.cpp model decodes with: as many as there are cores that
other processes leave free, re-checked while it decodes.

Why: llama.cpp (an OpenMP build) splits every step of a decode across its threads and waits
at a barrier, spinning, until all of them are done. When another process keeps one of the
cores busy, the thread that shares that core runs only when the scheduler gives it a slice, so
every barrier waits for that slice: two threads on two cores, one of them taken by a busy
process, decoded 1.4 tokens/s where one thread decodes 53 (``benchmarks/README.md``). One
thread per *free* core never waits for a core.

How free cores are found (Linux, ``/proc``):

* at the start of a call, from the scheduler's count of runnable tasks (``/proc/loadavg``)
  less this process's own runnable threads (and less the cores this process may not use): a
  busy process is counted at once;
* while decoding, every :data:`REVIEW_S` seconds, from the CPU time the cores this process
  may run on spent busy (``/proc/stat``, hypervisor steal included) less the CPU time of this
  process: what other processes actually took from us.

A core counts as taken when others use more than :data:`TAKEN_ABOVE` of one; a thread comes
back only once others use less than :data:`FREE_BELOW` of it, so a load near the line does
not flip the count at every look. Without ``/proc`` (macOS, Windows) the thread count stays
at its ceiling.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REVIEW_S: Final = 0.25
"""Seconds between two looks at the machine while decoding (50 clock ticks on 2 cores: the
measure is good to about 0.05 of a core)."""
RECENT_S: Final = 2.0
"""A measurement at most this old still says something at the start of the next call."""
TAKEN_ABOVE: Final = 0.3
"""Others using more than this fraction of a core take it: a thread there would wait."""
FREE_BELOW: Final = 0.15
"""Others must use less than this fraction of a taken core for a thread to come back."""

_PROC: Final = Path("/proc")
_BUSY_FIELDS: Final = (0, 1, 2, 5, 6, 7)
"""user, nice, system, irq, softirq, steal in the ``cpu`` line of /proc/stat (guest time is
already inside user; idle and iowait are idle)."""


@dataclass(frozen=True)
class CpuTimes:
    """A moment's CPU accounting: seconds the whole machine has been busy (all cores summed),
    and seconds this process has run (all its threads)."""

    wall: float
    busy: float
    own: float


def usable_cpus() -> frozenset[int] | None:
    """The CPUs this process may run on (its affinity mask), or None where that is unknown."""
    try:
        return frozenset(os.sched_getaffinity(0)) or None
    except (AttributeError, OSError):  # not Linux
        return None


def usable_cores() -> int:
    """How many cores this process may run on, at least 1."""
    cpus = usable_cpus()
    return len(cpus) if cpus else max(os.cpu_count() or 1, 1)


def cores_taken(busy_elsewhere: float) -> int:
    """Cores that other processes' ``busy_elsewhere`` (in cores) takes away from us."""
    return max(0, math.ceil(busy_elsewhere - TAKEN_ABOVE))


def threads_for(ceiling: int, cores: int, busy_elsewhere: float, current: int = 0) -> int:
    """One thread per core left free by others, at most ``ceiling``, at least 1; more than the
    ``current`` count only for cores clearly free (others below :data:`FREE_BELOW` of one)."""

    def fit(busy: float) -> int:
        return max(1, min(ceiling, cores - cores_taken(busy)))

    target = fit(busy_elsewhere)
    if current and target > current:
        return max(current, fit(busy_elsewhere + TAKEN_ABOVE - FREE_BELOW))
    return target


def busy_between(before: CpuTimes, after: CpuTimes) -> float | None:
    """Cores other processes kept busy between two readings (None for an empty interval)."""
    span = after.wall - before.wall
    if span <= 0:
        return None
    others = (after.busy - before.busy) - (after.own - before.own)
    return max(others, 0.0) / span


def parse_stat_busy(
    stat: str, ticks_per_s: float, cpus: frozenset[int] | None = None
) -> float | None:
    """Busy seconds from the text of /proc/stat: summed over ``cpus`` (the ``cpuN`` lines),
    or over the whole machine (the ``cpu`` line) when None."""
    names = {"cpu"} if cpus is None else {f"cpu{n}" for n in cpus}
    busy, found = 0.0, 0
    for line in stat.splitlines():
        fields = line.split()
        if not fields or fields[0] not in names:
            continue
        try:
            ticks = [int(field) for field in fields[1:]]
        except ValueError:
            return None
        busy += sum(ticks[i] for i in _BUSY_FIELDS if i < len(ticks))
        found += 1
    return busy / ticks_per_s if found == len(names) else None


def read_cpu_times(cpus: frozenset[int] | None = None) -> CpuTimes | None:
    """The busy time of ``cpus`` (None: all) and this process's CPU time now (None without
    /proc/stat)."""
    try:
        stat = (_PROC / "stat").read_text()
        ticks_per_s = float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, AttributeError):
        return None
    busy = parse_stat_busy(stat, ticks_per_s, cpus)
    if busy is None:
        return None
    return CpuTimes(time.monotonic(), busy, time.process_time())


def parse_runnable(loadavg: str) -> int | None:
    """The runnable-task count of /proc/loadavg (``0.35 2.00 1.98 3/88 21951`` → 3)."""
    fields = loadavg.split()
    if len(fields) < 4 or "/" not in fields[3]:
        return None
    running = fields[3].split("/", 1)[0]
    return int(running) if running.isdigit() else None


def own_runnable_threads() -> int:
    """This process's threads that are running or ready to run now."""
    count = 0
    try:
        tasks = list((_PROC / "self" / "task").iterdir())
    except OSError:
        return 1
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        state = stat.rpartition(")")[2].split()[:1]  # the name may hold spaces and ")"
        count += state == ["R"]
    return max(count, 1)  # the thread reading this is running


def runnable_elsewhere(cores: int) -> int | None:
    """Tasks of other processes running or ready to run now, less those the cores this
    process may not use can hold (None without /proc/loadavg). ``cores``: how many it may."""
    try:
        runnable = parse_runnable((_PROC / "loadavg").read_text())
    except OSError:
        return None
    if runnable is None:
        return None
    elsewhere = max((os.cpu_count() or cores) - cores, 0)
    return max(runnable - own_runnable_threads() - elsewhere, 0)


class ThreadGovernor:
    """Chooses the thread count of one loaded model, call by call and during a call.

    ``fixed`` (``SWEEPBENCH_LOCAL_THREADS``) turns the choice off: always that many.
    """

    def __init__(self, ceiling: int, *, fixed: bool = False) -> None:
        self.ceiling = max(ceiling, 1)
        self.fixed = fixed
        self.cpus = usable_cpus()
        self.cores = len(self.cpus) if self.cpus else usable_cores()
        self.threads = self.ceiling
        self.clock: Callable[[], float] = time.monotonic
        """The clock of :func:`read_cpu_times` (replaced in tests, with the readings)."""
        self._last: CpuTimes | None = None
        self.changes = 0
        """How many times the count changed (reported by benchmarks)."""

    def start(self) -> int:
        """The thread count for a call about to start."""
        if self.fixed:
            return self.threads
        recent = self._window(max_age=RECENT_S)
        instant = runnable_elsewhere(self.cores)
        readings = [value for value in (recent, instant) if value is not None]
        return self._set(max(readings) if readings else 0.0)

    def review(self) -> int | None:
        """Between two tokens: a new thread count when the machine changed, else None."""
        if self.fixed or self._last is None or self.clock() - self._last.wall < REVIEW_S:
            return None
        busy = self._window(max_age=math.inf)
        if busy is None:
            return None
        before = self.threads
        return after if (after := self._set(busy)) != before else None

    def _window(self, max_age: float) -> float | None:
        """Cores others kept busy since the last reading, when that is at least
        :data:`REVIEW_S` and at most ``max_age`` seconds ago (shorter is within the clock
        ticks' noise; a reading too old starts a new window)."""
        now = read_cpu_times(self.cpus)
        if now is None:
            return None
        last = self._last
        if last is None or now.wall - last.wall > max_age:
            self._last = now
            return None
        if now.wall - last.wall < REVIEW_S:
            return None
        self._last = now
        return busy_between(last, now)

    def _set(self, busy_elsewhere: float) -> int:
        threads = threads_for(self.ceiling, self.cores, busy_elsewhere, self.threads)
        if threads != self.threads:
            self.changes += 1
        self.threads = threads
        return threads
