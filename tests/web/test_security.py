"""Who may reach the web app (issue 12, items 8–10): only its own Host names, no cross-site
state changes, keyed endpoints gated like paid ones, and off loopback a sign-in for every route.

Requests are forged with Flask's test client and sent over real HTTP to a werkzeug server on
127.0.0.1; one test signs in with a real Chromium."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import flask
import pytest
from dash import Dash
from werkzeug.test import TestResponse

from sweepbench.models import model_info
from sweepbench.money.ledger import Ledger
from sweepbench.money.prices import price_for
from sweepbench.store import Store
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.web.app import create_app
from sweepbench.web.gate import SIGNED_IN, Gate
from sweepbench.web.security import (
    COOKIE_NAME,
    SIGN_IN_PATH,
    SIGN_OUT_PATH,
    HostRule,
    SignInLimiter,
    Site,
    split_host,
)
from tests.servers import OpenAIServer
from tests.web.browser import RecordedPage, serve

TOKEN = "correct-horse-battery-staple-4417"
HOST = "127.0.0.1:8050"
GLB = "/_sweepbench/sweeps/nosuchsweep/0.glb"
# The route callback's request, as the browser sends it: open /history (every stored prompt).
HISTORY_CALLBACK = {
    "output": "page.children",
    "outputs": {"id": "page", "property": "children"},
    "inputs": [
        {"id": "url", "property": "pathname", "value": "/history"},
        {"id": "url", "property": "search", "value": ""},
    ],
    "changedPropIds": ["url.pathname"],
    "state": [],
}


@pytest.fixture(autouse=True)
def _no_operator_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "SWEEPBENCH_TOKEN",
        "SWEEPBENCH_ENV",
        "SWEEPBENCH_ALLOWED_HOSTS",
        "SWEEPBENCH_COMPATIBLE_API_KEY",
        "SWEEPBENCH_COMPATIBLE_FREE",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def make_app() -> Iterator[Any]:
    """``make_app(**create_app kwargs)``: apps on one store, closed after the test."""
    store = Store.open()
    apps: list[Dash] = []

    def make(**kwargs: Any) -> Dash:
        app = create_app(store, **kwargs)
        site: Site = app.server.config["sweepbench.site"]
        site.limiter.delay_s = 0  # the failure delay is tested on the limiter itself
        apps.append(app)
        return app

    try:
        yield make
    finally:
        for app in apps:
            app.server.config["sweepbench.context"].close()  # the runner and the loop
        store.close()


class Client:
    """Flask's test client with a fixed Host header and WSGI environment (the test client's
    ``environ_base`` cannot set either), keeping its cookies between requests."""

    def __init__(self, app: Dash, host: str, environ: dict[str, str]) -> None:
        self.flask = app.server.test_client()
        self.host = host
        self.environ = environ

    def open(self, method: str, path: str, headers: dict[str, str] | None = None,
             **kwargs: Any) -> TestResponse:  # fmt: skip
        response: TestResponse = self.flask.open(
            path,
            method=method,
            headers={"Host": self.host, **(headers or {})},
            environ_overrides=self.environ,
            **kwargs,
        )
        return response

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        return self.open("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> TestResponse:
        return self.open("POST", path, **kwargs)

    def set_cookie(self, name: str, value: str) -> None:
        self.flask.set_cookie(name, value, domain="localhost")


def _client(app: Dash, host: str = HOST, **environ: str) -> Client:
    return Client(app, host, environ)


def _callback(client: Client, **headers: str) -> TestResponse:
    return client.post("/_dash-update-component", json=HISTORY_CALLBACK, headers=headers)


def _sign_in(client: Client, token: str = TOKEN, next_path: str = "/") -> TestResponse:
    origin = {"Origin": f"http://{client.host}"}
    return client.post(SIGN_IN_PATH, data={"token": token, "next": next_path}, headers=origin)


def _set_cookie(response: TestResponse) -> SimpleCookie:
    jar: SimpleCookie = SimpleCookie()
    for header in response.headers.getlist("Set-Cookie"):
        jar.load(header)
    return jar


# -- item 8: Host and Origin ---------------------------------------------------------------------


def test_a_rebound_host_is_refused_on_every_route(make_app: Any) -> None:
    """DNS rebinding: evil.example resolves to this server; every route refuses its name."""
    client = _client(make_app(), "evil.example:8050")
    for path in ("/", "/history", "/_dash-layout", "/_dash-dependencies", GLB, SIGN_IN_PATH):
        assert client.get(path).status_code == 400, path
    response = _callback(client, Origin="http://evil.example:8050")
    assert response.status_code == 400
    assert b"history" not in response.data.lower()


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8050", "localhost:8050", "[::1]:8050", "localhost", "LOCALHOST.:8050",
             "[0:0:0:0:0:0:0:1]:8050"],
)  # fmt: skip
def test_the_loopback_names_are_accepted(make_app: Any, host: str) -> None:
    client = _client(make_app(), host)
    assert client.get("/_dash-layout").status_code == 200
    assert _callback(client).status_code == 200


@pytest.mark.parametrize(
    "host", ["", "::1:8050", "[::1", "[::1]x", "[127.0.0.1]:80", "a b:80",
             "127.0.0.1:", "evil.example@127.0.0.1", "127.1:8050", "localhost.evil.example"],
)  # fmt: skip
def test_malformed_or_foreign_hosts_are_refused(make_app: Any, host: str) -> None:
    assert _client(make_app(), host).get("/_dash-layout").status_code == 400


def test_operator_names_come_from_the_option_and_the_environment(
    make_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEEPBENCH_ALLOWED_HOSTS", "lab.example, Other.Example:8443")
    app = make_app(allowed_hosts=["sweep.example.org"])
    for host in ("sweep.example.org", "lab.example:8050", "other.example", "[::1]:9"):
        assert _client(app, host).get("/_dash-layout").status_code == 200, host
    assert _client(app, "evil.example").get("/_dash-layout").status_code == 400


def test_the_bound_address_is_accepted_and_a_wildcard_accepts_addresses_not_names(
    make_app: Any,
) -> None:
    lan = make_app(host="192.168.1.4", gate=Gate("192.168.1.4", token=TOKEN))
    assert _client(lan, "192.168.1.4:8050").get("/").status_code == 302  # sign in
    assert _client(lan, "10.0.0.9:8050").get("/").status_code == 400
    everywhere = make_app(host="::", gate=Gate("::", token=TOKEN))
    for host in ("10.0.0.9:8050", "[fe80::1]:8050", "192.168.1.4"):
        assert _client(everywhere, host).get("/").status_code == 302, host
    assert _client(everywhere, "evil.example:8050").get("/").status_code == 400
    assert HostRule.for_server(["0.0.0.0"]).any_address


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example:8050"}, 403),
        ({"Origin": "http://127.0.0.1:9999"}, 403),  # another port: another origin
        ({"Origin": "https://127.0.0.1"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "http://127.0.0.1:8050/x"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Origin": "http://127.0.0.1:8050"}, 200),
        ({"Origin": "http://localhost:8050", "Sec-Fetch-Site": "same-site"}, 200),
        ({"Origin": "http://[::1]:8050"}, 200),
        ({}, 200),  # no Origin: not a browser's cross-site request
    ],
)
def test_a_state_changing_request_needs_its_own_origin(
    make_app: Any, headers: dict[str, str], status: int
) -> None:
    assert _callback(_client(make_app()), **headers).status_code == status


def test_an_https_origin_matches_a_host_without_a_port(make_app: Any) -> None:
    app = make_app(allowed_hosts=["sweep.example.org"])
    client = _client(app, "sweep.example.org")
    assert _callback(client, Origin="https://sweep.example.org").status_code == 200
    assert _callback(client, Origin="https://sweep.example.org:8443").status_code == 403


def test_split_host_reads_brackets_and_ports() -> None:
    assert split_host("[::1]:8050") == ("::1", 8050)
    assert split_host("[::FFFF:127.0.0.1]") == ("::ffff:7f00:1", None)
    assert split_host("Example.ORG.") == ("example.org", None)
    assert split_host("::1") is None and split_host("[::1]:0") is None


def _raw(port: int, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_over_http_a_rebinding_page_can_neither_read_nor_post(make_app: Any) -> None:
    app = make_app()
    body = json.dumps(HISTORY_CALLBACK).encode()
    with serve(app) as url:
        port = int(url.rsplit(":", 1)[1])
        own = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json"}
        evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        assert _raw(port, "GET", "/history", {"Host": evil["Host"]}) == 400
        assert _raw(port, "POST", "/_dash-update-component", {**own, **evil}, body) == 400
        foreign = {**own, "Origin": f"http://evil.example:{port}"}
        assert _raw(port, "POST", "/_dash-update-component", foreign, body) == 403
        mine = {**own, "Origin": f"http://127.0.0.1:{port}"}
        assert _raw(port, "POST", "/_dash-update-component", mine, body) == 200
        assert _raw(port, "GET", "/history", {"Host": own["Host"]}) == 200
        assert _raw(port, "GET", "/history", {"Host": "127.0.0.1:99999"}) == 400
        assert _raw(port, "GET", "/history", {}) == 400  # no Host at all


def test_every_response_forbids_framing(make_app: Any) -> None:
    response = _client(make_app()).get("/")
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


# -- item 9: an endpoint that is sent a key is not free ------------------------------------------


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


PAID_PROXY = (
    '[endpoints.paidproxy]\nbase_url = "http://127.0.0.1:9/v1"\n'
    'api_key = "placeholder-proxy-key"\nmodels = ["m"]\n'
)


def _web_gate_spends(model: str) -> bool:
    """What the Sweep page passes the gate for a sweep of ``model`` (spends=not free)."""
    return not estimate_plan(build_plan("hi", "max_tokens", ["16", "32"], model=model)).free


def test_a_configured_endpoint_with_a_key_is_gated_like_a_paid_one(isolated_home: Path) -> None:
    _config(isolated_home, PAID_PROXY)
    price = price_for(model_info("paidproxy/m"))
    assert price is not None and price.zero and price.keyed and not price.free
    assert "key" in price.source
    assert _web_gate_spends("paidproxy/m")
    reason = Gate("0.0.0.0").why_closed(None, spends=_web_gate_spends("paidproxy/m"))
    assert reason is not None and "SWEEPBENCH_TOKEN" in reason
    line = estimate_plan(build_plan("hi", "max_tokens", ["16", "32"], model="paidproxy/m")).line()
    assert "nothing is spent" in line and "asks for its token" in line  # not "no keys here"


def test_an_endpoint_marked_free_or_sent_no_key_stays_free(isolated_home: Path) -> None:
    _config(isolated_home, PAID_PROXY.replace("models", "free = true\nmodels"))
    price = price_for(model_info("paidproxy/m"))
    assert price is not None and price.free and price.source == "own server: free"
    assert not _web_gate_spends("paidproxy/m")
    _config(isolated_home, '[endpoints.ollama]\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert not _web_gate_spends("ollama/m")


def test_free_must_be_true_or_false(isolated_home: Path) -> None:
    from sweepbench.errors import UserError

    _config(isolated_home, PAID_PROXY.replace("models", 'free = "yes"\nmodels'))
    with pytest.raises(UserError, match="free must be true or false"):
        price_for(model_info("paidproxy/m"))


def test_compatible_with_the_environments_key_is_gated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")
    assert not _web_gate_spends("compatible/m")
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", "placeholder-compatible-key")
    assert _web_gate_spends("compatible/m")
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_FREE", "1")
    assert not _web_gate_spends("compatible/m")


def test_a_zero_priced_model_of_a_keyed_provider_is_not_free() -> None:
    from decimal import Decimal

    from sweepbench.models.catalog import ModelInfo

    info = ModelInfo("openrouter", "vendor/model:free", price_in=Decimal(0), price_out=Decimal(0))
    price = price_for(info)
    assert price is not None and price.zero and not price.free


def test_a_keyed_zero_call_still_counts_against_no_ceiling(isolated_home: Path) -> None:
    """The ledger decides by the amount held: $0 is $0, key or not (run as the web app does)."""
    from sweepbench.sweeps.live import SweepRunner

    with OpenAIServer(api_key="placeholder-proxy-key", enforce_key=True) as server:
        _config(isolated_home, PAID_PROXY.replace("http://127.0.0.1:9/v1", server.url + "/v1"))
        store = Store.open()
        runner = SweepRunner(store)
        try:
            plan = build_plan("hello", "max_tokens", ["16", "32"], model="paidproxy/m")
            live = runner.start(plan)
            assert live.wait_done(120)
            assert live.view()["status"] == "done", live.view()
            summary = Ledger(store).summary()
            assert summary.calls_in_window == 0 and summary.spent_today == 0
            assert summary.open_reservations == 0
        finally:
            runner.close()
            store.close()
    assert len(server.requests) == 2  # both calls were made, with the key


# -- item 10: off loopback the token gates the whole app -----------------------------------------


def test_off_loopback_every_route_needs_a_session(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    for path in ("/", "/history", "/sweep?id=x"):
        response = client.get(path)
        assert response.status_code == 302, path
        assert response.headers["Location"].startswith(f"{SIGN_IN_PATH}?next=/")
    for path in ("/_dash-layout", "/_dash-dependencies", GLB):
        response = client.get(path)
        assert response.status_code == 401, path
        assert (response.json or {}).get("sign_in") == SIGN_IN_PATH, path
    assert _callback(client).status_code == 401
    assert client.get(SIGN_IN_PATH).status_code == 200


def test_signing_in_sets_a_strict_http_only_cookie_that_is_not_the_token(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    wrong = _sign_in(client, "not-the-token")
    assert wrong.status_code == 401 and "Set-Cookie" not in wrong.headers
    assert b"not the access token" in wrong.data
    assert client.get("/_dash-layout").status_code == 401
    right = _sign_in(client, next_path="/history")
    assert right.status_code == 303 and right.headers["Location"] == "/history"
    [header] = right.headers.getlist("Set-Cookie")
    morsel = _set_cookie(right)[COOKIE_NAME]
    assert morsel["httponly"] and morsel["samesite"] == "Strict" and morsel["path"] == "/"
    assert not morsel["secure"]  # plain HTTP here
    assert TOKEN not in header and len(morsel.value) >= 32
    for path in ("/", "/history", "/_dash-layout"):
        assert client.get(path).status_code == 200, path
    assert client.get(GLB).status_code == 404  # past the sign-in: just no such sculpture
    assert _callback(client, Origin=f"http://{HOST}").status_code == 200


def test_a_forged_cookie_is_no_session(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    for value in (TOKEN, "x" * 43, ""):
        client.set_cookie(COOKIE_NAME, value)
        assert client.get("/_dash-layout").status_code == 401


def test_the_cookie_is_secure_over_https_or_a_trusted_proxy(make_app: Any) -> None:
    gate = Gate("0.0.0.0", token=TOKEN)
    https = _client(make_app(gate=gate), **{"wsgi.url_scheme": "https"})
    assert _set_cookie(_sign_in(https))[COOKIE_NAME]["secure"]
    forwarded = {"HTTP_X_FORWARDED_PROTO": "https"}  # as the proxy adds it
    untrusted = _client(make_app(gate=gate), **forwarded)
    assert not _set_cookie(_sign_in(untrusted))[COOKIE_NAME]["secure"]
    trusted = _client(make_app(gate=gate, trust_forwarded_proto=True), **forwarded)
    assert _set_cookie(_sign_in(trusted))[COOKIE_NAME]["secure"]


def test_signing_out_ends_the_session(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    _sign_in(client)
    assert client.get("/_dash-layout").status_code == 200
    out = client.post(SIGN_OUT_PATH, headers={"Origin": f"http://{HOST}"})
    assert out.status_code == 303 and out.headers["Location"] == SIGN_IN_PATH
    assert client.get("/_dash-layout").status_code == 401


def test_sign_in_goes_back_only_to_this_server(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "history"):
        assert _sign_in(client, next_path=target).headers["Location"] == "/", target


def test_a_cross_site_sign_in_is_refused(make_app: Any) -> None:
    client = _client(make_app(gate=Gate("0.0.0.0", token=TOKEN)))
    response = client.post(
        SIGN_IN_PATH, data={"token": TOKEN}, headers={"Origin": "http://evil.example"}
    )
    assert response.status_code == 403 and "Set-Cookie" not in response.headers


def test_failed_sign_ins_are_limited_per_address(make_app: Any) -> None:
    app = make_app(gate=Gate("0.0.0.0", token=TOKEN))
    guesser = _client(app, REMOTE_ADDR="203.0.113.7")
    for _ in range(5):
        assert _sign_in(guesser, "guess").status_code == 401
    locked = _sign_in(guesser)  # even the right token waits now
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) >= 1
    assert "Set-Cookie" not in locked.headers
    assert _sign_in(_client(app, REMOTE_ADDR="198.51.100.1")).status_code == 303


def test_the_limiter_slows_each_failure_and_caps_all_addresses() -> None:
    now = [1000.0]
    limiter = SignInLimiter(per_address=3, overall=5, window_s=60, clock=lambda: now[0])
    assert SignInLimiter().delay_s > 0
    for address in ("a", "a", "a"):
        limiter.failed(address)
    assert limiter.wait_s("a") == pytest.approx(60) and limiter.wait_s("b") == 0
    limiter.failed("b")
    limiter.failed("c")
    assert limiter.wait_s("d") == pytest.approx(60)  # five failures in all
    now[0] += 61
    assert limiter.wait_s("a") == 0 and limiter.wait_s("d") == 0


def test_with_no_token_off_loopback_the_app_is_closed(make_app: Any) -> None:
    client = _client(make_app(host="0.0.0.0"))
    page = client.get("/")
    assert page.status_code == 503 and b"SWEEPBENCH_TOKEN" in page.data
    assert client.get("/history").status_code == 503
    assert client.get(SIGN_IN_PATH).status_code == 503
    assert _sign_in(client, "").status_code == 503
    assert client.get("/_dash-layout").status_code == 503
    assert _callback(client).status_code == 503
    assert client.get(GLB).status_code == 503


def test_production_on_loopback_needs_the_sign_in(
    make_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEEPBENCH_ENV", "production")
    monkeypatch.setenv("SWEEPBENCH_TOKEN", TOKEN)
    client = _client(make_app())
    assert client.get("/").status_code == 302
    _sign_in(client)
    assert client.get("/").status_code == 200


def test_loopback_needs_no_sign_in(make_app: Any) -> None:
    client = _client(make_app())
    for path in ("/", "/history", "/_dash-layout"):
        assert client.get(path).status_code == 200, path
    assert b"sign-out" not in client.get("/_dash-layout").data
    assert _sign_in(client, "anything").headers["Location"] == "/"  # nothing to sign in to
    assert client.get(GLB).status_code == 404


def test_a_signed_in_request_has_proved_the_token() -> None:
    gate = Gate("0.0.0.0", token=TOKEN)
    with flask.Flask(__name__).test_request_context("/"):
        assert gate.why_closed(None, spends=True) is not None
        flask.g.setdefault(SIGNED_IN, True)
        assert gate.why_closed(None, spends=True) is None
    assert Gate("0.0.0.0").why_closed(None, spends=True) is not None  # no token: no session


def test_serve_takes_allowed_hosts_and_closes_without_a_token(isolated_home: Path) -> None:
    """The real command: --allowed-host, SWEEPBENCH_ALLOWED_HOSTS, closed with no token."""
    import os

    env = {**os.environ, "SWEEPBENCH_HOME": str(isolated_home), "SWEEPBENCH_ENV": "production",
           "SWEEPBENCH_ALLOWED_HOSTS": "from-env.example"}  # fmt: skip
    env.pop("SWEEPBENCH_TOKEN", None)
    command = "from sweepbench.cli import main; main()"
    with socket.create_server(("127.0.0.1", 0)) as probe:  # a free port (serve refuses 0)
        free = str(probe.getsockname()[1])
    process = subprocess.Popen(
        [sys.executable, "-c", command, "serve", "--port", free, "--allowed-host", "lab.example"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        port = int(line.split("http://127.0.0.1:", 1)[1].split("/", 1)[0])
        assert _raw(port, "GET", "/", {"Host": "lab.example"}) == 503  # closed: no token
        assert _raw(port, "GET", "/", {"Host": f"from-env.example:{port}"}) == 503
        assert _raw(port, "GET", "/", {"Host": "evil.example"}) == 400
    finally:
        process.terminate()
        process.wait(10)


def test_signing_in_with_a_browser(page: RecordedPage, make_app: Any) -> None:
    app = make_app(gate=Gate("0.0.0.0", token=TOKEN))
    with serve(app) as url:
        page.goto(f"{url}/history")
        page.wait_for_selector("#sign-in-token")
        assert SIGN_IN_PATH in page.url
        page.fill("#sign-in-token", "not-the-token")
        page.click("#sign-in-submit")
        page.wait_for_selector("#sign-in-error")
        assert page.context.cookies() == []
        page.fill("#sign-in-token", TOKEN)
        page.click("#sign-in-submit")
        page.wait_for_url(f"{url}/history")
        page.wait_for_selector("#sign-out")
        [cookie] = page.context.cookies()
        assert cookie["name"] == COOKIE_NAME and cookie["httpOnly"]
        assert cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
        assert COOKIE_NAME not in page.evaluate("document.cookie")
        page.click("a[href='/']")  # the Sweep page, by the app's own navigation
        page.wait_for_selector("#estimate:not(:empty)")
        page.click("#sign-out")
        page.wait_for_selector("#sign-in-token")
        page.goto(f"{url}/")
        page.wait_for_selector("#sign-in-token")
        assert page.failures == [f"401 {url}{SIGN_IN_PATH}"]  # the wrong token, and only it
        assert [e for e in page.errors if "status of 401" not in e] == []
        assert page.non_local() == []
