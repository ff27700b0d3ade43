"""The fake provider servers, proven against the real ``anthropic`` and ``openai`` SDKs."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseOutputRefusal

from tests.servers import AnthropicServer, OpenAIServer, OpenRouterServer, Reply, openrouter_model
from tests.servers.base import split_chunks

USER: list[MessageParam] = [{"role": "user", "content": "hi"}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def ant() -> Iterator[AnthropicServer]:
    with AnthropicServer() as srv:
        yield srv
        assert srv.server_errors == []


@pytest.fixture
def oai() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv
        assert srv.server_errors == []


@pytest.fixture
def orr() -> Iterator[OpenRouterServer]:
    with OpenRouterServer() as srv:
        yield srv
        assert srv.server_errors == []


@pytest.fixture
async def ant_client(ant: AnthropicServer) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(base_url=ant.url, api_key="sk-ant-test", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def oai_client(oai: OpenAIServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=oai.url + "/v1", api_key="sk-test", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def orr_client(orr: OpenRouterServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=orr.url + "/api/v1", api_key=orr.api_key, max_retries=0)
    yield client
    await client.close()


async def raw_post(url: str, body: dict[str, Any]) -> httpx2.Response:
    async with httpx2.AsyncClient() as client:
        return await client.post(url, json=body)


# --- the shared machinery -------------------------------------------------------------------


def test_split_chunks_keeps_leading_spaces() -> None:
    assert split_chunks("Hello big world ") == ["Hello", " big", " world "]
    assert split_chunks(["a", "b"]) == ["a", "b"]
    assert split_chunks(None) == []


async def test_queue_is_fifo_then_default(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.reply("first")
    ant.reply("second")
    texts = []
    for _ in range(3):
        msg = await ant_client.messages.create(
            model="claude-haiku-4-5", max_tokens=5, messages=USER
        )
        texts.append(msg.content[0].text)  # type: ignore[union-attr]
    assert texts == ["first", "second", ant.default_reply.text]
    req = ant.requests[0]
    assert (req.method, req.path, req.json["max_tokens"]) == ("POST", "/v1/messages", 5)
    assert ant.presented_key(req) == "sk-ant-test"  # x-api-key or a bearer token
    assert [r.outcome for r in ant.requests] == ["completed"] * 3


def test_server_stops_cleanly() -> None:
    with AnthropicServer() as srv:
        port = int(srv.url.rsplit(":", 1)[1])
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


# --- Anthropic ------------------------------------------------------------------------------


async def test_anthropic_stream_with_thinking(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.reply(
        ["Hel", "lo", "!"],
        reasoning="Let me think.",
        input_tokens=40,
        output_tokens=17,
        cache_read_tokens=30,
        cache_write_tokens=8,
    )
    types = []
    async with ant_client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=100, messages=USER
    ) as stream:
        async for event in stream:
            types.append(event.type)
        message = await stream.get_final_message()
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Let me think."  # type: ignore[union-attr]
    assert message.content[0].signature  # type: ignore[union-attr]
    assert message.content[1].text == "Hello!"  # type: ignore[union-attr]
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-sonnet-4-6"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (40, 17)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (30, 8)
    assert usage.output_tokens_details is not None
    assert usage.output_tokens_details.thinking_tokens == 3
    assert types[0] == "message_start" and types[-1] == "message_stop"
    assert types.count("thinking") == 3 and types.count("text") == 3
    assert "signature" in types
    assert ant.last_request.stream and ant.last_request.outcome == "completed"


async def test_anthropic_sse_framing(ant: AnthropicServer) -> None:
    response = await raw_post(ant.url + "/v1/messages", {"model": "m", "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    frames = response.text.strip("\n").split("\n\n")
    names = [frame.split("\n")[0].removeprefix("event: ") for frame in frames]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(frame.split("\n")[1].startswith("data: {") for frame in frames)


@pytest.mark.parametrize("reason", ["max_tokens", "refusal", "stop_sequence"])
async def test_anthropic_stop_reasons(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic, reason: str
) -> None:
    ant.reply("cut", stop_reason=reason)
    async with ant_client.messages.stream(model="m", max_tokens=3, messages=USER) as stream:
        message = await stream.get_final_message()
    assert message.stop_reason == reason
    if reason == "refusal":
        assert message.stop_details is not None and message.stop_details.type == "refusal"
    if reason == "stop_sequence":
        assert message.stop_sequence


async def test_anthropic_plain_json(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.reply("plain", reasoning="hmm", input_tokens=3, output_tokens=4)
    message = await ant_client.messages.create(model="m", max_tokens=9, messages=USER)
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (3, 4)


@pytest.mark.parametrize(
    ("status", "etype", "exc"),
    [
        (400, "invalid_request_error", anthropic.BadRequestError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (403, "permission_error", anthropic.PermissionDeniedError),
        (404, "not_found_error", anthropic.NotFoundError),
        (413, "request_too_large", anthropic.ContentTooLargeError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.OverloadedError),
    ],
)
async def test_anthropic_errors(
    ant: AnthropicServer,
    ant_client: anthropic.AsyncAnthropic,
    status: int,
    etype: str,
    exc: type[anthropic.APIStatusError],
) -> None:
    ant.error(status, "scripted", retry_after=7)
    with pytest.raises(exc) as info:
        async with ant_client.messages.stream(model="m", max_tokens=3, messages=USER) as stream:
            await stream.get_final_message()
    err = info.value
    assert err.status_code == status
    body = err.body
    assert isinstance(body, dict) and body["type"] == "error" and "request_id" in body
    assert body["error"] == {"type": etype, "message": "scripted"}
    assert err.response.headers["retry-after"] == "7"
    assert err.request_id is not None


async def test_anthropic_mid_stream_error(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.fail(after=2, message="Overloaded")
    texts: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info:
        async with ant_client.messages.stream(model="m", max_tokens=3, messages=USER) as stream:
            async for text in stream.text_stream:
                texts.append(text)
    assert len(texts) == 2
    assert info.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert ant.last_request.outcome == "failed"


async def test_anthropic_dropped_stream(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.drop(after=2)
    types: list[str] = []
    with pytest.raises((httpx2.TransportError, anthropic.APIConnectionError)):
        async with ant_client.messages.stream(model="m", max_tokens=3, messages=USER) as stream:
            async for event in stream:
                types.append(event.type)
    assert types.count("text") == 2 and "message_stop" not in types
    assert ant.last_request.outcome == "dropped"


async def test_anthropic_early_close_disconnects(
    ant: AnthropicServer, ant_client: anthropic.AsyncAnthropic
) -> None:
    ant.slow(chunks=200, delay=0.02)
    async with ant_client.messages.stream(model="m", max_tokens=3, messages=USER) as stream:
        async for text in stream.text_stream:
            if text:
                break
    assert ant.wait_disconnect(2)
    assert ant.last_request.outcome == "disconnected" and ant.disconnects == 1


async def test_anthropic_models_and_key() -> None:
    with AnthropicServer(api_key="right", enforce_key=True) as srv:
        client = anthropic.AsyncAnthropic(base_url=srv.url, api_key="wrong", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            await client.models.list()
        client = client.with_options(api_key="right")
        page = await client.models.list()
        assert [m.id for m in page.data] == ["claude-sonnet-4-6", "claude-haiku-4-5"]
        assert page.data[0].type == "model" and page.data[0].display_name
        assert srv.models_fetches == 2
        await client.close()


# --- OpenAI Responses -----------------------------------------------------------------------


async def test_openai_responses_stream(oai: OpenAIServer, oai_client: openai.AsyncOpenAI) -> None:
    oai.reply(
        ["An", "swer"],
        reasoning=["Think", "ing"],
        input_tokens=50,
        output_tokens=20,
        reasoning_tokens=12,
        cache_read_tokens=32,
    )
    events = []
    async with oai_client.responses.stream(
        model="gpt-5.6-sol", input="hi", reasoning={"effort": "low", "summary": "auto"}
    ) as stream:
        async for event in stream:
            events.append(event)
        response = await stream.get_final_response()
    assert response.output_text == "Answer"
    assert response.status == "completed"
    reasoning = response.output[0]
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == "Thinking"
    usage = response.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (50, 20, 70)
    assert usage.input_tokens_details.cached_tokens == 32
    assert usage.output_tokens_details.reasoning_tokens == 12
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert oai.last_request.path == "/v1/responses"
    assert oai.last_request.headers["authorization"] == "Bearer sk-test"


async def test_openai_responses_refusal(oai: OpenAIServer, oai_client: openai.AsyncOpenAI) -> None:
    oai.reply(refusal="I can't help with that.")
    async with oai_client.responses.stream(model="m", input="hi") as stream:
        types = [event.type async for event in stream]
        response = await stream.get_final_response()
    assert types.count("response.refusal.delta") == 5 and "response.refusal.done" in types
    message = response.output[0]
    assert message.type == "message"
    part = message.content[0]
    assert isinstance(part, ResponseOutputRefusal) and part.refusal == "I can't help with that."


async def test_openai_responses_incomplete(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.reply("cut short", stop_reason="max_output_tokens")
    async with oai_client.responses.stream(model="m", input="hi") as stream:
        events = [event async for event in stream]
        with pytest.raises(RuntimeError):
            await stream.get_final_response()
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details is not None
    assert last.response.incomplete_details.reason == "max_output_tokens"
    assert last.response.usage is not None and last.response.usage.output_tokens == 2


@pytest.mark.parametrize(("kind", "last"), [("error", "error"), ("failed", "response.failed")])
async def test_openai_responses_failure_events(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI, kind: str, last: str
) -> None:
    oai.fail(after=1, message="boom", kind=kind)
    async with oai_client.responses.stream(model="m", input="hi") as stream:
        events = [event async for event in stream]
    assert [e.type for e in events].count("response.output_text.delta") == 1
    assert events[-1].type == last
    if kind == "error":
        assert events[-1].message == "boom"  # type: ignore[union-attr]
    else:
        assert events[-1].response.error.message == "boom"  # type: ignore[union-attr]


async def test_openai_responses_plain_json(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.reply("plain", output_tokens=3)
    response = await oai_client.responses.create(model="m", input="hi")
    assert response.output_text == "plain"
    assert response.usage is not None and response.usage.output_tokens == 3


async def test_openai_cancelled_task_disconnects(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.slow(chunks=300, delay=0.02)
    streaming = asyncio.Event()

    async def consume() -> None:
        async with oai_client.responses.stream(model="m", input="hi") as stream:
            async for event in stream:
                if event.type == "response.output_text.delta":
                    streaming.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(streaming.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert oai.wait_disconnect(2)
    assert oai.last_request.outcome == "disconnected"


# --- OpenAI chat completions ----------------------------------------------------------------


async def test_openai_chat_stream_with_usage(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.reply(
        ["Hi", " there"], reasoning="hmm", input_tokens=9, output_tokens=6, cache_read_tokens=4
    )
    stream = await oai_client.chat.completions.create(
        model="gpt-4.1-mini", messages=CHAT, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = [c.choices[0].delta.model_extra for c in chunks if c.choices]
    assert text == "Hi there"
    assert {"reasoning_content": "hmm"} in reasoning
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (9, 6, 15)
    assert usage.prompt_tokens_details and usage.prompt_tokens_details.cached_tokens == 4
    assert usage.completion_tokens_details
    assert usage.completion_tokens_details.reasoning_tokens == 1


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("length", "length"), ("max_tokens", "length"), ("content_filter", "content_filter")],
)
async def test_openai_chat_finish_reasons(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI, reason: str, finish: str
) -> None:
    oai.reply("x", stop_reason=reason)
    stream = await oai_client.chat.completions.create(model="m", messages=CHAT, stream=True)
    chunks = [chunk async for chunk in stream]
    assert chunks[-1].choices[0].finish_reason == finish
    assert all(c.usage is None for c in chunks)


async def test_openai_chat_stream_helper(oai: OpenAIServer, oai_client: openai.AsyncOpenAI) -> None:
    oai.reply("helped", output_tokens=2)
    async with oai_client.chat.completions.stream(
        model="m", messages=CHAT, stream_options={"include_usage": True}
    ) as stream:
        completion = await stream.get_final_completion()
    assert completion.choices[0].message.content == "helped"
    assert completion.usage is not None and completion.usage.completion_tokens == 2
    plain = await oai_client.chat.completions.create(model="m", messages=CHAT)
    assert plain.choices[0].message.content == oai.default_reply.text


async def test_openai_chat_mid_stream_error_and_drop(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.fail(after=1, message="upstream died", code="server_error")
    stream = await oai_client.chat.completions.create(model="m", messages=CHAT, stream=True)
    with pytest.raises(openai.APIError) as info:
        async for _ in stream:
            pass
    assert info.value.message == "upstream died" and info.value.code == "server_error"
    oai.drop(after=1)
    stream = await oai_client.chat.completions.create(model="m", messages=CHAT, stream=True)
    with pytest.raises((httpx2.TransportError, openai.APIConnectionError)):
        async for _ in stream:
            pass
    assert oai.last_request.outcome == "dropped"


@pytest.mark.parametrize(
    ("status", "code", "exc"),
    [
        (401, "invalid_api_key", openai.AuthenticationError),
        (429, "rate_limit_exceeded", openai.RateLimitError),
        (429, "insufficient_quota", openai.RateLimitError),
        (400, "context_length_exceeded", openai.BadRequestError),
        (404, "model_not_found", openai.NotFoundError),
        (500, None, openai.InternalServerError),
        (503, None, openai.InternalServerError),
    ],
)
async def test_openai_errors(
    oai: OpenAIServer,
    oai_client: openai.AsyncOpenAI,
    status: int,
    code: str | None,
    exc: type[openai.APIStatusError],
) -> None:
    oai.error(status, code=code, retry_after=2, retry_after_ms=1500)
    oai.error(status, code=code)
    with pytest.raises(exc) as info:
        await oai_client.responses.create(model="m", input="hi", stream=True)
    with pytest.raises(exc) as chat_info:
        await oai_client.chat.completions.create(model="m", messages=CHAT)
    for err in (info.value, chat_info.value):
        assert err.status_code == status and err.code == code
        assert isinstance(err.body, dict) and set(err.body) == {"message", "type", "param", "code"}
    assert oai.requests[0].outcome == "http_error"
    first = oai.requests[0]
    assert first.path == "/v1/responses"


async def test_openai_retry_after_headers(
    oai: OpenAIServer, oai_client: openai.AsyncOpenAI
) -> None:
    oai.error(429, retry_after=2, retry_after_ms=1500)
    with pytest.raises(openai.RateLimitError) as info:
        await oai_client.chat.completions.create(model="m", messages=CHAT)
    headers = info.value.response.headers
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("2", "1500")
    assert info.value.type == "requests"


async def test_openai_models(oai: OpenAIServer, oai_client: openai.AsyncOpenAI) -> None:
    page = await oai_client.models.list()
    assert [m.id for m in page.data] == ["gpt-5.6-sol", "gpt-5.6-luna"]
    assert oai.models_fetches == 1


# --- OpenRouter -----------------------------------------------------------------------------


async def test_openrouter_stream(orr: OpenRouterServer, orr_client: openai.AsyncOpenAI) -> None:
    orr.reply(
        "Hi you", reasoning="mull", input_tokens=1000, cache_read_tokens=200, output_tokens=500
    )
    stream = await orr_client.chat.completions.create(
        model="openai/gpt-5.6-luna", messages=CHAT, stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert all((c.model_extra or {}).get("provider") == "OpenAI" for c in chunks)
    assert chunks[0].id.startswith("gen-")
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Hi you"
    assert [(d.model_extra or {}).get("reasoning") for d in deltas if d.model_extra] == ["mull"]
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage is not None
    extra = usage.model_extra or {}
    # 800 uncached x 0.25/M + 200 cached x 0.025/M + 500 out x 2/M
    assert extra["cost"] == pytest.approx(0.001205) and extra["is_byok"] is False
    assert orr.last_request.path == "/api/v1/chat/completions"


async def test_openrouter_raw_framing(orr: OpenRouterServer) -> None:
    orr.reply("x", cost=0.5, is_byok=True)
    response = await raw_post(orr.url + "/api/v1/chat/completions", {"model": "m", "stream": True})
    body = response.text
    assert body.startswith(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {")
    assert body.endswith("data: [DONE]\n\n")
    assert '"cost": 0.5' in body and '"is_byok": true' in body


@pytest.mark.parametrize(
    ("status", "exc"),
    [
        (402, openai.APIStatusError),
        (401, openai.AuthenticationError),
        (429, openai.RateLimitError),
        (502, openai.InternalServerError),
    ],
)
async def test_openrouter_errors(
    orr: OpenRouterServer, orr_client: openai.AsyncOpenAI, status: int, exc: type[Exception]
) -> None:
    orr.error(status, metadata={"provider_name": "OpenAI"}, retry_after=1)
    with pytest.raises(exc) as info:
        await orr_client.chat.completions.create(model="m", messages=CHAT, stream=True)
    err = info.value
    assert isinstance(err, openai.APIStatusError) and err.status_code == status
    assert err.body["code"] == status and err.body["metadata"] == {"provider_name": "OpenAI"}  # type: ignore[index]
    assert err.code == str(status) and err.response.headers["retry-after"] == "1"


async def test_openrouter_mid_stream_error(
    orr: OpenRouterServer, orr_client: openai.AsyncOpenAI
) -> None:
    orr.fail(after=1, message="Provider disconnected", code=502)
    stream = await orr_client.chat.completions.create(model="m", messages=CHAT, stream=True)
    with pytest.raises(openai.APIError) as info:
        async for _ in stream:
            pass
    assert info.value.code == "502" and info.value.message == "Provider disconnected"


async def test_openrouter_models_and_key(orr: OpenRouterServer) -> None:
    async with httpx2.AsyncClient(base_url=orr.url + "/api/v1") as client:
        models = (await client.get("/models")).json()["data"]
        await client.get("/models")
        good = await client.get("/key", headers={"authorization": f"Bearer {orr.api_key}"})
        bad = await client.get("/key", headers={"authorization": "Bearer sk-or-v1-nope"})
    assert orr.models_fetches == 2 and orr.key_fetches == 2
    assert [m["id"] for m in models] == ["openai/gpt-5.6-luna", "mistralai/mistral-small-3.2"]
    assert "reasoning" in models[0]["supported_parameters"]
    assert "reasoning" not in models[1]["supported_parameters"]
    assert models[0]["pricing"]["prompt"] == "0.00000025"
    assert set(models[0]["top_provider"]) == {
        "context_length",
        "max_completion_tokens",
        "is_moderated",
    }
    assert good.json()["data"]["limit_remaining"] == 9.75
    assert bad.status_code == 401 and bad.json()["error"]["code"] == 401


async def test_openrouter_custom_models_and_cancel() -> None:
    entry = openrouter_model("x/y", prompt="0.000002", completion="0.000003", input_cache_read="0")
    with OpenRouterServer(models=[entry], keepalives=0, default_reply=Reply(delay=0.05)) as srv:
        client = openai.AsyncOpenAI(base_url=srv.url + "/api/v1", api_key="k", max_retries=0)
        page = await client.models.list()
        assert [m.id for m in page.data] == ["x/y"]
        srv.slow(chunks=100, delay=0.02)
        stream = await client.chat.completions.create(model="x/y", messages=CHAT, stream=True)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break
        await stream.close()
        assert srv.wait_disconnect(2)
        await client.close()
        assert srv.server_errors == []
