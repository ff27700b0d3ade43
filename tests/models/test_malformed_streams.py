"""Malformed Server-Sent Events, through the real SDKs, end as one ``Finish("error")``.

Every way a stream can break the protocol (a ``data:`` line that is not JSON, JSON of the wrong
shape, the connection closing mid-event, an HTML page or an empty body on a 200) is a
retryable ProviderError whose message says what was wrong; an error object sent inside the
stream is classified like the HTTP error it stands for. No exception escapes ``stream()``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from sweepbench import ErrorKind, Finish, Request, TextDelta
from sweepbench.models import resolve
from sweepbench.models.base import Event
from tests.helpers import cli
from tests.servers import AnthropicServer, OpenAIServer, OpenRouterServer
from tests.servers.base import Raw

CHAT = "compatible/qwen3-8b"
RESPONSES = "openai/gpt-5.6-luna"
ANTHROPIC = "anthropic/claude-opus-5"
ROUTER = "openrouter/openai/gpt-5.6-luna"


def data(*payloads: Any) -> bytes:
    """``data:`` frames; a str payload is sent verbatim, anything else as JSON."""
    return b"".join(
        b"data: %s\n\n" % (p if isinstance(p, str) else json.dumps(p)).encode() for p in payloads
    )


def event(name: str, payload: Any) -> bytes:
    """An Anthropic-style frame: ``event:`` then ``data:`` (a str is sent verbatim)."""
    body = payload if isinstance(payload, str) else json.dumps({"type": name, **payload})
    return f"event: {name}\ndata: {body}\n\n".encode()


def chunk(**fields: Any) -> dict[str, Any]:
    """A Chat Completions chunk; ``fields`` replace its parts."""
    choice = {"index": 0, "delta": {"content": "one"}, "finish_reason": None}
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return {**head, "choices": [choice], **fields}


def choice(**fields: Any) -> dict[str, Any]:
    """A chunk whose one choice has ``fields`` replaced."""
    return chunk(choices=[{"index": 0, "delta": {"content": "x"}, "finish_reason": None, **fields}])


def response(**fields: Any) -> dict[str, Any]:
    """A Responses API response object."""
    return {"id": "resp_1", "object": "response", "status": "completed", "output": []} | fields


HTML = b"<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>\n"
#: Cases every adapter shares: (id, raw body, words the message must contain).
COMMON: list[tuple[str, Raw, str]] = [
    ("not-utf8", Raw(b"data: \xff\xfe\n\n"), "not UTF-8"),
    ("html-200", Raw(HTML, content_type="text/html", chunked=False), "text/html, not an event"),
    ("json-200", Raw(b'{"id": "x"}', content_type="application/json"), "application/json"),
    ("empty", Raw(b""), "sent no events"),
    ("empty-untyped", Raw(b"", content_type=None, chunked=False), "without a content type"),
]

CHAT_CASES: list[tuple[str, Raw, str]] = [
    ("not-json", Raw(data("{not json}")), "a data line is not JSON: '{not json}'"),
    ("array", Raw(data([1, 2])), "a chunk is not a JSON object"),
    ("number", Raw(data(42)), "a chunk is not a JSON object"),
    ("no-choices", Raw(data({"id": "c1", "object": "chat.completion.chunk"})), "no choices list"),
    ("choices-string", Raw(data(chunk(choices="abc"))), "no choices list"),
    ("choice-null", Raw(data(chunk(choices=[None]))), "a choice is not an object"),
    ("delta-string", Raw(data(choice(delta="hi"))), "delta is not an object"),
    ("content-number", Raw(data(choice(delta={"content": 5}))), "content is not a string"),
    ("finish-number", Raw(data(choice(finish_reason=3))), "finish_reason is not a string"),
    (
        "usage-string-tokens",
        Raw(data(chunk(choices=[], usage={"prompt_tokens": "many", "completion_tokens": 2}))),
        "usage prompt_tokens is not an integer ('many')",
    ),
    (
        "usage-float-tokens",
        Raw(data(chunk(choices=[], usage={"prompt_tokens": 3, "completion_tokens": 2.5}))),
        "usage completion_tokens is not an integer (2.5)",
    ),
    ("usage-not-object", Raw(data(chunk(choices=[], usage="lots"))), "usage is not an object"),
    (
        "cut-mid-event",
        Raw([data(chunk()), b'data: {"id": "c1", "cho'], drop=True),
        "connection failed",
    ),
    (
        "ends-mid-event",
        Raw([data(chunk()), b'data: {"id": "c1", "cho']),
        "ended before the model finished",
    ),
    ("done-only", Raw(data("[DONE]")), "sent no events"),
    *COMMON,
]

RESPONSES_CASES: list[tuple[str, Raw, str]] = [
    ("not-json", Raw(data("{not json}")), "a data line is not JSON"),
    ("array", Raw(data([1])), "an event is not an object with a type"),
    ("no-type", Raw(data({"id": "x"})), "an event is not an object with a type"),
    (
        "delta-number",
        Raw(data({"type": "response.output_text.delta", "delta": 5})),
        "response.output_text.delta event has no text delta",
    ),
    (
        "completed-without-response",
        Raw(data({"type": "response.completed"})),
        "response.completed event has no response object",
    ),
    (
        "usage-string-tokens",
        Raw(
            data(
                {
                    "type": "response.completed",
                    "response": response(usage={"input_tokens": "many", "output_tokens": 1}),
                }
            )
        ),
        "usage input_tokens is not an integer",
    ),
    (
        "usage-not-object",
        Raw(data({"type": "response.completed", "response": response(usage=7)})),
        "usage is not an object",
    ),
    (
        "cut-mid-event",
        Raw(
            [
                data({"type": "response.created", "response": response(status="in_progress")}),
                b'data: {"type": "response.output_te',
            ],
            drop=True,
        ),
        "connection failed",
    ),
    (
        "ends-early",
        Raw(data({"type": "response.created", "response": response(status="in_progress")})),
        "ended before the response completed",
    ),
    *COMMON,
]

START: dict[str, Any] = {
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
}


def text_delta(delta: Any) -> bytes:
    return event("content_block_delta", {"index": 0, "delta": delta})


ANTHROPIC_CASES: list[tuple[str, Raw, str]] = [
    ("not-json", Raw(event("message_start", "{oops")), "a data line is not JSON: '{oops'"),
    ("array", Raw(event("message_start", "[1, 2]")), "an event is not an object with a type"),
    ("no-type", Raw(event("message_start", '{"message": {}}')), "not an object with a type"),
    ("start-without-message", Raw(event("message_start", {})), "message_start event has no"),
    (
        "usage-string-tokens",
        Raw(
            event(
                "message_start", {"message": {**START["message"], "usage": {"input_tokens": "3"}}}
            )
        ),
        "usage input_tokens is not an integer ('3')",
    ),
    ("message-string", Raw(event("message_start", {"message": "hi"})), "has no message"),
    (
        "usage-not-object",
        Raw(event("message_start", START) + event("message_delta", {"delta": {}, "usage": 5})),
        "usage is not an object",
    ),
    ("delta-string", Raw(event("message_start", START) + text_delta("hi")), "no typed delta"),
    (
        "text-number",
        Raw(event("message_start", START) + text_delta({"type": "text_delta", "text": 5})),
        "a text delta has no text string",
    ),
    (
        "stop-reason-number",
        Raw(event("message_start", START) + event("message_delta", {"delta": {"stop_reason": 5}})),
        "stop_reason is not a string",
    ),
    # The SDK skips frames without an `event:` line: a stream of bare data lines has no events.
    ("data-without-event", Raw(data({"type": "message_start", **START})), "sent no events"),
    (
        "cut-mid-event",
        Raw([event("message_start", START), b"event: content_block_delta\ndata: {"], drop=True),
        "connection failed",
    ),
    ("ends-early", Raw(event("message_start", START)), "ended before message_stop"),
    *COMMON,
]


def ids(cases: list[tuple[str, Raw, str]]) -> list[Any]:
    return [pytest.param(raw, words, id=name) for name, raw, words in cases]


@pytest.fixture
def oai(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
        monkeypatch.setenv("SWEEPBENCH_OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        yield server
        assert server.server_errors == []


@pytest.fixture
def ant(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
        monkeypatch.setenv("SWEEPBENCH_ANTHROPIC_BASE_URL", server.url)
        yield server
        assert server.server_errors == []


@pytest.fixture
def orr(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenRouterServer]:
    with OpenRouterServer() as server:
        monkeypatch.setenv("OPENROUTER_API_KEY", server.api_key or "")
        monkeypatch.setenv("SWEEPBENCH_OPENROUTER_BASE_URL", server.url + "/api/v1")
        yield server
        assert server.server_errors == []


async def events(model_id: str) -> list[Event]:
    """Every event of one call; an exception escaping ``stream()`` fails the test."""
    model = resolve(model_id)
    try:
        return [e async for e in model.stream(Request.simple(model_id, "hi"))]
    finally:
        await model.aclose()


async def failure(model_id: str, provider: str, words: str, kind: ErrorKind) -> list[Event]:
    """Run a call that must end in exactly one ``Finish("error")`` of ``kind`` whose message
    names ``provider`` and contains ``words``; return its events."""
    got = await events(model_id)
    finishes = [e for e in got if isinstance(e, Finish)]
    assert finishes == [got[-1]], got
    finish = finishes[0]
    assert finish.stop_reason == "error" and finish.error is not None
    assert finish.error.kind is kind, finish.error
    message = str(finish.error)
    assert message.startswith(f"{provider}: ") and words in message, message
    assert "\n" not in message
    return got


@pytest.mark.parametrize(("raw", "words"), ids(CHAT_CASES))
async def test_chat_completions(oai: OpenAIServer, raw: Raw, words: str) -> None:
    oai.push(raw)
    await failure(CHAT, "compatible", words, ErrorKind.RETRYABLE)


@pytest.mark.parametrize(("raw", "words"), ids(RESPONSES_CASES))
async def test_responses(oai: OpenAIServer, raw: Raw, words: str) -> None:
    oai.push(raw)
    await failure(RESPONSES, "openai", words, ErrorKind.RETRYABLE)


@pytest.mark.parametrize(("raw", "words"), ids(ANTHROPIC_CASES))
async def test_anthropic(ant: AnthropicServer, raw: Raw, words: str) -> None:
    ant.push(raw)
    await failure(ANTHROPIC, "anthropic", words, ErrorKind.RETRYABLE)


async def test_openrouter_malformed_chunk(orr: OpenRouterServer) -> None:
    orr.raw(b": OPENROUTER PROCESSING\n\n" + data("{not json"))
    await failure(ROUTER, "openrouter", "not JSON", ErrorKind.RETRYABLE)


async def test_text_before_the_malformed_chunk_is_kept(oai: OpenAIServer) -> None:
    oai.raw(data(chunk(), chunk(choices=[{"index": 0, "delta": "oops"}])))
    got = await failure(CHAT, "compatible", "delta is not an object", ErrorKind.RETRYABLE)
    assert [e.text for e in got if isinstance(e, TextDelta)] == ["one"]


async def test_chunks_the_adapter_tolerates(oai: OpenAIServer) -> None:
    """A usage chunk without ``choices`` and a filter chunk without ``delta`` (Azure) are not
    malformed."""
    oai.raw(
        data(
            chunk(),
            chunk(choices=[{"index": 0, "finish_reason": None}]),
            chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            {"id": "c1", "usage": {"prompt_tokens": 4, "completion_tokens": 1}},
            "[DONE]",
        )
    )
    got = await events(CHAT)
    finish = got[-1]
    assert isinstance(finish, Finish) and finish.stop_reason == "end", finish
    assert [e.text for e in got if isinstance(e, TextDelta)] == ["one"]


# In-stream error objects: classified by their code/status/type like HTTP errors.

CHAT_ERRORS = [
    ({"error": {"message": "slow down", "code": 429}}, ErrorKind.RETRYABLE, 429, "slow down"),
    ({"error": {"message": "bad key", "code": 401}}, ErrorKind.AUTH, 401, "bad key"),
    ({"error": {"message": "pay up", "code": 402}}, ErrorKind.QUOTA, 402, "pay up"),
    ({"error": {"message": "gone", "code": "404"}}, ErrorKind.NOT_FOUND, 404, "gone"),
    (
        {"error": {"message": "too long", "code": "context_length_exceeded"}},
        ErrorKind.CONTEXT_OVERFLOW,
        None,
        "too long",
    ),
    (
        {"error": {"message": "exploded", "type": "server_error", "code": None}},
        ErrorKind.RETRYABLE,
        None,
        "exploded",
    ),
    ({"error": {"code": "invalid_api_key"}}, ErrorKind.AUTH, None, "without a message"),
    ({"error": "boom"}, ErrorKind.RETRYABLE, None, "boom"),
    # Older vLLM: its ErrorResponse unwrapped, as the whole chunk.
    (
        {
            "object": "error",
            "message": "max_tokens too large",
            "type": "BadRequestError",
            "code": 400,
        },
        ErrorKind.BAD_REQUEST,
        400,
        "max_tokens too large",
    ),
]


@pytest.mark.parametrize(("payload", "kind", "status", "words"), CHAT_ERRORS)
async def test_chat_error_objects(
    oai: OpenAIServer, payload: Any, kind: ErrorKind, status: int | None, words: str
) -> None:
    oai.raw(data(chunk(), payload))
    got = await failure(CHAT, "compatible", words, kind)
    finish = got[-1]
    assert isinstance(finish, Finish) and finish.error is not None
    assert finish.error.status == status


@pytest.mark.parametrize(
    ("payload", "kind", "words"),
    [
        ({"error": {"message": "slow down", "code": 429}}, ErrorKind.RETRYABLE, "slow down"),
        (
            {"type": "error", "code": "insufficient_quota", "message": "You exceeded your quota"},
            ErrorKind.QUOTA,
            "exceeded your quota",
        ),
        (
            {"type": "error", "code": "invalid_api_key", "message": "Incorrect API key"},
            ErrorKind.AUTH,
            "Incorrect API key",
        ),
        ({"type": "error", "code": None, "message": None}, ErrorKind.RETRYABLE, "without a"),
        (
            {
                "type": "response.failed",
                "response": response(
                    status="failed", error={"code": "rate_limit_exceeded", "message": "later"}
                ),
            },
            ErrorKind.RETRYABLE,
            "later",
        ),
    ],
)
async def test_responses_error_objects(
    oai: OpenAIServer, payload: Any, kind: ErrorKind, words: str
) -> None:
    oai.raw(data(payload))
    await failure(RESPONSES, "openai", words, kind)


@pytest.mark.parametrize(
    ("body", "kind", "words"),
    [
        (
            '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            ErrorKind.RETRYABLE,
            "Overloaded",
        ),
        (
            '{"type": "error", "error": {"type": "rate_limit_error", "message": "Slow"}}',
            ErrorKind.RETRYABLE,
            "Slow",
        ),
        (
            '{"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}',
            ErrorKind.AUTH,
            "bad key",
        ),
        (
            '{"type": "error", "error": {"type": "billing_error", "message": "no credit"}}',
            ErrorKind.QUOTA,
            "no credit",
        ),
        (
            '{"type": "error", "error": {"type": "invalid_request_error",'
            ' "message": "prompt is too long"}}',
            ErrorKind.CONTEXT_OVERFLOW,
            "prompt is too long",
        ),
        ("upstream exploded", ErrorKind.RETRYABLE, "upstream exploded"),  # not JSON at all
    ],
)
async def test_anthropic_error_events(
    ant: AnthropicServer, body: str, kind: ErrorKind, words: str
) -> None:
    ant.raw(event("message_start", START) + f"event: error\ndata: {body}\n\n".encode())
    got = await failure(ANTHROPIC, "anthropic", words, kind)
    finish = got[-1]
    assert isinstance(finish, Finish) and finish.error is not None
    assert finish.error.status is None  # the stream's 200 says nothing


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        # After the first token, so that generate does not try again (it retries only before).
        pytest.param(Raw(data(chunk(), "{not json}")), "a data line is not JSON", id="not-json"),
        pytest.param(Raw(data(chunk(), chunk(choices="abc"))), "no choices list", id="shape"),
        pytest.param(Raw(HTML, content_type="text/html", chunked=False), "text/html", id="html"),
    ],
)
def test_cli_generate_prints_one_line_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], raw: Raw, words: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps at the terminal's width, not at sentences
    with OpenAIServer() as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        server.push(*[raw] * 5)  # the same answer to every retry of a retryable failure
        code = cli(monkeypatch, "generate", CHAT, "hi")
    captured = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in captured.out + captured.err
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, captured.err
    assert errors[0].startswith("error: compatible: malformed stream") and words in errors[0]
