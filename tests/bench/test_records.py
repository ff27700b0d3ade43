"""The data-file reader: encodings, CSV/TSV edge cases, duplicate columns and YAML types."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.sources import records
from sweepbench.bench.sources.records import iter_records, load_data_yaml
from sweepbench.bench.sources.yaml_guard import YamlRefused
from sweepbench.errors import DataError


def rows(path: Path) -> list[tuple[int, dict[str, Any] | None, str | None]]:
    """Every record of ``path`` as (line, data, problem message)."""
    return [
        (r.line, dict(r.data) if r.data is not None else None, r.problem and r.problem.message)
        for r in iter_records(path)
    ]


# --------------------------------------------------------------------------- encodings


@pytest.mark.parametrize(
    ("name", "content", "offset"),
    [
        ("d.csv", "q,a\ncafé,x\n", 7),
        ("d.jsonl", '{"q": "café", "a": "x"}\n', 10),
        ("d.json", '[{"q": "café", "a": "x"}]', 11),
        ("d.yaml", "- {q: café, a: x}\n", 9),
    ],
)
def test_latin1_file_is_a_data_error_naming_the_byte(
    tmp_path: Path, name: str, content: str, offset: int
) -> None:
    path = tmp_path / name
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(DataError) as raised:
        list(iter_records(path))
    assert str(raised.value).startswith(f"{name}: not UTF-8 text: byte 0xe9 at offset {offset}")


def test_offset_counts_the_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfq,a\n\xff,x\n")
    with pytest.raises(DataError, match=r"byte 0xff at offset 7"):
        list(iter_records(path))


def test_bom_and_crlf_are_read(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b'\xef\xbb\xbfq,a\r\n"one\r\ntwo",x\r\nthree,y\r\n')
    assert rows(path) == [(2, {"q": "one\r\ntwo", "a": "x"}, None), (4, {"q": "three", "a": "y"},
                                                                         None)]  # fmt: skip


def test_jsonl_keeps_line_separator_characters_inside_strings(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"q": "a\u2028b"}\n{"q": "c"}\n', encoding="utf-8")
    assert rows(path) == [(1, {"q": "a\u2028b"}, None), (2, {"q": "c"}, None)]


# --------------------------------------------------------------------------- CSV and TSV


def test_csv_field_over_the_default_limit_is_read(tmp_path: Path) -> None:
    big = "x" * 200_000
    path = tmp_path / "d.csv"
    path.write_text(f"q,a\n{big},y\nok,z\n", encoding="utf-8")
    assert rows(path) == [(2, {"q": big, "a": "y"}, None), (3, {"q": "ok", "a": "z"}, None)]
    assert csv.field_size_limit() == records.CSV_FIELD_LIMIT == 2**31 - 1


def test_other_csv_error_is_a_data_error_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(records, "CSV_FIELD_LIMIT", 10)
    path = tmp_path / "d.csv"
    path.write_text("q,a\nshort,x\n" + "y" * 20 + ",z\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^d\.csv:3: not readable as CSV \(field larger"):
        list(iter_records(path))


def test_multi_line_row_is_reported_at_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('q,a\n"line one\nline two\nline three"\nok,z\n\nlast,w\n', encoding="utf-8")
    assert rows(path) == [
        (2, None, "1 cells where the header has 2"),
        (5, {"q": "ok", "a": "z"}, None),
        (7, {"q": "last", "a": "w"}, None),
    ]


def test_tsv_is_read_without_quote_processing(tmp_path: Path) -> None:
    path = tmp_path / "d.tsv"
    path.write_text('q\ta\n"He said "hi"\tx\nplain "quoted" word\t"y"\n', encoding="utf-8")
    assert rows(path) == [
        (2, {"q": '"He said "hi"', "a": "x"}, None),
        (3, {"q": 'plain "quoted" word', "a": '"y"'}, None),
    ]


def test_duplicate_csv_column_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("q,a, a \nhello,x,y\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^d\.csv: the column 'a' appears twice"):
        list(iter_records(path))


def test_unnamed_csv_columns_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("q,a,,\nhello,x,,\n", encoding="utf-8")
    assert rows(path)[0][1] == {"q": "hello", "a": "x", "": ""}


def test_duplicate_xlsx_column_is_a_data_error(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["q", "a", "a"])
    sheet.append(["hello", "x", "y"])
    path = tmp_path / "d.xlsx"
    book.save(path)
    with pytest.raises(DataError, match=r"d\.xlsx \(sheet 'Sheet'\): the column 'a' appears twice"):
        list(iter_records(path))


# --------------------------------------------------------------------------- YAML data


def test_yaml_data_follows_the_core_schema() -> None:
    text = (
        "- [no, NO, on, off, yes, Yes, y, '1']\n"
        "- [true, True, TRUE, false, FALSE]\n"
        "- [12:30, 010, 0x1f, 0o7, 1_000, 2024-01-01]\n"
        "- [0, -0, +5, 42, 1.5, 1.10, 1e3, .5, 5., -.inf, ~, null, '']\n"
    )
    plain, booleans, texts, numbers = load_data_yaml(text)
    assert plain == ["no", "NO", "on", "off", "yes", "Yes", "y", "1"]
    assert booleans == [True, True, True, False, False]
    assert texts == ["12:30", "010", "0x1f", "0o7", "1_000", "2024-01-01"]
    assert numbers == [0, 0, 5, 42, 1.5, 1.1, 1000.0, 0.5, 5.0, float("-inf"), None, None, ""]
    assert [type(v).__name__ for v in numbers[:4]] == ["int"] * 4


def test_yaml_data_file_keeps_answers_as_text(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("items:\n  - {q: Norway, a: NO}\n  - {q: Time, a: 12:30}\n", encoding="utf-8")
    assert rows(path) == [(1, {"q": "Norway", "a": "NO"}, None),
                          (2, {"q": "Time", "a": "12:30"}, None)]  # fmt: skip


def test_yaml_merge_keys_still_work_but_not_through_an_alias() -> None:
    assert load_data_yaml("row:\n  <<: {x: 1}\n  y: 2\n")["row"] == {"x": 1, "y": 2}
    with pytest.raises(YamlRefused, match=r"anchor \(&b\): YAML anchors and aliases"):
        load_data_yaml("base: &b {x: 1}\nrow:\n  <<: *b\n  y: 2\n")
