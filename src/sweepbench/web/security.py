"""Who may reach the web app at all (issue 12, items 8 and 10).

Three checks run before every request, in this order:

1. **Host** — the ``Host`` header must name this app: ``localhost``, ``127.0.0.1``, ``[::1]``,
   the bound address, or a name the operator allows (``serve --allowed-host NAME`` or
   ``SWEEPBENCH_ALLOWED_HOSTS``, comma-separated). Bound to every interface (``0.0.0.0``,
   ``::``), an IP-address ``Host`` is accepted too: only a page served from that very address
   sends it, so it cannot be a rebinding. Anything else is a 400 — a DNS-rebinding page sends
   its own name (``evil.example``) and is refused on every route.
2. **Origin** — a request that changes state (any method but GET, HEAD, OPTIONS; every Dash
   callback is a POST) that carries an ``Origin`` must come from an allowed host with the
   request's own port; ``Origin: null`` or ``Sec-Fetch-Site: cross-site`` is refused (403).
3. **Sign-in** — off loopback (or declared production: :attr:`Gate.guarded`) the token in
   ``SWEEPBENCH_TOKEN`` gates the whole app. Every route but the sign-in page needs the
   session cookie, which the sign-in page sets when the token matches (compared in constant
   time). The cookie holds a random session id kept in this process's memory, never the token;
   it is HttpOnly and SameSite=Strict, and Secure when the request came over HTTPS. Without
   the cookie a page is redirected to sign-in and anything else gets 401 JSON. With no token
   configured, every route answers with a page saying the app is closed. Failed sign-ins are
   slowed and counted per address (and in all), so the token cannot be guessed quickly.

On loopback (not production) there is no sign-in, as before. Every response also forbids
framing (clickjacking of Run) and MIME sniffing.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

import flask
from werkzeug.wrappers import Response

from sweepbench.variables import ALLOWED_HOSTS
from sweepbench.web.gate import SIGNED_IN, TOKEN_VARIABLE, Gate

ALLOWED_HOSTS_VARIABLE = ALLOWED_HOSTS.name
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SIGN_IN_PATH = "/_sweepbench/sign-in"
SIGN_OUT_PATH = "/_sweepbench/sign-out"
COOKIE_NAME = "sweepbench_session"
SESSION_SECONDS = 24 * 3600
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
DEFAULT_PORTS = {"http": 80, "https": 443}


# -- host names ----------------------------------------------------------------------------------


def normal_name(name: str) -> str:
    """A host name as compared: lower case, no brackets, no trailing dot, IP addresses in
    their compressed form (``0:0:0:0:0:0:0:1`` → ``::1``)."""
    value = name.strip().lower()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    if value.endswith(".") and not value.endswith(".."):
        value = value[:-1]  # "localhost." is "localhost"
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return value


def split_host(header: str) -> tuple[str, int | None] | None:
    """``Host`` (or an origin's netloc) → (name, port); None when malformed. IPv6 addresses
    must be bracketed (``[::1]:8050``); a bare one is malformed."""
    value = header.strip()
    if not value or any(c.isspace() or c in "/\\@?#" for c in value):
        return None
    port_text: str | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                return None
            port_text = rest[1:]
        try:
            if ipaddress.ip_address(name).version != 6:
                return None
        except ValueError:
            return None
    else:
        name, sep, port_text_found = value.partition(":")
        if ":" in port_text_found:  # a bare IPv6 address, or junk
            return None
        port_text = port_text_found if sep else None
    if not name:
        return None
    port: int | None = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        port = int(port_text)
    return normal_name(name), port


def hosts_from_environment() -> list[str]:
    """The names in ``SWEEPBENCH_ALLOWED_HOSTS`` (commas or spaces between them)."""
    return list(ALLOWED_HOSTS.value())


def _is_wildcard(address: str) -> bool:
    try:
        return ipaddress.ip_address(normal_name(address)).is_unspecified
    except ValueError:
        return False


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostRule:
    """Which ``Host`` names this app answers to."""

    names: frozenset[str]
    any_address: bool = False
    """Bound to every interface: any IP-address Host is one of ours."""

    @classmethod
    def for_server(cls, bound: Iterable[str], extra: Iterable[str] = ()) -> HostRule:
        """Loopback names, the bound addresses (unless wildcards) and the operator's names
        (a name given with a port, ``name:8443``, counts as the name)."""
        names = set(LOOPBACK_NAMES)
        wildcard = False
        for address in bound:
            if _is_wildcard(address):
                wildcard = True
            elif address.strip():
                names.add(normal_name(address))
        for entry in extra:
            parsed = split_host(entry)
            names.add(parsed[0] if parsed else normal_name(entry))
        return cls(frozenset(names), wildcard)

    def allows(self, name: str) -> bool:
        """Whether ``name`` (normalised) is one of this app's."""
        return name in self.names or (self.any_address and _is_ip(name))


# -- sessions and the sign-in limiter ------------------------------------------------------------


class Sessions:
    """Signed-in sessions: random ids, kept (as their SHA-256) in memory for a day at most."""

    def __init__(self, lifetime: float = SESSION_SECONDS, cap: int = 1000) -> None:
        self.lifetime = lifetime
        self.cap = cap
        self._expiry: dict[str, float] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(session_id: str) -> str:
        return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()

    def start(self) -> str:
        """A new session id (what the cookie carries)."""
        session_id = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            for key in [k for k, t in self._expiry.items() if t <= now]:
                del self._expiry[key]
            while len(self._expiry) >= self.cap:  # the oldest go first
                del self._expiry[min(self._expiry, key=self._expiry.__getitem__)]
            self._expiry[self._key(session_id)] = now + self.lifetime
        return session_id

    def valid(self, session_id: str | None) -> bool:
        """Whether ``session_id`` is a live session."""
        if not session_id:
            return False
        with self._lock:
            expiry = self._expiry.get(self._key(session_id))
        return expiry is not None and expiry > time.monotonic()

    def end(self, session_id: str | None) -> None:
        """Sign a session out."""
        if session_id:
            with self._lock:
                self._expiry.pop(self._key(session_id), None)


@dataclass
class SignInLimiter:
    """Failed sign-ins: each waits ``delay_s``; more than ``per_address`` failures from one
    address, or ``overall`` from all, within ``window_s`` lock sign-in (for that address, or
    for everyone) until the oldest failure leaves the window."""

    per_address: int = 5
    overall: int = 30
    window_s: float = 60.0
    delay_s: float = 0.5
    clock: Callable[[], float] = time.monotonic
    _by_address: dict[str, deque[float]] = field(default_factory=dict)
    _all: deque[float] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _prune(self, now: float) -> None:
        cutoff = now - self.window_s
        while self._all and self._all[0] <= cutoff:
            self._all.popleft()
        for address in list(self._by_address):
            times = self._by_address[address]
            while times and times[0] <= cutoff:
                times.popleft()
            if not times:
                del self._by_address[address]

    def wait_s(self, address: str) -> float:
        """Seconds until ``address`` may try again (0: now)."""
        with self._lock:
            now = self.clock()
            self._prune(now)
            waits = [0.0]
            mine = self._by_address.get(address)
            if mine is not None and len(mine) >= self.per_address:
                waits.append(mine[0] + self.window_s - now)
            if len(self._all) >= self.overall:
                waits.append(self._all[0] + self.window_s - now)
            return max(waits)

    def failed(self, address: str) -> None:
        """Count a failure (the caller then sleeps ``delay_s``)."""
        with self._lock:
            now = self.clock()
            self._by_address.setdefault(address, deque()).append(now)
            self._all.append(now)

    def succeeded(self, address: str) -> None:
        """The address signed in: its own failures are forgiven."""
        with self._lock:
            self._by_address.pop(address, None)


# -- the guard -----------------------------------------------------------------------------------


@dataclass
class Site:
    """The access rules of one app: hosts, origins and (when guarded) sign-in."""

    gate: Gate
    hosts: HostRule
    trust_forwarded_proto: bool = False
    """Behind a TLS-terminating proxy: ``X-Forwarded-Proto: https`` marks a request HTTPS."""
    sessions: Sessions = field(default_factory=Sessions)
    limiter: SignInLimiter = field(default_factory=SignInLimiter)

    def install(self, server: flask.Flask) -> None:
        """Run the checks before every request of ``server`` (first, before Dash's own
        hooks) and add the sign-in and sign-out routes."""
        server.config["sweepbench.site"] = self
        server.before_request_funcs.setdefault(None, []).insert(0, self._before)
        server.after_request(_hardened)
        server.add_url_rule(
            SIGN_IN_PATH, "sweepbench_sign_in", self._sign_in, methods=["GET", "POST"]
        )
        server.add_url_rule(SIGN_OUT_PATH, "sweepbench_sign_out", self._sign_out, methods=["POST"])

    # -- checks --

    def _before(self) -> Response | None:
        request = flask.request
        host = split_host(request.headers.get("Host", ""))
        if host is None or not self.hosts.allows(host[0]):
            return _text(
                400,
                "This server does not answer to that Host name. Open it by an address it "
                f"serves, or allow the name with `sweepbench serve --allowed-host NAME` (or "
                f"{ALLOWED_HOSTS_VARIABLE}).",
            )
        if request.method not in SAFE_METHODS:
            refusal = self._foreign(host)
            if refusal:
                return _text(403, f"Refused: {refusal}.")
        if not self.gate.guarded:
            return None
        if self.gate.token is None:
            return self._closed()
        if request.path in (SIGN_IN_PATH, SIGN_OUT_PATH):
            return None
        if self.sessions.valid(request.cookies.get(COOKIE_NAME)):
            flask.g.setdefault(SIGNED_IN, True)
            return None
        if request.method in ("GET", "HEAD") and _is_page(request.path):
            target = request.full_path if request.query_string else request.path
            return flask.redirect(f"{SIGN_IN_PATH}?next={quote(target, safe='/')}", code=302)
        response = flask.jsonify(error="sign in first", sign_in=SIGN_IN_PATH)
        response.status_code = 401
        return response

    def _foreign(self, host: tuple[str, int | None]) -> str | None:
        """Why a state-changing request is cross-site, or None."""
        headers = flask.request.headers
        if headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
            return "a cross-site request"
        origin = headers.get("Origin")
        if origin is None:
            return None
        parts = urlsplit(origin.strip())
        scheme = parts.scheme.lower()
        netloc = split_host(parts.netloc) if scheme in DEFAULT_PORTS else None
        if netloc is None or parts.path not in ("", "/") or parts.query or parts.fragment:
            return "a request from an unknown origin"
        name, port = netloc
        origin_port = port if port is not None else DEFAULT_PORTS[scheme]
        host_port = host[1] if host[1] is not None else DEFAULT_PORTS[scheme]
        if not self.hosts.allows(name) or origin_port != host_port:
            return "a request from another site"
        return None

    def _secure(self) -> bool:
        request = flask.request
        if request.is_secure:
            return True
        if not self.trust_forwarded_proto:
            return False
        forwarded = request.headers.get("X-Forwarded-Proto", "")
        return forwarded.split(",")[0].strip().lower() == "https"

    def _where(self) -> str:
        if self.gate.production:
            return "declared production (SWEEPBENCH_ENV=production)"
        return f"listening on {self.gate.host}, not loopback"

    def _closed(self) -> flask.Response:
        if not _is_page(flask.request.path):
            response = flask.jsonify(error=f"closed: no {TOKEN_VARIABLE} set on this server")
            response.status_code = 503
            return response
        body = (
            f"<p>This sweepbench server is {html.escape(self._where())}, and no "
            f"<code>{TOKEN_VARIABLE}</code> is set, so nobody could prove they may use it. "
            "The app stays closed until the operator sets one and restarts it:</p>"
            "<pre>export SWEEPBENCH_TOKEN=\"$(python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))')\"\nsweepbench serve --host …</pre>"
            "<p>Or serve on loopback (<code>sweepbench serve</code>, 127.0.0.1) and reach it "
            "through an SSH tunnel or a TLS reverse proxy.</p>"
        )
        return _page(503, "sweepbench is closed", body)

    # -- routes --

    def _sign_in(self) -> Response:
        request = flask.request
        target = _local_target(request.values.get("next", "/"))
        if not self.gate.guarded:  # loopback: nothing to sign in to
            return flask.redirect(target, code=303)
        if request.method == "GET":
            if self.sessions.valid(request.cookies.get(COOKIE_NAME)):
                return flask.redirect(target, code=303)
            return self._form(200, target)
        address = request.remote_addr or "unknown"
        wait = self.limiter.wait_s(address)
        if wait > 0:
            response = self._form(429, target, "Too many failed sign-ins: wait a minute.")
            response.headers["Retry-After"] = str(max(1, round(wait + 0.5)))
            return response
        supplied = request.form.get("token", "")
        token = self.gate.token or ""
        if not token or not hmac.compare_digest(supplied.encode(), token.encode()):
            self.limiter.failed(address)
            time.sleep(self.limiter.delay_s)
            return self._form(401, target, "That is not the access token.")
        self.limiter.succeeded(address)
        signed_in = flask.redirect(target, code=303)
        signed_in.set_cookie(
            COOKIE_NAME,
            self.sessions.start(),
            max_age=int(self.sessions.lifetime),
            path="/",
            secure=self._secure(),
            httponly=True,
            samesite="Strict",
        )
        return signed_in

    def _sign_out(self) -> Response:
        self.sessions.end(flask.request.cookies.get(COOKIE_NAME))
        response = flask.redirect(SIGN_IN_PATH, code=303)
        response.delete_cookie(
            COOKIE_NAME, path="/", secure=self._secure(), httponly=True, samesite="Strict"
        )
        return response

    def _form(self, status: int, target: str, error: str = "") -> flask.Response:
        alert = f'<p class="error" id="sign-in-error">{html.escape(error)}</p>' if error else ""
        body = (
            f"<p>This server is {html.escape(self._where())}: enter the access token "
            f"(<code>{TOKEN_VARIABLE}</code>) to use it.</p>{alert}"
            f'<form method="post" action="{SIGN_IN_PATH}">'
            f'<input type="hidden" name="next" value="{html.escape(target)}">'
            '<label>Access token <input type="password" name="token" id="sign-in-token" '
            'autocomplete="current-password" autofocus required></label> '
            '<button type="submit" id="sign-in-submit">Sign in</button></form>'
        )
        return _page(status, "Sign in to sweepbench", body)


def _is_page(path: str) -> bool:
    """A path the browser opens as a page (Dash's own routes and our files start with ``/_``)."""
    return not path.startswith(("/_", "/assets/"))


def _local_target(value: str) -> str:
    """Where to go after signing in: a path on this server, never another site."""
    if not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    if any(ord(c) < 32 for c in value) or value.startswith(SIGN_IN_PATH):
        return "/"
    return value


def _text(status: int, message: str) -> flask.Response:
    return flask.Response(message + "\n", status=status, mimetype="text/plain")


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;"
    "color:#222}h1{font-size:1.4rem}pre,code{background:#f3f3f3;padding:.1rem .3rem}"
    "pre{padding:.6rem;white-space:pre-wrap}.error{color:#b00020}input{padding:.3rem}"
    "button{padding:.35rem .8rem}"
)


def _page(status: int, title: str, body: str) -> flask.Response:
    document = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_STYLE}</style></head><body><h1>{title}</h1>{body}</body></html>"
    )
    response = flask.Response(document, status=status, mimetype="text/html")
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    response.headers["Cache-Control"] = "no-store"
    return response


def _hardened(response: flask.Response) -> flask.Response:
    """No framing (so Run cannot be clicked through another site's page), no sniffing."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if "Content-Security-Policy" not in response.headers:
        response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    return response
