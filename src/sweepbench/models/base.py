"""The one contract every model adapter speaks.

A call is a :class:`Request`; an adapter turns it into a stream of typed events that ends with
exactly one :class:`Finish`. Provider failures do not escape the stream as exceptions: they end
it with ``Finish(stop_reason="error", error=ProviderError(...))`` so that a failure is data (the
runner decides whether to retry from ``error.kind``). Closing the stream early (``aclose()``, or
cancelling the task that iterates it) closes the provider connection, so generation and billing
stop.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Literal

from sweepbench.errors import ErrorKind, ProviderError, UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.tokens import prompt_token_bound

StopReason = Literal["end", "max_tokens", "refusal", "error", "cancelled"]
Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


MAX_TEMPERATURE = 2.0
"""The highest sampling temperature any provider takes (OpenAI's range is 0–2, Anthropic's
0–1: a provider refuses what it does not take with a clear error of its own)."""


@dataclass(frozen=True)
class GenerateSettings:
    """Knobs of one call. ``None`` means the model's default."""

    max_tokens: int | None = None
    """Output budget (reasoning and answer together)."""
    effort: str | None = None
    """Requested effort (``none, low, medium, high, xhigh, max``); resolved by the catalogue."""
    temperature: float | None = None
    response_format: dict[str, Any] | None = None
    """A JSON schema the answer must follow (structured output / llama.cpp grammar)."""
    prompt_version: str | None = None
    """Which version of the product's own prompt built the messages (recorded, not sent)."""
    sample: int = 0
    """Which repeat of the same request this is (0: the first; recorded, not sent). Real
    models vary between repeats by their temperature; a scripted model, being deterministic,
    draws each repeat from this instead."""


@dataclass(frozen=True)
class Request:
    """A call: which model, what to say, with which settings."""

    model: str
    messages: tuple[Message, ...]
    settings: GenerateSettings = field(default_factory=GenerateSettings)

    @classmethod
    def simple(
        cls, model: str, prompt: str, *, system: str | None = None, **settings: Any
    ) -> Request:
        """A one-turn request with an optional system prompt."""
        messages = ((Message("system", system),) if system else ()) + (Message("user", prompt),)
        return cls(model, messages, GenerateSettings(**settings))

    @property
    def system(self) -> str | None:
        """The system prompts joined, or None."""
        parts = [m.content for m in self.messages if m.role == "system"]
        return "\n\n".join(parts) if parts else None

    @property
    def turns(self) -> list[Message]:
        """The messages without the system prompt."""
        return [m for m in self.messages if m.role != "system"]


@dataclass(frozen=True)
class Usage:
    """Tokens a call used. ``output_tokens`` includes reasoning tokens (that is how they bill)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: Decimal | None = None
    """The cost the provider itself reported (OpenRouter does), if any."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of visible reasoning (thinking summary) where the provider streams it."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True)
class UsageEvent:
    """Token usage so far; the last one of a stream is the call's total."""

    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class Finish:
    """The end of a stream, always exactly one, always last."""

    stop_reason: StopReason
    error: ProviderError | None = None
    provider_reason: str | None = None
    """The provider's own word for why it stopped (``end_turn``, ``length``, …)."""
    kind: Literal["finish"] = "finish"


Event = TextDelta | ReasoningDelta | UsageEvent | Finish


class Model(ABC):
    """An adapter: knows one wire API. Subclasses implement :meth:`_stream` and
    :meth:`translate_error`; everything else has a safe default."""

    provider: str = ""

    def __init__(self, info: ModelInfo) -> None:
        self.info = info

    @classmethod
    def for_info(cls, info: ModelInfo) -> Model:
        """The adapter for a catalogued model (the registry's one way to make one; an adapter
        that needs more than the model's facts, such as its server, finds it here)."""
        return cls(info)

    @property
    def id(self) -> str:
        """The full ``provider/model`` id."""
        return self.info.id

    @property
    def name(self) -> str:
        """The model's name at its provider (the id without ``provider/``)."""
        return self.info.name

    @abstractmethod
    def _stream(self, request: Request, effort: str | None) -> AsyncGenerator[Event, None]:
        """Yield text/reasoning/usage events and finally one Finish; may raise SDK errors.

        ``effort`` is the resolved level to send, or None to send nothing."""

    def translate_error(self, exc: Exception) -> ProviderError | None:
        """Turn an SDK exception into a ProviderError; None means "not a provider error"."""
        return None

    def check(self, request: Request) -> str | None:
        """Validate settings before any network traffic; returns the effort to send.

        Raises UserError for settings this model cannot honour."""
        settings = request.settings
        effort = self.info.resolve_effort(settings.effort)
        if settings.max_tokens is not None:
            if settings.max_tokens < 1:
                raise UserError(f"max_tokens must be at least 1, got {settings.max_tokens}")
            limit = self.info.max_output_tokens
            if limit and settings.max_tokens > limit:
                raise UserError(
                    f"{self.id} accepts at most {limit:,} output tokens; "
                    f"asked for {settings.max_tokens:,}"
                )
        temperature = settings.temperature
        if temperature is not None and not 0 <= temperature <= MAX_TEMPERATURE:  # NaN too
            raise UserError(
                f"temperature must be a number from 0 to {MAX_TEMPERATURE:g}, got {temperature}"
            )
        if not request.turns:
            raise UserError("the request has no user message")
        self.prepare()
        return effort

    def prepare(self) -> None:  # noqa: B027 - a hook with a safe default
        """Anything that can fail before traffic (a missing key, missing weights); raises
        UserError. Called by :meth:`check`."""

    def streams_what_it_bills(self, effort: str | None) -> bool:
        """Whether every output token this call is billed for streams in sight as it is made
        (so a stream can be cut at what its hold can pay for, ``engine/cut.py``): False unless
        an adapter knows it; a model that may reason out of sight never is. ``effort`` is the
        applied level (None: none sent)."""
        return False

    def max_tokens(self, request: Request) -> int:
        """The output budget to send: the request's or the catalogue default."""
        return request.settings.max_tokens or self.info.default_max_tokens

    def expected_seconds(self, request: Request, effort: str | None) -> float | None:
        """How long a call will take, where the adapter knows it exactly without asking
        anyone (the scripted model's options); None: it cannot know (``effort`` is the
        applied level)."""
        return None

    async def stream(self, request: Request) -> AsyncGenerator[Event, None]:
        """Stream a call. Ends with exactly one Finish; provider failures become
        ``Finish("error")``. Raises UserError (before any traffic) for bad settings.

        The engine does not stream through here: it iterates :meth:`_stream` itself, one
        generator layer fewer for every event, and keeps this contract with the same two
        rules, :meth:`failure` and :meth:`unfinished`."""
        effort = self.check(request)
        finished = False
        try:
            # aclosing: when our caller closes this stream, the adapter's own generator is
            # closed at once (its finally closes the provider connection), not at GC time.
            async with contextlib.aclosing(self._stream(request, effort)) as events:
                async for event in events:
                    if isinstance(event, Finish):
                        finished = True
                    yield event
                    if finished:
                        return
        except Exception as exc:  # translated once, here, for every adapter
            yield self.failure(exc)
            return
        if not finished:
            yield self.unfinished()

    def failure(self, exc: Exception) -> Finish:
        """The Finish a failure of :meth:`_stream` ends the stream with (the adapter's
        translation of its SDK's exception); re-raises ``exc`` when it is not a provider
        error (a bug)."""
        error = exc if isinstance(exc, ProviderError) else self.translate_error(exc)
        if error is None:
            raise exc
        return Finish("error", error=error)

    def unfinished(self) -> Finish:
        """The Finish of a :meth:`_stream` that ended without one (a dropped stream)."""
        return Finish(
            "error",
            error=ProviderError(
                "the stream ended without a finish event",
                kind=ErrorKind.RETRYABLE,
                provider=self.provider,
            ),
        )

    async def aclose(self) -> None:  # noqa: B027 - a hook with a safe default, not abstract
        """Release clients and connections held by the adapter."""


@dataclass
class Result:
    """What a finished (or stopped) call produced."""

    model: str
    text: str = ""
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "end"
    error: ProviderError | None = None
    provider_reason: str | None = None
    ttft_s: float | None = None
    wall_s: float = 0.0
    deltas: int = 0
    """Text and reasoning deltas received (one is about one token at every provider we know)."""
    reasoning_deltas: int = 0
    """The reasoning deltas among them (tokens of thinking)."""
    usage_estimated: bool = False
    """True when the provider never reported usage (a stopped or dropped stream) and
    :meth:`estimate_missing_usage` filled it in from what was received."""

    def add(self, event: Event, started: float) -> None:
        """Fold one event into the result (``started`` is the ``perf_counter`` at the call)."""
        if isinstance(event, TextDelta | ReasoningDelta):
            if self.ttft_s is None and event.text:
                self.ttft_s = time.perf_counter() - started
            self.deltas += 1
            if isinstance(event, TextDelta):
                self.text += event.text
            else:
                self.reasoning += event.text
                self.reasoning_deltas += 1
        elif isinstance(event, UsageEvent):
            self.usage = event.usage
        else:
            self.stop_reason = event.stop_reason
            self.error = event.error
            self.provider_reason = event.provider_reason

    def estimate_missing_usage(self, request: Request, max_tokens: int | None = None) -> None:
        """Providers bill the tokens produced before a stream was stopped, but only report
        usage at its end. When that report is missing or short, settle at an upper bound of
        what was received, never below it: every tokenizer our providers use is byte-level, so
        the text and reasoning received are at most their UTF-8 bytes in tokens (capped at the
        budget sent, ``max_tokens``, which no provider produces beyond); the prompt at its
        bound (:func:`~sweepbench.models.tokens.prompt_token_bound`)."""
        if self.deltas == 0:
            return  # nothing was produced: a request refused or stopped before its first token
        usage = self.usage
        reasoning = _utf8_bytes(self.reasoning)
        output = reasoning + _utf8_bytes(self.text)
        if max_tokens is not None and max_tokens > 0:
            output, reasoning = min(output, max_tokens), min(reasoning, max_tokens)
        if (
            usage.output_tokens >= output
            and usage.reasoning_tokens >= reasoning
            and usage.input_tokens
        ):
            return
        prompt = prompt_token_bound(m.content for m in request.messages)
        self.usage = replace(
            usage,
            input_tokens=usage.input_tokens or prompt,
            output_tokens=max(usage.output_tokens, output),
            reasoning_tokens=max(usage.reasoning_tokens, reasoning),
        )
        self.usage_estimated = True


def _utf8_bytes(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


async def collect(model: Model, request: Request) -> Result:
    """Run a call to the end and gather its result (no streaming to the caller)."""
    result = Result(model.id)
    started = time.perf_counter()
    async for event in model.stream(request):
        result.add(event, started)
    result.wall_s = time.perf_counter() - started
    return result


def last_user_text(messages: Sequence[Message]) -> str:
    """The content of the last user message (for models that echo)."""
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""
