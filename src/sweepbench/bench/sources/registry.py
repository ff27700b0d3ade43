"""The benchmark sources: the one table of the benchmarks known by name, read by the catalogue
(``catalog.load_benchmark``), the report (a stored run's benchmark loaded again), ``bench
list`` and the web's Run a benchmark page. Any other name is a declaration path — the one rule
of :func:`declaration`.

A built-in source is one :class:`BenchmarkSource` row in :data:`_BUILT_IN` (its loader imported
only when it loads); :func:`register` adds one at run time (tests, a plugin)::

    register(BenchmarkSource("toy", "Toy benchmark", False, load_toy, lambda run: load_toy(None)))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sweepbench.errors import UserError

if TYPE_CHECKING:
    from sweepbench.bench.items import Benchmark
    from sweepbench.bench.storage_rows import RunRow

DECLARATION_SUFFIXES = (".yaml", ".yml", ".py")
"""A name ending so is the path of a declaration of the user's own (docs/benchmarks.md)."""


@dataclass(frozen=True)
class BenchmarkSource:
    """One benchmark known by name: how to load it, and how to load a stored run's again."""

    name: str
    """What a user types (``bench run NAME``, the web's choice), lower case."""
    label: str
    """What the web page's benchmark choice shows."""
    needs_data: bool
    """Its data is not shipped: the user gives their copy (``--data PATH``)."""
    load: Callable[[Path | None], Benchmark]
    """The benchmark from the data folder given (None: none given)."""
    reload: Callable[[RunRow], Benchmark]
    """A stored run's benchmark, loaded again as the run was made (its stored settings say
    from where)."""
    listed: bool = True
    """``bench list`` without names lists it (one that ``needs_data`` only with ``--data``)."""
    data_hint: str = ""
    """What ``bench list`` says of it when it is left out for want of ``--data``."""


# -- the built-in sources ----------------------------------------------------------------------


def _sample(data: Path | None) -> Benchmark:
    from sweepbench.bench.sources.declared import sample_benchmark

    return sample_benchmark()


def _sample_teaching(data: Path | None) -> Benchmark:
    from sweepbench.bench.sources.declared import SAMPLE_FOLDER, load_declared

    return load_declared(SAMPLE_FOLDER / "teaching.yaml")


def _elbench(data: Path | None) -> Benchmark:
    if data is None:
        raise UserError(
            "ELBench's data is not shipped with sweepbench (it carries no licence): "
            "give your copy with --data PATH/benchmark_root"
        )
    from sweepbench.bench.sources.elbench import load_elbench

    return load_elbench(data)


def _stored_source(run: RunRow) -> str:
    """Where the run's benchmark was loaded from (a path, or "built in")."""
    return str(run.settings.get("benchmark_source") or "")


def _reload_from_source(run: RunRow) -> Benchmark:
    """A run's benchmark loaded again by the name or path it was loaded from, with data outside
    a declaration's folder allowed only when the run allowed it."""
    outside = bool(run.settings.get("allow_data_outside", False))
    return source(_stored_source(run), allow_data_outside=outside).load(None)


_BUILT_IN: Final[tuple[BenchmarkSource, ...]] = (
    BenchmarkSource(
        "sample", "sweepbench sample", False, _sample, reload=lambda run: _sample(None)
    ),
    BenchmarkSource(
        "sample-teaching", "Sample teaching dialogues", False, _sample_teaching,
        reload=_reload_from_source,  # stored as the declaration it is (its path)
        listed=False,  # the teaching runtime's demo: `bench list sample-teaching`
    ),
    BenchmarkSource(
        "elbench", "ELBench (your copy of its data)", True, _elbench,
        reload=lambda run: _elbench(Path(_stored_source(run))),
        data_hint="ELBench: its data is not shipped (no licence); list it with "
        "--data PATH/benchmark_root.",
    ),
)  # fmt: skip
"""The sources shipped with sweepbench, in the order they are offered."""

_ADDED: dict[str, BenchmarkSource] = {}
"""Sources added with :func:`register`."""


# -- looking sources up --------------------------------------------------------------------------


def sources() -> tuple[BenchmarkSource, ...]:
    """Every source known by name: the built-in ones, then the registered ones."""
    added = [s for s in _ADDED.values() if s.name not in {b.name for b in _BUILT_IN}]
    return (*(_ADDED.get(s.name, s) for s in _BUILT_IN), *added)


def names() -> list[str]:
    """Every name a benchmark is known by, in order."""
    return [s.name for s in sources()]


def find(name: str) -> BenchmarkSource | None:
    """The source called ``name`` (spaces and case ignored); None when there is none."""
    key = name.strip().lower()
    return next((s for s in sources() if s.name == key), None)


def source(name: str, *, allow_data_outside: bool = False) -> BenchmarkSource:
    """The source ``name`` says: a known name, else the path of a declaration (.yaml, .yml or
    .py; see :func:`declaration`). UserError naming ``name`` and the known names otherwise."""
    found = find(name)
    if found is not None:
        return found
    path = Path(name.strip()).expanduser()
    if path.suffix.lower() in DECLARATION_SUFFIXES:
        return declaration(path, allow_data_outside=allow_data_outside)
    raise UserError(
        f"unknown benchmark {name!r}: use one of {', '.join(names())}, "
        "or the path of your own declaration (.yaml or .py)"
    )


def declaration(path: Path, *, allow_data_outside: bool = False) -> BenchmarkSource:
    """The source of a declaration file of the user's own: it reads data only from its own
    folder unless ``allow_data_outside`` (``--allow-data-outside``)."""

    def load(data: Path | None) -> Benchmark:
        if not path.is_file():
            raise UserError(f"no benchmark declaration at {path}")
        from sweepbench.bench.sources.declared import load_declared

        return load_declared(path, allow_data_outside=allow_data_outside)

    return BenchmarkSource(
        str(path), f"Declaration {path}", False, load, _reload_from_source, listed=False
    )


def reload_run(run: RunRow) -> Benchmark:
    """A stored run's benchmark loaded again: by the source its benchmark id names, else from
    the declaration it was loaded from. UserError, DataError or OSError when it cannot be."""
    known = next((s for s in sources() if s.name == run.benchmark), None)
    return (known.reload if known is not None else _reload_from_source)(run)


def register(added: BenchmarkSource) -> BenchmarkSource:
    """Make a source known by its name (replacing one of that name); returns it. ValueError for
    a name that is not lower case, has spaces or reads as a declaration path."""
    name = added.name
    if not name or name != name.strip().lower() or " " in name:
        raise ValueError(f"a benchmark source's name is lower case, without spaces: {name!r}")
    if Path(name).suffix.lower() in DECLARATION_SUFFIXES:
        raise ValueError(f"{name!r} would read as a declaration path")
    _ADDED[name] = added
    return added
