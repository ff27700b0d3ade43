"""Read rows from a data file — JSONL, JSON, CSV/TSV, YAML or XLSX — one :class:`Record` at a
time.

A row that cannot be read becomes a record carrying a :class:`LoadProblem` (file, line, what is
wrong) instead of stopping the load: the rest of the file still loads. So does a JSON line
nested deeper than :data:`~sweepbench.nesting.MAX_DEPTH` levels, a YAML row with a key written
twice, and a CSV row holding a NUL character or an opening quote that never closes. A file that
cannot be read at all (not UTF-8 text, a duplicate column name, broken JSON or YAML, a YAML
anchor or alias, a JSON or YAML file nested too deep) raises DataError.

YAML data files are read with :class:`DataYamlLoader`, which resolves plain scalars by YAML
1.2's core schema (only ``true``/``false`` are booleans; no ``yes``/``no``/``on``/``off``,
sexagesimal ``12:30``, octal ``010`` or dates), so answers such as ``no`` or ``12:30`` stay
text; it also keeps the rules of :mod:`~sweepbench.bench.sources.yaml_guard`. CSV files are
read strictly (text after a closing quote is an error); TSV files without quote processing: a
``"`` is an ordinary character there.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from sweepbench.bench.items import LoadProblem
from sweepbench.bench.sources.yaml_guard import (
    GuardedYaml,
    YamlProblem,
    YamlRefused,
    yaml_error_text,
)
from sweepbench.errors import DataError
from sweepbench.nesting import MAX_DEPTH, TooDeep, bounded_json_loads

FORMATS = ("jsonl", "json", "csv", "yaml", "xlsx")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv",
             ".tsv": "csv", ".yaml": "yaml", ".yml": "yaml", ".xlsx": "xlsx"}  # fmt: skip

CSV_FIELD_LIMIT = 2**31 - 1
"""The largest CSV field accepted, in characters (the csv module's default is 131,072; this
is the largest value a C ``long`` holds on every platform, Windows included)."""

_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Record:
    """One row: its 1-based line (or spreadsheet row) and its fields, or the problem with it."""

    line: int
    data: Mapping[str, Any] | None
    problem: LoadProblem | None = None


class DataYamlLoader(GuardedYaml, yaml.SafeLoader):
    """A safe YAML loader whose implicit types follow YAML 1.2's core schema, for data files:
    ``null``/``~``/empty, ``true``/``false`` (any case style), decimal integers without
    leading zeros, and decimal floats (with ``.inf``/``.nan``). Everything else is text.
    A repeated key is noted, not raised, so that only its row is left out."""

    lenient_rows = True
    yaml_implicit_resolvers = {}  # noqa: RUF012 - emptied here, filled by the resolvers below


def _core_schema_resolvers() -> None:
    """Register the YAML 1.2 core-schema implicit types on :class:`DataYamlLoader`."""
    add = DataYamlLoader.add_implicit_resolver
    add("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
    add("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
        list("tTfF"))  # fmt: skip
    add("tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))
    add(
        "tag:yaml.org,2002:float",
        re.compile(
            r"^(?:[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
        list("-+0123456789."),
    )
    add("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])


_core_schema_resolvers()


def load_data_yaml(text: str) -> Any:
    """Parse YAML data text with :class:`DataYamlLoader` (core-schema implicit types);
    YamlRefused for the first rule the text breaks."""
    _, value, problems = _yaml_document(text)
    if problems:
        raise YamlRefused(problem=problems[0].message, problem_mark=problems[0].mark)
    return value


def _yaml_document(text: str) -> tuple[Node | None, Any, list[YamlProblem]]:
    """A data file's node tree, its value, and the problems noted while reading it."""
    loader = DataYamlLoader(text)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
        return node, value, loader.problems
    finally:
        loader.dispose()


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
    file name). A file that cannot be opened or read at all raises DataError."""
    shown = name or path.name
    kind = file_format(path, fmt)
    try:
        if kind == "xlsx":
            yield from _xlsx(path, shown, sheet)
            return
        text = read_text(path, shown)
        if kind == "jsonl":
            yield from _jsonl(text, shown)
        elif kind == "json":
            yield from _rows(_json_file(text, shown), shown)
        elif kind == "yaml":
            yield from _yaml_rows(text, shown)
        else:
            yield from _csv(text, shown, tab_separated=path.suffix.lower() == ".tsv")
    except OSError as exc:
        raise DataError(f"{shown}: cannot read the file ({exc.strerror or exc})") from exc


def read_text(path: Path, shown: str) -> str:
    """A file's text, decoded as UTF-8 (a leading byte-order mark is dropped). DataError
    naming the first byte that is not UTF-8 and its offset in the file."""
    raw = path.read_bytes()
    body = raw[len(_UTF8_BOM) :] if raw.startswith(_UTF8_BOM) else raw
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(raw) - len(body)
        raise DataError(
            f"{shown}: not UTF-8 text: byte 0x{body[exc.start]:02x} at offset {offset} "
            "(save the file as UTF-8)"
        ) from None


def _jsonl(text: str, shown: str) -> Iterator[Record]:
    decode = json.JSONDecoder().decode
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):
        if not line.strip():
            continue
        try:
            if line.count("[") + line.count("{") <= MAX_DEPTH:  # cannot nest too deep
                value = decode(line)
            else:
                value = bounded_json_loads(line)
        except json.JSONDecodeError as exc:
            yield _bad(shown, number, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except TooDeep as exc:
            yield _bad(shown, number, f"{exc.reason} (at column {exc.column})")
            continue
        if not isinstance(value, dict):
            yield _bad(shown, number, f"expected a JSON object, found {type(value).__name__}")
            continue
        yield Record(number, value)


def _json_file(text: str, shown: str) -> Any:
    """The parsed content of a JSON file; DataError with the line when it is broken or nested
    too deep (one document: it cannot be read past the place)."""
    try:
        return bounded_json_loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{shown}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except TooDeep as exc:
        raise DataError(f"{shown}:{exc.line}: {exc.reason}") from None


def _yaml_rows(text: str, shown: str) -> Iterator[Record]:
    """A YAML file's rows; a row with a key written twice is a bad row (the file's line is in
    the message: rows are numbered by entry). DataError when the file is broken, uses an alias
    or anchor, is nested too deep, or repeats a key outside any row."""
    try:
        node, value, problems = _yaml_document(text)
    except yaml.YAMLError as exc:
        raise DataError(yaml_error_text(exc, shown)) from exc
    spans = _row_spans(node)
    starts = [start for start, _ in spans]
    bad: dict[int, str] = {}
    for problem in problems:
        index = problem.mark.index
        number = bisect.bisect_right(starts, index)
        if number == 0 or index > spans[number - 1][1]:
            raise DataError(f"{shown}:{problem.line}: {problem.message}")
        bad.setdefault(number, f"{problem.message} (line {problem.line} of the file)")
    yield from _rows(value, shown, bad)


def _row_spans(node: Node | None) -> list[tuple[int, int]]:
    """Where each row's text starts and ends (character offsets), rows numbered as
    :func:`_rows` numbers them."""
    if isinstance(node, MappingNode):
        lists = [v for _, v in node.value if isinstance(v, SequenceNode)]
        node = lists[0] if len(lists) == 1 else None
    if not isinstance(node, SequenceNode):
        return []
    return [(row.start_mark.index, row.end_mark.index) for row in node.value]


def _rows(value: Any, shown: str, bad: Mapping[int, str] | None = None) -> Iterator[Record]:
    """A list of objects, or an object holding one list of objects (``{items: [...]}``);
    ``bad``: rows already known to be bad, by number, with what is wrong."""
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise DataError(f"{shown}: expected a list of rows, or an object holding one list")
        value = lists[0]
    if not isinstance(value, list):
        raise DataError(f"{shown}: expected a list of rows, found {type(value).__name__}")
    for number, row in enumerate(value, start=1):
        if bad and number in bad:
            yield _bad(shown, number, bad[number])
        elif isinstance(row, dict):
            yield Record(number, row)
        else:
            yield _bad(shown, number, f"entry {number} is a {type(row).__name__}, not an object")


def _csv_reader(handle: io.StringIO, tab_separated: bool) -> Any:
    """A csv reader: comma-separated with quoting, or tab-separated without quote processing."""
    csv.field_size_limit(CSV_FIELD_LIMIT)
    if tab_separated:
        return csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
    return csv.reader(handle, dialect="excel", strict=True)


def _csv(text: str, shown: str, *, tab_separated: bool) -> Iterator[Record]:
    """A CSV/TSV file's rows, each at the line where it starts (a quoted cell may span
    several lines). A quote that never closes makes its row bad and ends the file (it took in
    every line after it). DataError for a duplicate column name, or a row the csv module
    cannot read (after it, the reader could no longer tell where rows begin)."""
    reader = _csv_reader(io.StringIO(text, newline=""), tab_separated)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            if header is not None and str(exc) == "unexpected end of data":
                yield _bad(shown, start, _unclosed_quote(start, reader.line_num))
                break
            raise DataError(f"{shown}:{start}: not readable as CSV ({exc})") from None
        if header is None:
            header = [cell.strip() for cell in row]
            check_header(header, shown)
            continue
        problem = _csv_row_problem(row, header)
        if problem is not None:
            yield _bad(shown, start, problem)
        elif any(cell.strip() for cell in row):
            yield Record(start, dict(zip(header, row, strict=True)))
    if header is None:
        raise DataError(f"{shown}: the file is empty (no header row)")


def _csv_row_problem(row: Sequence[str], header: Sequence[str]) -> str | None:
    """What keeps a CSV row out (a NUL character, the wrong number of cells), or None; a row
    of empty cells is not a problem (it is skipped)."""
    if any("\0" in cell for cell in row):
        return "holds a NUL character (the file may be binary or damaged)"
    if any(cell.strip() for cell in row) and len(row) != len(header):
        return f"{len(row)} cells where the header has {len(header)}"
    return None


def _unclosed_quote(start: int, end: int) -> str:
    """The problem of a row whose quoted cell never closes."""
    lines = f"lines {start}–{end}" if end > start else f"line {start}"
    return (
        f"a quoted cell opens here and never closes, taking in {lines} to the end of the "
        'file; close the quote (a " inside a quoted cell is written "")'
    )


def check_header(header: Sequence[str], shown: str) -> None:
    """DataError when a column name appears twice (one would silently hide the other) or a
    name holds a NUL character; unnamed columns are not compared."""
    seen: set[str] = set()
    for name in header:
        if "\0" in name:
            raise DataError(f"{shown}: the header row holds a NUL character (the file may be "
                            "binary or damaged)")  # fmt: skip
        if name and name in seen:
            raise DataError(f"{shown}: the column {name!r} appears twice in the header row")
        seen.add(name)


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
                        check_header(header, f"{shown} (sheet {sheet_name!r})")
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
