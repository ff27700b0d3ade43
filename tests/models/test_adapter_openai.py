"""The OpenAI adapters — Responses API, and Chat Completions for compatible servers — through
the real SDK against a protocol-accurate local server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sweepbench import ErrorKind
from tests.adapters import cancel_after, run
from tests.servers import OpenAIServer, Reply, StreamFailure

MODEL = "openai/gpt-5.6-luna"


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
        monkeypatch.setenv("SWEEPBENCH_OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        yield server


async def test_responses_stream_reasoning_text_and_usage(srv: OpenAIServer) -> None:
    srv.reply(
        "Forty-two.",
        reasoning="Thinking about it…",
        input_tokens=80,
        cache_read_tokens=64,
        output_tokens=50,
        reasoning_tokens=40,
    )
    result = await run(MODEL, "Answer?", system="Terse.", effort="high", max_tokens=500)
    assert result.text == "Forty-two."
    assert result.reasoning == "Thinking about it…"
    assert result.stop_reason == "end"
    usage = result.usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (80, 64)
    assert (usage.output_tokens, usage.reasoning_tokens) == (50, 40)
    request = srv.last_request
    assert request.path == "/v1/responses"
    body = request.json
    assert body["model"] == "gpt-5.6-luna"
    assert body["instructions"] == "Terse."
    assert body["max_output_tokens"] == 500
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["input"] == [{"role": "user", "content": "Answer?"}]
    assert request.headers["authorization"] == "Bearer test-openai-key"


async def test_responses_default_effort_and_strict_schema(srv: OpenAIServer) -> None:
    srv.reply('{"n": 1}')
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    await run(MODEL, response_format=schema)
    body = srv.last_request.json
    assert body["reasoning"]["effort"] == "low"  # the catalogue's default effort
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["strict"] is True and fmt["schema"] == schema


async def test_responses_incomplete_is_max_tokens(srv: OpenAIServer) -> None:
    srv.reply("cut off mid", stop_reason="max_output_tokens")
    result = await run(MODEL, max_tokens=3)
    assert result.stop_reason == "max_tokens"
    assert result.text == "cut off mid"


async def test_responses_refusal(srv: OpenAIServer) -> None:
    srv.reply(refusal="I can't help with that.")
    result = await run(MODEL)
    assert result.stop_reason == "refusal"


@pytest.mark.parametrize("kind", ["error", "failed"])
async def test_responses_in_band_failures(srv: OpenAIServer, kind: str) -> None:
    srv.push(Reply("a b c d", failure=StreamFailure(after=2, message="boom", kind=kind)))  # type: ignore[arg-type]
    result = await run(MODEL)
    assert result.stop_reason == "error"
    assert result.text == "a b"


@pytest.mark.parametrize("kind", ["error", "failed"])
@pytest.mark.parametrize(
    ("code", "error_kind"),
    [
        ("server_error", ErrorKind.RETRYABLE),
        ("rate_limit_exceeded", ErrorKind.RETRYABLE),
        ("insufficient_quota", ErrorKind.QUOTA),
        ("invalid_api_key", ErrorKind.AUTH),
    ],
)
async def test_responses_in_band_failures_are_classified_by_code(
    srv: OpenAIServer, kind: str, code: str, error_kind: ErrorKind
) -> None:
    failure = StreamFailure(after=1, message="boom", code=code, kind=kind)  # type: ignore[arg-type]
    srv.push(Reply("a b", failure=failure))
    result = await run(MODEL)
    assert result.error is not None and result.error.kind is error_kind
    assert str(result.error) == "openai: boom"


@pytest.mark.parametrize(
    ("code", "error_type", "kind"),
    [
        (None, "server_error", ErrorKind.RETRYABLE),
        ("rate_limit_exceeded", "requests", ErrorKind.RETRYABLE),
        ("context_length_exceeded", "invalid_request_error", ErrorKind.CONTEXT_OVERFLOW),
        ("invalid_api_key", "invalid_request_error", ErrorKind.AUTH),
    ],
)
async def test_compatible_in_band_error_chunk_is_classified(
    srv: OpenAIServer, code: str | None, error_type: str, kind: ErrorKind
) -> None:
    srv.fail(after=1, message="went wrong", code=code, type=error_type)
    result = await run("compatible/m")
    assert result.stop_reason == "error" and result.text == "Hello"
    assert result.error is not None and result.error.kind is kind
    assert str(result.error) == "compatible: went wrong"


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [
        (429, None, ErrorKind.RETRYABLE),
        (429, "insufficient_quota", ErrorKind.QUOTA),
        (400, "context_length_exceeded", ErrorKind.CONTEXT_OVERFLOW),
        (401, None, ErrorKind.AUTH),
        (404, None, ErrorKind.NOT_FOUND),
        (400, None, ErrorKind.BAD_REQUEST),
        (503, None, ErrorKind.RETRYABLE),
    ],
)
async def test_http_errors_are_classified(
    srv: OpenAIServer, status: int, code: str | None, kind: ErrorKind
) -> None:
    srv.error(status, code=code, retry_after_ms=1500 if status == 429 else None)
    result = await run(MODEL)
    assert result.error is not None
    assert (result.error.kind, result.error.status) == (kind, status)
    assert result.error.retry_after == (1.5 if status == 429 else None)


async def test_responses_cancel_disconnects(srv: OpenAIServer) -> None:
    assert await cancel_after(MODEL, srv) == 3
    assert srv.wait_disconnect(3)


async def test_compatible_chat_completions_stream(srv: OpenAIServer) -> None:
    srv.reply("Hi from vLLM.", reasoning="hmm", input_tokens=9, output_tokens=5)
    result = await run("compatible/qwen3-8b", "hello", system="sys", max_tokens=64, temperature=0.3)
    assert result.text == "Hi from vLLM."
    assert result.reasoning == "hmm"
    assert result.stop_reason == "end" and result.provider_reason == "stop"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (9, 5)
    request = srv.last_request
    assert request.path == "/v1/chat/completions"
    body = request.json
    assert body["messages"][0] == {"role": "system", "content": "sys"}
    assert body["max_tokens"] == 64 and body["temperature"] == 0.3
    assert body["stream_options"] == {"include_usage": True}


async def test_compatible_length_is_max_tokens_and_drop_is_an_error(srv: OpenAIServer) -> None:
    srv.reply("one two", stop_reason="length")
    assert (await run("compatible/m")).stop_reason == "max_tokens"
    srv.drop(after=1, text="one two three")
    dropped = await run("compatible/m")
    assert dropped.stop_reason == "error" and dropped.text == "one"
    assert dropped.error is not None and dropped.error.retryable


async def test_compatible_cancel_disconnects(srv: OpenAIServer) -> None:
    assert await cancel_after("compatible/m", srv) == 3
    assert srv.wait_disconnect(3)


async def test_compatible_needs_no_key_and_price_is_zero(
    srv: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench.models import model_info
    from sweepbench.money import price_for

    monkeypatch.delenv("OPENAI_API_KEY")
    srv.reply("ok")
    assert (await run("compatible/m")).text == "ok"
    price = price_for(model_info("compatible/m"))
    assert price is not None and price.free
