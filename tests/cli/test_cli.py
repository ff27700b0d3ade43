"""The CLI end to end on the scripted model (and errors as one sentence, never a traceback)."""

from __future__ import annotations

import json

import pytest

from sweepbench.store import Store
from tests.helpers import cli


def test_generate_json_is_one_object_and_is_recorded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        monkeypatch, "generate", "scripted/lorem?words=30", "hi", "--max-tokens", "5", "--json"
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "scripted/lorem?words=30"
    assert data["stop_reason"] == "max_tokens"
    assert data["usage"]["output_tokens"] == 5
    assert data["usage"]["input_tokens"] == 1
    assert data["cost_usd"] == "0"
    assert data["ttft_s"] >= 0 and data["wall_s"] >= data["ttft_s"]
    with Store.open() as store:
        call = store.get_call(data["call_id"])
    assert call.text == data["text"]
    assert call.stop_reason == "max_tokens"
    assert call.output_tokens == 5


def test_generate_streams_text_and_prints_a_summary(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(monkeypatch, "generate", "scripted/echo", "hello there world")
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out.strip() == "hello there world"
    assert "tokens in 3" in captured.err and "stop end" in captured.err


def test_provider_failure_exits_1_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # retry_after=0: the provider says when to retry (now), so the two retries wait their
    # 1 s and 2 s backoff instead of a 429's 60 s floor each (two minutes of a test's time).
    code = cli(monkeypatch, "generate", "scripted/echo?fail=429&retry_after=0", "hi")
    assert code == 1
    assert "rate limit" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["generate", "nosuch/model", "hi"], "unknown provider"),
        (["generate", "just-a-name", "hi"], "provider/model"),
        (["generate", "anthropic/claude-haiku-4-5", "hi", "--effort", "high"], "does not accept"),
        (["generate", "anthropic/claude-sonnet-4-6", "hi"], "ANTHROPIC_API_KEY"),
        (["generate", "openai/gpt-5.6-luna", "hi"], "OPENAI_API_KEY"),
        (["generate", "compatible/llama", "hi"], "SWEEPBENCH_COMPATIBLE_BASE_URL"),
        (["generate", "scripted/echo", "hi", "--max-tokens", "0"], "max tokens 0 out of range"),
    ],
)
def test_user_errors_are_one_sentence(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    words: str,
) -> None:
    code = cli(monkeypatch, *args)
    err = capsys.readouterr().err
    assert code == 2
    assert words in err
    assert "Traceback" not in err


def test_models_json_lists_providers_prices_and_availability(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    assert cli(monkeypatch, "models", "--json") == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    opus = rows["anthropic/claude-opus-5"]
    assert opus["available"] is True
    assert opus["price_in_per_mtok"] == "5" and opus["price_out_per_mtok"] == "25"
    assert opus["price_source"].startswith("genai-prices")
    assert "xhigh" in opus["effort_levels"]
    assert rows["anthropic/claude-haiku-4-5"]["effort_levels"] == []
    assert rows["openai/gpt-5.6-luna"]["available"] is False
    local = rows["local/smollm2-135m"]
    assert local["price_in_per_mtok"] == "0" and local["price_source"] == "local model: free"
    assert rows["scripted/echo"]["available"] is True


def test_models_table_renders(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(monkeypatch, "models") == 0
    captured = capsys.readouterr()
    assert "claude-opus-5" in captured.out
    assert "anthropic: unavailable" in captured.err
