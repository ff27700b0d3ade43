"""The shared machinery of the fake provider servers: a threaded HTTP/1.1 server on
127.0.0.1, request recording, a FIFO script queue, and an SSE engine that applies
delays, drops and mid-stream failures.

Scripting (the same on every server; the provider modules explain their wire formats)::

    with AnthropicServer() as srv:
        srv.reply("Hello there", reasoning="Let me think", input_tokens=20, output_tokens=9)
        srv.error(429, retry_after=3)            # next call: HTTP 429 + retry-after: 3
        srv.drop(after=2)                        # next call: 2 content chunks, then the socket dies
        srv.slow(chunks=200, delay=0.05)         # next call: long and slow, for cancellation
        srv.fail(after=1, message="Overloaded")  # next call: an in-band error event mid-stream
        srv.raw(b"data: {oops", drop=True)       # next call: these bytes verbatim, then hang up
        ...                                      # an empty queue answers with ``srv.default_reply``
        assert srv.wait_disconnect(2)            # the client hung up during a stream

A *content chunk* is one streamed delta of reasoning, answer text or refusal text; reasoning
chunks come first. ``delay`` is slept before every content chunk; ``drop_after``/``failure.after``
act right after that many content chunks were sent (0: before the first one) and do nothing
when the reply has fewer chunks. Token numbers are written verbatim into the provider's usage
fields (no arithmetic except OpenAI-style ``total_tokens = input + output``).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import parse_qsl, urlsplit

from .scripts import (
    Chunks,
    HttpError,
    Raw,
    RecordedRequest,
    Reply,
    Route,
    Script,
    Sse,
    StreamFailure,
    new_id,
    split_chunks,
)

__all__ = [
    "Chunks",
    "ClientGone",
    "Exchange",
    "FakeServer",
    "HttpError",
    "Raw",
    "RecordedRequest",
    "Reply",
    "Script",
    "Sse",
    "StreamFailure",
    "new_id",
    "split_chunks",
]


class ClientGone(Exception):
    """The client closed the connection while we were streaming."""


class Exchange:
    """The response side of one request, handed to the provider's route method."""

    def __init__(self, server: FakeServer, handler: _Handler, request: RecordedRequest) -> None:
        self.server = server
        self.handler = handler
        self.request = request

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        payload = json.dumps(body).encode()
        h = self.handler
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(payload)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        self._write(payload)

    def start_stream(self, headers: dict[str, str] | None = None) -> None:
        h = self.handler
        h.send_response(200)
        h.send_header("content-type", "text/event-stream; charset=utf-8")
        h.send_header("cache-control", "no-cache")
        h.send_header("transfer-encoding", "chunked")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()

    def send(self, frame: Sse) -> None:
        data = frame.encode()
        self._write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        self._write(b"0\r\n\r\n")

    def drop(self) -> None:
        """Hang up abruptly: no terminating chunk, the client sees a truncated body."""
        self.handler.close_connection = True
        sock = self.handler.connection
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def sleep(self, seconds: float) -> None:
        """Wait, noticing a client that hangs up meanwhile (raises ClientGone)."""
        sock = self.handler.connection
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.server._stopping.is_set():
                raise ClientGone("server stopping")
            readable, _, _ = select.select([sock], [], [], min(left, 0.05))
            if readable:
                try:
                    peek = sock.recv(1, socket.MSG_PEEK)
                except OSError as exc:
                    raise ClientGone(str(exc)) from exc
                if not peek:
                    raise ClientGone("client closed the connection")
                self.server._stopping.wait(left)  # pipelined bytes: just wait

    def _write(self, data: bytes) -> None:
        if self.server._stopping.is_set():
            raise ClientGone("server stopping")
        try:
            self.handler.wfile.write(data)
            self.handler.wfile.flush()
        except OSError as exc:  # BrokenPipe, ConnectionReset, ConnectionAborted
            raise ClientGone(str(exc)) from exc


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.fake._conns.add(self.connection)

    def finish(self) -> None:
        self.server.fake._conns.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    def do_DELETE(self) -> None:
        self.server.fake._handle(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A peer resetting an idle keep-alive connection is normal; anything else is a bug."""
        if not isinstance(sys.exc_info()[1], OSError):
            self.fake.server_errors.append(traceback.format_exc())


class FakeServer:
    """Base of the provider fakes; use as a context manager.

    ``url`` is ``http://127.0.0.1:PORT``; ``requests`` lists every request received;
    ``disconnected`` is set when a client hung up mid-stream (``disconnects`` counts them);
    ``models_fetches`` / ``key_fetches`` count catalogue and key look-ups; ``server_errors``
    holds tracebacks of bugs in the fake itself (answered with HTTP 500).
    """

    ERRORS: ClassVar[dict[int, tuple[str | None, str | int | None, str]]] = {}
    """status -> (default type, default code, default message)."""
    routes: ClassVar[dict[tuple[str, str], str]] = {}
    """(method, path) -> name of the method that answers it."""

    def route(self, method: str, path: str) -> str | None:
        """The name of the method that answers ``method path`` (None: no route); a fake with
        paths that carry values (``/models/{author}/{slug}/endpoints``) overrides it."""
        return self.routes.get((method, path))

    def __init__(
        self,
        *,
        api_key: str | None = None,
        enforce_key: bool = False,
        default_reply: Reply | None = None,
    ) -> None:
        self.api_key = api_key
        self.enforce_key = enforce_key
        self.default_reply = default_reply or Reply()
        self.requests: list[RecordedRequest] = []
        self.disconnected = threading.Event()
        self.disconnects = 0
        self.models_fetches = 0
        self.key_fetches = 0
        self.server_errors: list[str] = []
        self._queues: dict[str, deque[Script]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._conns: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Self:
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.02,), name=type(self).__name__
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        for conn in list(self._conns):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)
        self._httpd = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # scripting ---------------------------------------------------------------------------

    def push(self, *scripts: Script, route: Route = "generate") -> None:
        """Queue scripts (FIFO) for a route: ``generate`` (the completion endpoints),
        ``models`` or ``key`` (only HttpError is meaningful there)."""
        with self._lock:
            self._queues.setdefault(route, deque()).extend(scripts)

    def reply(self, text: Chunks = Reply.text, **fields: Any) -> Reply:
        """Queue a normal reply; ``fields`` are :class:`Reply` fields."""
        script = Reply(text=text, **fields)
        self.push(script)
        return script

    def error(self, status: int, message: str | None = None, **fields: Any) -> HttpError:
        """Queue an HTTP error; ``fields`` are :class:`HttpError` fields (``type``, ``code``,
        ``retry_after``, ``retry_after_ms``, ``metadata``, ``headers``, ``param``)."""
        script = HttpError(status, message, **fields)
        self.push(script)
        return script

    def drop(self, after: int = 2, **fields: Any) -> Reply:
        """Queue a reply that dies (socket closed, no final event) after ``after`` chunks."""
        return self.reply(**{"text": "one two three four five six", **fields, "drop_after": after})

    def slow(self, chunks: int = 200, delay: float = 0.05, **fields: Any) -> Reply:
        """Queue a long reply of ``chunks`` chunks with ``delay`` seconds before each."""
        return self.reply(**{"text": [f"tok{i} " for i in range(chunks)], **fields, "delay": delay})

    def fail(self, after: int = 1, message: str = "Overloaded", **failure: Any) -> Reply:
        """Queue a reply that sends ``after`` chunks then an in-band error (StreamFailure
        fields: ``type``, ``code``, ``kind``, ``metadata``)."""
        script = Reply(failure=StreamFailure(after=after, message=message, **failure))
        self.push(script)
        return script

    def raw(self, body: bytes | Sequence[bytes] = b"", **fields: Any) -> Raw:
        """Queue a verbatim body (malformed SSE, an HTML page…); ``fields`` are :class:`Raw`
        fields (``status``, ``content_type``, ``drop``, ``chunked``, ``headers``)."""
        script = Raw(body, **fields)
        self.push(script)
        return script

    def next_script(self, route: Route = "generate") -> Script | None:
        with self._lock:
            queue = self._queues.get(route)
            return queue.popleft() if queue else None

    def pending(self, route: Route = "generate") -> int:
        """Scripts still queued for a route."""
        with self._lock:
            return len(self._queues.get(route, ()))

    def wait_disconnect(self, timeout: float) -> bool:
        """True once a client has hung up mid-stream (waits up to ``timeout`` seconds)."""
        return self.disconnected.wait(timeout)

    def reset(self) -> None:
        """Forget requests, queued scripts, counters and the disconnect flag."""
        with self._lock:
            self._queues.clear()
            self.requests.clear()
        self.disconnected.clear()
        self.disconnects = self.models_fetches = self.key_fetches = 0

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    # provider hooks ------------------------------------------------------------------------

    def error_body(self, err: HttpError) -> dict[str, Any]:
        raise NotImplementedError

    def presented_key(self, req: RecordedRequest) -> str | None:
        auth = req.headers.get("authorization", "")
        return auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None

    def response_headers(self) -> dict[str, str]:
        return {}

    def error_defaults(self, err: HttpError) -> tuple[str | None, str | int | None, str]:
        return self.ERRORS.get(err.status, (None, None, f"HTTP {err.status}"))

    # serving -------------------------------------------------------------------------------

    def send_error(self, ex: Exchange, err: HttpError) -> None:
        headers = {**self.response_headers(), **err.headers}
        if err.retry_after is not None:
            headers["retry-after"] = str(err.retry_after)
        if err.retry_after_ms is not None:
            headers["retry-after-ms"] = str(err.retry_after_ms)
        ex.request.outcome = "http_error"
        ex.send_json(err.status, self.error_body(err), headers)

    def send_raw(self, ex: Exchange, raw: Raw) -> None:
        """Write a :class:`Raw` script's bytes as they are."""
        h = ex.handler
        h.send_response(raw.status)
        if raw.content_type is not None:
            h.send_header("content-type", raw.content_type)
        whole = b"".join(raw.pieces)
        if raw.chunked:
            h.send_header("transfer-encoding", "chunked")
        else:
            h.send_header("content-length", str(len(whole)))
        for name, value in {**self.response_headers(), **raw.headers}.items():
            h.send_header(name, value)
        h.end_headers()
        ex.request.outcome = "dropped" if raw.drop else "raw"
        if not raw.chunked:
            ex._write(whole)
        else:
            for piece in raw.pieces:
                if piece:  # an empty chunk would end the body
                    ex._write(b"%x\r\n%s\r\n" % (len(piece), piece))
        if raw.drop:
            ex.drop()
        elif raw.chunked:
            ex.end_stream()

    def play(
        self,
        ex: Exchange,
        reply: Reply,
        frames: Iterable[Sse],
        failure_frames: Callable[[StreamFailure], list[Sse]],
    ) -> None:
        """Stream ``frames``, applying the reply's delay, drop and failure to content frames."""
        ex.start_stream({**self.response_headers(), **reply.headers})
        sent = 0

        def cut() -> bool:
            if reply.drop_after is not None and sent == reply.drop_after:
                ex.request.outcome = "dropped"
                ex.drop()
                return True
            if reply.failure is not None and sent == reply.failure.after:
                ex.request.outcome = "failed"
                for frame in failure_frames(reply.failure):
                    ex.send(frame)
                ex.end_stream()
                return True
            return False

        for frame in frames:
            if frame.content:
                if sent == 0 and cut():
                    return
                if reply.delay:
                    ex.sleep(reply.delay)
                ex.send(frame)
                sent += 1
                if cut():
                    return
            else:
                ex.send(frame)
        ex.request.outcome = "completed"  # set first: the client may look once it has the end
        ex.end_stream()

    def _record(self, handler: _Handler) -> RecordedRequest:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in handler.headers.items()}
        req = RecordedRequest(
            handler.command, parts.path, dict(parse_qsl(parts.query)), headers, body, raw
        )
        with self._lock:
            self.requests.append(req)
        return req

    def _handle(self, handler: _Handler) -> None:
        req = self._record(handler)
        ex = Exchange(self, handler, req)
        try:
            name = self.route(req.method, req.path.rstrip("/"))
            if name in ("models", "key"):
                with self._lock:
                    if name == "models":
                        self.models_fetches += 1
                    else:
                        self.key_fetches += 1
            if name is None:
                self.send_error(ex, HttpError(404, f"no route for {req.method} {req.path}"))
            elif (
                self.enforce_key
                and self.api_key is not None
                and self.presented_key(req) != self.api_key
            ):
                self.send_error(ex, HttpError(401))
            else:
                getattr(self, name)(ex)
        except ClientGone:
            handler.close_connection = True
            req.outcome = "disconnected"
            if self._stopping.is_set():
                return
            with self._lock:
                self.disconnects += 1
            self.disconnected.set()
        except Exception:
            handler.close_connection = True
            self.server_errors.append(traceback.format_exc())
            with contextlib.suppress(Exception):
                ex.send_json(500, {"error": {"message": "fake server bug", "type": "fake_bug"}})
