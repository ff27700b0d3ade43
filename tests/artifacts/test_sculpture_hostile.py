"""Sculpture answers and manifest files nested absurdly deep (issue 12, item 2): each reader
raises its documented error, naming the path, or returns an outcome that says why — never a
RecursionError. Also the shared bound they use, :func:`sweepbench.nesting.bounded_json_loads`."""

from __future__ import annotations

import json

import pytest

from sweepbench.artifacts.sculpture import manifest
from sweepbench.artifacts.sculpture.kind import build, from_file
from sweepbench.artifacts.sculpture.parser import AnswerError, PartsParser, parse_answer, salvage
from sweepbench.artifacts.sculpture.structure import ManifestError
from sweepbench.nesting import MAX_DEPTH, TooDeep, bounded_json_loads

DEEP = "[" * 200_000 + "]" * 200_000
"""A 200,000-deep array (400 KB)."""

DEEP_SMALL = "[" * 100_000 + "]" * 100_000
"""A 100,000-deep array under the manifest size limit (200 KB)."""

PART = {
    "name": "base", "shape": "box", "size": {"x": 1, "y": 1, "z": 1},
    "position": {"x": 0, "y": 0.5, "z": 0}, "rotation": {"x": 0, "y": 0, "z": 0},
    "color": "#808080", "metallic": 0, "roughness": 0.5, "emissive_strength": 0,
}  # fmt: skip


def test_parse_answer_refuses_a_deep_answer_as_not_json() -> None:
    with pytest.raises(AnswerError, match=r"^nested deeper than 100 levels at line 1 column 1"):
        parse_answer('{"parts": ' + DEEP + "}")


def test_manifest_loads_refuses_a_deep_file_naming_the_manifest() -> None:
    text = '{"version": 1, "parts": ' + DEEP_SMALL + "}"
    assert len(text.encode()) <= manifest.MAX_FILE_BYTES
    with pytest.raises(ManifestError, match=r"^manifest: nested deeper than 100 levels"):
        manifest.loads(text)
    with pytest.raises(ManifestError, match=r"^manifest: nested deeper than 100 levels"):
        manifest.loads(text.encode())


def test_from_file_says_why_it_refuses_a_deep_file() -> None:
    outcome = from_file('{"version": 1, "parts": ' + DEEP_SMALL + "}")
    assert not outcome.ok
    assert outcome.reason is not None
    assert outcome.reason.startswith("manifest: nested deeper than 100 levels")


def test_a_deep_model_answer_is_not_usable_json_and_good_parts_survive() -> None:
    answer = '{"parts": [' + json.dumps(PART) + ', {"name": ' + DEEP + "}]}"
    outcome = build(answer, "end", "v1")  # its cost: benchmarks/hostile_inputs.py
    assert not outcome.ok and outcome.partial  # the complete part is salvaged
    assert outcome.reason == (
        "The model did not return usable JSON: nested deeper than 100 levels at line 1 column "
        f"{answer.index('[' * 100) + 98}"  # the 98th [ of the value is the 101st level
    )
    assert [p["name"] for p in outcome.artifact["parts"]] == ["base"]


def test_the_streaming_parser_skips_a_deep_part() -> None:
    parser = PartsParser()
    assert parser.feed('{"parts": [{"a": ' + DEEP + "}, ") == []
    assert parser.feed(json.dumps(PART) + "]}") == [PART]
    data, count = salvage('{"parts": [' + json.dumps(PART) + ', {"a": ' + DEEP + "}")
    assert (data, count) == ({"parts": [PART]}, 1)


# --------------------------------------------------------------------------- the shared bound


def test_the_bound_counts_only_brackets_outside_strings() -> None:
    text = json.dumps({"text": "[" * 10_000 + "{" * 10_000, "list": [[["x"]]]})
    assert bounded_json_loads(text)["list"] == [[["x"]]]
    escaped = json.dumps({"text": '\\"[[[' + '"' * 3 + "[" * 5_000})
    assert bounded_json_loads(escaped)["text"].endswith("[" * 5_000)


def test_the_bound_is_the_limit_exactly() -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert bounded_json_loads(at_limit) is not None
    over = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(TooDeep) as caught:
        bounded_json_loads(over)
    assert (caught.value.line, caught.value.column) == (1, MAX_DEPTH + 1)
    assert isinstance(caught.value, ValueError)


def test_the_place_is_given_as_line_and_column() -> None:
    text = '{"ok": 1,\n  "deep": ' + DEEP + "}"
    with pytest.raises(TooDeep) as caught:
        bounded_json_loads(text)
    assert (caught.value.line, caught.value.column) == (2, 110)  # '  "deep": ' then the 100th [
    assert str(caught.value) == (
        f"nested deeper than 100 levels at line 2 column {caught.value.column}"
    )


def test_the_bound_reads_a_wide_document_and_refuses_a_deep_one() -> None:
    """What the bound costs (against json.loads) is measured in benchmarks/hostile_inputs.py."""
    flat = json.dumps([{"q": "x" * 50, "n": [1, 2]} for _ in range(50_000)])
    assert bounded_json_loads(flat) == json.loads(flat)
    with pytest.raises(TooDeep):
        bounded_json_loads(DEEP * 5)
