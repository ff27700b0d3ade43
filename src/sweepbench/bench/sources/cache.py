"""A cache of loaded declared benchmarks, so that a session that loads the same declaration
again (a resume, ``bench show``, a second ``estimate``) reads its items back instead of parsing
every row again.

One file per declaration under ``<home>/cache/benchmarks/`` (``sweepbench.settings.home()``;
never beside the user's data), named by a hash of the declaration's resolved path, the
``--allow-data-outside`` choice, the registered scorers and the loader's own code. It records
every file the load read or looked for (the declaration, each task's data file, present or
not) with its size, modification time, inode and change time; an entry is used only while
every one of them is unchanged, and a file written within :data:`RACY_NS` of when it was
recorded is checked by its SHA-256 as well (a same-size edit inside one timestamp tick shows no
other change). Anything else — a file changed, added or removed, another version of the
loader, an unreadable or foreign entry — loads from the data and rewrites the entry. Python
declarations (they may read anything) and Hugging Face datasets read from the library's own
cache are never cached.

An entry is plain data in :mod:`marshal` form (no code, no pickle): every dataclass as the
tuple of its fields, the items of a task as rows that become :class:`Item` again in one call
each. A benchmark holding a value marshal cannot write is simply not cached.
"""

from __future__ import annotations

import gc
import hashlib
import marshal
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from sweepbench.bench.items import (
    Area,
    Benchmark,
    Item,
    JudgeSpec,
    LoadProblem,
    PromptVersion,
    RoleDefaults,
    Task,
)

FORMAT = 1
"""The entry layout; a change makes every older entry a miss."""
RACY_NS = 2_000_000_000
"""A file modified this close to when its state was recorded is also checked by content:
timestamps have a granularity (up to 2 s on some file systems) inside which an edit that
keeps the size is invisible to ``stat``."""
FOLDER = ("cache", "benchmarks")
_LOADER_MODULES = (
    "bench/items.py",
    "judging/contract.py",
    "bench/sources/cache.py",
    "bench/sources/declared.py",
    "bench/sources/declared_rows.py",
    "bench/sources/declared_schema.py",
    "bench/sources/records.py",
    "bench/sources/yaml_guard.py",
    "nesting.py",
)
"""The code a loaded benchmark depends on: an entry written by other code is not used."""

FileState = tuple[str, int, int, int, int, int] | tuple[str]
"""``(path, size, mtime_ns, inode, ctime_ns, device)``, or ``(path,)`` for a file that was not
there."""


def cached_load(
    path: Path,
    allow_data_outside: bool,
    scorers: dict[str, str],
    load: Callable[[], tuple[Benchmark, Sequence[Path] | None]],
) -> Benchmark:
    """The declaration at ``path`` as ``load`` would return it, from the cache when every file
    it read is unchanged; otherwise ``load()`` (the benchmark and every path it read or looked
    for, the declaration first; None: it read something the cache cannot watch) and the entry
    rewritten. ``scorers``: the scorer names known now (a declaration naming one registered
    later must be checked again)."""
    entry = _entry_path(path, allow_data_outside, scorers)
    if entry is not None:
        found = _read(entry)
        if found is not None:
            return found
    started = time.time_ns()
    benchmark, watched = load()
    if entry is not None and watched is not None:
        _write(entry, benchmark, watched, started)
    return benchmark


def _entry_path(path: Path, allow_data_outside: bool, scorers: dict[str, str]) -> Path | None:
    """Where the entry of this declaration lives (None: the home folder is not usable, or the
    loader's code cannot be fingerprinted)."""
    from sweepbench.errors import UserError
    from sweepbench.settings import home

    digest = hashlib.sha256(f"{FORMAT}\0{path.resolve()}\0{allow_data_outside}".encode())
    digest.update(repr(sorted(scorers.items())).encode())
    package = Path(__file__).resolve().parents[2]
    try:
        for module in _LOADER_MODULES:
            info = (package / module).stat()
            digest.update(f"\0{module}\0{info.st_size}\0{info.st_mtime_ns}".encode())
        return home().joinpath(*FOLDER) / f"{digest.hexdigest()[:32]}.marshal"
    except (OSError, UserError):
        return None


def _state(path: Path) -> FileState:
    try:
        info = os.stat(path)
    except OSError:
        return (str(path),)
    return (str(path), info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns,
            info.st_dev)  # fmt: skip


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


def _read(entry: Path) -> Benchmark | None:
    """The benchmark an entry holds when all its files are as recorded (None otherwise).
    The collector is paused meanwhile: the objects made are all kept, and a collection
    every few hundred of them would more than double the time (0.36 s → 0.16 s at 100,000
    items)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return _decoded(entry)
    finally:
        if paused:
            gc.enable()


def _decoded(entry: Path) -> Benchmark | None:
    try:
        data = marshal.loads(entry.read_bytes())
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None
        for state, recorded_at, digest in data["files"]:
            if _state(Path(state[0])) != tuple(state):
                return None
            if len(state) > 1 and state[2] >= recorded_at - RACY_NS and _sha256(state[0]) != digest:
                return None
        return _decode_benchmark(data["benchmark"])
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        return None  # missing, unreadable or not ours: load from the data


def _write(entry: Path, benchmark: Benchmark, watched: Sequence[Path], started: int) -> None:
    """Write the entry, unless a file changed while it was loaded (its state would not be the
    one its items were read in) or the benchmark holds a value marshal cannot write."""
    files: list[tuple[FileState, int, str | None]] = []
    for path in watched:
        state = _state(path)
        if len(state) > 1 and state[2] >= started - RACY_NS:
            files.append((state, started, _sha256(str(path))))
        else:
            files.append((state, started, None))
    try:
        blob = marshal.dumps(
            {"format": FORMAT, "files": files, "benchmark": _encode_benchmark(benchmark)}
        )
    except ValueError:  # a value marshal cannot write (a date from YAML, say): not cached
        return
    if any(_state(Path(state[0])) != state for state, _, _ in files):
        return  # changed after it was recorded: the load may have read either version
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        partial = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
        partial.write_bytes(blob)
        os.replace(partial, entry)  # another process reads the old entry or the new, whole
    except OSError:
        return  # a cache that cannot be written is only slower


# -- the entry's form: each dataclass as the tuple of its fields, in their order ---------------


def _values(obj: object) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name) for f in fields(obj))  # type: ignore[arg-type]


def _encode_benchmark(benchmark: Benchmark) -> tuple[Any, ...]:
    values = dict(zip((f.name for f in fields(Benchmark)), _values(benchmark), strict=True))
    values["areas"] = tuple(
        (area.key, area.label, tuple(_encode_task(t) for t in area.tasks))
        for area in benchmark.areas
    )
    values["prompt_versions"] = tuple(_values(v) for v in benchmark.prompt_versions)
    values["problems"] = tuple(_values(p) for p in benchmark.problems)
    values["defaults"] = _values(benchmark.defaults)
    return tuple(values.values())


def _decode_benchmark(data: tuple[Any, ...]) -> Benchmark:
    values = dict(zip((f.name for f in fields(Benchmark)), data, strict=True))
    values["areas"] = tuple(
        Area(key, label, tuple(_decode_task(t) for t in tasks))
        for key, label, tasks in values["areas"]
    )
    values["prompt_versions"] = tuple(PromptVersion(*v) for v in values["prompt_versions"])
    values["problems"] = tuple(LoadProblem(*p) for p in values["problems"])
    values["defaults"] = RoleDefaults(*values["defaults"])
    return Benchmark(**values)


def _encode_task(task: Task) -> tuple[Any, ...]:
    values = dict(zip((f.name for f in fields(Task)), _values(task), strict=True))
    values["items"] = tuple(_values(item) for item in task.items)
    values["options"] = dict(task.options)
    values["judge"] = None if task.judge is None else _values(task.judge)
    values["problems"] = tuple(_values(p) for p in task.problems)
    return tuple(values.values())


def _decode_task(data: tuple[Any, ...]) -> Task:
    values = dict(zip((f.name for f in fields(Task)), data, strict=True))
    item = Item
    values["items"] = tuple([item(*row) for row in values["items"]])
    values["judge"] = None if values["judge"] is None else JudgeSpec(*values["judge"])
    values["problems"] = tuple(LoadProblem(*p) for p in values["problems"])
    return Task(**values)
