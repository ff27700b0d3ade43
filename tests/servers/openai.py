"""A fake of the OpenAI API (``openai.AsyncOpenAI(base_url=srv.url + "/v1")``).

Routes: ``POST /v1/responses``, ``POST /v1/chat/completions`` (streamed when ``"stream":
true``, else one JSON object) and ``GET /v1/models``. Both completion routes share the queue.

Responses stream (every event carries ``sequence_number`` from 0)::

    response.created, response.in_progress            (status "in_progress", output [])
    [reasoning scripted] response.output_item.added (reasoning item "rs_…", output_index 0),
        response.reasoning_summary_part.added, response.reasoning_summary_text.delta per chunk,
        response.reasoning_summary_text.done, response.reasoning_summary_part.done,
        response.output_item.done
    response.output_item.added (message "msg_…"), response.content_part.added,
        response.output_text.delta per chunk (item_id, output_index, content_index 0, logprobs []),
        response.output_text.done, response.content_part.done, response.output_item.done
        -- with ``Reply.refusal`` the part is a refusal: response.refusal.delta / .done instead
    response.completed   usage {input_tokens, input_tokens_details {cached_tokens,
        cache_write_tokens}, output_tokens, output_tokens_details {reasoning_tokens}, total_tokens}
    -- or response.incomplete (incomplete_details.reason) when ``stop_reason`` is
       "max_output_tokens" (alias "length"/"max_tokens") or "content_filter"; the message item
       is then "incomplete" and is left out when there is no text.

``Reply.input_tokens`` is OpenAI's total input (cached included); ``cache_read_tokens`` is
``cached_tokens``. A :class:`StreamFailure` is an ``error`` event (``kind="error"``:
``{"type":"error","code","message","param","sequence_number"}``) or ``response.failed``
(``kind="failed"``, response.error {code, message}, output [], usage as scripted).

Chat stream: ``data:`` chunks (``chat.completion.chunk``): a role chunk, then one chunk per
reasoning (``delta.reasoning_content``), text (``delta.content``) or refusal (``delta.refusal``)
piece, a chunk with ``finish_reason`` (``stop``; ``length`` for "max_output_tokens"/"max_tokens";
otherwise ``stop_reason`` verbatim, e.g. ``content_filter``), then, when
``stream_options.include_usage``, a ``choices: []`` chunk with usage {prompt_tokens,
completion_tokens, total_tokens, prompt_tokens_details {cached_tokens},
completion_tokens_details {reasoning_tokens}}, then ``data: [DONE]``. A StreamFailure is a
``data: {"error": {...}}`` chunk (the SDK raises ``openai.APIError``).

HTTP errors: ``{"error": {"message", "type", "param", "code"}}``, defaults per status from
:attr:`OpenAIServer.ERRORS` or, for codes ``insufficient_quota`` / ``context_length_exceeded``,
from :attr:`OpenAIServer.CODES`; ``retry_after`` / ``retry_after_ms`` become the
``retry-after`` / ``retry-after-ms`` headers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
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
    {"id": "gpt-5.6-sol", "object": "model", "created": 1767225600, "owned_by": "openai"},
    {"id": "gpt-5.6-luna", "object": "model", "created": 1767225600, "owned_by": "openai"},
)
_INCOMPLETE = {
    "max_output_tokens": "max_output_tokens",
    "length": "max_output_tokens",
    "max_tokens": "max_output_tokens",
    "content_filter": "content_filter",
}
_FINISH = {"max_output_tokens": "length", "max_tokens": "length", "end_turn": "stop"}


class OpenAIServer(FakeServer):
    """Fake ``api.openai.com``.

    ``OpenAIServer(models=None, api_key=None, enforce_key=False, default_reply=None)``:
    ``models`` is the ``GET /v1/models`` data list (default :data:`DEFAULT_MODELS`); with
    ``enforce_key`` every request must carry ``Authorization: Bearer <api_key>``.
    """

    ERRORS: ClassVar[dict[int, tuple[str | None, str | int | None, str]]] = {
        400: ("invalid_request_error", None, "Invalid request."),
        401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-***."),
        403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden."),
        404: ("invalid_request_error", "model_not_found", "The model does not exist."),
        429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
        500: ("server_error", None, "The server had an error while processing your request."),
        503: ("server_error", None, "The engine is currently overloaded, please try again later."),
    }
    CODES: ClassVar[dict[str, tuple[str, str]]] = {
        "insufficient_quota": (
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        ),
        "context_length_exceeded": (
            "invalid_request_error",
            "This model's maximum context length is 128000 tokens. "
            "However, your messages resulted in 130000 tokens.",
        ),
    }
    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/v1/responses"): "responses",
        ("POST", "/v1/chat/completions"): "chat",
        ("GET", "/v1/models"): "models",
    }

    def __init__(
        self,
        *,
        models: Sequence[dict[str, Any]] | None = None,
        api_key: str | None = None,
        enforce_key: bool = False,
        default_reply: Reply | None = None,
    ) -> None:
        super().__init__(api_key=api_key, enforce_key=enforce_key, default_reply=default_reply)
        self.models_list: list[dict[str, Any]] = list(
            models if models is not None else DEFAULT_MODELS
        )

    # hooks (OpenRouter overrides these) ------------------------------------------------------

    def response_headers(self) -> dict[str, str]:
        return {"x-request-id": new_id("req_", 32), "openai-processing-ms": "7"}

    def error_body(self, err: HttpError) -> dict[str, Any]:
        etype, code, message = self.error_defaults(err)
        if isinstance(err.code, str) and err.code in self.CODES:
            etype, message = self.CODES[err.code]
        return {
            "error": {
                "message": err.message or message,
                "type": err.type or etype,
                "param": err.param,
                "code": err.code if err.code is not None else code,
            }
        }

    def models_body(self) -> dict[str, Any]:
        return {"object": "list", "data": self.models_list}

    def include_usage(self, req: RecordedRequest) -> bool:
        options = req.json.get("stream_options") or {}
        return bool(options.get("include_usage"))

    def chunk_extra(self) -> dict[str, Any]:
        return {"system_fingerprint": "fp_fake", "service_tier": "default"}

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        return {"reasoning_content": piece}

    def chat_usage(self, reply: Reply, model: str) -> dict[str, Any]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_total,
            "total_tokens": reply.input_tokens + reply.output_total,
            "prompt_tokens_details": {"cached_tokens": reply.cache_read_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reply.reasoning_total,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def chat_preamble(self) -> list[Sse]:
        return []

    def chat_failure(self, failure: StreamFailure, base: dict[str, Any]) -> list[Sse]:
        error = {
            "message": failure.message,
            "type": failure.type or "server_error",
            "param": None,
            "code": failure.code,
        }
        return [Sse({"error": error})]

    # routes ----------------------------------------------------------------------------------

    def models(self, ex: Exchange) -> None:
        script = self.next_script("models")
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        ex.request.outcome = "completed"
        ex.send_json(200, self.models_body(), self.response_headers())

    def _serve(self, ex: Exchange, build: Callable[[Reply, str], Any], frames: Any) -> None:
        script = self.next_script() or self.default_reply
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        if isinstance(script, Raw):
            return self.send_raw(ex, script)
        model = script.model or str(ex.request.json.get("model", "gpt-fake"))
        if ex.request.stream:
            stream, failure = frames(ex.request, script, model)
            return self.play(ex, script, stream, failure)
        if script.drop_after is not None:
            ex.request.outcome = "dropped"
            return ex.drop()
        ex.request.outcome = "completed"
        ex.send_json(200, build(script, model), {**self.response_headers(), **script.headers})

    def chat(self, ex: Exchange) -> None:
        self._serve(ex, self._chat_completion, self._chat_frames)

    def responses(self, ex: Exchange) -> None:
        self._serve(ex, lambda r, m: self._response(ex.request, r, m)[0], self._response_frames)

    # chat completions ------------------------------------------------------------------------

    def _finish(self, reply: Reply) -> str:
        reason = reply.stop_reason or "stop"
        return _FINISH.get(reason, reason)

    def _chat_completion(self, reply: Reply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if reply.refusal is not None:
            message["refusal"] = "".join(reply.refusal_chunks)
        else:
            message["content"] = "".join(reply.text_chunks)
        if reply.reasoning is not None:
            message.update(self.reasoning_delta("".join(reply.reasoning_chunks)))
        choice = {"index": 0, "message": message, "finish_reason": self._finish(reply)}
        return {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{**choice, "logprobs": None}],
            "usage": self.chat_usage(reply, model),
            **self.chunk_extra(),
        }

    def _chat_frames(
        self, req: RecordedRequest, reply: Reply, model: str
    ) -> tuple[Iterator[Sse], Callable[[StreamFailure], list[Sse]]]:
        usage = self.include_usage(req)
        base = {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            **self.chunk_extra(),
        }

        def chunk(
            delta: dict[str, Any], finish: str | None = None, *, content: bool = False
        ) -> Sse:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            extra = {"usage": None} if usage else {}
            return Sse({**base, "choices": [choice], **extra}, content=content)

        def frames() -> Iterator[Sse]:
            yield from self.chat_preamble()
            yield chunk({"role": "assistant", "content": "", "refusal": None})
            for piece in reply.reasoning_chunks:
                yield chunk(self.reasoning_delta(piece), content=True)
            if reply.refusal is not None:
                for piece in reply.refusal_chunks:
                    yield chunk({"refusal": piece}, content=True)
            else:
                for piece in reply.text_chunks:
                    yield chunk({"content": piece}, content=True)
            yield chunk({}, self._finish(reply))
            if usage:
                yield Sse({**base, "choices": [], "usage": self.chat_usage(reply, model)})
            yield Sse("[DONE]")

        return frames(), lambda failure: self.chat_failure(failure, base)

    # responses -------------------------------------------------------------------------------

    def _response(
        self, req: RecordedRequest, reply: Reply, model: str, rid: str | None = None
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The final response object and its output items (reasoning, message)."""
        incomplete = _INCOMPLETE.get(reply.stop_reason or "")
        items: list[dict[str, Any]] = []
        if reply.reasoning is not None:
            summary = [{"type": "summary_text", "text": "".join(reply.reasoning_chunks)}]
            items.append({"id": new_id("rs_", 32), "type": "reasoning", "summary": summary})
        if reply.refusal is not None:
            part: dict[str, Any] = {"type": "refusal", "refusal": "".join(reply.refusal_chunks)}
        else:
            text = "".join(reply.text_chunks)
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        if not (incomplete and not reply.text_chunks and reply.refusal is None):
            items.append(
                {
                    "id": new_id("msg_", 32),
                    "type": "message",
                    "status": "incomplete" if incomplete else "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        usage = {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {
                "cached_tokens": reply.cache_read_tokens,
                "cache_write_tokens": reply.cache_write_tokens,
            },
            "output_tokens": reply.output_total,
            "output_tokens_details": {"reasoning_tokens": reply.reasoning_total},
            "total_tokens": reply.input_tokens + reply.output_total,
        }
        created = int(time.time())
        body = req.json
        response = {
            "id": rid or new_id("resp_", 48),
            "object": "response",
            "created_at": created,
            "status": "incomplete" if incomplete else "completed",
            "completed_at": None if incomplete else created,
            "error": None,
            "incomplete_details": {"reason": incomplete} if incomplete else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": model,
            "output": items,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage,
            "metadata": {},
        }
        return response, items

    def _response_frames(
        self, req: RecordedRequest, reply: Reply, model: str
    ) -> tuple[Iterator[Sse], Callable[[StreamFailure], list[Sse]]]:
        final, items = self._response(req, reply, model)
        seq = [0]

        def ev(name: str, body: dict[str, Any], *, content: bool = False) -> Sse:
            data = {"type": name, **body, "sequence_number": seq[0]}
            seq[0] += 1
            return Sse(data, event=name, content=content)

        def frames() -> Iterator[Sse]:
            start = {**final, "status": "in_progress", "output": [], "usage": None}
            start.update(completed_at=None, incomplete_details=None)
            yield ev("response.created", {"response": start})
            yield ev("response.in_progress", {"response": start})
            for index, item in enumerate(items):
                where = {"item_id": item["id"], "output_index": index}
                if item["type"] == "reasoning":
                    yield ev(
                        "response.output_item.added",
                        {"output_index": index, "item": {**item, "summary": []}},
                    )
                    part = {"type": "summary_text", "text": ""}
                    yield ev(
                        "response.reasoning_summary_part.added",
                        {**where, "summary_index": 0, "part": part},
                    )
                    for piece in reply.reasoning_chunks:
                        body = {**where, "summary_index": 0, "delta": piece}
                        yield ev("response.reasoning_summary_text.delta", body, content=True)
                    done = item["summary"][0]
                    yield ev(
                        "response.reasoning_summary_text.done",
                        {**where, "summary_index": 0, "text": done["text"]},
                    )
                    yield ev(
                        "response.reasoning_summary_part.done",
                        {**where, "summary_index": 0, "part": done},
                    )
                else:
                    added = {**item, "status": "in_progress", "content": []}
                    yield ev("response.output_item.added", {"output_index": index, "item": added})
                    part = item["content"][0]
                    at = {**where, "content_index": 0}
                    if part["type"] == "refusal":
                        yield ev(
                            "response.content_part.added", {**at, "part": {**part, "refusal": ""}}
                        )
                        for piece in reply.refusal_chunks:
                            yield ev("response.refusal.delta", {**at, "delta": piece}, content=True)
                        yield ev("response.refusal.done", {**at, "refusal": part["refusal"]})
                    else:
                        yield ev(
                            "response.content_part.added", {**at, "part": {**part, "text": ""}}
                        )
                        for piece in reply.text_chunks:
                            body = {**at, "delta": piece, "logprobs": []}
                            yield ev("response.output_text.delta", body, content=True)
                        yield ev(
                            "response.output_text.done",
                            {**at, "text": part["text"], "logprobs": []},
                        )
                    yield ev("response.content_part.done", {**at, "part": part})
                yield ev("response.output_item.done", {"output_index": index, "item": item})
            name = "response.completed" if final["status"] == "completed" else "response.incomplete"
            yield ev(name, {"response": final})

        def failure(f: StreamFailure) -> list[Sse]:
            if f.kind == "failed":
                error = {"code": f.code or "server_error", "message": f.message}
                failed = {**final, "status": "failed", "completed_at": None, "error": error}
                failed["output"] = []
                return [ev("response.failed", {"response": failed})]
            return [
                ev(
                    "error",
                    {
                        "code": f.code or f.type or "server_error",
                        "message": f.message,
                        "param": None,
                    },
                )
            ]

        return frames(), failure
