"""A connection the server resets says why it failed (issue 26 §5: "reset errors with an empty
reason"): through each SDK, against a server on 127.0.0.1 that resets every connection."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from sweepbench.models.http_errors import connection_reason
from tests.adapters import run


class Resetter:
    """Accepts each connection, reads what the client sends, then resets it (RST)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.resets = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.recv(65536)
            self.resets += 1  # counted before the reset, so a client that saw it sees the count
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def resetter() -> Iterator[Resetter]:
    server = Resetter()
    yield server
    server.close()


@pytest.mark.parametrize("provider", ["compatible", "anthropic"])
async def test_a_reset_connection_says_why(
    resetter: Resetter, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    if provider == "compatible":
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", resetter.url + "/v1")
        model = "compatible/lab"
    else:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
        monkeypatch.setenv("SWEEPBENCH_ANTHROPIC_BASE_URL", resetter.url)
        model = "anthropic/claude-opus-5"
    result = await run(model, max_tokens=10)
    assert result.error is not None and resetter.resets >= 1
    message = str(result.error)
    reason = message.split("connection failed:", 1)[1].strip()
    assert reason and reason != "Connection error.", message


def test_a_reason_is_found_under_any_wrapping() -> None:
    try:
        try:
            raise ConnectionResetError()
        except ConnectionResetError as inner:
            raise RuntimeError("") from inner
    except RuntimeError as wrapped:
        assert "reset the connection" in connection_reason(wrapped)
    try:
        raise ValueError("")
    except ValueError as bare:
        assert connection_reason(bare) == "ValueError, no reason given"
