"""Drawings: Excalidraw scenes streamed element by element (spec artifacts.md §2).

The ``excalidraw`` kind (looked up by name in :mod:`sweepbench.artifacts.registry`). The
pieces, each usable alone:
``prompt`` (system prompt v1, palette), ``parser`` (the incremental element stream and the
whole-answer parser), ``normalise`` (per-element repairs with notes), ``render`` (SVG without
a browser), ``schema`` (an optional strict JSON schema) and ``kind`` (build, metrics).
"""

from sweepbench.artifacts.excalidraw.kind import EXCALIDRAW, NO_ELEMENTS, build, drawing_metrics
from sweepbench.artifacts.excalidraw.normalise import Normaliser, new_rng
from sweepbench.artifacts.excalidraw.parser import ElementStream, ParsedScene, parse_response
from sweepbench.artifacts.excalidraw.prompt import (
    PALETTE,
    PLACEHOLDER_PROMPT,
    SYSTEM_PROMPT_V1,
    TRACE_PROMPT_V1,
)
from sweepbench.artifacts.excalidraw.render import render_svg
from sweepbench.artifacts.excalidraw.schema import SCENE_SCHEMA

__all__ = [
    "EXCALIDRAW",
    "NO_ELEMENTS",
    "PALETTE",
    "PLACEHOLDER_PROMPT",
    "SCENE_SCHEMA",
    "SYSTEM_PROMPT_V1",
    "TRACE_PROMPT_V1",
    "ElementStream",
    "Normaliser",
    "ParsedScene",
    "build",
    "drawing_metrics",
    "new_rng",
    "parse_response",
    "render_svg",
]
