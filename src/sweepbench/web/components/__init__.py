"""Our own Dash components, bundled from npm and served from this package (no CDN).

:class:`ExcalidrawCanvas` shows a growing Excalidraw scene (view only); :class:`SculptureViewer`
shows a .glb in Google's ``<model-viewer>``. The built files next to this module come from
``web/js`` (``cd web/js && npm ci && node build.mjs``). Excalidraw fetches its fonts from
:data:`ASSET_URL` on the page's own origin, so an app must call :func:`register_assets` on its
Flask server. :func:`viewer_script` gives the standalone model-viewer script for static pages.
"""

from __future__ import annotations

import mimetypes
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import flask
from dash.development.base_component import Component, ComponentRegistry

__all__ = [
    "ASSET_URL",
    "ExcalidrawCanvas",
    "SculptureViewer",
    "register_assets",
    "viewer_script",
]


def _version() -> str:
    try:
        return metadata.version("sweepbench")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
"""Part of the bundle URLs Dash writes (with the files' mtimes), so a rebuild busts caches."""

HERE = Path(__file__).parent
ASSETS = HERE / "excalidraw"
"""The files Excalidraw loads at run time (fonts), laid out as under its ``dist/prod``."""
ASSET_URL = "/_sweepbench/excalidraw/"
"""Where :func:`register_assets` serves :data:`ASSETS`; ``ASSET_PATH`` in web/js/build.mjs."""
NAMESPACE = "sweepbench_components"
"""``window.sweepbench_components`` holds the React components (Dash looks them up there)."""

_js_dist = [
    {"relative_package_path": "model-viewer.min.js", "namespace": __name__},
    {"relative_package_path": "sweepbench_components.min.js", "namespace": __name__},
]
_css_dist = [{"relative_package_path": "excalidraw.min.css", "namespace": __name__}]

_TYPES = {
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".js": "text/javascript",
}


class _Base(Component):
    """A hand-written component: props left as None are not sent (the JS defaults apply)."""

    _namespace = NAMESPACE
    _props: ClassVar[tuple[str, ...]] = ()

    def __init__(self, **props: Any) -> None:
        self._prop_names = list(self._props)
        self.available_properties = list(self._props)
        self._valid_wildcard_attributes = []
        self.available_wildcard_properties = []
        given = {key: value for key, value in props.items() if value is not None}
        super().__init__(**given)  # type: ignore[no-untyped-call]


class ExcalidrawCanvas(_Base):
    """A view-only Excalidraw scene that follows ``elements`` as they stream in.

    ``elements`` is a list of Excalidraw element dicts (missing optional fields are filled in by
    Excalidraw's ``restoreElements``); each change updates the scene in place and refits the
    view. ``final`` records the last update as one undoable step. ``height`` is in pixels.
    The wrapper ``div`` carries ``data-ready``, ``data-elements`` and ``data-updated-at``.
    """

    _type = "ExcalidrawCanvas"
    _props = ("id", "elements", "final", "height", "className", "style")

    def __init__(
        self,
        id: str | dict[str, Any] | None = None,
        elements: list[dict[str, Any]] | None = None,
        final: bool | None = None,
        height: int | None = None,
        className: str | None = None,
        style: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            id=id, elements=elements, final=final, height=height, className=className, style=style
        )


class SculptureViewer(_Base):
    """A ``<model-viewer>`` (orbit controls, neutral light) showing the .glb at ``src``.

    ``src`` is a URL on the app's origin or a ``data:`` URL. The wrapper ``div`` gets
    ``data-loaded="1"`` once the model has loaded, ``data-error`` if it could not be.
    """

    _type = "SculptureViewer"
    _props = ("id", "src", "height", "alt", "className", "style")

    def __init__(
        self,
        id: str | dict[str, Any] | None = None,
        src: str | None = None,
        height: int | None = None,
        alt: str | None = None,
        className: str | None = None,
        style: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(id=id, src=src, height=height, alt=alt, className=className, style=style)


# Dash gathers _js_dist/_css_dist from the top-level module of each component class; ours live
# here, so this module is named to the registry directly.
ComponentRegistry.registry.add(__name__)  # type: ignore[no-untyped-call]


def register_assets(server: flask.Flask) -> None:
    """Serve Excalidraw's run-time files (fonts) from :data:`ASSET_URL` on ``server``.

    Only files inside :data:`ASSETS` are served; anything else (a font we do not ship, such as
    the CJK Xiaolai set) is a 404, never a redirect to a CDN. Calling it twice is harmless.
    """
    endpoint = "sweepbench_excalidraw_assets"
    if endpoint in server.view_functions:
        return

    def serve(path: str) -> flask.Response:
        return flask.send_from_directory(
            ASSETS, path, mimetype=_content_type(path), max_age=365 * 24 * 3600
        )

    server.add_url_rule(f"{ASSET_URL}<path:path>", endpoint, serve, methods=["GET"])


def _content_type(path: str) -> str:
    suffix = Path(path).suffix.lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(path)[0] or "application/octet-stream"


@cache
def viewer_script() -> str:
    """The standalone ``<model-viewer>`` script (an IIFE, three.js inside) to inline in a page."""
    return (HERE / "model-viewer.min.js").read_text(encoding="utf-8")
