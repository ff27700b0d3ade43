"""Who may start a run that spends money (spec sweeps.md §13.2, issue 5).

On a loopback address the person at the keyboard owns the keys, so running is allowed (the
ceilings still apply). Bound to any other address, or declared production
(``SWEEPBENCH_ENV=production``), a run that spends money needs the token in
``SWEEPBENCH_TOKEN``; with no token configured such runs are refused — the gate fails closed.
Free runs (local and scripted models, and own servers that send no key or are marked
``free = true``) need no token.

Off loopback the token also gates the whole app (:mod:`sweepbench.web.security`): a visitor
signs in with it once, and a signed-in request counts as having supplied it."""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from sweepbench.variables import ENV, TOKEN

TOKEN_VARIABLE = TOKEN.name
SIGNED_IN = "sweepbench_signed_in"
"""The ``flask.g`` flag the sign-in check sets on a request with a live session cookie."""


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and "localhost"."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Gate:
    """The access rule of one server."""

    host: str
    token: str | None = None
    production: bool = False

    @classmethod
    def for_host(cls, host: str) -> Gate:
        """The gate for a server bound to ``host``, with the token from the environment."""
        return cls(host, TOKEN.value(), ENV.value() == "production")

    @property
    def guarded(self) -> bool:
        """Spending needs a token here."""
        return self.production or not is_loopback(self.host)

    def why_closed(self, supplied: str | None, *, spends: bool) -> str | None:
        """None when the run may start, else why not (meant for the page)."""
        if not spends or not self.guarded:
            return None
        where = "declared production" if self.production else f"listening on {self.host}"
        if self.token is None:
            return (
                f"Run is disabled for paid models: this server is {where} and no "
                f"{TOKEN_VARIABLE} is set, so nobody could prove they may spend."
            )
        if _signed_in():
            return None
        if not supplied or not hmac.compare_digest(supplied.encode(), self.token.encode()):
            return (
                f"Run is disabled for paid models: this server is {where}; sign in with the "
                f"access token ({TOKEN_VARIABLE}) to spend."
            )
        return None


def _signed_in() -> bool:
    """Whether the request being served carries a live session (set by the sign-in check)."""
    import flask

    return flask.has_request_context() and bool(flask.g.get(SIGNED_IN, False))
