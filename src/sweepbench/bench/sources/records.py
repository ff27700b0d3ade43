"""Read rows from a data file — JSONL, JSON, CSV, YAML or XLSX — one :class:`Record` at a time.

A row that cannot be read becomes a record carrying a :class:`LoadProblem` (file, line, what is
wrong) instead of stopping the load: the rest of the file still loads.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sweepbench.bench.items import LoadProblem
from sweepbench.errors import DataError

FORMATS = ("jsonl", "json", "csv", "yaml", "xlsx")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv",
             ".tsv": "csv", ".yaml": "yaml", ".yml": "yaml", ".xlsx": "xlsx"}  # fmt: skip


@dataclass(frozen=True)
class Record:
    """One row: its 1-based line (or spreadsheet row) and its fields, or the problem with it."""

    line: int
    data: Mapping[str, Any] | None
    problem: LoadProblem | None = None


def file_format(path: Path, declared: str | None = None) -> str:
    """The format of a data file, declared or from its suffix; DataError when unknown."""
    if declared:
        if declared not in FORMATS:
            raise DataError(
                f"{path.name}: unknown format {declared!r}; known: {', '.join(FORMATS)}"
            )
        return declared
    found = _SUFFIXES.get(path.suffix.lower())
    if found is None:
        raise DataError(
            f"{path.name}: cannot tell the format from the suffix {path.suffix!r}; "
            f"name one of {', '.join(FORMATS)}"
        )
    return found


def iter_records(
    path: Path, *, fmt: str | None = None, sheet: str | None = None, name: str | None = None
) -> Iterator[Record]:
    """Every row of ``path``. ``name`` is how the file is called in problems (default: its
    file name). A file that cannot be opened at all raises DataError."""
    shown = name or path.name
    kind = file_format(path, fmt)
    try:
        if kind == "jsonl":
            yield from _jsonl(path, shown)
        elif kind == "json":
            yield from _rows(_load(path, shown, json.loads), shown)
        elif kind == "yaml":
            yield from _rows(_load(path, shown, yaml.safe_load), shown)
        elif kind == "csv":
            yield from _csv(path, shown)
        else:
            yield from _xlsx(path, shown, sheet)
    except OSError as exc:
        raise DataError(f"{shown}: cannot read the file ({exc.strerror or exc})") from exc


def _jsonl(path: Path, shown: str) -> Iterator[Record]:
    with path.open(encoding="utf-8-sig") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                yield _bad(shown, number, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(value, dict):
                yield _bad(shown, number, f"expected a JSON object, found {type(value).__name__}")
                continue
            yield Record(number, value)


def _load(path: Path, shown: str, parse: Any) -> Any:
    text = path.read_text(encoding="utf-8-sig")
    try:
        return parse(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{shown}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown}:{mark.line + 1}" if mark is not None else shown
        raise DataError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc


def _rows(value: Any, shown: str) -> Iterator[Record]:
    """A list of objects, or an object holding one list of objects (``{items: [...]}``)."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise DataError(f"{shown}: expected a list of rows, or an object holding one list")
        value = lists[0]
    if not isinstance(value, list):
        raise DataError(f"{shown}: expected a list of rows, found {type(value).__name__}")
    for number, row in enumerate(value, start=1):
        if isinstance(row, dict):
            yield Record(number, row)
        else:
            yield _bad(shown, number, f"entry {number} is a {type(row).__name__}, not an object")


def _csv(path: Path, shown: str) -> Iterator[Record]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
        reader = csv.reader(handle, dialect=dialect)
        header: list[str] | None = None
        for row in reader:
            number = reader.line_num
            if header is None:
                header = [cell.strip() for cell in row]
                continue
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                yield _bad(shown, number, f"{len(row)} cells where the header has {len(header)}")
                continue
            yield Record(number, dict(zip(header, row, strict=True)))
        if header is None:
            raise DataError(f"{shown}: the file is empty (no header row)")


def _xlsx(path: Path, shown: str, sheet: str | None) -> Iterator[Record]:
    import openpyxl  # imported here: only spreadsheets need it

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises several unrelated types for a broken file
        raise DataError(f"{shown}: not a readable .xlsx file ({exc})") from exc
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise DataError(f"{shown}: no sheet {sheet!r}; sheets: {', '.join(book.sheetnames)}")
        names = [sheet] if sheet is not None else list(book.sheetnames)
        for sheet_name in names:  # the first sheet with a header row
            rows = book[sheet_name].iter_rows(values_only=True)
            header: list[str] | None = None
            for number, values in enumerate(rows, start=1):
                cells = list(values)
                if header is None:
                    if any(c is not None and str(c).strip() for c in cells):
                        header = [str(c).strip() if c is not None else "" for c in cells]
                    continue
                if all(c is None or not str(c).strip() for c in cells):
                    continue  # fully empty rows are skipped (spec §2.4)
                width = len(header)
                data = {h: _cell(v) for h, v in zip(header, cells[:width], strict=False) if h}
                yield Record(number, data)
            if header is not None:
                return
        raise DataError(f"{shown}: no sheet has a header row")
    finally:
        book.close()


def _cell(value: Any) -> Any:
    """A spreadsheet value as the row holds it (numbers stay numbers; None stays None)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _bad(shown: str, line: int, message: str, field: str | None = None) -> Record:
    return Record(line, None, LoadProblem(shown, message, line, field))
