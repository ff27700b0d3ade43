"""A fake of the Anthropic Messages API (``anthropic.AsyncAnthropic(base_url=srv.url)``).

Routes: ``POST /v1/messages`` (streamed when the body says ``"stream": true``, else one JSON
message) and ``GET /v1/models``.

Streamed reply, in order::

    message_start    message.usage {input_tokens, output_tokens: 1, cache_creation_input_tokens,
                     cache_read_input_tokens}; stop_reason null
    ping             (unless AnthropicServer(ping=False))
    content_block_start/delta/stop, index 0, for a thinking block when ``reasoning`` is
                     scripted: thinking_delta per chunk, then one signature_delta
    content_block_start/delta/stop for the text block: text_delta per chunk (skipped when the
                     reply has no text)
    message_delta    delta {stop_reason, stop_sequence[, stop_details for "refusal"]}, usage
                     {output_tokens, input_tokens, cache_*[, output_tokens_details.thinking_tokens]}
    message_stop

``Reply.input_tokens`` is Anthropic's uncached input (caches are separate fields);
``Reply.output_tokens`` includes thinking; ``cache_write_tokens`` goes to
``cache_creation_input_tokens``. ``stop_reason`` defaults to ``end_turn``; others:
``max_tokens``, ``refusal``, ``stop_sequence`` (with ``Reply.stop_sequence``), ``pause_turn``,
``model_context_window_exceeded``. A :class:`StreamFailure` becomes ``event: error`` with
``{"type": "error", "error": {"type": "overloaded_error", "message": ...}}``.

HTTP errors: ``{"type": "error", "error": {"type", "message"}, "request_id"}`` with the type
from :attr:`AnthropicServer.ERRORS` unless given (400 invalid_request_error, 401
authentication_error, 402 billing_error, 403 permission_error, 404 not_found_error, 413
request_too_large, 429 rate_limit_error, 500 api_error, 504 timeout_error, 529
overloaded_error). Every response carries a ``request-id`` header.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from .base import (
    Exchange,
    FakeServer,
    HttpError,
    Raw,
    RecordedRequest,
    Reply,
    Sse,
    StreamFailure,
    new_id,
)

DEFAULT_MODELS: tuple[dict[str, Any], ...] = (
    {
        "id": "claude-sonnet-4-6",
        "type": "model",
        "display_name": "Claude Sonnet 4.6",
        "created_at": "2026-02-17T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 1_000_000,
        "max_tokens": 64_000,
    },
    {
        "id": "claude-haiku-4-5",
        "type": "model",
        "display_name": "Claude Haiku 4.5",
        "created_at": "2025-10-15T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": 200_000,
        "max_tokens": 64_000,
    },
)


class AnthropicServer(FakeServer):
    """Fake ``api.anthropic.com``.

    ``AnthropicServer(models=None, ping=True, api_key=None, enforce_key=False,
    default_reply=None)``: ``models`` is the ``GET /v1/models`` list (dicts in the API's
    shape; default :data:`DEFAULT_MODELS`); with ``enforce_key`` every request must carry
    ``x-api-key: <api_key>`` or gets a 401.
    """

    ERRORS: ClassVar[dict[int, tuple[str | None, str | int | None, str]]] = {
        400: ("invalid_request_error", None, "Invalid request."),
        401: ("authentication_error", None, "invalid x-api-key"),
        402: ("billing_error", None, "Your credit balance is too low to access the API."),
        403: ("permission_error", None, "Your API key does not have permission to do that."),
        404: ("not_found_error", None, "Not found."),
        413: ("request_too_large", None, "Request exceeds the maximum allowed number of bytes."),
        429: ("rate_limit_error", None, "This request would exceed your rate limit."),
        500: ("api_error", None, "Internal server error"),
        504: ("timeout_error", None, "Request timed out"),
        529: ("overloaded_error", None, "Overloaded"),
    }
    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/v1/messages"): "messages",
        ("GET", "/v1/models"): "models",
    }

    def __init__(
        self,
        *,
        models: Sequence[dict[str, Any]] | None = None,
        ping: bool = True,
        api_key: str | None = None,
        enforce_key: bool = False,
        default_reply: Reply | None = None,
    ) -> None:
        super().__init__(api_key=api_key, enforce_key=enforce_key, default_reply=default_reply)
        self.models_list: list[dict[str, Any]] = list(
            models if models is not None else DEFAULT_MODELS
        )
        self.ping = ping

    # hooks -----------------------------------------------------------------------------------

    def presented_key(self, req: RecordedRequest) -> str | None:
        return req.headers.get("x-api-key") or super().presented_key(req)

    def response_headers(self) -> dict[str, str]:
        return {"request-id": new_id("req_")}

    def error_body(self, err: HttpError) -> dict[str, Any]:
        etype, _, message = self.error_defaults(err)
        return {
            "type": "error",
            "error": {"type": err.type or etype or "api_error", "message": err.message or message},
            "request_id": new_id("req_"),
        }

    # routes ----------------------------------------------------------------------------------

    def models(self, ex: Exchange) -> None:
        script = self.next_script("models")
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        data = self.models_list
        ex.request.outcome = "completed"
        ex.send_json(
            200,
            {
                "data": data,
                "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            },
            self.response_headers(),
        )

    def messages(self, ex: Exchange) -> None:
        script = self.next_script() or self.default_reply
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        if isinstance(script, Raw):
            return self.send_raw(ex, script)
        model = script.model or str(ex.request.json.get("model", "claude-fake"))
        if ex.request.stream:
            return self.play(ex, script, self._frames(script, model), self._failure)
        if script.drop_after is not None:
            ex.request.outcome = "dropped"
            return ex.drop()
        ex.request.outcome = "completed"
        ex.send_json(
            200, self._message(script, model), {**self.response_headers(), **script.headers}
        )

    # wire shapes -----------------------------------------------------------------------------

    @staticmethod
    def _stop(reply: Reply) -> dict[str, Any]:
        reason = reply.stop_reason or "end_turn"
        stop: dict[str, Any] = {
            "stop_reason": reason,
            "stop_sequence": (reply.stop_sequence or "\n\nHuman:")
            if reason == "stop_sequence"
            else None,
        }
        if reason == "refusal":
            stop["stop_details"] = {"type": "refusal", "category": None, "explanation": None}
        return stop

    @staticmethod
    def _usage(reply: Reply, output_tokens: int, *, final: bool = True) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": reply.cache_write_tokens,
            "cache_read_input_tokens": reply.cache_read_tokens,
            "output_tokens": output_tokens,
        }
        if final and reply.reasoning_total:
            usage["output_tokens_details"] = {"thinking_tokens": reply.reasoning_total}
        return usage

    def _message(self, reply: Reply, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            thinking = "".join(reply.reasoning_chunks)
            content.append({"type": "thinking", "thinking": thinking, "signature": _SIGNATURE})
        if reply.text_chunks:
            content.append({"type": "text", "text": "".join(reply.text_chunks)})
        return {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            **self._stop(reply),
            "usage": self._usage(reply, reply.output_total),
        }

    def _frames(self, reply: Reply, model: str) -> Iterator[Sse]:
        start = {
            **self._message(reply, model),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(reply, min(1, reply.output_total), final=False),
        }
        yield _event("message_start", {"message": start})
        if self.ping:
            yield _event("ping", {})
        index = 0
        if reply.reasoning is not None:
            block = {"type": "thinking", "thinking": "", "signature": ""}
            yield _event("content_block_start", {"index": index, "content_block": block})
            for piece in reply.reasoning_chunks:
                delta = {"type": "thinking_delta", "thinking": piece}
                yield _event("content_block_delta", {"index": index, "delta": delta}, content=True)
            delta = {"type": "signature_delta", "signature": _SIGNATURE}
            yield _event("content_block_delta", {"index": index, "delta": delta})
            yield _event("content_block_stop", {"index": index})
            index += 1
        if reply.text_chunks:
            block = {"type": "text", "text": ""}
            yield _event("content_block_start", {"index": index, "content_block": block})
            for piece in reply.text_chunks:
                delta = {"type": "text_delta", "text": piece}
                yield _event("content_block_delta", {"index": index, "delta": delta}, content=True)
            yield _event("content_block_stop", {"index": index})
        yield _event(
            "message_delta",
            {"delta": self._stop(reply), "usage": self._usage(reply, reply.output_total)},
        )
        yield _event("message_stop", {})

    @staticmethod
    def _failure(failure: StreamFailure) -> list[Sse]:
        error = {"type": failure.type or "overloaded_error", "message": failure.message}
        return [_event("error", {"error": error})]


_SIGNATURE = "ErUBCkYIBRgCIkBmYWtlLXNpZ25hdHVyZQ=="


def _event(name: str, body: dict[str, Any], *, content: bool = False) -> Sse:
    return Sse({"type": name, **body}, event=name, content=content)
