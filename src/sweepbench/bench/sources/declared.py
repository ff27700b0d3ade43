"""Benchmarks that users declare themselves: a small YAML file (or a Python module defining
``BENCHMARK: dict``) names the areas and tasks, where each task's data lives, how a row's
fields become an item, and how answers are scored.

The declaration is checked as a whole (every mistake is reported at once, with its location);
the data is then loaded row by row, and a bad row becomes a :class:`LoadProblem` on its task
while the rest loads. A data file that is missing disables its task only, and so does a data
path that leads outside the declaration's folder (symlinks resolved) unless the caller allows
it: a declaration handed to us must not turn any file we can read into prompts.

This module finds, reads and loads a declaration; the declaration's format and its check
are in :mod:`~sweepbench.bench.sources.declared_schema`, a row's way into an item in
:mod:`~sweepbench.bench.sources.declared_rows`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from sweepbench.bench.items import (
    Area,
    Benchmark,
    Item,
    JudgeSpec,
    LoadProblem,
    PromptVersion,
    Task,
    TaskScore,
)
from sweepbench.bench.sources.declared_rows import ItemBuilder, render_template
from sweepbench.bench.sources.declared_schema import (
    SCORERS,
    BenchmarkDeclaration,
    TaskDeclaration,
    validate_declaration,
)
from sweepbench.bench.sources.records import Record, iter_records
from sweepbench.bench.sources.yaml_guard import load_declaration_yaml, yaml_error_text
from sweepbench.errors import DataError, UserError

__all__ = ["SAMPLE_FOLDER", "SCORERS", "load_declared", "render_template", "sample_benchmark"]

DECLARATION_NAMES = ("benchmark.yaml", "benchmark.yml", "benchmark.py")
"""The file looked for when a folder is given instead of a declaration file."""

SAMPLE_FOLDER = Path(__file__).resolve().parent / "sample"
"""Where the built-in sample benchmark lives (shipped inside the package)."""

ALLOW_FLAG = "--allow-data-outside"
"""The command-line flag that lets a declaration read data outside its folder."""

# --------------------------------------------------------------------------- public entry points


def load_declared(path: Path, *, allow_data_outside: bool = False) -> Benchmark:
    """Load the benchmark declared in ``path`` (YAML, or a ``*.py`` module defining
    ``BENCHMARK``; a folder holding ``benchmark.yaml`` also works). A declaration with mistakes
    raises one DataError listing them all; bad rows and missing data files are kept on the tasks
    as problems. A task's data must be inside the declaration's folder unless
    ``allow_data_outside``; a task whose data is not is kept as missing, saying why. A YAML
    declaration loaded before is read back from the cache while none of its files changed
    (:mod:`~sweepbench.bench.sources.cache`)."""
    path = _declaration_file(Path(path).expanduser())
    if path.suffix.lower() == ".py":  # a module may read anything: never cached
        return _load(path, allow_data_outside)[0]
    from sweepbench.bench.sources.cache import cached_load

    return cached_load(
        path, allow_data_outside, dict(SCORERS), lambda: _load(path, allow_data_outside)
    )


def _load(path: Path, allow_data_outside: bool) -> tuple[Benchmark, list[Path] | None]:
    """The declaration at ``path`` loaded from its data, and every file the load read or
    looked for, the declaration first (None: it read what the cache cannot watch, a Hugging
    Face dataset from the library's own cache)."""
    raw, text = _read_declaration(path)
    declaration = _validated(raw, path.name)
    base = path.resolve().parent
    digest = hashlib.sha256(text)
    tasks: list[Task] = []
    watched: list[Path] | None = [path]
    for task_declaration in declaration.tasks:
        task, files = _load_task(task_declaration, base, allow_data_outside)
        tasks.append(task)
        _hash_data(digest, task_declaration, files)
        if task_declaration.format == "hf" or watched is None:
            watched = None
        else:
            watched.append(_data_path(task_declaration.data, base))
    areas = tuple(
        Area(area.key, area.label, tuple(t for t in tasks if t.area == area.key))
        for area in declaration.areas
    )
    benchmark = Benchmark(
        id=declaration.id,
        name=declaration.name,
        areas=areas,
        description=declaration.description,
        version=digest.hexdigest()[:12],
        overall=declaration.overall,
        source=str(path.resolve()),
        data_outside=allow_data_outside,
        prompt_version=declaration.prompt_version,
        prompt_versions=tuple(
            PromptVersion(name, version.system, version.template)
            for name, version in declaration.prompt_versions.items()
        ),
    )
    return benchmark, watched


def sample_benchmark() -> Benchmark:
    """The built-in sample benchmark (about 40 questions of sweepbench's own)."""
    return replace(load_declared(SAMPLE_FOLDER / "benchmark.yaml"), source="built in")


# --------------------------------------------------------------------------- reading the file


def _declaration_file(path: Path) -> Path:
    """The declaration file itself (a folder means its ``benchmark.yaml``)."""
    if path.is_dir():
        for name in DECLARATION_NAMES:
            if (path / name).is_file():
                return path / name
        raise UserError(f"{path} holds no benchmark declaration ({', '.join(DECLARATION_NAMES)}).")
    if not path.is_file():
        raise UserError(f"No benchmark declaration at {path}.")
    return path


def _read_declaration(path: Path) -> tuple[Any, bytes]:
    """The declaration's parsed content and its bytes (for the version fingerprint)."""
    text = path.read_bytes()
    if path.suffix.lower() == ".py":
        return _python_declaration(path), text
    try:
        return load_declaration_yaml(text.decode("utf-8-sig")), text
    except UnicodeDecodeError as exc:
        raise DataError(f"{path.name}: not UTF-8 text ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        raise DataError(yaml_error_text(exc, path.name)) from exc


def _validated(raw: Any, shown: str) -> BenchmarkDeclaration:
    """The checked declaration; a structure too deep to check (a Python declaration can build
    one) is a DataError, not a RecursionError."""
    try:
        return validate_declaration(raw, shown)
    except RecursionError:
        raise DataError(f"{shown}: the declaration is nested too deeply to read") from None


_PYTHON_RUNS: ContextVar[bool] = ContextVar("sweepbench_python_declarations", default=True)


@contextmanager
def python_declarations_refused() -> Iterator[None]:
    """Inside the block no Python declaration is run (a DataError says so): the web app serves
    each request in one, so a visitor never makes the server run a module, not even an
    operator's, by opening a run made from one (docs/benchmarks.md, "Declarations on the
    web")."""
    token = _PYTHON_RUNS.set(False)
    try:
        yield
    finally:
        _PYTHON_RUNS.reset(token)


def _python_declaration(path: Path) -> Any:
    """``BENCHMARK`` from a Python declaration module, run from its own path (never inside
    :func:`python_declarations_refused`)."""
    if not _PYTHON_RUNS.get():
        raise DataError(
            f"{path.name}: a Python declaration is not run here (the web app never runs one); "
            "use the command line, where you run it yourself"
        )
    module_name = f"_sweepbench_declared_{hashlib.sha1(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise DataError(f"{path.name}: cannot load it as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() in the module must not end sweepbench
        raise DataError(
            f"{path.name}: the module called sys.exit({exc.code!r}) instead of defining BENCHMARK"
        ) from None
    except Exception as exc:  # the user's module can fail in any way; report it, don't crash
        raise DataError(
            f"{path.name}: the module failed to run ({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        sys.modules.pop(module_name, None)
    if not hasattr(module, "BENCHMARK"):
        raise DataError(f"{path.name}: the module defines no BENCHMARK dict")
    return module.BENCHMARK


# --------------------------------------------------------------------------- loading a task


@dataclass(frozen=True)
class _TaskData:
    """Where a task's rows come from: what its reader is given (a path, or the name of a
    cached Hugging Face dataset) and the local files it reads (none for a cached dataset)."""

    spec: str
    files: tuple[Path, ...]


def _load_task(
    declaration: TaskDeclaration, base: Path, allow_outside: bool
) -> tuple[Task, tuple[Path, ...]]:
    """A task with every readable row as an item, and the files it read; bad rows become
    problems, and data that cannot be found, opened or read from here (outside ``base``)
    disables the task (``missing``)."""
    shown = declaration.data
    items: list[Item] = []
    problems: list[LoadProblem] = []
    missing: str | None = None
    files: tuple[Path, ...] = ()
    builder = ItemBuilder(declaration, shown)
    ids: dict[str, int] = {}
    try:
        data = _task_data(declaration, base, allow_outside)
        for record in _records(declaration, data):  # one row at a time: rows are not kept
            built = builder.build(record)
            if isinstance(built, LoadProblem):
                problems.append(built)
                continue
            duplicate = _duplicate_problem(built, ids, declaration)
            if duplicate is not None:
                problems.append(duplicate)
                continue
            ids[built.sample_id] = built.row
            items.append(built)
        files = data.files
    except (DataError, UserError) as exc:
        items, problems, missing = [], [], str(exc)
    except OSError as exc:  # a file or folder that cannot be listed or opened
        items, problems, missing = [], [], f"{shown}: cannot read it ({exc.strerror or exc})"
    return _task(declaration, tuple(items), tuple(problems), missing), files


def _task(
    declaration: TaskDeclaration,
    items: tuple[Item, ...],
    problems: tuple[LoadProblem, ...],
    missing: str | None,
) -> Task:
    """The loaded :class:`Task` for a declaration."""
    judge = declaration.judge
    score_by: TaskScore = declaration.score_by or (
        "mean_score" if declaration.scorer == "option_set" else "pass_rate"
    )
    return Task(
        id=declaration.id,
        area=declaration.area,
        name=declaration.name or declaration.id,
        grading=SCORERS[declaration.scorer],
        scorer=declaration.scorer,
        items=items,
        options=dict(declaration.options),
        judge=JudgeSpec(judge.rubric, judge.positive_label, judge.negative_label, declaration.id)
        if judge is not None
        else None,
        region_specific=declaration.region_specific,
        score_by=score_by,
        source_file=declaration.data,
        missing=missing,
        problems=problems,
        description=declaration.description,
    )


def _duplicate_problem(
    item: Item, ids: Mapping[str, int], declaration: TaskDeclaration
) -> LoadProblem | None:
    """A problem when the item's id repeats one of its task (ids need only be unique within a
    task: item keys include the task, see :func:`item_key`)."""
    if item.sample_id not in ids:
        return None
    field = ", ".join(declaration.fields.id) if declaration.fields.id else None
    message = f"duplicate id {item.sample_id!r} (first on line {ids[item.sample_id]})"
    return LoadProblem(item.source_file, message, item.row, field)


def _records(declaration: TaskDeclaration, data: _TaskData) -> Iterator[Record]:
    """The rows of a task's data (a file next to the declaration, or a Hugging Face dataset)."""
    if declaration.format == "hf":
        from sweepbench.bench.sources.hf import hf_records  # imported here: rarely needed

        split = declaration.split or "test"
        yield from hf_records(data.spec, split=split, name=declaration.config)
        return
    yield from iter_records(data.files[0], fmt=declaration.format, sheet=declaration.sheet,
                            name=declaration.data)  # fmt: skip


def _task_data(declaration: TaskDeclaration, base: Path, allow_outside: bool) -> _TaskData:
    """The data a task reads, checked before anything is read: inside ``base`` (unless
    ``allow_outside``; UserError), present and a file (DataError)."""
    local = _data_path(declaration.data, base)
    if declaration.format == "hf":
        return _hf_data(declaration.data, local, base, allow_outside)
    _confine(local, declaration.data, base, allow_outside)
    if not local.exists():
        raise DataError(f"data file not found: {local}")
    if not local.is_file():
        raise DataError(f"{declaration.data}: not a file")
    return _TaskData(str(local), (local,))


def _hf_data(data: str, local: Path, base: Path, allow_outside: bool) -> _TaskData:
    """A Hugging Face task's data: a local file or folder (its data files, each checked like a
    plain task's file; a path that exists from the working folder counts, as ``datasets``
    would read it), or else the name of a cached dataset."""
    from sweepbench.bench.sources.hf import data_files  # imported here: rarely needed

    from_here = Path(data).expanduser()
    path = local if local.exists() else from_here if from_here.exists() else None
    if path is None:
        return _TaskData(data, ())
    _confine(path, data, base, allow_outside)
    files = tuple(data_files(path))
    for file in files:  # a symlink inside the folder may lead out of it
        _confine(file, data, base, allow_outside)
    return _TaskData(str(path), files)


def _data_path(data: str, base: Path) -> Path:
    """A data path as declared, relative to the declaration's folder."""
    path = Path(data).expanduser()
    return path if path.is_absolute() else base / path


def _confine(path: Path, data: str, base: Path, allow_outside: bool) -> None:
    """UserError, naming the path, the folder and the flag, when ``path`` (symlinks resolved)
    is outside the declaration's folder ``base`` and reading there is not allowed."""
    if allow_outside:
        return
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop is a RuntimeError here
        raise DataError(f"{data}: cannot follow the path ({exc})") from None
    if real.is_relative_to(base):
        return
    raise UserError(
        f"{data}: refused: it leads to {real}, outside the declaration's folder {base}; a "
        f"declaration reads data only from its own folder unless you pass {ALLOW_FLAG}"
    )


def _hash_data(digest: Any, declaration: TaskDeclaration, files: tuple[Path, ...]) -> None:
    """Add a task's data to a hash: its name, and the bytes of the files it read (none when
    its data is missing, refused or a cached dataset)."""
    digest.update(f"\0{declaration.id}\0{declaration.data}\0".encode())
    for file in files:
        try:
            digest.update(file.read_bytes())
        except OSError as exc:
            raise DataError(
                f"{declaration.data}: cannot read {file} ({exc.strerror or exc})"
            ) from None
