"""OpenAI wire APIs through the official ``openai`` SDK.

* :class:`OpenAIModel` — ``openai/<model>`` on the Responses API, with reasoning effort.
* :class:`ChatCompletionsModel` — the Chat Completions wire format, the base of the
  OpenAI-compatible adapters (OpenRouter, vLLM, llama.cpp server, Ollama). Vendors differ only
  in facts (base URL, key, how effort is spelled, extra usage fields), set by subclasses.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
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
from sweepbench.models.http_errors import classify, retry_after, transport_error
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
        if isinstance(exc, openai.APIError):  # an error event inside a stream, or a dropped link
            return ProviderError(
                str(exc.message), kind=classify(None, str(exc.message)), provider=self.provider
            )
        return transport_error(exc, self.provider)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


class OpenAIModel(OpenAIClientModel):
    """``openai/<model>`` — the Responses API, streaming, with reasoning effort."""

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
        try:
            async for event in stream:
                kind = event.type
                if kind == "response.output_text.delta":
                    yield TextDelta(event.delta)
                elif kind in (
                    "response.reasoning_summary_text.delta",
                    "response.reasoning_text.delta",
                ):
                    yield ReasoningDelta(event.delta)
                elif kind == "response.refusal.delta":
                    refused = True
                    yield TextDelta(event.delta)
                elif kind in ("response.completed", "response.incomplete"):
                    response = event.response
                    yield UsageEvent(_responses_usage(response.usage))
                    details = response.incomplete_details
                    reason = details.reason if details is not None else None
                    if kind == "response.completed":
                        yield Finish("refusal" if refused else "end", provider_reason="completed")
                    elif reason == "max_output_tokens":
                        yield Finish("max_tokens", provider_reason=reason)
                    else:
                        yield Finish("refusal", provider_reason=reason)
                    return
                elif kind == "response.failed":
                    error = event.response.error
                    message = error.message if error is not None else "the response failed"
                    code = error.code if error is not None else None
                    raise ProviderError(
                        message, kind=classify(None, message, code), provider=self.provider
                    )
                elif kind == "error":
                    raise ProviderError(
                        event.message,
                        kind=classify(None, event.message, event.code),
                        provider=self.provider,
                    )
        finally:
            await stream.close()  # closes the HTTP response: generation and billing stop


class ChatCompletionsModel(OpenAIClientModel):
    """The Chat Completions wire format, streamed with usage in the last chunk."""

    def effort_params(self, effort: str) -> dict[str, Any]:
        """How this vendor spells effort (OpenAI's ``reasoning_effort`` by default)."""
        return {"reasoning_effort": effort}

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
        """Our Usage from a chunk's ``usage``; vendors add fields (OpenRouter's cost)."""
        prompt_details = getattr(raw, "prompt_tokens_details", None)
        completion_details = getattr(raw, "completion_tokens_details", None)
        return Usage(
            input_tokens=raw.prompt_tokens or 0,
            output_tokens=raw.completion_tokens or 0,
            reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
            cache_read_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
            cost_usd=_decimal(getattr(raw, "cost", None)),
        )

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        params = self.params(request, effort)
        stream = await self.client().chat.completions.create(stream=True, **params)
        reason: str | None = None
        usage: Usage | None = None
        try:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = self.usage(chunk.usage)
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    extra = delta.model_extra or {}
                    thinking = extra.get("reasoning_content") or extra.get("reasoning")
                    if isinstance(thinking, str) and thinking:
                        yield ReasoningDelta(thinking)
                    if delta.content:
                        yield TextDelta(delta.content)
                    if getattr(delta, "refusal", None):
                        reason = "content_filter"
                        yield TextDelta(str(delta.refusal))
                    if choice.finish_reason:
                        reason = choice.finish_reason
        finally:
            await stream.close()  # closes the HTTP response: generation and billing stop
        if reason is None:
            raise ProviderError(
                "the stream ended before the model finished",
                kind=ErrorKind.RETRYABLE,
                provider=self.provider,
            )
        if usage is not None:
            yield UsageEvent(usage)
        yield Finish(CHAT_STOP_REASONS.get(reason, "end"), provider_reason=reason)


def _responses_usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    input_details = getattr(raw, "input_tokens_details", None)
    output_details = getattr(raw, "output_tokens_details", None)
    return Usage(
        input_tokens=raw.input_tokens,
        output_tokens=raw.output_tokens,
        reasoning_tokens=getattr(output_details, "reasoning_tokens", 0) or 0,
        cache_read_tokens=getattr(input_details, "cached_tokens", 0) or 0,
        cache_write_tokens=getattr(input_details, "cache_write_tokens", 0) or 0,
    )


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None
