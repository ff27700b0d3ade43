"""Repairs of drawings that would show a blank canvas (issue 13, item 2): opacity on a 0-1
scale, text elements with no text, the same element stacked again, and counting only the
elements that draw something."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sweepbench.artifacts.excalidraw import ElementStream, build, parse_response
from sweepbench.artifacts.excalidraw.normalise import Normaliser, new_rng
from sweepbench.artifacts.excalidraw.repair import draws_something


def box(**fields: Any) -> dict[str, Any]:
    """A visible rectangle, with ``fields`` on top."""
    base: dict[str, Any] = {
        "id": "r",
        "type": "rectangle",
        "x": 100,
        "y": 100,
        "width": 200,
        "height": 80,
        "strokeColor": "#1e1e1e",
        "backgroundColor": "#a5d8ff",
        "opacity": 100,
    }
    return base | fields


def label(**fields: Any) -> dict[str, Any]:
    """A free text element, with ``fields`` on top."""
    base: dict[str, Any] = {"id": "t", "type": "text", "x": 10, "y": 10, "text": "API"}
    return base | fields


def scene(*elements: dict[str, Any]) -> str:
    return json.dumps({"type": "excalidraw", "elements": list(elements)})


@pytest.mark.parametrize(
    ("written", "read"), [(0.3, 30), (0.698, 70), (1, 100), (1.0, 100), (0.05, 5)]
)
def test_opacity_on_a_zero_to_one_scale_is_read_as_a_percentage(written: float, read: int) -> None:
    normalise = Normaliser(new_rng(1))
    element = normalise(box(opacity=written))
    assert element["opacity"] == read
    assert normalise.notes == [
        f"element 1 (rectangle 'r'): opacity {written!r} read on a 0-1 scale as {read} (of 100)"
    ]


@pytest.mark.parametrize("opacity", [0, 50, 100, 30.5])
def test_opacity_already_on_excalidraws_scale_is_kept(opacity: float) -> None:
    normalise = Normaliser(new_rng(1))
    assert normalise(box(opacity=opacity))["opacity"] == opacity
    assert normalise.notes == []


def test_opacity_written_as_a_string_is_converted_then_rescaled() -> None:
    normalise = Normaliser(new_rng(1))
    assert normalise(box(opacity="0.5"))["opacity"] == 50
    assert len(normalise.notes) == 2


@pytest.mark.parametrize("text", ["", "   ", "\n", None])
def test_a_text_element_without_text_is_dropped_with_a_note(text: str | None) -> None:
    answer = scene(label(id="empty", text=text), box())
    outcome = build(answer, "end", "v1")
    assert [e["id"] for e in outcome.artifact["elements"]] == ["r"]
    assert "element 1 (text 'empty'): a text element with no text; dropped" in outcome.notes
    assert outcome.metrics["elements"] == 1


def test_an_element_repeated_at_the_same_spot_is_dropped_with_a_note() -> None:
    answer = scene(box(id="a"), box(id="b"), box(id="c", x=400), box(id="a"))
    stream = ElementStream(new_rng(1))
    kept = [e["id"] for ch in answer for e in stream.feed(ch)]
    assert kept == ["a", "c"]
    assert stream.notes == [
        "element 2 (rectangle 'b'): the same as element 1 (only its id differs); dropped",
        "element 4 (rectangle 'a'): the same as element 1 (only its id differs); dropped",
    ]
    assert stream.renamed == 0  # a dropped copy is not renamed
    outcome = build(answer, "end", "v1")
    assert [e["id"] for e in outcome.artifact["elements"]] == ["a", "c"]
    assert outcome.metrics["elements"] == 2


def test_the_whole_answer_parser_drops_the_same_elements() -> None:
    answer = scene(box(id="a"), box(id="b"), label(text=""), label(id="u", text="ok")) + ","
    parsed = parse_response(answer)
    assert [e["id"] for e in parsed.elements] == ["a", "u"]
    assert sum("dropped" in note for note in parsed.notes) == 2


def test_copies_that_differ_only_in_seed_and_version_are_repeats() -> None:
    answer = scene(box(id="a", seed=1, version=1), box(id="b", seed=2, version=7, updated=3))
    assert [e["id"] for e in build(answer, "end", "v1").artifact["elements"]] == ["a"]


def test_untyped_placeholders_are_not_taken_for_repeats() -> None:
    answer = scene({"id": "a"}, {"id": "a"})
    assert len(ElementStream(new_rng(1)).feed(answer)) == 2


def test_the_blank_local_drawing_of_issue_13_now_shows_its_shapes() -> None:
    """The shape of the keyless local cell that said "6 ELEMENTS" on a blank canvas."""
    answer = scene(
        box(id="api", opacity=0.3),
        box(id="api-2", opacity=0.3),
        box(id="db", x=400, opacity=0.698),
        label(id="l1", text=""),
        label(id="l2", text=""),
        label(id="l3", text="", x=300),
    )
    outcome = build(answer, "end", "v1")
    assert outcome.ok
    assert [e["id"] for e in outcome.artifact["elements"]] == ["api", "db"]
    assert [e["opacity"] for e in outcome.artifact["elements"]] == [30, 70]
    assert outcome.metrics["elements"] == 2
    svg = outcome.files["svg"].decode()
    assert 'opacity="0.3"' in svg and 'opacity="0.7"' in svg
    assert len(outcome.notes) == 6  # two opacity repairs, one repeat, three blank texts


@pytest.mark.parametrize(
    ("element", "draws"),
    [
        (box(), True),
        (box(opacity=0), False),
        (box(isDeleted=True), False),
        (box(width=0), False),
        (box(strokeColor="transparent", backgroundColor="transparent"), False),
        (box(strokeColor="transparent"), True),
        (box(backgroundColor="transparent", strokeWidth=0, strokeColor="#000"), False),
        (label(), True),
        (label(text=" "), False),
        ({"type": "arrow", "x": 0, "y": 0, "points": [[0, 0], [50, 0]]}, True),
        ({"type": "arrow", "x": 0, "y": 0, "points": [[0, 0], [0, 0]]}, False),
        ({"type": "line", "x": 0, "y": 0, "points": [[0, 0]]}, False),
        ({"type": "freedraw", "x": 0, "y": 0, "points": [[0, 0]]}, True),
        ({"type": "sticker", "x": 0, "y": 0, "width": 9, "height": 9}, False),
        ({"type": ["rectangle"], "x": 0, "y": 0}, False),
        ({"id": "no-type"}, False),
    ],
)
def test_draws_something(element: dict[str, Any], draws: bool) -> None:
    assert draws_something(element) is draws


def test_an_invisible_scene_is_no_drawing() -> None:
    outcome = build(scene(box(opacity=0), label(text=" ")), "end", "v1")
    assert not outcome.ok
    assert outcome.reason == "the model returned no drawable elements"
    assert outcome.metrics["elements"] == 0 and outcome.metrics["invisible"] == 1


def test_a_blank_text_with_an_original_text_gets_it_back() -> None:
    answer = scene(label(id="l", text="", originalText="Payments API"))
    outcome = build(answer, "end", "v1")
    assert [e["text"] for e in outcome.artifact["elements"]] == ["Payments API"]
    assert outcome.notes == [
        "element 1 (text 'l'): empty text filled from originalText 'Payments API'"
    ]


def test_a_scene_whose_every_element_is_dropped_notes_each_once() -> None:
    outcome = build(scene(label(id="a", text=""), label(id="b", text="")), "end", "v1")
    assert outcome.reason == "the model returned no drawable elements"
    assert len(outcome.notes) == 2


# ---- the local grammar's labelled shapes ------------------------------------------------------


def lean(**fields: Any) -> dict[str, Any]:
    """A shape as the local grammar has the model write it."""
    base: dict[str, Any] = {
        "type": "rectangle",
        "id": "api",
        "label": "API",
        "x": 80,
        "y": 80,
        "width": 200,
        "height": 80,
        "strokeColor": "#4263eb",
        "backgroundColor": "#dbe4ff",
    }
    return base | fields


def test_a_label_becomes_the_text_bound_to_its_shape() -> None:
    outcome = build(scene(lean()), "end", "v1")
    shape, text = outcome.artifact["elements"]
    assert "label" not in shape
    assert shape["boundElements"] == [{"id": "api-label", "type": "text"}]
    assert text["type"] == "text" and text["text"] == text["originalText"] == "API"
    assert text["containerId"] == "api" and text["id"] == "api-label"
    assert outcome.metrics["elements"] == 2 and outcome.metrics["text_elements"] == 1
    assert outcome.notes == [
        "element 1 (rectangle 'api'): label 'API' drawn as its text 'api-label'"
    ]
    assert b"API</tspan>" in outcome.files["svg"]


def test_labelled_shapes_on_one_place_are_moved_apart() -> None:
    answer = scene(lean(id="a", label="API"), lean(id="b", label="Queue", type="ellipse"))
    elements = build(answer, "end", "v1").artifact["elements"]
    boxes = [(e["type"], e["y"]) for e in elements if e["type"] != "text"]
    assert boxes == [("rectangle", 80), ("ellipse", 80 + 80 + 40)]
    texts = {e["text"]: e["y"] for e in elements if e["type"] == "text"}
    assert texts["Queue"] > texts["API"] + 80  # the label moved with its shape


def test_a_labelled_shape_overlapping_several_goes_below_them_all() -> None:
    answer = scene(
        lean(id="a", label="A"),
        lean(id="b", label="B", x=200, y=120),  # overlaps a: below a
        lean(id="c", label="C", x=120, y=80),  # overlaps a, then b: below b
        lean(id="d", label="D", x=800),  # clear of them all: stays
    )
    elements = build(answer, "end", "v1").artifact["elements"]
    places = {e["id"]: e["y"] for e in elements if e["type"] == "rectangle"}
    assert places == {"a": 80, "b": 200, "c": 320, "d": 80}


def test_unlabelled_shapes_may_overlap() -> None:
    answer = scene(box(id="a"), box(id="b", x=120))
    assert [e["y"] for e in build(answer, "end", "v1").artifact["elements"]] == [100, 100]


def test_a_label_text_id_already_taken_gets_a_fresh_one() -> None:
    answer = scene(label(id="api-label", text="title"), lean())
    elements = build(answer, "end", "v1").artifact["elements"]
    shape, text = elements[1], elements[2]
    assert text["id"] != "api-label" and shape["boundElements"] == [
        {"id": text["id"], "type": "text"}
    ]


def test_the_local_grammar_asks_for_three_to_eight_labelled_shapes_or_arrows() -> None:
    from sweepbench.artifacts.excalidraw import EXCALIDRAW
    from sweepbench.artifacts.excalidraw.schema import LOCAL_SCENE_SCHEMA

    assert EXCALIDRAW.schema(None, "local") is LOCAL_SCENE_SCHEMA
    elements = LOCAL_SCENE_SCHEMA["properties"]["elements"]
    assert (elements["minItems"], elements["maxItems"]) == (3, 8)
    kinds = [item["properties"]["type"]["enum"] for item in elements["items"]["anyOf"]]
    assert kinds == [["rectangle", "ellipse", "diamond"], ["arrow", "line"]]
    for item in elements["items"]["anyOf"]:
        assert list(item["properties"])[:2] == ["type", "id"]  # what, before how
        assert item["required"] == list(item["properties"])


def test_a_scene_in_the_local_grammar_draws() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from sweepbench.artifacts.excalidraw.schema import LOCAL_SCENE_SCHEMA

    arrow = {
        "type": "arrow",
        "id": "a1",
        "x": 280,
        "y": 120,
        "points": [[0, 0], [120, 0]],
        "strokeColor": "#1e1e1e",
    }
    answer = {
        "type": "excalidraw",
        "version": 2,
        "source": "sweepbench",
        "elements": [lean(), lean(id="db", label="DB", x=400), arrow],
        "appState": {"viewBackgroundColor": "#ffffff", "gridSize": None},
        "files": {},
    }
    jsonschema.validate(answer, LOCAL_SCENE_SCHEMA)
    outcome = build(json.dumps(answer), "end", "v1")
    assert outcome.ok and outcome.metrics["elements"] == 5
    assert outcome.metrics["by_type"] == {"arrow": 1, "rectangle": 2, "text": 2}


# ---- the keyless comparison -------------------------------------------------------------------


def test_the_keyless_drawing_budget_lets_both_cells_finish() -> None:
    """scripted/sketch writes 822 words (its tokens); the local grammar ends a scene after at
    most 8 elements of ~70 tokens. 2,000 left the local cell running out of budget for 68 s."""
    pytest.importorskip("dash", reason="the web extra is not installed")
    from sweepbench.models.scripted import EFFORT_REASONING, answer_file
    from sweepbench.web.defaults import LOCAL, kind_defaults
    from sweepbench.web.offer import offered_models

    defaults = kind_defaults("excalidraw", offered_models(), keyless=True)
    assert defaults.axis == "model"
    assert defaults.models == ("scripted/sketch", LOCAL)
    # the sketch's answer and the thinking its held effort adds must fit, or it is cut short
    words = len(answer_file("diagram").split())
    thinking = int(words * EFFORT_REASONING.get(defaults.held_effort, 0.0))
    assert words + thinking <= defaults.held_budget <= 1200
