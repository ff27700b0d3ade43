"""Read benchmark rows with Hugging Face ``datasets`` — offline only.

A spec is either a local data file or folder (read with the ``json``, ``csv`` or ``parquet``
builder, streamed so nothing is written to the cache) or the name of a dataset that is already
in the local Hugging Face cache. Nothing here ever reaches the network: a dataset that is not
cached must be downloaded first, or given as a local file. ``datasets`` is an optional extra
(``pip install 'sweepbench[hf]'``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from sweepbench.bench.sources.records import Record
from sweepbench.errors import DataError, UserError

BUILDERS = {".jsonl": "json", ".json": "json", ".ndjson": "json", ".csv": "csv", ".tsv": "csv",
            ".parquet": "parquet"}  # fmt: skip
"""The ``datasets`` builder that reads a local file, by suffix."""

_NOT_CACHED = frozenset({"ConnectionError", "FileNotFoundError", "DatasetNotFoundError",
                         "DataFilesNotFoundError", "OfflineModeIsEnabled",
                         "LocalEntryNotFoundError"})  # fmt: skip
"""Exception class names ``datasets`` raises for a dataset that is not in the local cache."""


def hf_records(spec: str, *, split: str = "test", name: str | None = None) -> Iterator[Record]:
    """Every row of a local data file/folder or a locally cached dataset, numbered from 1.
    ``name`` is the dataset configuration (ignored for local files). UserError when
    ``datasets`` is not installed or the dataset is not cached; DataError when a local file
    cannot be read."""
    datasets = _offline_datasets()
    path = Path(spec).expanduser()
    if path.exists():
        rows = _local_rows(datasets, path, split)
    else:
        rows = _cached_rows(datasets, spec, split, name)
    yield from _numbered(rows, spec)


def _offline_datasets() -> ModuleType:
    """The ``datasets`` module, switched to offline mode (even if it was imported before)."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import datasets as module
    except ImportError:
        raise UserError(
            "Loading a Hugging Face dataset needs the optional `datasets` package: "
            "pip install 'sweepbench[hf]'."
        ) from None
    datasets: ModuleType = module
    datasets.config.HF_HUB_OFFLINE = True
    datasets.config.HF_DATASETS_OFFLINE = True
    try:
        import huggingface_hub.constants as hub_constants

        hub_constants.HF_HUB_OFFLINE = True
    except ImportError:  # datasets always brings huggingface_hub; be safe anyway
        pass
    return datasets


def _local_rows(datasets: ModuleType, path: Path, split: str) -> Iterable[Any]:
    """Stream a local file, or every data file in a folder (all of one kind)."""
    files = data_files(path)
    builders = {BUILDERS[f.suffix.lower()] for f in files}
    if len(builders) != 1:
        raise DataError(
            f"{path}: mixes data files of different kinds ({', '.join(sorted(builders))})"
        )
    builder = builders.pop()
    extra: dict[str, Any] = {}
    if builder == "csv" and all(f.suffix.lower() == ".tsv" for f in files):
        extra["delimiter"] = "\t"
    try:
        return datasets.load_dataset(  # type: ignore[no-any-return]
            builder,
            data_files={split: [str(f) for f in files]},
            split=split,
            streaming=True,
            cache_dir=_cache_dir(),
            **extra,
        )
    except Exception as exc:  # datasets raises many unrelated types for an unreadable file
        raise DataError(
            f"{path}: datasets could not read it ({type(exc).__name__}: {exc})"
        ) from exc


def data_files(path: Path) -> list[Path]:
    """The files a local spec reads: the file itself, or a folder's data files (sorted);
    DataError when there are none."""
    if path.is_file():
        if path.suffix.lower() not in BUILDERS:
            raise DataError(
                f"{path.name}: datasets reads {', '.join(sorted(set(BUILDERS)))} files here, "
                f"not {path.suffix or 'files without a suffix'}"
            )
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in BUILDERS)
    if not files:
        raise DataError(f"{path}: no data files ({', '.join(sorted(set(BUILDERS)))}) inside")
    return files


def _cached_rows(datasets: ModuleType, spec: str, split: str, name: str | None) -> Iterable[Any]:
    """A dataset that is already in the local Hugging Face cache."""
    try:
        return datasets.load_dataset(  # type: ignore[no-any-return]
            spec,
            name,
            split=split,
            cache_dir=_cache_dir(),
            download_mode="reuse_cache_if_exists",
        )
    except Exception as exc:  # report, without a traceback, what the user can do about it
        if type(exc).__name__ in _NOT_CACHED:
            raise UserError(
                f"{spec!r} is neither a local data file nor a dataset in the local Hugging Face "
                "cache; sweepbench never downloads: download it first (for example with "
                f"`datasets.load_dataset({spec!r})` while online) or give a local file."
            ) from None
        if isinstance(exc, ValueError) and "split" in str(exc).lower():
            raise UserError(f"The cached dataset {spec!r} has no split {split!r}: {exc}") from None
        raise UserError(
            f"Could not load {spec!r} from the local Hugging Face cache ({type(exc).__name__}: "
            f"{exc})."
        ) from None


def _cache_dir() -> str | None:
    """The datasets cache named by the environment now (read at call time, not import time)."""
    cache = os.environ.get("HF_DATASETS_CACHE")
    if cache:
        return cache
    home = os.environ.get("HF_HOME")
    return str(Path(home) / "datasets") if home else None


def _numbered(rows: Iterable[Any], spec: str) -> Iterator[Record]:
    """Rows as records, numbered from 1; a row that fails to stream ends the file as DataError."""
    iterator = iter(rows)
    number = 0
    while True:
        try:
            row = next(iterator)
        except StopIteration:
            return
        except Exception as exc:  # a streamed file can fail part-way, in datasets' own types
            where = f"{spec} (after row {number})" if number else spec
            raise DataError(
                f"{where}: datasets could not read it ({type(exc).__name__}: {exc})"
            ) from exc
        number += 1
        yield Record(number, dict(row))
