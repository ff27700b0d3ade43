"""Drawings (spec artifacts.md §2): the streaming element parser, normalisation, the
whole-answer parser, failures, metrics, the SVG rendering and the registered kind."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepbench.artifacts import artifact_kind
from sweepbench.artifacts.excalidraw import (
    EXCALIDRAW,
    NO_ELEMENTS,
    PALETTE,
    PLACEHOLDER_PROMPT,
    SCENE_SCHEMA,
    SYSTEM_PROMPT_V1,
    ElementStream,
    Normaliser,
    build,
    drawing_metrics,
    new_rng,
    parse_response,
    render_svg,
)
from sweepbench.artifacts.jsontext import drop_trailing_commas

SVG_NS = "http://www.w3.org/2000/svg"
BOX = '{"id": "a", "type": "rectangle", "x": 0, "y": 0, "width": 10, "height": 10}'
"""The smallest element that draws something."""


def el(**fields: Any) -> dict[str, Any]:
    """An element as the prompt asks for it, with the given fields on top."""
    base: dict[str, Any] = {
        "angle": 0,
        "strokeColor": "#1e1e1e",
        "backgroundColor": "transparent",
        "fillStyle": "solid",
        "strokeWidth": 1,
        "strokeStyle": "solid",
        "roughness": 0,
        "opacity": 100,
        "seed": 1,
        "version": 1,
        "versionNonce": 2,
        "isDeleted": False,
        "groupIds": [],
        "frameId": None,
        "boundElements": [],
        "updated": 1,
        "link": None,
        "locked": False,
    }
    return base | fields


ELEMENTS = [
    el(id="title", type="text", x=400, y=20, width=400, height=40, text="Payments {service}",
       fontSize=32, fontFamily=2, textAlign="center", verticalAlign="top", containerId=None,
       originalText="Payments {service}", lineHeight=1.25, roundness=None),
    el(id="api", type="rectangle", x=100, y=140, width=200, height=80, strokeColor="#4263eb",
       backgroundColor="#dbe4ff", roundness={"type": 3},
       boundElements=[{"id": "api-label", "type": "text"}]),
    el(id="api-label", type="text", x=116, y=170, width=168, height=20,
       text='the "API" }{ \\ end', fontSize=16, fontFamily=2, textAlign="center",
       verticalAlign="middle", containerId="api", strokeColor="#364fc7", roundness=None),
    el(id="db", type="ellipse", x=500, y=120, width=200, height=120, roundness={"type": 2},
       backgroundColor="#c3fae8", strokeColor="#0ca678"),
    el(id="q", type="diamond", x=500, y=340, width=200, height=120, fillStyle="hachure",
       backgroundColor="#ffe8cc", strokeColor="#f76707", roundness={"type": 3}),
    el(id="a1", type="arrow", x=300, y=180, width=200, height=0, points=[[0, 0], [200, 0]],
       startBinding={"elementId": "api", "focus": 0, "gap": 1},
       endBinding={"elementId": "db", "focus": 0, "gap": 1}, startArrowhead=None,
       endArrowhead="arrow", roundness=None),
    el(id="a2", type="arrow", x=200, y=220, width=300, height=180,
       points=[[0, 0], [0, 180], [300, 180]], strokeStyle="dashed", startBinding=None,
       endBinding=None, startArrowhead="dot", endArrowhead="triangle"),
    el(id="l1", type="line", x=40, y=600, width=100, height=0, points=[[0, 0], [100, 0]],
       startBinding={"elementId": "api", "focus": 0, "gap": 1}),
    el(id="fd", type="freedraw", x=800, y=500, width=50, height=30,
       points=[[0, 0], [10, 20], [50, 30]]),
    el(id="gone", type="rectangle", x=0, y=0, width=10, height=10, isDeleted=True),
]  # fmt: skip

SCENE: dict[str, Any] = {
    "type": "excalidraw",
    "version": 2,
    "source": "sweepbench",
    "elements": ELEMENTS,
    "appState": {"viewBackgroundColor": "#ffffff", "gridSize": None},
    "files": {},
}
SCENE_TEXT = json.dumps(SCENE, indent=1)


def stream_all(text: str, chunks: list[int] | None = None, seed: int = 7) -> ElementStream:
    """Feed ``text`` in chunks of the given sizes (cycled; whole when None)."""
    stream = ElementStream(new_rng(seed))
    if chunks is None:
        stream.feed(text)
        return stream
    i, k = 0, 0
    while i < len(text):
        size = chunks[k % len(chunks)]
        stream.feed(text[i : i + size])
        i, k = i + size, k + 1
    return stream


def well_formed(svg: bytes) -> ET.Element:
    """The parsed SVG root; fails if the bytes are not well-formed XML SVG."""
    root = ET.fromstring(svg)
    assert root.tag == f"{{{SVG_NS}}}svg"
    return root


def no_external_references(svg: bytes) -> None:
    """Nothing outside the file: the namespace is the only URL, no hrefs, no scripts."""
    text = svg.decode("utf-8").replace(f'xmlns="{SVG_NS}"', "")
    assert not re.search(r"https?://", text), text
    assert "href" not in text and "<script" not in text and "<image" not in text
    assert re.findall(r"url\(([^)]*)\)", text) == [
        f"#{m}" for m in re.findall(r"url\(#([\w-]+)\)", text)
    ]


# ----------------------------------------------------------------- streaming parser §2.4


def test_stream_emits_every_element_in_order_and_stops_at_the_bracket() -> None:
    stream = stream_all(SCENE_TEXT + '\n{"elements": [{"id": "after"}]}')
    assert [e["id"] for e in stream.elements] == [e["id"] for e in ELEMENTS]
    assert stream.closed and not stream.pending and stream.dropped == 0
    assert stream.feed('{"id": "late"}') == []


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=8))
def test_any_chunking_gives_the_same_elements(chunks: list[int]) -> None:
    whole = stream_all(SCENE_TEXT)
    assert stream_all(SCENE_TEXT, chunks).elements == whole.elements
    assert whole.elements == parse_response(SCENE_TEXT, new_rng(7)).elements


def test_one_character_at_a_time() -> None:
    text = "Sure, here is the diagram:\n```json\n" + SCENE_TEXT + "\n```\nEnjoy!"
    emitted: list[dict[str, Any]] = []
    stream = ElementStream(new_rng(7))
    for ch in text:
        emitted.extend(stream.feed(ch))
    assert emitted == stream_all(SCENE_TEXT).elements
    assert emitted[2]["text"] == 'the "API" }{ \\ end'


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet=st.sampled_from('ab{}[]",:\\ \n\té€😀'), max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
element_dicts = st.dictionaries(
    st.sampled_from(["id", "type", "x", "y", "text", "width", "points", "seed", "label"]),
    json_value,
    max_size=6,
)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(element_dicts, max_size=6),
    st.sampled_from(["", "Here it is:\n```json\n", "Some {prose} first. "]),
    st.sampled_from([None, 0, 2]),
    st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=4),
)
def test_generated_scenes_any_chunking(
    elements: list[dict[str, Any]], prefix: str, indent: int | None, chunks: list[int]
) -> None:
    text = prefix + json.dumps({"type": "excalidraw", "elements": elements}, indent=indent)
    whole = stream_all(text)
    assert len(whole.elements) == len(elements)
    assert stream_all(text, chunks).elements == whole.elements
    assert stream_all(text, [1]).elements == whole.elements


def _emitted_at(text: str) -> list[int]:
    """For each element, the length of the shortest prefix of ``text`` that completes it."""
    stream, ends = ElementStream(), []
    for i, ch in enumerate(text, start=1):
        ends.extend(i for _ in stream.feed(ch))
    return ends


EMITTED_AT = _emitted_at(SCENE_TEXT)


@settings(max_examples=80)
@given(st.integers(min_value=0, max_value=len(SCENE_TEXT)))
def test_a_truncated_scene_keeps_exactly_the_complete_elements(cut: int) -> None:
    text = SCENE_TEXT[:cut]
    stream = stream_all(text)
    complete = sum(1 for end in EMITTED_AT if end <= cut)
    assert stream.elements == stream_all(SCENE_TEXT).elements[:complete]
    outcome = build(text, "max_tokens", "v1")
    assert not outcome.ok
    assert outcome.reason.startswith("stop=max_tokens: the budget ran out")
    assert "JSON" not in outcome.reason
    drawn = sum(1 for e in stream.elements if not e["isDeleted"])
    assert outcome.partial == (drawn > 0)
    assert outcome.metrics["elements"] == drawn
    well_formed(outcome.files["svg"])


def test_braces_and_escaped_quotes_inside_strings() -> None:
    text = (
        '{"elements": [{"id": "a", "type": "text", "text": "} ] { \\" \\\\"}, '
        '{"id": "b", "type": "text", "text": "\\\\\\"}{"}]}'
    )
    stream = stream_all(text, [1])
    assert [e["text"] for e in stream.elements] == ['} ] { " \\', '\\"}{']
    assert stream.closed


def test_prose_and_a_code_fence_before_the_json_are_ignored() -> None:
    text = 'I will draw {"this"}: [1, 2]\n```json\n{"type": "excalidraw", "elements" :\n [\n'
    text += '{"id": "a", "type": "rectangle"}]}\n```'
    assert [e["id"] for e in stream_all(text, [3]).elements] == ["a"]


def test_a_malformed_element_is_dropped_and_the_stream_goes_on() -> None:
    text = f'{{"elements": [{BOX}, {{"id": "b", oops}}, {{"x": NaN}}, {{"id": "c"}}, 7, "s{{"]}}'
    stream = stream_all(text)
    assert [e["id"] for e in stream.elements] == ["a", "c"]
    assert stream.dropped == 2 and stream.closed
    outcome = build(text, "end", "v1")
    assert outcome.ok and "2 malformed element(s) dropped" in outcome.notes


def test_the_key_split_across_deltas() -> None:
    stream = ElementStream(new_rng(1))
    out: list[dict[str, Any]] = []
    for piece in ['{"ele', 'ments"', "   ", ":", "\n", "[", '{"id"', ': "a"}', "]"]:
        out.extend(stream.feed(piece))
    assert [e["id"] for e in out] == ["a"] and stream.closed


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(alphabet=st.sampled_from('{}[]":,\\ aelmnts\n0'), max_size=200) | st.text(max_size=200),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=3),
    st.sampled_from(["end", "max_tokens", "cancelled", "refusal", "error", "pause_turn"]),
)
def test_random_text_never_crashes(text: str, chunks: list[int], stop: str) -> None:
    text = '{"elements": [' + text if len(text) % 2 else text
    stream = stream_all(text, chunks)
    assert stream.elements == stream_all(text).elements
    outcome = build(text, stop, "v1")
    assert not outcome.reason.startswith("internal error"), outcome.reason
    if outcome.ok:
        assert stop == "end" and outcome.reason == ""
    else:
        assert outcome.reason
    if stop == "max_tokens":
        assert outcome.reason.startswith("stop=max_tokens")
    well_formed(outcome.files["svg"])
    json.dumps(outcome.artifact)


# ----------------------------------------------------------------- normalisation §2.5


def normalise(raw: dict[str, Any], seed: int = 1) -> tuple[dict[str, Any], Normaliser]:
    n = Normaliser(new_rng(seed))
    return n(raw), n


@pytest.mark.parametrize(
    ("raw", "field", "expected"),
    [
        ({"seed": "42"}, "seed", 42),
        ({"version": "3.0"}, "version", 3),
        ({"versionNonce": " 7 "}, "versionNonce", 7),
        ({"updated": "1"}, "updated", 1),
        ({"x": "100"}, "x", 100.0),
        ({"y": "-2.5"}, "y", -2.5),
        ({"width": "1e2"}, "width", 100.0),
        ({"fontSize": "16"}, "fontSize", 16.0),
        ({"roughness": "0"}, "roughness", 0.0),
        ({"opacity": "50"}, "opacity", 50.0),
        ({"containerId": "null"}, "containerId", None),
        ({"startBinding": "None"}, "startBinding", None),
        ({"locked": "true"}, "locked", True),
        ({"isDeleted": "false"}, "isDeleted", False),
        ({}, "isDeleted", False),
        ({}, "updated", 1),
        ({}, "version", 1),
        ({}, "groupIds", []),
        ({}, "boundElements", []),
        ({"boundElements": None}, "boundElements", None),
        ({}, "frameId", None),
        ({}, "link", None),
        ({}, "locked", False),
        ({}, "opacity", 100),
        ({"type": "text"}, "roundness", None),
        ({"type": "text", "text": "None", "originalText": "true"}, "text", "None"),
        ({"x": "abc"}, "x", "abc"),
        ({"x": "nan"}, "x", "nan"),
        ({"width": "inf"}, "width", "inf"),
        ({"seed": "4.5"}, "seed", "4.5"),
    ],
)
def test_normalisation_table(raw: dict[str, Any], field: str, expected: Any) -> None:
    element, normaliser = normalise({"id": "a", **raw})
    assert element[field] == expected
    assert type(element[field]) is type(expected)
    if field in raw and raw[field] != expected:
        assert any(field in note for note in normaliser.notes), normaliser.notes


def test_missing_seeds_are_random_positive_integers() -> None:
    element, normaliser = normalise({"id": "a", "seed": "null"})
    assert isinstance(element["seed"], int) and element["seed"] > 0
    assert isinstance(element["versionNonce"], int) and element["versionNonce"] > 0
    assert normaliser.renamed == 0
    assert "roundness" not in normalise({"id": "r", "type": "rectangle"})[0]


def test_unconvertible_values_are_kept_with_a_note() -> None:
    element, normaliser = normalise({"id": "a", "type": "rectangle", "x": "left"})
    assert element["x"] == "left"
    assert normaliser.notes == [
        "element 1 (rectangle 'a'): x 'left' is not a number; left as it is"
    ]


def test_missing_and_duplicate_ids_are_renamed_and_counted() -> None:
    text = json.dumps(
        {
            "elements": [
                {"id": "a"},
                {"id": "a"},
                {"type": "text", "text": "t"},
                {"id": ""},
                {"id": 5},
            ]
        }
    )
    stream = stream_all(text, seed=3)
    ids = [e["id"] for e in stream.elements]
    assert ids[0] == "a" and ids[4] == "5"
    assert all(re.fullmatch(r"el-[0-9a-f]{12}", i) for i in ids[1:4])
    assert len(set(ids)) == 5
    assert stream.renamed == 3
    assert sum("duplicate id 'a'" in n for n in stream.notes) == 1
    assert sum("no id" in n for n in stream.notes) == 2
    assert stream_all(text, seed=3).elements == stream.elements  # seeded: reproducible
    assert [e["id"] for e in stream_all(text, seed=4).elements][1] != ids[1]
    outcome = build(text, "end", "v1")
    assert outcome.metrics["renamed_ids"] == 3
    assert sum("renamed" in n or "no id" in n for n in outcome.notes) == 3


def test_live_ids_match_the_final_scene() -> None:
    text = json.dumps({"elements": [{"type": "rectangle"}, {"type": "ellipse"}]})
    live = ElementStream()
    shown = [e for ch in text for e in live.feed(ch)]
    assert [e["id"] for e in shown] == [
        e["id"] for e in build(text, "end", "v1").artifact["elements"]
    ]


# ----------------------------------------------------------------- whole answer §2.6


def test_fallback_strips_fences_and_trailing_commas_and_fills_the_envelope() -> None:
    text = (
        '```json\n{"elements": [{"id": "a", "type": "rectangle",},], '
        '"appState": {"collaborators": [],},}\n```'
    )
    parsed = parse_response(text)
    assert parsed.error == ""
    assert parsed.scene is not None
    assert parsed.scene["type"] == "excalidraw" and parsed.scene["version"] == 2
    assert parsed.scene["source"] == "sweepbench" and parsed.scene["files"] == {}
    assert parsed.scene["appState"] == {"viewBackgroundColor": "#ffffff", "gridSize": None}
    assert [e["id"] for e in parsed.elements] == ["a"]
    assert "appState.collaborators dropped" in parsed.notes


def test_build_falls_back_when_the_stream_found_nothing() -> None:
    text = (
        '{"elements": [{"id": "a", "type": "rectangle", "x": 1, "width": 5, "height": 5,}, '
        '{"id": "b",},]}'
    )
    assert stream_all(text).elements == []
    outcome = build(text, "end", "v1")
    assert outcome.ok
    assert [e["id"] for e in outcome.artifact["elements"]] == ["a", "b"]


def test_fallback_reports_why_nothing_was_read() -> None:
    assert parse_response("no json here").error == "no JSON object in the answer"
    cut = parse_response('{"elements": [{"id": "a"')
    assert cut.scene is None and cut.error.startswith("not JSON: ")
    assert (
        parse_response('{"elements": {"id": "a"}, "files": []}')
        .notes[0]
        .startswith("elements is a dict")
    )
    dropped = parse_response('{"elements": [1, {"id": "a"}]}')
    assert [e["id"] for e in dropped.elements] == ["a"]
    assert dropped.notes == ["item 1 of elements is not an object; dropped"]


def test_trailing_commas_inside_strings_are_kept() -> None:
    assert drop_trailing_commas('{"a": ",}", "b": [1, ],}') == '{"a": ",}", "b": [1 ]}'


# ----------------------------------------------------------------- failures §2.8, metrics §2.7


def test_a_complete_scene_is_ok() -> None:
    outcome = EXCALIDRAW.outcome(SCENE_TEXT, "end", None)
    assert outcome.ok and not outcome.partial and outcome.reason == "" and outcome.notes == []
    assert outcome.artifact == SCENE
    assert outcome.metrics == {
        "elements": 9,
        "invisible": 0,
        "by_type": {"arrow": 2, "diamond": 1, "ellipse": 1, "freedraw": 1, "line": 1,
                    "rectangle": 1, "text": 2},
        "text_elements": 2,
        "bound_arrows": 1,
        "renamed_ids": 0,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "stop", "ok", "partial", "reason"),
    [
        (SCENE_TEXT, "end", True, False, ""),
        ('{"elements": []}', "end", False, False, NO_ELEMENTS),
        ("I cannot draw that.", "end", False, False, NO_ELEMENTS),
        ("", "end", False, False, NO_ELEMENTS),
        (
            '{"elements": [{"id": "gone", "isDeleted": true}]}',
            "end",
            False,
            False,
            NO_ELEMENTS,
        ),
        (
            f'{{"elements": [{BOX}, {{"id": "b"',
            "end",
            False,
            True,
            "the answer ended mid-element; 1 complete element kept",
        ),
        (
            f'{{"elements": [{BOX}, {{"id": "b"',
            "max_tokens",
            False,
            True,
            "stop=max_tokens: the budget ran out mid-scene; 1 complete element kept",
        ),
        (
            '{"elements": [{"id": "a',
            "max_tokens",
            False,
            False,
            "stop=max_tokens: the budget ran out before any element was complete",
        ),
        (f'{{"elements": [{BOX}', "cancelled", False, True, "stopped"),
        ("", "cancelled", False, False, "stopped"),
        ("", "refusal", False, False, "refusal: the provider's safety system declined this "
         "request; nothing was generated"),
        (f'{{"elements": [{BOX}', "error", False, True, "stop=error; 1 complete element kept"),
        ("", "pause_turn", False, False, "stop=pause_turn"),
    ],
)  # fmt: skip
def test_failures(text: str, stop: str, ok: bool, partial: bool, reason: str) -> None:
    outcome = build(text, stop, "v1")
    assert (outcome.ok, outcome.partial, outcome.reason) == (ok, partial, reason)
    assert set(outcome.files) == {"svg"}
    assert outcome.artifact["type"] == "excalidraw"


def test_metrics() -> None:
    line = {"points": [[0, 0], [10, 5]]}
    elements = [
        {"type": "arrow", "startBinding": {"elementId": "a"}, "endBinding": None, **line},
        {"type": "arrow", "startBinding": None, "endBinding": {"elementId": "b"}, **line},
        {"type": "arrow", "startBinding": None, "endBinding": None, **line},
        {"type": "arrow", **line},
        {"type": "line", "startBinding": {"elementId": "a"}, **line},
        {"type": "text", "text": "hi"},
        {"type": "text", "text": "gone", "isDeleted": True},
        {"id": "no-type"},
    ]
    assert drawing_metrics(elements, 2) == {
        "elements": 6,
        "invisible": 1,
        "by_type": {"arrow": 4, "line": 1, "text": 1},
        "text_elements": 1,
        "bound_arrows": 2,
        "renamed_ids": 2,
    }


# ----------------------------------------------------------------- SVG


def test_svg_draws_every_live_element_and_nothing_external() -> None:
    svg = build(SCENE_TEXT, "end", "v1").files["svg"]
    root = well_formed(svg)
    no_external_references(svg)
    assert len(root.findall(f"{{{SVG_NS}}}g")) == 9  # the deleted rectangle is not drawn
    texts = ["".join(t.itertext()) for t in root.iter(f"{{{SVG_NS}}}text")]
    assert texts == ["Payments {service}", 'the "API" }{ \\ end']
    assert render_svg(SCENE) == svg  # deterministic


def test_svg_survives_hostile_values() -> None:
    scene = copy.deepcopy(SCENE)
    scene["appState"] = {"viewBackgroundColor": 'red" onload="x'}
    scene["elements"] = [
        el(id="a", type="rectangle", x="10", y=None, width=-50, height=10**400,
           strokeColor="url(https://evil.example/x.svg)", backgroundColor="#abc",
           link="https://evil.example", fillStyle="cross-hatch", angle=1.2, opacity="x"),
        el(id="t", type="text", text="<script>alert(1)</script>\x00\x1b\ud800 & done",
           fontSize=-3, lineHeight="tall", fontFamily="Comic", textAlign="justify",
           containerId="a", verticalAlign="bottom"),
        el(id="ar", type="arrow", x=0, y=0, points=[[0, 0], "x", [1], [None, 2], [0, 0], [30, 40]],
           endArrowhead="crowfoot_many", startArrowhead="diamond_outline"),
        el(id="ar2", type="arrow", x=0, y=0, points=[[0, 0], [0, 0]]),
        el(id="lb", type="text", text="label", containerId="ar"),
        el(id="img", type="image", x=5, y=5, width=20, height=20, fileId="f1"),
        el(id="fr", type="frame", x=0, y=0, width=300, height=300, name="Frame <1>"),
        el(id="fd", type="freedraw", x=1, y=1, points=[[0, 0]]),
        el(id="u", type="mystery", x=1e9, y=1e9),
        el(id="p", type="line", x=0, y=0, points=[[0, 0], [10, 0], [10, 10], [0, 0]],
           backgroundColor="#ffe8cc"),
    ]  # fmt: skip
    scene["files"] = {"f1": {"dataURL": "https://evil.example/i.png"}}
    svg = render_svg(scene)
    well_formed(svg)
    no_external_references(svg)
    assert b"<script>" not in svg and b"&lt;script&gt;" in svg


field_values = st.one_of(
    json_leaf,
    st.sampled_from(["#abc", "transparent", "center", "middle", "dot", "bar", "triangle", "a"]),
    st.lists(st.lists(json_leaf, max_size=3), max_size=4),
    st.dictionaries(st.sampled_from(["type", "elementId"]), json_leaf, max_size=2),
)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["rectangle", "ellipse", "diamond", "text", "arrow",
                                      "line", "freedraw", "frame", "image", "?"])},
            optional={
                key: field_values
                for key in ["id", "x", "y", "width", "height", "angle", "text", "points",
                            "strokeColor", "backgroundColor", "fillStyle", "strokeWidth",
                            "strokeStyle", "opacity", "fontSize", "fontFamily", "textAlign",
                            "verticalAlign", "containerId", "lineHeight", "roundness",
                            "startArrowhead", "endArrowhead", "name", "isDeleted"]
            },
        ),
        max_size=6,
    )
)  # fmt: skip
def test_render_never_raises_and_stays_well_formed(elements: list[dict[str, Any]]) -> None:
    svg = render_svg({"elements": elements})
    well_formed(svg)
    text = svg.decode("utf-8")
    assert "href" not in text and "<script" not in text


# ----------------------------------------------------------------- the kind


def test_the_kind_is_registered_with_the_drawing_defaults() -> None:
    kind = artifact_kind("excalidraw")
    assert kind is EXCALIDRAW and kind.label == "Drawing" and kind.versions == ["v1"]
    assert kind.defaults.axis == "effort" and kind.defaults.max_variants == 6
    assert kind.defaults.budget_chips == (4000, 8000, 16000, 24000, 48000, 64000)
    assert kind.defaults.held_max_tokens == 24000 and kind.defaults.prompt_cap == 4000
    # §2.1: remote models are asked without a schema; the local model gets it as a grammar
    assert kind.schema(None, "anthropic") is None and kind.schema(None, "openai") is None
    local = kind.schema(None, "local")
    assert local is not None and "elements" in local["properties"]
    assert kind.parser is not None
    assert isinstance(kind.parser(), ElementStream)
    assert kind.parser() is not kind.parser()
    assert kind.system_prompt(None) == SYSTEM_PROMPT_V1
    assert "payments service" in PLACEHOLDER_PROMPT


def test_the_prompt_teaches_the_contract_the_palette_and_the_rules() -> None:
    prompt = SYSTEM_PROMPT_V1
    for swatch in PALETTE:
        assert all(colour in prompt for colour in swatch[1:])
    for phrase in [
        '"source":"sweepbench"',
        "No code fences",
        "1,200 × 800",
        "20 px grid",
        "× fontSize × 0.6",
        "fontSize × 1.25",
        '"containerId"',
        '"startBinding"',
        "#1e1e1e",
        "#6b7280",
        "fontFamily 3",
        "roughness 0",
        "freedraw",
    ]:
        assert phrase in prompt, phrase  # fmt: skip
    assert prompt.rstrip().endswith("No code fences, no prose.")
    assert prompt.index("Typography") < prompt.index("Layout") < prompt.index("Palette")
    assert 4000 < len(prompt) < 8000  # about 1,300–1,600 tokens


def _walk_objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            found.append(schema)
        for value in schema.values():
            found.extend(_walk_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_walk_objects(value))
    return found


def test_the_schema_is_strict_and_accepts_the_prompted_scene() -> None:
    for obj in _walk_objects(SCENE_SCHEMA):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    jsonschema = pytest.importorskip("jsonschema")
    example = json.loads(
        "[" + SYSTEM_PROMPT_V1.split("Example, a labelled box:\n")[1].split("\n\n")[0] + "]"
    )
    scene = {**SCENE, "elements": example}
    jsonschema.validate(scene, SCENE_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**scene, "elements": [{"id": "a"}]}, SCENE_SCHEMA)


def test_the_schema_compiles_to_a_llama_cpp_grammar() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    assert llama_cpp.LlamaGrammar.from_json_schema(json.dumps(SCENE_SCHEMA), verbose=False)


def test_trailing_commas_only_before_closers_outside_strings() -> None:
    from sweepbench.artifacts.jsontext import drop_trailing_commas, first_object

    assert drop_trailing_commas('[1, "a", ]') == '[1, "a" ]'
    assert drop_trailing_commas('{"k": "x,}", "z": [2,\n]}') == '{"k": "x,}", "z": [2\n]}'
    assert drop_trailing_commas('["a\\",]", 3]') == '["a\\",]", 3]'
    assert first_object('note: {"a": "}"} tail') == '{"a": "}"}'
