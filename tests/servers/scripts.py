"""The scripts a test queues on a fake server, and what the server records.

Read with :mod:`.base` (the server API). A *content chunk* is one streamed delta of reasoning,
answer text or refusal text.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Chunks = str | Sequence[str]
"""Text as one string (split into word-sized chunks, leading space kept) or explicit chunks."""
Route = Literal["generate", "models", "key", "endpoints"]
Outcome = Literal["pending", "completed", "http_error", "dropped", "failed", "disconnected", "raw"]


def split_chunks(text: Chunks | None) -> list[str]:
    """``"Hi there"`` -> ``["Hi", " there"]``; a sequence is taken as the chunks themselves."""
    if text is None:
        return []
    if not isinstance(text, str):
        return list(text)
    return re.findall(r"\s*\S+(?:\s+$)?", text) or ([text] if text else [])


def new_id(prefix: str, size: int = 24) -> str:
    """A provider-looking id such as ``msg_0123abcd…``."""
    return f"{prefix}{uuid.uuid4().hex[:size]}"


@dataclass
class StreamFailure:
    """An in-band error sent mid-stream, after which the stream ends (no normal finish).

    Anthropic: ``event: error`` with ``{"type":"error","error":{"type","message"}}`` (``type``
    defaults to ``overloaded_error``). OpenAI Responses: an ``error`` event (``kind="error"``)
    or ``response.failed`` (``kind="failed"``). Chat completions: a ``data: {"error": …}`` chunk
    (OpenRouter adds its integer ``code``, ``metadata`` and ``finish_reason: "error"``).
    """

    after: int = 0
    """Content chunks sent before the failure."""
    message: str = "Overloaded"
    type: str | None = None
    code: str | int | None = None
    kind: Literal["error", "failed"] = "error"
    metadata: dict[str, Any] | None = None


@dataclass
class Reply:
    """A successful (streamed or plain JSON) reply; every field has a usable default.

    A non-streamed request gets the whole reply as one JSON body: ``delay`` and ``failure``
    are ignored there and ``drop_after`` closes the connection without any answer.
    """

    text: Chunks = "Hello from the fake server."
    reasoning: Chunks | None = None
    """Thinking (Anthropic), reasoning summary (OpenAI Responses), ``reasoning_content``
    (OpenAI chat) or ``reasoning`` (OpenRouter) text, streamed before the answer."""
    refusal: Chunks | None = None
    """OpenAI only: stream this as a refusal instead of ``text``."""
    input_tokens: int = 12
    output_tokens: int | None = None
    """Total output including reasoning; None: number of text/refusal chunks + reasoning tokens."""
    reasoning_tokens: int | None = None
    """None: the number of reasoning chunks."""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None
    """OpenRouter ``usage.cost`` in USD; None: priced from the model list (0 if unknown)."""
    is_byok: bool = False
    stop_reason: str | None = None
    """Provider word; None: the natural end (``end_turn`` / ``completed`` / ``stop``)."""
    stop_sequence: str | None = None
    delay: float = 0.0
    """Seconds slept before each content chunk."""
    drop_after: int | None = None
    """Close the socket abruptly (no terminating chunk, no final event) after N content chunks."""
    failure: StreamFailure | None = None
    model: str | None = None
    """The model named in the reply; None: echo the request's ``model``."""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def text_chunks(self) -> list[str]:
        return split_chunks(self.text)

    @property
    def reasoning_chunks(self) -> list[str]:
        return split_chunks(self.reasoning)

    @property
    def refusal_chunks(self) -> list[str]:
        return split_chunks(self.refusal)

    @property
    def reasoning_total(self) -> int:
        if self.reasoning_tokens is not None:
            return self.reasoning_tokens
        return len(self.reasoning_chunks)

    @property
    def output_total(self) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        answer = self.refusal_chunks if self.refusal is not None else self.text_chunks
        return len(answer) + self.reasoning_total


@dataclass
class HttpError:
    """An HTTP error reply. Unset ``type``/``code``/``message`` get the provider's usual values
    for the status (see each server's ``ERRORS`` table)."""

    status: int
    message: str | None = None
    type: str | None = None
    code: str | int | None = None
    param: str | None = None
    retry_after: float | str | None = None
    """Sent as the ``retry-after`` header (seconds)."""
    retry_after_ms: int | None = None
    """Sent as the ``retry-after-ms`` header."""
    metadata: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Raw:
    """A response body written verbatim, for malformed streams: each piece of ``body`` is
    sent (and flushed) as one HTTP chunk, so a test decides where the reads split.

    With ``drop`` the server hangs up after the last piece instead of ending the body (the
    client sees a truncated response, e.g. the connection closing mid-event). With
    ``chunked=False`` the body is sent whole with a ``content-length`` (a plain, non-streamed
    page, such as a proxy's HTML)."""

    body: bytes | Sequence[bytes] = b""
    status: int = 200
    content_type: str | None = "text/event-stream; charset=utf-8"
    """None: no ``content-type`` header at all."""
    drop: bool = False
    chunked: bool = True
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def pieces(self) -> list[bytes]:
        return [self.body] if isinstance(self.body, bytes) else list(self.body)


Script = Reply | HttpError | Raw


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    """Lower-cased names."""
    body: Any | None
    """Parsed JSON, or None when the body was empty or not JSON."""
    raw: bytes = b""
    outcome: Outcome = "pending"
    """``completed``, ``http_error``, ``dropped``, ``failed`` (in-band error), ``raw`` (a
    :class:`Raw` body) or ``disconnected`` (client hung up); set just before the final bytes
    are written."""

    @property
    def json(self) -> dict[str, Any]:
        """The body as a dict ({} when absent)."""
        return self.body if isinstance(self.body, dict) else {}

    @property
    def stream(self) -> bool:
        return bool(self.json.get("stream"))


@dataclass(frozen=True)
class Sse:
    """One SSE frame: ``event:``/``data:`` lines or a ``:`` comment, then a blank line."""

    data: Any = None
    event: str | None = None
    content: bool = False
    """Counts as a content chunk (delay, drop and failure apply to it)."""
    comment: str | None = None

    def encode(self) -> bytes:
        if self.comment is not None:
            return f": {self.comment}\n\n".encode()
        data = self.data if isinstance(self.data, str) else json.dumps(self.data)
        lines = [f"event: {self.event}"] if self.event else []
        lines += [f"data: {line}" for line in data.split("\n")]
        return ("\n".join(lines) + "\n\n").encode()
