"""The Anthropic adapter, through the real SDK, against a protocol-accurate local server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sweepbench import ErrorKind
from tests.adapters import cancel_after, run
from tests.helpers import cli
from tests.servers import AnthropicServer, Reply, StreamFailure

MODEL = "anthropic/claude-opus-5"
KEY = "test-anthropic-key"


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicServer]:
    with AnthropicServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("SWEEPBENCH_ANTHROPIC_BASE_URL", server.url)
        yield server


async def test_streams_thinking_text_and_usage_with_cache(srv: AnthropicServer) -> None:
    srv.reply(
        "The sky is blue.",
        reasoning="Rayleigh scattering…",
        input_tokens=100,
        cache_read_tokens=40,
        cache_write_tokens=10,
        output_tokens=30,
    )
    result = await run(MODEL, "Why is the sky blue?", system="Be brief.", effort="high")
    assert result.text == "The sky is blue."
    assert result.reasoning == "Rayleigh scattering…"
    assert result.stop_reason == "end" and result.provider_reason == "end_turn"
    usage = result.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (150, 40, 10)
    assert usage.output_tokens == 30
    body = srv.last_request.json
    assert body["model"] == "claude-opus-5"
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 24000  # catalogue default
    assert body["output_config"] == {"effort": "high"}
    assert body["thinking"] == {"type": "adaptive"}
    assert body["stream"] is True
    headers = srv.last_request.headers
    assert KEY in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )


async def test_effort_none_sends_no_thinking(srv: AnthropicServer) -> None:
    srv.reply("ok")
    await run(MODEL, effort="none", max_tokens=50, temperature=0.0)
    body = srv.last_request.json
    assert "thinking" not in body and "output_config" not in body
    assert body["max_tokens"] == 50 and body["temperature"] == 0.0


async def test_structured_output_sends_the_schema(srv: AnthropicServer) -> None:
    srv.reply('{"a": 1}')
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    await run("anthropic/claude-haiku-4-5", response_format=schema)
    fmt = srv.last_request.json["output_config"]["format"]
    assert fmt == {"type": "json_schema", "schema": schema}


@pytest.mark.parametrize(
    ("word", "ours"), [("max_tokens", "max_tokens"), ("refusal", "refusal"), ("end_turn", "end")]
)
async def test_stop_reasons_are_normalised(srv: AnthropicServer, word: str, ours: str) -> None:
    srv.reply("partial answer", stop_reason=word)
    result = await run(MODEL)
    assert result.stop_reason == ours and result.provider_reason == word


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (429, None, ErrorKind.RETRYABLE),
        (529, None, ErrorKind.RETRYABLE),
        (500, None, ErrorKind.RETRYABLE),
        (401, None, ErrorKind.AUTH),
        (403, None, ErrorKind.AUTH),
        (404, None, ErrorKind.NOT_FOUND),
        (400, "prompt is too long: 250000 tokens > 200000 maximum", ErrorKind.CONTEXT_OVERFLOW),
        (413, None, ErrorKind.CONTEXT_OVERFLOW),
        (400, "Your credit balance is too low to access the Anthropic API.", ErrorKind.QUOTA),
        (400, "max_tokens: Field required", ErrorKind.BAD_REQUEST),
    ],
)
async def test_http_errors_are_classified(
    srv: AnthropicServer, status: int, message: str | None, kind: ErrorKind
) -> None:
    srv.error(status, message, retry_after=7 if status == 429 else None)
    result = await run(MODEL)
    assert result.stop_reason == "error"
    assert result.error is not None
    assert result.error.kind is kind
    assert result.error.status == status
    assert result.error.retry_after == (7.0 if status == 429 else None)


async def test_error_event_mid_stream_keeps_the_text(srv: AnthropicServer) -> None:
    srv.push(Reply("one two three four", failure=StreamFailure(after=2, message="Overloaded")))
    result = await run(MODEL)
    assert result.stop_reason == "error"
    assert result.error is not None and result.error.retryable
    assert result.text == "one two"


@pytest.mark.parametrize(
    ("error_type", "kind"),
    [
        ("overloaded_error", ErrorKind.RETRYABLE),
        ("api_error", ErrorKind.RETRYABLE),
        ("rate_limit_error", ErrorKind.RETRYABLE),
        ("authentication_error", ErrorKind.AUTH),
        ("billing_error", ErrorKind.QUOTA),
        ("not_found_error", ErrorKind.NOT_FOUND),
        ("invalid_request_error", ErrorKind.BAD_REQUEST),
    ],
)
async def test_error_event_is_classified_by_its_type(
    srv: AnthropicServer, error_type: str, kind: ErrorKind
) -> None:
    """An ``event: error`` arrives on the stream's 200: its type says what it stands for."""
    srv.fail(after=1, message="it went wrong", type=error_type)
    result = await run(MODEL)
    assert result.stop_reason == "error" and result.error is not None
    assert result.error.kind is kind
    assert str(result.error) == "anthropic: it went wrong"


async def test_dropped_connection_is_a_retryable_error(srv: AnthropicServer) -> None:
    srv.drop(after=2, text="one two three four")
    result = await run(MODEL)
    assert result.stop_reason == "error"
    assert result.error is not None and result.error.retryable
    assert result.text == "one two"


async def test_closing_the_stream_disconnects_from_the_server(srv: AnthropicServer) -> None:
    assert await cancel_after(MODEL, srv) == 3
    assert srv.wait_disconnect(3)


async def test_missing_key_is_a_user_error_naming_the_variable(
    srv: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sweepbench import UserError

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
        await run(MODEL)
    assert srv.requests == []


def test_cli_generate_records_the_call_and_never_the_key(
    srv: AnthropicServer,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    srv.reply("Blue light scatters more.", input_tokens=40, output_tokens=392)
    assert cli(monkeypatch, "generate", MODEL, "Why is the sky blue?", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["text"] == "Blue light scatters more."
    assert data["cost_usd"] == "0.01"  # 40 × $5 + 392 × $25 per million
    files = [p for p in isolated_home.rglob("*") if p.is_file()]
    assert files, "the store should exist"
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


@pytest.fixture
def older_model(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        '[anthropic.claude-older]\neffort_levels = ["low", "medium", "high"]\nthinking = "budget"\n'
    )


async def test_older_models_get_a_thinking_budget_from_the_catalogue(
    srv: AnthropicServer, older_model: None
) -> None:
    srv.reply("ok")
    await run("anthropic/claude-older", effort="medium", max_tokens=8000)
    body = srv.last_request.json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "output_config" not in body
    srv.reply("ok")
    await run("anthropic/claude-older", effort="low", max_tokens=2000)
    assert "thinking" not in srv.last_request.json  # 500 < the API's 1,024 floor
