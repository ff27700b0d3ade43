"""The one map from an artifact kind's name (what a sweep's cells produce) to its
:class:`ArtifactKind`.

The kinds themselves only define their :class:`ArtifactKind`; they import nothing from here,
so there is no import cycle between this map and the kinds. A built-in kind's module is
imported the first time its name is looked up: the text kind does not load numpy, pydantic
and pygltflib, which only sculptures need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Final

from sweepbench.errors import UserError

if TYPE_CHECKING:
    from sweepbench.artifacts.base import ArtifactKind, PageFacts


def _text() -> ArtifactKind:
    from sweepbench.artifacts.text import TEXT

    return TEXT


def _excalidraw() -> ArtifactKind:
    from sweepbench.artifacts.excalidraw.kind import EXCALIDRAW

    return EXCALIDRAW


def _sculpture() -> ArtifactKind:
    from sweepbench.artifacts.sculpture.kind import SCULPTURE

    return SCULPTURE


_BUILT_IN: Final[dict[str, Callable[[], ArtifactKind]]] = {
    "text": _text,
    "excalidraw": _excalidraw,
    "sculpture": _sculpture,
}
"""Name → the import that gives the built-in kind (``text`` first: the default task)."""

_KINDS: dict[str, ArtifactKind] = {}
"""Kinds looked up so far, and kinds added with :func:`register`."""


def names() -> list[str]:
    """Every known kind name, built-in ones first, without importing any kind."""
    return [*_BUILT_IN, *(name for name in _KINDS if name not in _BUILT_IN)]


def get_kind(name: str) -> ArtifactKind:
    """The kind called ``name``; an unknown name is a UserError listing the known ones."""
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    load = _BUILT_IN.get(name)
    if load is None:
        raise UserError(f"unknown kind {name!r}; kinds: {', '.join(sorted(names()))}")
    kind = _KINDS[name] = load()
    return kind


def page_facts(name: str) -> PageFacts:
    """What the Sweep page shows for kind ``name``; a text kind's facts when no kind of that
    name is registered now (a stored sweep of a kind registered in another session)."""
    from sweepbench.artifacts.base import PageFacts  # light: no kind's module is loaded

    try:
        return get_kind(name).page
    except UserError:
        return PageFacts()


def register(kind: ArtifactKind) -> ArtifactKind:
    """Make a kind available by its name (replacing a kind of that name); returns it."""
    _KINDS[kind.name] = kind
    return kind


class _Kinds(Mapping[str, "ArtifactKind"]):
    """A read-only view of the map: iterating gives names, reading a value loads its kind."""

    def __getitem__(self, name: str) -> ArtifactKind:
        if name not in _BUILT_IN and name not in _KINDS:
            raise KeyError(name)
        return get_kind(name)

    def __contains__(self, name: object) -> bool:
        return name in _BUILT_IN or name in _KINDS

    def __iter__(self) -> Iterator[str]:
        return iter(names())

    def __len__(self) -> int:
        return len(names())

    def __repr__(self) -> str:
        return f"<artifact kinds: {', '.join(names())}>"


_VIEW: Final = _Kinds()


def kinds() -> Mapping[str, ArtifactKind]:
    """Every kind by name, as a read-only mapping that imports a kind when it is read."""
    return _VIEW
