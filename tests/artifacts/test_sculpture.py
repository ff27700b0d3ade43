"""The sculpture kind (spec artifacts.md §3): clamps, v2 structure, the .glb, metrics, the
streaming parser and failure reporting."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygltflib
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweepbench.artifacts import artifact_kind
from sweepbench.artifacts.sculpture import (
    SCULPTURE,
    build,
    dumps,
    from_data,
    from_file,
    lenient,
    loads,
)
from sweepbench.artifacts.sculpture.geometry import euler_to_quat, hex_to_linear
from sweepbench.artifacts.sculpture.glb import MAX_GLB_BYTES
from sweepbench.artifacts.sculpture.manifest import ManifestError, download_name, validate
from sweepbench.artifacts.sculpture.mesh import tessellate
from sweepbench.artifacts.sculpture.parser import PartsParser

FIXTURES = Path(__file__).parents[2] / "src/sweepbench/artifacts/sculpture/fixtures"
GOOD = ["lighthouse", "colonnade", "brazier", "cart"]


def xyz(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": x, "y": y, "z": z}


def part(
    name: str = "p", shape: str = "box", size: Any = (1, 1, 1), pos: Any = (0, 0.5, 0), **kw: Any
) -> dict[str, Any]:
    out = {
        "name": name,
        "shape": shape,
        "size": xyz(*size),
        "position": xyz(*pos),
        "rotation": xyz(0, 0, 0),
        "color": "#336699",
        "metallic": 0,
        "roughness": 0.5,
        "emissive_strength": 0,
    }
    return {**out, **kw}


def answer(*parts: dict[str, Any], **top: Any) -> str:
    return json.dumps({"name": "t", "notes": "n", "parts": list(parts), **top})


# ---- the kind ---------------------------------------------------------------------------------


def test_registered_with_the_sweep_defaults() -> None:
    kind = artifact_kind("sculpture")
    assert kind is SCULPTURE and kind.label == "Sculpture"
    assert kind.versions == ["v1", "v2"] and kind.default_version == "v1"
    d = kind.defaults
    assert (d.axis, d.max_variants, d.held_max_tokens, d.prompt_cap) == ("model", 4, 4000, 400)
    assert d.budget_chips == (2000, 4000, 8000, 16000)
    assert "never a radius" in (kind.system_prompt("v1") or "")
    v2 = kind.system_prompt("v2") or ""
    assert "defs" in v2 and "JOINTS" in v2 and "28 leaves" in v2


def _closed(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert sorted(node["required"]) == sorted(node["properties"])
        for value in node.values():
            _closed(value)
    elif isinstance(node, list):
        for value in node:
            _closed(value)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_schemas_are_strict_and_convert_to_llama_grammars(version: str) -> None:
    import llama_cpp

    schema = SCULPTURE.schema(version)
    assert schema is not None
    _closed(schema)
    assert llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) is not None


# ---- numbers: rotation, colour, tessellation ----------------------------------------------------


def test_rotation_and_colour() -> None:
    assert euler_to_quat(90, 0, 0) == pytest.approx((0.7071, 0, 0, 0.7071), abs=1e-4)
    assert hex_to_linear("#ffffff") == (1.0, 1.0, 1.0)
    assert hex_to_linear("000000") == (0.0, 0.0, 0.0)
    assert hex_to_linear("#0a0a0a")[0] == pytest.approx(10 / 255 / 12.92)
    assert hex_to_linear("#808080")[0] == pytest.approx(((128 / 255 + 0.055) / 1.055) ** 2.4)


@pytest.mark.parametrize(
    ("shape", "vertices", "triangles"),
    [
        ("box", 24, 12),
        ("plane", 4, 2),
        ("sphere", 425, 720),
        ("cylinder", 100, 96),
        ("cone", 75, 48),
        ("torus", 561, 1024),
    ],
)
def test_tessellation_reference_counts(shape: str, vertices: int, triangles: int) -> None:
    mesh = tessellate(shape, 1.0, 2.0, 0.5)
    assert (len(mesh.positions), len(mesh.indices)) == (vertices, triangles)


def test_sizes_are_full_widths() -> None:
    sphere = tessellate("sphere", 2.0, 0.1, 0.1).positions
    assert sphere.max(axis=0) == pytest.approx([1.0, 1.0, 1.0])
    torus = tessellate("torus", 1.0, 9.0, 0.2).positions
    assert torus.max(axis=0) == pytest.approx([0.6, 0.1, 0.6])


# ---- clamps and defaults (lenient path) ---------------------------------------------------------


def test_every_clamp_is_a_note() -> None:
    raw = part(
        size=(6.2, 1, 1), pos=(9, True, 0), metallic="shiny", roughness=0, color="blue", extra=1
    )
    del raw["name"]
    manifest, notes = lenient({"parts": [raw, part(shape="blob")]})
    leaf = manifest["parts"][0]
    assert (
        leaf["size"]["x"] == 4.0 and leaf["position"]["x"] == 5.0 and leaf["position"]["y"] == 0.0
    )
    assert leaf["metallic"] == 0.0 and leaf["roughness"] == 0.05 and leaf["name"] == "part0"
    assert "parts[0].size.x 6.2 → 4.0" in notes
    assert any(n.startswith("parts[0].position.y true") for n in notes)
    assert any("dropped parts[1] — unknown shape" in n for n in notes)
    assert any(n.startswith("parts[0].color") for n in notes)
    assert any(n.startswith("parts[0].extra dropped") for n in notes)
    outcome = from_data({"parts": [raw]})
    assert outcome.ok and outcome.metrics["clamped"] == len(outcome.notes) >= 6


def test_first_28_parts_kept_and_no_usable_parts() -> None:
    manifest, notes = lenient({"parts": [part(pos=(0, i * 0.1, 0)) for i in range(30)]})
    assert len(manifest["parts"]) == 28 and "kept the first 28 of 30 parts" in notes
    outcome = build(answer(part(shape="blob")), "end", "v1")
    assert not outcome.ok and outcome.reason == "no usable parts in the scene"


# ---- manifest v2: strict checks and lenient repairs ---------------------------------------------


def _leafdef(**kw: Any) -> dict[str, Any]:
    out = part(**kw)
    del out["position"]
    return out


def _ref(name: str, x: float = 0.0) -> dict[str, Any]:
    return {"ref": name, "position": xyz(x, 0.5, 0)}


def test_strict_refusals_name_the_path() -> None:
    cycle = {
        "version": 2,
        "parts": [_ref("a")],
        "defs": {"a": {"children": [_ref("b")]}, "b": {"children": [_ref("a")]}},
    }
    with pytest.raises(ManifestError, match=r"defs\.b\.children\[0\]\.ref: ref cycle a -> b -> a"):
        validate(cycle)
    deep: dict[str, Any] = part()
    for _ in range(4):
        deep = {"group": "g", "position": xyz(0, 0, 0), "children": [deep]}
    with pytest.raises(ManifestError, match=r"^parts\[0\].*deeper than 4"):
        validate({"version": 2, "parts": [deep]})
    with pytest.raises(ManifestError, match=r"defs\.w\.position"):
        validate({"version": 2, "parts": [_ref("w")], "defs": {"w": part()}})
    with pytest.raises(ManifestError, match="defs require version 2"):
        validate({"version": 1, "parts": [part()], "defs": {}})
    with pytest.raises(ManifestError, match=r"provenance\.cost: unknown key"):
        validate(
            {
                "version": 1,
                "parts": [part()],
                "provenance": {
                    "prompt": "p",
                    "model": "m",
                    "usd": 0,
                    "generated": "2025-01-01",
                    "cost": 1,
                },
            }
        )
    with pytest.raises(ManifestError, match=r"parts\[0\]\.metallic"):
        validate({"version": 1, "parts": [part(metallic=True)]})
    with pytest.raises(ManifestError, match=r"parts\[0\]\.ref: no def named 'x'"):
        validate({"version": 2, "parts": [_ref("x")]})
    with pytest.raises(ManifestError, match="29 leaves"):
        validate(
            {
                "version": 2,
                "parts": [_ref("w", i * 0.1) for i in range(29)],
                "defs": {"w": _leafdef()},
            }
        )


def test_lenient_repairs_v2() -> None:
    data = {
        "defs": [
            {"name": "a", "body": {"children": [_ref("b"), part(name="a-leaf")]}},
            {"name": "b", "body": {"children": [_ref("a"), part(name="b-leaf")]}},
        ],
        "parts": [
            _ref("a"),
            _ref("nope"),
            {"group": "empty", "position": xyz(0, 0, 0), "rotation": None, "children": []},
        ],
    }
    manifest, notes = lenient(data)
    assert any("ref cycle a -> b -> a" in n for n in notes)
    assert any("unknown def 'nope'" in n for n in notes) and any("empty group" in n for n in notes)
    assert manifest["version"] == 2 and validate(manifest) == manifest
    outcome = from_data(data)
    assert outcome.ok and outcome.metrics["part_count"] == 2


def test_v2_leaf_limit_keeps_a_prefix() -> None:
    data = {
        "defs": [{"name": "w", "body": {"children": [part(), part()]}}],
        "parts": [_ref("w") for _ in range(15)],
    }
    manifest, notes = lenient(data)
    assert len(manifest["parts"]) == 14 and any(
        "kept the first 28 of 30 leaves" in n for n in notes
    )


def test_world_clamp_after_composition() -> None:
    group = {
        "group": "g",
        "position": xyz(4, 0, 0),
        "rotation": None,
        "children": [part(pos=(3, 0.5, 0))],
    }
    outcome = from_data({"parts": [group]})
    assert outcome.ok and any("world position.x 7.0 → 5.0" in n for n in outcome.notes)


# ---- fixtures, canonical text, .glb -------------------------------------------------------------


@pytest.mark.parametrize("name", GOOD)
def test_fixture_round_trips_and_builds_valid_deterministic_glb(name: str) -> None:
    text = (FIXTURES / f"{name}.manifest.json").read_text()
    assert dumps(loads(text)) == text
    first, second = from_file(text), from_file(dumps(loads(text)))
    assert first.ok, first.reason
    glb = first.files["glb"]
    assert glb == second.files["glb"] and len(glb) <= MAX_GLB_BYTES
    assert (
        glb[:4] == b"glTF" and int.from_bytes(glb[8:12], "little") == len(glb) and len(glb) % 4 == 0
    )
    gltf = pygltflib.GLTF2().load_from_bytes(glb)
    assert gltf.asset.generator.startswith("sweepbench ")
    scene = trimesh.load(io.BytesIO(glb), file_type="glb")
    assert len(scene.graph.nodes_geometry) == first.metrics["part_count"]


def test_fixture_counts() -> None:
    metrics = {
        name: from_file((FIXTURES / f"{name}.manifest.json").read_text()).metrics for name in GOOD
    }
    assert metrics["lighthouse"]["part_count"] == 2
    assert metrics["colonnade"]["part_count"] == 28
    cart = metrics["cart"]
    gltf = pygltflib.GLTF2().load_from_bytes(
        from_file((FIXTURES / "cart.manifest.json").read_text()).files["glb"]
    )
    assert len(gltf.nodes) == 12 and len(gltf.meshes) == 2 + 4  # the wheel's two meshes, shared 4×
    assert (
        cart["triangles"] == 4 * (1024 + 96) + 3 * 12 + 96
    )  # instanced meshes count per placement
    glb = from_file((FIXTURES / "brazier.manifest.json").read_text()).files["glb"]
    chunk = json.loads(
        glb[20 : 20 + int.from_bytes(glb[12:16], "little")]
    )  # the JSON chunk as written
    assert [m["name"] for m in chunk["materials"] if "emissiveFactor" in m] == ["ember"]
    assert all(m["doubleSided"] for m in chunk["materials"])
    assert all(
        "rotation" not in n for n in chunk["nodes"][:1]
    )  # identity rotations are not written


def test_invalid_fixture_names_the_path() -> None:
    outcome = from_file((FIXTURES / "invalid.manifest.json").read_text())
    assert not outcome.ok and outcome.reason == "parts[0].colour: unknown key"


def test_bytes_are_identical_in_separate_processes() -> None:
    code = (
        "import hashlib, sys; from pathlib import Path;"
        "from sweepbench.artifacts.sculpture import from_file;"
        "print(hashlib.sha256(from_file(Path(sys.argv[1]).read_text()).files['glb']).hexdigest())"
    )
    import hashlib

    path = FIXTURES / "cart.manifest.json"
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    assert (
        out.stdout.strip() == hashlib.sha256(from_file(path.read_text()).files["glb"]).hexdigest()
    )


def test_download_name() -> None:
    assert download_name("  Desert Observatory!! (v2) ") == "desert-observatory-v2"
    assert download_name("***") == "sculpture" and len(download_name("a" * 99)) == 48


# ---- metrics ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("second_x", "joints", "overlapping", "words"),
    [
        (0.9, 1, 1, "1/1 joints blend (100%)"),
        (1.0, 1, 0, "0/1 joints blend (0%)"),
        (1.5, 0, 0, "2 parts, no joints within 2 cm"),
    ],
)
def test_blend_rate(second_x: float, joints: int, overlapping: int, words: str) -> None:
    outcome = build(answer(part(pos=(0, 0.5, 0)), part(pos=(second_x, 0.5, 0))), "end", "v1")
    blend = outcome.metrics["blend"]
    assert (blend["joints"], blend["overlapping"]) == (joints, overlapping)
    assert outcome.metrics["blend_text"] == words
    assert blend["rate"] == (overlapping / joints if joints else None)


def test_palette_read_from_the_glb() -> None:
    colours = ["#ff0000", "#FF0000", "#00ff00", "#0000ff", "#00ff00"]
    parts = [part(name=f"p{i}", pos=(i, 0.5, 0), color=c) for i, c in enumerate(colours)]
    outcome = build(answer(*parts), "end", "v1")
    assert outcome.metrics["palette"] == 3 and outcome.metrics["part_count"] == 5
    assert outcome.metrics["triangles"] == 60 and outcome.metrics["kb"] == round(
        outcome.metrics["glb_bytes"] / 1024
    )


# ---- streaming parser and failure reporting -----------------------------------------------------


def test_parser_any_chunking() -> None:
    text = "Sure!\n```json\n" + answer(part(name='a "}{" b'), part(name="c\\\\")) + "\n```"
    whole = PartsParser().feed(text)
    one: list[dict[str, Any]] = []
    parser = PartsParser()
    for ch in text:
        one += parser.feed(ch)
    assert whole == one and [p["name"] for p in whole] == ['a "}{" b', "c\\\\"]


def test_truncated_answer_is_max_tokens_and_partial() -> None:
    text = answer(part(name="a"), part(name="b", pos=(2, 0.5, 0)), part(name="c"))
    cut = text[: text.index('"name": "c"') + 5]
    outcome = build(cut, "max_tokens", "v1")
    assert not outcome.ok and outcome.partial and outcome.reason.startswith("stop=max_tokens")
    assert (
        "JSON" not in outcome.reason
        and outcome.metrics["part_count"] == 2
        and outcome.metrics["partial"]
    )
    nothing = build('{"name": "x", "par', "max_tokens", "v1")
    assert not nothing.ok and not nothing.partial and nothing.reason.startswith("stop=max_tokens")
    stopped = build(cut, "cancelled", "v1")
    assert stopped.partial and stopped.reason == "stopped"
    bad = build("{not json", "end", "v1")
    assert bad.reason.startswith("The model did not return usable JSON") and "column" in bad.reason
    assert (
        build("", "refusal", "v1").reason
        == "The request was declined by the provider's safety system."
    )


def test_v2_answer_in_the_model_grammar() -> None:
    text = json.dumps(
        {
            "name": "cart",
            "notes": "n",
            "defs": [
                {
                    "name": "wheel",
                    "body": {
                        "children": [part(shape="torus", size=(0.5, 0.1, 0.08), pos=(0, 0, 0))]
                    },
                }
            ],
            "parts": [
                {"ref": "wheel", "position": xyz(x, 0.25, 0.4), "rotation": None, "name": None}
                for x in (-0.5, 0.5)
            ]
            + [
                {
                    "group": "bed",
                    "position": xyz(0, 0.55, 0),
                    "rotation": None,
                    "children": [part(pos=(0, 0, 0))],
                }
            ],
        }
    )
    outcome = build(text, "end", "v2")
    assert outcome.ok, outcome.reason
    assert (
        outcome.artifact["version"] == 2
        and outcome.metrics["part_count"] == 3
        and outcome.notes == []
    )
    assert outcome.metrics["triangles"] == 2 * 1024 + 12


def test_the_v2_prompt_example_builds_cleanly() -> None:
    prompt = SCULPTURE.system_prompt("v2") or ""
    start = prompt.index('{"name": "hand-cart"')
    example = prompt[start : prompt.index("\n\n", start)]
    outcome = build(example, "end", "v2")
    assert outcome.ok and outcome.notes == [] and outcome.metrics["part_count"] == 9


# ---- properties ---------------------------------------------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "x",
                    "y",
                    "z",
                    "parts",
                    "shape",
                    "size",
                    "ref",
                    "group",
                    "children",
                    "defs",
                    "name",
                    "body",
                    "position",
                    "color",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_json)
def test_random_json_never_crashes(data: Any) -> None:
    outcome = from_data(data)
    assert outcome.ok or outcome.reason
    if outcome.ok:
        assert validate(copy.deepcopy(outcome.artifact))  # lenient output passes the strict path
    try:
        validate(data)
    except ManifestError as exc:
        assert str(exc)


_SAMPLE = answer(
    part(name="a"), part(name="b {x}", pos=(0.9, 0.5, 0)), part(name='c "q"', shape="torus")
)


@settings(max_examples=150, deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=len(_SAMPLE)),
    stop=st.sampled_from(["max_tokens", "end", "cancelled"]),
    chunk=st.integers(1, 9),
)
def test_truncated_answers_give_a_clear_error_or_a_partial_result(
    cut: int, stop: str, chunk: int
) -> None:
    text = _SAMPLE[:cut]
    parser = PartsParser()
    streamed = [
        item for i in range(0, len(text), chunk) for item in parser.feed(text[i : i + chunk])
    ]
    assert streamed == PartsParser().feed(text)
    outcome = build(text, stop, "v1")
    if cut == len(_SAMPLE):
        assert outcome.ok == (stop != "cancelled")  # a complete object; a Stop still says stopped
    else:
        assert not outcome.ok and outcome.reason
        assert outcome.partial == bool(streamed)
        if stop == "max_tokens":
            assert outcome.reason.startswith("stop=max_tokens") and "JSON" not in outcome.reason
        if outcome.partial:
            assert outcome.metrics["part_count"] == len(streamed)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=200))
def test_random_text_never_crashes(text: str) -> None:
    PartsParser().feed(text)
    assert build(text, "end", "v1").reason or build(text, "end", "v1").ok
    with pytest.raises(ManifestError):
        loads(text if not text.strip().startswith("{") else "[]")


_VALIDATE_JS = """
const v = require('gltf-validator'); const fs = require('fs');
v.validateBytes(new Uint8Array(fs.readFileSync(process.argv[2])))
  .then(r => console.log(JSON.stringify([r.issues.numErrors, r.issues.numWarnings])));
"""


@pytest.mark.parametrize("name", GOOD)
def test_khronos_validator_finds_no_errors(name: str, tmp_path: Path) -> None:
    """Runs only where GLTF_VALIDATOR_DIR names a folder with node_modules/gltf-validator
    (``npm install gltf-validator`` there) and node is on PATH."""
    import os
    import shutil

    folder = os.environ.get("GLTF_VALIDATOR_DIR")
    if (
        not folder
        or not shutil.which("node")
        or not (Path(folder) / "node_modules/gltf-validator").is_dir()
    ):
        pytest.skip("set GLTF_VALIDATOR_DIR to a folder where `npm install gltf-validator` ran")
    glb = tmp_path / f"{name}.glb"
    glb.write_bytes(from_file((FIXTURES / f"{name}.manifest.json").read_text()).files["glb"])
    script = tmp_path / "validate.js"
    script.write_text(_VALIDATE_JS)
    out = subprocess.run(
        ["node", str(script), str(glb)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NODE_PATH": str(Path(folder) / "node_modules")},
    )
    assert json.loads(out.stdout) == [0, 0]
