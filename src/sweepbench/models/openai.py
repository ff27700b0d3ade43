"""OpenAI wire APIs through the official ``openai`` SDK.

* :class:`OpenAIModel` — ``openai/<model>`` on the Responses API, with reasoning effort.
* :class:`ChatCompletionsModel` — the Chat Completions wire format, the base of the
  OpenAI-compatible adapters (OpenRouter, vLLM, llama.cpp server, Ollama). Vendors differ only
  in facts (base URL, key, how effort is spelled, extra usage fields), set by subclasses.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from sweepbench.errors import ErrorKind, ProviderError, UserError
from sweepbench.models.base import (
    Event,
    Finish,
    Model,
    ReasoningDelta,
    Request,
    StopReason,
    TextDelta,
    Usage,
    UsageEvent,
)
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.http_errors import (
    classify,
    connection_failure,
    decode_error,
    malformed,
    no_events,
    retry_after,
    stream_error,
    token_count,
    transport_error,
)
from sweepbench.settings import base_url_override, key_hint, provider_key

if TYPE_CHECKING:
    import openai

CHAT_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end",
    "tool_calls": "end",
    "function_call": "end",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIClientModel(Model):
    """What every adapter built on the ``openai`` SDK shares: the client and error translation."""

    provider = "openai"
    #: Default base URL when neither the settings nor the environment give one (None: SDK's).
    default_base_url: str | None = None
    #: Whether a missing key is an error (it is not for local servers that ignore keys).
    key_required = True

    def __init__(self, info: ModelInfo) -> None:
        super().__init__(info)
        self._client: openai.AsyncOpenAI | None = None

    def base_url(self) -> str | None:
        """Where the API lives."""
        return base_url_override(self.provider) or self.default_base_url

    def api_key(self) -> str | None:
        """The key, read now (never at import)."""
        return provider_key(self.provider)

    def client(self) -> openai.AsyncOpenAI:
        """The SDK client, made on first use."""
        if self._client is None:
            import openai

            key = self.api_key()
            if not key and self.key_required:
                raise UserError(f"no {self.provider} key: {key_hint(self.provider)}")
            self._client = openai.AsyncOpenAI(
                api_key=key or "no-key", base_url=self.base_url(), max_retries=0
            )
        return self._client

    def prepare(self) -> None:
        self.client()  # a missing key fails here, before a call is recorded

    def translate_error(self, exc: Exception) -> ProviderError | None:
        import openai

        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            if isinstance(body.get("error"), dict):  # some servers nest it once more
                body = body["error"]
            message = str(body.get("message") or exc.message)
            code = body.get("code") or body.get("type")
            headers = dict(exc.response.headers) if exc.response is not None else {}
            return ProviderError(
                message,
                kind=classify(exc.status_code, message, str(code) if code else None),
                provider=self.provider,
                status=exc.status_code,
                retry_after=retry_after(headers),
            )
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(
                "the request timed out", kind=ErrorKind.RETRYABLE, provider=self.provider
            )
        if isinstance(exc, openai.APIConnectionError):  # refused, reset or dropped mid-stream
            return connection_failure(exc, self.provider)
        if isinstance(exc, openai.APIResponseValidationError):
            return malformed("a chunk does not match the API's schema", self.provider)
        if isinstance(exc, openai.APIError):  # `data: {"error": …}` inside a stream
            return stream_error(exc.body, self.provider)
        # The SDK's own decoding of SSE data (json.loads, utf-8) is not wrapped in its errors.
        return decode_error(exc, self.provider) or transport_error(exc, self.provider)

    def ended_early(self, stream: Any, events: int, what: str) -> ProviderError:
        """The error for a stream that ended without its final event: ``what`` says what never
        came; a body with no event at all is named by its content type (an HTML page…)."""
        if events == 0:
            return no_events(stream.response.headers.get("content-type"), self.provider)
        return ProviderError(
            f"the stream ended before {what}", kind=ErrorKind.RETRYABLE, provider=self.provider
        )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


class OpenAIModel(OpenAIClientModel):
    """``openai/<model>`` — the Responses API, streaming, with reasoning effort."""

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """A reasoning model's reasoning is billed and not streamed (a summary at most)."""
        return not self.info.effort_capable

    def params(self, request: Request, effort: str | None) -> dict[str, Any]:
        """The keyword arguments of ``responses.create``."""
        settings = request.settings
        params: dict[str, Any] = {
            "model": self.name,
            "input": [{"role": m.role, "content": m.content} for m in request.turns],
            "max_output_tokens": self.max_tokens(request),
            "store": False,
        }
        if request.system:
            params["instructions"] = request.system
        if effort:
            params["reasoning"] = {"effort": effort, "summary": "auto"}
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if settings.response_format:
            params["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": "answer",
                    "schema": settings.response_format,
                    "strict": True,
                }
            }
        return params

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        stream = await self.client().responses.create(stream=True, **self.params(request, effort))
        refused = False
        events = 0
        try:
            # The SDK builds events without validating them: every field read is checked, so
            # an event of the wrong shape is a malformed stream, not an AttributeError.
            async for event in stream:
                events += 1
                kind = getattr(event, "type", None)
                if not isinstance(kind, str):
                    raise malformed("an event is not an object with a type", self.provider)
                if kind == "response.output_text.delta":
                    yield TextDelta(self._delta(event, kind))
                elif kind in (
                    "response.reasoning_summary_text.delta",
                    "response.reasoning_text.delta",
                ):
                    yield ReasoningDelta(self._delta(event, kind))
                elif kind == "response.refusal.delta":
                    refused = True
                    yield TextDelta(self._delta(event, kind))
                elif kind in ("response.completed", "response.incomplete"):
                    response = self._response(event, kind)
                    yield UsageEvent(_responses_usage(response.usage, self.provider))
                    reason = getattr(response.incomplete_details, "reason", None)
                    reason = reason if isinstance(reason, str) else None
                    if kind == "response.completed":
                        yield Finish("refusal" if refused else "end", provider_reason="completed")
                    elif reason == "max_output_tokens":
                        yield Finish("max_tokens", provider_reason=reason)
                    else:
                        yield Finish("refusal", provider_reason=reason)
                    return
                elif kind == "response.failed":
                    error = getattr(self._response(event, kind), "error", None)
                    fields = {"code": getattr(error, "code", None)}
                    fields["message"] = getattr(error, "message", None)
                    raise stream_error(fields, self.provider, "the response failed")
                elif kind == "error":
                    fields = {"code": getattr(event, "code", None)}
                    fields["message"] = getattr(event, "message", None)
                    raise stream_error(fields, self.provider)
        finally:
            await stream.close()  # closes the HTTP response: generation and billing stop
        raise self.ended_early(stream, events, "the response completed")

    def _delta(self, event: Any, kind: str) -> str:
        delta = getattr(event, "delta", None)
        if not isinstance(delta, str):
            raise malformed(f"a {kind} event has no text delta", self.provider)
        return delta

    def _response(self, event: Any, kind: str) -> Any:
        from openai.types.responses import Response

        response = getattr(event, "response", None)
        if not isinstance(response, Response):
            raise malformed(f"a {kind} event has no response object", self.provider)
        return response


class ChatCompletionsModel(OpenAIClientModel):
    """The Chat Completions wire format, streamed with usage in the last chunk."""

    chat_template_thinking: bool = False
    """Whether the server renders the model's chat template itself and takes its
    ``chat_template_kwargs`` (vLLM, SGLang, llama.cpp's server): effort ``none`` is then sent
    as ``enable_thinking: false``, which turns thinking off for the models whose template
    has the switch (Qwen3, DeepSeek, GLM) and is ignored by the others."""

    def effort_params(self, effort: str) -> dict[str, Any]:
        """How this vendor spells effort (OpenAI's ``reasoning_effort`` by default)."""
        return {"reasoning_effort": effort}

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """A model that cannot be asked to reason streams all it makes (a server's
        ``reasoning_content`` included); one that can may reason out of sight by default."""
        return not self.info.effort_capable

    def params(self, request: Request, effort: str | None) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create``."""
        settings = request.settings
        params: dict[str, Any] = {
            "model": self.name,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": self.max_tokens(request),
            "stream_options": {"include_usage": True},
        }
        if effort:
            params.update(self.effort_params(effort))
        elif self.chat_template_thinking and (settings.effort or "").strip().lower() == "none":
            params["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if settings.response_format:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "answer",
                    "schema": settings.response_format,
                    "strict": True,
                },
            }
        return params

    def usage(self, raw: Any) -> Usage:
        """Our Usage from a chunk's ``usage``; vendors add fields (OpenRouter's cost). Token
        counts that are not integers are a malformed stream."""
        from openai.types import CompletionUsage

        if not isinstance(raw, CompletionUsage):
            raise malformed("a chunk's usage is not an object", self.provider)
        prompt_details = getattr(raw, "prompt_tokens_details", None)
        completion_details = getattr(raw, "completion_tokens_details", None)

        def count(obj: Any, name: str) -> int:
            return token_count(getattr(obj, name, None), name, self.provider) or 0

        return Usage(
            input_tokens=count(raw, "prompt_tokens"),
            output_tokens=count(raw, "completion_tokens"),
            reasoning_tokens=count(completion_details, "reasoning_tokens"),
            cache_read_tokens=count(prompt_details, "cached_tokens"),
            cost_usd=_decimal(getattr(raw, "cost", None)),
        )

    def parse_chunk(self, chunk: Any) -> ChatPiece:
        """What one streamed chunk carries, checked: the SDK builds chunks without validating
        them, so a chunk of the wrong shape raises a malformed-stream ProviderError here rather
        than an AttributeError (or a wrong value) further on."""
        from openai.types.chat import ChatCompletionChunk
        from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta

        if not isinstance(chunk, ChatCompletionChunk):
            raise malformed("a chunk is not a JSON object", self.provider)
        kind: object = chunk.object  # typed as a literal, but nothing was validated
        if kind == "error":  # older vLLM sends its error object unwrapped
            raise stream_error(chunk.model_extra or {}, self.provider)
        usage = None if chunk.usage is None else self.usage(chunk.usage)
        choices: object = chunk.choices
        if choices is None and usage is not None:
            choices = []  # a usage-only chunk that leaves out the empty list
        if not isinstance(choices, list):
            raise malformed("a chunk has no choices list", self.provider)
        if not choices:
            return ChatPiece(usage)
        choice = choices[0]
        if not isinstance(choice, Choice):
            raise malformed("a choice is not an object", self.provider)
        # Azure's content-filter chunks carry no delta at all; only a delta of another type
        # (a string, a list) is malformed.
        delta = ChoiceDelta() if choice.delta is None else choice.delta
        if not isinstance(delta, ChoiceDelta):
            raise malformed("a choice's delta is not an object", self.provider)
        extra = delta.model_extra or {}
        thinking = extra.get("reasoning_content") or extra.get("reasoning")
        return ChatPiece(
            usage,
            reasoning=thinking if isinstance(thinking, str) else "",
            content=self._text(delta.content, "delta content"),
            refusal=self._text(getattr(delta, "refusal", None), "delta refusal"),
            finish_reason=self._text(choice.finish_reason, "finish_reason") or None,
        )

    def _text(self, value: object, what: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise malformed(f"the {what} is not a string", self.provider)
        return value

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        params = self.params(request, effort)
        stream = await self.client().chat.completions.create(stream=True, **params)
        reason: str | None = None
        usage: Usage | None = None
        chunks = 0
        try:
            async for chunk in stream:
                chunks += 1
                piece = self.parse_chunk(chunk)
                if piece.usage is not None:
                    usage = piece.usage
                if piece.reasoning:
                    yield ReasoningDelta(piece.reasoning)
                if piece.content:
                    yield TextDelta(piece.content)
                if piece.refusal:
                    reason = "content_filter"
                    yield TextDelta(piece.refusal)
                if piece.finish_reason:
                    reason = piece.finish_reason
        finally:
            await stream.close()  # closes the HTTP response: generation and billing stop
        if reason is None:
            raise self.ended_early(stream, chunks, "the model finished")
        if usage is not None:
            yield UsageEvent(usage)
        yield Finish(CHAT_STOP_REASONS.get(reason, "end"), provider_reason=reason)


@dataclass(frozen=True)
class ChatPiece:
    """The checked contents of one Chat Completions chunk (empty strings: nothing)."""

    usage: Usage | None = None
    reasoning: str = ""
    content: str = ""
    refusal: str = ""
    finish_reason: str | None = None


def _responses_usage(raw: Any, provider: str) -> Usage:
    from openai.types.responses import ResponseUsage

    if raw is None:
        return Usage()
    if not isinstance(raw, ResponseUsage):
        raise malformed("a response's usage is not an object", provider)
    input_details = getattr(raw, "input_tokens_details", None)
    output_details = getattr(raw, "output_tokens_details", None)

    def count(obj: Any, name: str) -> int:
        return token_count(getattr(obj, name, None), name, provider) or 0

    return Usage(
        input_tokens=count(raw, "input_tokens"),
        output_tokens=count(raw, "output_tokens"),
        reasoning_tokens=count(output_details, "reasoning_tokens"),
        cache_read_tokens=count(input_details, "cached_tokens"),
        cache_write_tokens=count(input_details, "cache_write_tokens"),
    )


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None
