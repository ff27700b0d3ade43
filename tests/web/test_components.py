"""Our Dash components (sweepbench.web.components): the Python side, the served files, and in
headless Chromium a canvas fed 1, 3, then 10 elements and a viewer loading a real .glb, with
every request the browser made going to 127.0.0.1."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

dash = pytest.importorskip("dash")

import flask  # noqa: E402
from dash import Input, Output, html  # noqa: E402

from sweepbench.artifacts.sculpture import from_file  # noqa: E402
from sweepbench.web import components  # noqa: E402
from sweepbench.web.components import (  # noqa: E402
    ASSET_URL,
    ExcalidrawCanvas,
    SculptureViewer,
    register_assets,
    viewer_script,
)
from tests.web.browser import RecordedPage, serve  # noqa: E402

FIXTURES = Path(components.__file__).parents[2] / "artifacts/sculpture/fixtures"
BUILT = ("sweepbench_components.min.js", "excalidraw.min.css", "model-viewer.min.js")


def _scene(count: int) -> list[dict[str, Any]]:
    """``count`` elements as a streaming parser hands them over: a titled box, arrows, shapes."""
    head: list[dict[str, Any]] = [
        {
            "type": "rectangle",
            "id": "box",
            "x": 0,
            "y": 0,
            "width": 220,
            "height": 90,
            "strokeColor": "#1e1e1e",
            "backgroundColor": "#a5d8ff",
            "fillStyle": "solid",
            "boundElements": [{"type": "text", "id": "label"}],
        },
        {
            "type": "text",
            "id": "label",
            "x": 60,
            "y": 30,
            "width": 100,
            "height": 25,
            "text": "Sweep",
            "fontSize": 20,
            "fontFamily": 5,
            "containerId": "box",
            "textAlign": "center",
            "verticalAlign": "middle",
        },
        {
            "type": "arrow",
            "id": "arrow",
            "x": 220,
            "y": 45,
            "width": 120,
            "height": 0,
            "points": [[0, 0], [120, 0]],
            "strokeColor": "#e03131",
            "endArrowhead": "arrow",
        },
    ]
    shapes = [
        {
            "type": ("ellipse", "diamond", "rectangle")[index % 3],
            "id": f"shape-{index}",
            "x": 360 + 90 * index,
            "y": 120 * (index % 2),
            "width": 80,
            "height": 60,
            "strokeColor": "#2f9e44",
            "backgroundColor": "transparent",
        }
        for index in range(max(0, count - len(head)))
    ]
    return (head + shapes)[:count]


def _glb(name: str = "lighthouse") -> bytes:
    glb: bytes = from_file((FIXTURES / f"{name}.manifest.json").read_text()).files["glb"]
    return glb


# ---- the Python side, no browser ----------------------------------------------------------------


def test_components_serialise_with_only_the_props_given() -> None:
    canvas = ExcalidrawCanvas(id="c", elements=_scene(1), height=200)
    assert canvas.to_plotly_json() == {
        "props": {"id": "c", "elements": _scene(1), "height": 200},
        "type": "ExcalidrawCanvas",
        "namespace": "sweepbench_components",
    }
    viewer = SculptureViewer(id="v", src="/x.glb", alt="a lighthouse")
    assert viewer.to_plotly_json()["props"] == {"id": "v", "src": "/x.glb", "alt": "a lighthouse"}
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        ExcalidrawCanvas(id="c", colour="red")  # type: ignore[call-arg]


def test_built_files_are_in_the_package_and_dash_links_them() -> None:
    here = Path(components.__file__).parent
    for name in BUILT:
        assert (here / name).stat().st_size > 10_000, name
    css = (here / "excalidraw.min.css").read_text()
    assert f"{ASSET_URL}fonts/Assistant/" in css and "./fonts/" not in css
    app = dash.Dash(__name__)
    app.layout = html.Div([ExcalidrawCanvas(id="c"), SculptureViewer(id="v")])
    index = app.server.test_client().get("/").get_data(as_text=True)
    for name in ("sweepbench_components", "excalidraw", "model-viewer"):
        assert f"/_dash-component-suites/sweepbench.web.components/{name}.v" in index, name
    bundle = app.server.test_client().get(
        "/_dash-component-suites/sweepbench.web.components/sweepbench_components.min.js"
    )
    assert bundle.status_code == 200 and b"sweepbench_components" in bundle.data


def test_register_assets_serves_fonts_and_nothing_else() -> None:
    server = flask.Flask(__name__)
    register_assets(server)
    register_assets(server)  # twice is harmless
    client = server.test_client()
    font = client.get(f"{ASSET_URL}fonts/Virgil/Virgil-Regular.woff2")
    assert font.status_code == 200 and font.mimetype == "font/woff2"
    assert font.data[:4] == b"wOF2"
    for path in (
        "fonts/Xiaolai/Xiaolai-Regular-09850c4077f3fffe707905872e0e2460.woff2",  # not shipped
        "../__init__.py",
        "..%2F__init__.py",
        "fonts/../../model-viewer.min.js",
    ):
        assert client.get(f"{ASSET_URL}{path}").status_code == 404, path


def test_viewer_script_is_a_standalone_script_to_inline() -> None:
    script = viewer_script()
    assert "model-viewer" in script and len(script) > 100_000
    assert "</script" not in script.lower()  # safe inside an inline <script>
    assert "/_sweepbench/model-viewer/draco/" in script  # decoders point at our own origin


# ---- in the browser ---------------------------------------------------------------------------


def _canvas_app() -> Any:
    """A canvas and a button: click 1 feeds 1 element, click 2 three, click 3 ten; 4 empties."""
    app = dash.Dash(__name__)
    register_assets(app.server)
    app.layout = html.Div(
        [html.Button("next", id="next"), ExcalidrawCanvas(id="canvas", height=300)],
        style={"width": "700px"},
    )
    steps: list[list[dict[str, Any]]] = [_scene(1), _scene(3), _scene(10), []]

    @app.callback(
        Output("canvas", "elements"), Input("next", "n_clicks"), prevent_initial_call=True
    )
    def feed(clicks: int) -> list[dict[str, Any]]:
        return steps[(clicks - 1) % len(steps)]

    return app


@pytest.mark.parametrize("debug", [False, True], ids=["prod-react", "dev-react"])
def test_canvas_follows_elements_without_remounting(page: RecordedPage, debug: bool) -> None:
    app = _canvas_app()
    if debug:  # Dash then serves React's development build, which reports misuse loudly
        app.enable_dev_tools(debug=True, dev_tools_ui=False, dev_tools_hot_reload=False)
    with serve(app) as base_url:
        page.goto(base_url)
        page.wait_for_data("#canvas", "ready", "1")
        page.evaluate("window.__canvas = document.querySelector('#canvas canvas')")
        stamps = []
        for expected in ("1", "3", "10", "0"):
            page.click("#next")
            page.wait_for_data("#canvas", "elements", expected)
            stamps.append(float(page.get_attribute("#canvas", "data-updated-at") or 0))
        assert stamps == sorted(stamps) and stamps[0] > 1e12  # epoch milliseconds
        # the same <canvas> throughout: Excalidraw was updated in place, never re-mounted
        assert page.evaluate("document.querySelector('#canvas canvas') === window.__canvas")
        page.click("#next")
        page.wait_for_data("#canvas", "elements", "1")
        font = f"{base_url}{ASSET_URL}fonts/Excalifont/"
        page.wait_for_function(
            "prefix => performance.getEntriesByType('resource')"
            ".some(entry => entry.name.startsWith(prefix))",
            arg=font,
        )
    assert page.errors == []
    assert page.non_local() == []
    assert page.failures == []
    fonts = {url: status for url, status in page.responses.items() if url.startswith(font)}
    assert fonts and set(fonts.values()) == {200}


def test_canvas_commits_the_final_scene_and_needs_no_cjk_font(page: RecordedPage) -> None:
    cjk = {"type": "text", "id": "cjk", "x": 0, "y": 140, "text": "你好", "fontFamily": 5}
    app = dash.Dash(__name__)
    register_assets(app.server)
    app.layout = html.Div(
        [html.Button("done", id="done"), ExcalidrawCanvas(id="canvas", elements=[*_scene(4), cjk])]
    )

    @app.callback(Output("canvas", "final"), Input("done", "n_clicks"), prevent_initial_call=True)
    def finish(_: int) -> bool:
        return True

    with serve(app) as base_url:
        page.goto(base_url)
        page.wait_for_data("#canvas", "elements", "5")
        assert page.get_attribute("#canvas", "data-final") is None
        page.click("#done")
        page.wait_for_data("#canvas", "final", "1")
        assert page.get_attribute("#canvas", "data-elements") == "5"
        page.wait_for_timeout(500)  # let any font request start
    # Xiaolai (the CJK hand-drawn font, ~13 MB) is not shipped and not even asked for
    assert not [url for url in page.requests if "Xiaolai" in url]
    assert page.errors == [] and page.non_local() == [] and page.failures == []


def test_viewer_loads_a_glb_from_a_route_and_from_a_data_url(page: RecordedPage) -> None:
    glb = _glb()
    app = dash.Dash(__name__)

    @app.server.route("/sculpture.glb")
    def sculpture() -> flask.Response:
        return flask.Response(glb, mimetype="model/gltf-binary")

    inline = "data:model/gltf-binary;base64," + base64.b64encode(_glb("brazier")).decode()
    app.layout = html.Div(
        [
            SculptureViewer(id="routed", src="/sculpture.glb", alt="a lighthouse"),
            SculptureViewer(id="inline", src=inline, height=200),
        ],
        style={"width": "600px"},
    )
    with serve(app) as base_url:
        page.goto(base_url)
        page.wait_for_data("#routed", "loaded", "1")
        page.wait_for_data("#inline", "loaded", "1")
        assert page.get_attribute("#routed", "data-error") is None
        box = page.locator("#inline model-viewer").bounding_box()
        assert box is not None and box["height"] == 200
        assert f"{base_url}/sculpture.glb" in page.requests
    assert page.errors == [] and page.non_local() == [] and page.failures == []


def test_viewer_reports_a_missing_model(page: RecordedPage) -> None:
    app = dash.Dash(__name__)

    @app.server.route("/missing.glb")
    def missing() -> flask.Response:
        return flask.Response("no such sculpture", status=404)

    app.layout = html.Div(SculptureViewer(id="viewer", src="/missing.glb"))
    with serve(app) as base_url:
        page.goto(base_url)
        page.wait_for_selector("#viewer[data-error]", state="attached")
        assert page.get_attribute("#viewer", "data-loaded") is None
    assert page.non_local() == []
    assert page.failures == [f"404 {base_url}/missing.glb"]
