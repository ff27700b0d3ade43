"""The ELBench adapter: load the user's copy of the ELBench question set as a
:class:`~sweepbench.bench.items.Benchmark` (spec §2–§4, §13).

ELBench's data carries no licence, so sweepbench never ships it: the user points at a
``benchmark_root/`` folder. A file that cannot be found disables only its task; a row that
cannot be read becomes a :class:`LoadProblem` on its task, and the rest loads.

This module finds each task's file under that folder and builds the benchmark. The catalogue is
data, read by :mod:`~sweepbench.bench.sources.elbench_registry` (four areas, 18 tasks, where
each task's file may lie, how a row becomes an item); rows become items in
:mod:`~sweepbench.bench.sources.elbench_rows`, teaching templates in
:mod:`~sweepbench.bench.sources.elbench_teaching`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from sweepbench.bench.items import Area, Benchmark, LoadProblem, Task
from sweepbench.bench.sources import elbench_prompts as prompts
from sweepbench.bench.sources.elbench_registry import FileEntry, Registry, TaskSpec, load_registry
from sweepbench.bench.sources.elbench_rows import RowContext, TaskLoad, load_rows
from sweepbench.bench.sources.elbench_teaching import load_teaching
from sweepbench.errors import DataError, UserError

__all__ = ["load_elbench", "load_registry"]

BENCHMARK_ID = "elbench"
PROMPT_VERSION = "elbench-1"
DATA_HINT = "ELBench's data must be given with --data PATH/benchmark_root"

# --- finding the files ----------------------------------------------------------------------


def data_root(root: Path) -> Path:
    """The ``benchmark_root/`` folder the user gave, or the one inside the folder they gave.
    UserError when the path does not exist or is not a folder."""
    path = Path(root).expanduser()
    if not path.exists():
        raise UserError(f"no ELBench data at {path}: the folder does not exist; {DATA_HINT}")
    if not path.is_dir():
        raise UserError(f"no ELBench data at {path}: it is not a folder; {DATA_HINT}")
    nested = path / "benchmark_root"
    areas = load_registry().areas
    if nested.is_dir() and not any((path / area.folder).is_dir() for area in areas):
        return nested
    return path


def _nfc(text: str) -> str:
    """Unicode NFC (file names from macOS copies may be decomposed)."""
    return unicodedata.normalize("NFC", text)


class FileIndex:
    """Every file under the data root by (NFC) name, walked once and only when needed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_name: dict[str, list[Path]] | None = None

    def by_name(self) -> dict[str, list[Path]]:
        """File name → paths, nearest the root first."""
        if self._by_name is None:
            found: dict[str, list[Path]] = {}
            for folder, dirs, files in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    found.setdefault(_nfc(name), []).append(Path(folder) / name)
            for paths in found.values():
                paths.sort(key=lambda p: (len(p.parts), str(p)))
            self._by_name = found
        return self._by_name

    def resolve(self, entry: FileEntry) -> Path | None:
        """Where an entry's file is: a path hint under the root, else a file anywhere in the
        tree named with the canonical name or an alias, else one matching a glob pattern."""
        for hint in entry.path_hints:
            candidate = self.root / hint
            if candidate.is_file():
                return candidate
        by_name = self.by_name()
        for name in (entry.canonical_name, *entry.aliases):
            if paths := by_name.get(_nfc(name)):
                return paths[0]
        for pattern in entry.filename_patterns:
            matches = [
                path
                for name, paths in by_name.items()
                if fnmatch.fnmatchcase(name, _nfc(pattern))
                for path in paths
            ]
            if matches:
                return min(matches, key=lambda p: (len(p.parts), str(p)))
        return None


def _fingerprint(found: Sequence[tuple[str, Path]]) -> str:
    """A short SHA-256 over the found files' canonical names and content hashes (stable across
    copies: no paths or times)."""
    digest = hashlib.sha256()
    for name, path in found:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "unreadable"
        digest.update(f"{name}\0{content}\n".encode())
    return digest.hexdigest()[:16]


# --- the benchmark --------------------------------------------------------------------------


def load_task(registry: Registry, spec: TaskSpec, index: FileIndex) -> tuple[Task, Path | None]:
    """One task with its items, or marked missing when its file cannot be found or read."""
    entry = registry.file_for(spec.id)
    path = index.resolve(entry)
    if path is None:
        result = TaskLoad(missing=f"{entry.canonical_name} not found under {index.root}")
    else:
        shown = path.relative_to(index.root).as_posix()
        ctx = RowContext(
            entry, registry.mappings[entry.mapping], spec, prompts.safe_stem(entry.canonical_name)
        )
        try:
            if entry.loader == "teaching":
                result = load_teaching(ctx, path, shown, registry.scenarios[spec.id])
            else:
                result = load_rows(ctx, path, shown)
        except DataError as exc:
            result = TaskLoad(problems=[LoadProblem(shown, str(exc))], missing=str(exc))
        if result.missing is None and not result.items:
            result.missing = f"{shown} holds no loadable items"
    return _task_from(spec, entry, result), path


def _task_from(spec: TaskSpec, entry: FileEntry, result: TaskLoad) -> Task:
    options = {**spec.options, **result.options}
    if spec.answer_format is not None:
        options["answer_instruction"] = spec.answer_format.instruction
    return Task(
        id=spec.id,
        area=spec.area,
        name=spec.name,
        grading=spec.grading,
        scorer=spec.scorer,
        items=tuple(result.items) if result.missing is None else (),
        options=options,
        judge=spec.judge,
        region_specific=spec.region_specific,
        multi_turn=spec.multi_turn,
        score_by="mean_score" if spec.mean_score else "pass_rate",
        source_file=entry.canonical_name,
        missing=result.missing,
        problems=tuple(result.problems),
        description=spec.description,
    )


def load_elbench(root: Path) -> Benchmark:
    """ELBench from the user's ``benchmark_root/`` folder (or the folder that holds it).

    UserError when the folder does not exist. A data file that cannot be found disables only
    its task (``missing``); bad rows become problems on their task."""
    registry = load_registry()
    base = data_root(root)
    index = FileIndex(base)
    tasks: dict[str, Task] = {}
    found: list[tuple[str, Path]] = []
    for spec in registry.tasks:
        task, path = load_task(registry, spec, index)
        tasks[spec.id] = task
        if path is not None:
            found.append((registry.file_for(spec.id).canonical_name, path))
    areas = tuple(
        Area(area.key, area.label, tuple(t for t in tasks.values() if t.area == area.key))
        for area in registry.areas
    )
    problems: tuple[LoadProblem, ...] = ()
    if not found:
        problems = (LoadProblem(str(base), f"no ELBench data files found; {DATA_HINT}"),)
    return Benchmark(
        id=BENCHMARK_ID,
        name="ELBench",
        areas=areas,
        description=(
            "ELBench, an education benchmark in four areas: knowledge and reasoning, safety, "
            "teaching, and character and thinking skills. Loaded from the user's own copy."
        ),
        version=_fingerprint(found),
        prompt_version=PROMPT_VERSION,
        overall="mean_of_areas",
        source=str(base.resolve()),  # a run reloads it from wherever `bench show` runs
        problems=problems,
        defaults=registry.models,
    )
