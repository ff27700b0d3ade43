"""Anthropic Messages API through the official ``anthropic`` SDK.

Effort maps to ``output_config.effort`` with adaptive thinking, so the model decides how much to
think at the level asked for; "none" sends neither (the model answers without thinking). Older
models marked ``thinking = "budget"`` in the catalogue get extended thinking with a
``budget_tokens`` share of ``max_tokens`` instead.
Thinking tokens count toward ``max_tokens``, exactly as the API documents.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
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
    import anthropic

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "end",
    "pause_turn": "end",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}


#: Older models take a thinking budget, not an effort: the share of max_tokens each level may
#: think with (the rest is left for the answer, since thinking counts toward max_tokens).
THINKING_SHARE = {"low": 0.25, "medium": 0.5, "high": 0.75, "xhigh": 0.8, "max": 0.8}
MIN_THINKING_BUDGET = 1024


class AnthropicModel(Model):
    """``anthropic/<model>`` — streaming Messages API."""

    provider = "anthropic"

    def __init__(self, info: ModelInfo) -> None:
        super().__init__(info)
        self._client: anthropic.AsyncAnthropic | None = None

    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, made on first use with the key read now (never at import)."""
        if self._client is None:
            import anthropic

            key = provider_key(self.provider)
            if not key:
                raise UserError(f"no Anthropic key: {key_hint(self.provider)}")
            self._client = anthropic.AsyncAnthropic(
                api_key=key, base_url=base_url_override(self.provider), max_retries=0
            )
        return self._client

    def params(self, request: Request, effort: str | None) -> dict[str, Any]:
        """The keyword arguments of ``messages.create``."""
        settings = request.settings
        params: dict[str, Any] = {
            "model": self.name,
            "max_tokens": self.max_tokens(request),
            "messages": [{"role": m.role, "content": m.content} for m in request.turns],
        }
        if request.system:
            params["system"] = request.system
        output_config: dict[str, Any] = {}
        if effort and self.info.thinking == "budget":
            budget = int(params["max_tokens"] * THINKING_SHARE.get(effort, 0.5))
            if budget >= MIN_THINKING_BUDGET:  # the API's floor; below it, answer without
                params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif effort:
            output_config["effort"] = effort
            params["thinking"] = {"type": "adaptive"}
        if settings.response_format:
            output_config["format"] = {"type": "json_schema", "schema": settings.response_format}
        if output_config:
            params["output_config"] = output_config
        if settings.temperature is not None and not effort:
            # The SDK no longer types `temperature`; the API still takes it without thinking.
            params["extra_body"] = {"temperature": settings.temperature}
        return params

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """With no effort sent there is no thinking, and every output token is text in sight
        (thinking, even when streamed, may be summarised)."""
        return effort is None

    async def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        from anthropic.types import Message

        stream = await self.client().messages.create(stream=True, **self.params(request, effort))
        usage = Usage()
        reason: str | None = None
        events = 0
        try:
            # The SDK builds events without validating them: every field read is checked, so
            # an event of the wrong shape is a malformed stream, not an AttributeError.
            async for event in stream:
                events += 1
                kind = getattr(event, "type", None)
                if not isinstance(kind, str):
                    raise malformed("an event is not an object with a type", self.provider)
                if kind == "message_start":
                    message = getattr(event, "message", None)
                    if not isinstance(message, Message):
                        raise malformed("a message_start event has no message", self.provider)
                    usage = self._usage(getattr(message, "usage", None), usage)
                    yield UsageEvent(usage)  # the prompt is billed even if the stream dies
                elif kind == "content_block_delta":
                    delta = getattr(event, "delta", None)
                    delta_kind = getattr(delta, "type", None)
                    if delta_kind == "text_delta":
                        yield TextDelta(self._text(delta, "text"))
                    elif delta_kind == "thinking_delta":
                        yield ReasoningDelta(self._text(delta, "thinking"))
                    elif not isinstance(delta_kind, str):
                        raise malformed("a content_block_delta has no typed delta", self.provider)
                elif kind == "message_delta":
                    usage = self._usage(getattr(event, "usage", None), usage)
                    stop = getattr(getattr(event, "delta", None), "stop_reason", None)
                    if stop is not None and not isinstance(stop, str):
                        raise malformed("a stop_reason is not a string", self.provider)
                    reason = stop or reason
                    yield UsageEvent(usage)
                elif kind == "message_stop":
                    yield Finish(STOP_REASONS.get(reason or "", "end"), provider_reason=reason)
                    return
                elif kind == "error":  # an error object under another event name
                    raise stream_error({"error": getattr(event, "error", None)}, self.provider)
        finally:
            await stream.close()  # closes the HTTP response: generation and billing stop
        if events == 0:
            raise no_events(stream.response.headers.get("content-type"), self.provider)
        raise ProviderError(
            "the stream ended before message_stop", kind=ErrorKind.RETRYABLE, provider=self.provider
        )

    def _text(self, delta: Any, field: str) -> str:
        text = getattr(delta, field, None)
        if not isinstance(text, str):
            raise malformed(f"a {field} delta has no {field} string", self.provider)
        return text

    def _usage(self, raw: Any, old: Usage) -> Usage:
        """:func:`_usage` with the token counts checked (a malformed count is an error)."""
        import anthropic

        if raw is None:
            return old
        if not isinstance(raw, anthropic.BaseModel):
            raise malformed("an event's usage is not an object", self.provider)
        for name in _USAGE_FIELDS:
            token_count(getattr(raw, name, None), name, self.provider)
        details = getattr(raw, "output_tokens_details", None)
        token_count(getattr(details, "thinking_tokens", None), "thinking_tokens", self.provider)
        return _usage(raw, old)

    def prepare(self) -> None:
        self.client()  # a missing key fails here, before a call is recorded

    def translate_error(self, exc: Exception) -> ProviderError | None:
        import anthropic

        if isinstance(exc, anthropic.APIStatusError) and exc.status_code < 400:
            # The SDK raises a status error carrying the 200 of the stream for `event: error`.
            return stream_error(exc.body, self.provider)
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error", body) if isinstance(body, dict) else {}
            message = str(error.get("message") or exc.message)
            code = str(error.get("type") or "")
            headers = dict(exc.response.headers) if exc.response is not None else {}
            return ProviderError(
                message,
                kind=classify(exc.status_code, message, code),
                provider=self.provider,
                status=exc.status_code,
                retry_after=retry_after(headers),
            )
        if isinstance(exc, anthropic.APIConnectionError):
            return connection_failure(exc, self.provider)
        # The SDK's own decoding of SSE data (json.loads, utf-8) is not wrapped in its errors.
        return decode_error(exc, self.provider) or transport_error(exc, self.provider)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _usage(raw: Any, old: Usage) -> Usage:
    """Fold an SDK usage object into ours. Anthropic's ``input_tokens`` excludes cached
    tokens; ours is the whole prompt, so cache reads and writes are added back."""
    cache_read = getattr(raw, "cache_read_input_tokens", None)
    cache_write = getattr(raw, "cache_creation_input_tokens", None)
    base_input = getattr(raw, "input_tokens", None)
    details = getattr(raw, "output_tokens_details", None)
    thinking = getattr(details, "thinking_tokens", None) if details is not None else None
    read = old.cache_read_tokens if cache_read is None else cache_read
    write = old.cache_write_tokens if cache_write is None else cache_write
    uncached = old.input_tokens - old.cache_read_tokens - old.cache_write_tokens
    if base_input is not None:
        uncached = base_input
    return Usage(
        input_tokens=uncached + read + write,
        output_tokens=getattr(raw, "output_tokens", None) or old.output_tokens,
        reasoning_tokens=old.reasoning_tokens if thinking is None else thinking,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )
