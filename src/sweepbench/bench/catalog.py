"""The benchmark catalogue: which benchmarks exist, how to load one, and its presets.

A benchmark is found by name — ``sample`` (built in), ``elbench`` (from the user's copy of its
data, ``--data PATH/benchmark_root``) — or by the path of a declaration file of the user's own
(``my-bench.yaml`` or ``my_bench.py``; see docs/benchmarks.md). The names and how each loads are
the source registry's (:mod:`~sweepbench.bench.sources.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sweepbench.bench.items import SCOPE_ALIASES, Benchmark, Scope, Task
from sweepbench.bench.sources.registry import source
from sweepbench.errors import UserError

PresetName = Literal["quick", "auto", "full"]


@dataclass(frozen=True)
class Preset:
    """A ready-made selection (spec §4)."""

    name: PresetName
    per_task: int | None
    """Questions per task (1 for the quick check; None = all)."""
    auto_only: bool
    """Only tasks checked automatically (no judge model needed)."""
    title: str
    intent: str

    def tasks(self, benchmark: Benchmark, scope: Scope) -> tuple[Task, ...]:
        """The in-scope tasks this preset selects (unavailable ones included: the plan says
        why they cannot run)."""
        tasks = benchmark.in_scope(scope)
        return tuple(t for t in tasks if t.grading == "auto") if self.auto_only else tasks

    def label(self, benchmark: Benchmark, scope: Scope) -> str:
        """``"Quick check · 16 questions, one from each task, to see that everything works"``."""
        count = sum(
            min(len(t.items), self.per_task) if self.per_task else len(t.items)
            for t in self.tasks(benchmark, scope)
            if t.available
        )
        return f"{self.title} · {self.intent.format(n=f'{count:,}')}"


PRESETS: dict[str, Preset] = {
    "quick": Preset("quick", 1, False, "Quick check",
                    "{n} questions, one from each task, to see that everything works"),
    "auto": Preset("auto", None, True, "Automatically checked set",
                   "{n} questions, no judge model needed"),
    "full": Preset("full", None, False, "Complete benchmark", "all {n} questions"),
}  # fmt: skip
PRESET_ALIASES = {"auto-checked": "auto", "automatic": "auto", "all": "full"}


def preset(name: str) -> Preset:
    """A preset by name (``quick``, ``auto`` / ``auto-checked``, ``full``)."""
    key = PRESET_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in PRESETS:
        raise UserError(f"unknown preset {name!r}; choose quick, auto-checked or full")
    return PRESETS[key]


def scope(name: str) -> Scope:
    """A scope by name (``core``, ``paper`` / ``original``)."""
    found = SCOPE_ALIASES.get(name.strip().lower())
    if found is None:
        raise UserError(f"unknown scope {name!r}; choose core or paper (the original scoring)")
    return found


def load_benchmark(
    name: str, data: Path | None = None, *, allow_data_outside: bool = False
) -> Benchmark:
    """Load a benchmark by name or declaration path. ``data`` is the data folder for a
    benchmark whose data is not shipped (ELBench). A declaration reads data only from its own
    folder unless ``allow_data_outside`` (``--allow-data-outside``). UserError for an
    unknown name, naming the known ones."""
    return source(name, allow_data_outside=allow_data_outside).load(data)
