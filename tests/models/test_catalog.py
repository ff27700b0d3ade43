"""Catalogue facts, effort resolution, the registry and operator overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepbench import UserError
from sweepbench.models import model_info, resolve
from sweepbench.models.catalog import known_models
from sweepbench.models.registry import provider_status, providers


def test_spec_models_are_catalogued_with_their_effort_facts() -> None:
    models = known_models()
    for name in ("claude-opus-5", "claude-sonnet-4-6", "claude-haiku-4-5"):
        assert f"anthropic/{name}" in models
    assert models["anthropic/claude-haiku-4-5"].supported_efforts() == ["none"]
    assert "xhigh" not in models["anthropic/claude-sonnet-4-6"].supported_efforts()
    assert models["anthropic/claude-opus-5"].default_effort == "low"


def test_resolve_effort_follows_the_spec() -> None:
    opus = model_info("anthropic/claude-opus-5")
    assert opus.resolve_effort(None) == "low"  # empty → the model's default
    assert opus.resolve_effort("none") is None  # nothing sent
    assert opus.resolve_effort("High") == "high"
    sonnet = model_info("anthropic/claude-sonnet-4-6")
    assert sonnet.resolve_effort(None) is None
    assert sonnet.resolve_effort("xhigh", strict=False) is None  # ignored in a sweep
    with pytest.raises(UserError, match="does not accept effort 'xhigh'"):
        sonnet.resolve_effort("xhigh")
    haiku = model_info("anthropic/claude-haiku-4-5")
    with pytest.raises(UserError, match="does not accept an effort"):
        haiku.resolve_effort("low")
    with pytest.raises(UserError, match="unknown effort"):
        opus.resolve_effort("turbo")


def test_max_tokens_beyond_the_model_limit_is_refused_before_any_call() -> None:
    model = resolve("anthropic/claude-haiku-4-5")
    from sweepbench import Request

    with pytest.raises(UserError, match="at most 64,000"):
        model.check(Request.simple(model.id, "hi", max_tokens=100_000))


def test_unknown_model_of_a_known_provider_gets_cautious_facts() -> None:
    info = model_info("openai/gpt-99-preview")
    assert not info.known
    assert not info.effort_capable


def test_unknown_local_model_lists_the_known_ones() -> None:
    with pytest.raises(UserError, match="local/smollm2-135m"):
        model_info("local/nonesuch")


def test_operator_files_add_models_endpoints_and_local_weights(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        "[anthropic.claude-haiku-4-5]\nprice_in = 0.5\nprice_out = 2\n"
        '[openai."gpt-new"]\neffort_levels = ["low"]\nmax_output_tokens = 1000\n'
    )
    (isolated_home / "config.toml").write_text(
        '[endpoints.ollama]\nbase_url = "http://127.0.0.1:11434/v1"\nmodels = ["llama3.2"]\n'
        '[local_models]\nmine = "/tmp/mine.gguf"\n'
    )
    haiku = model_info("anthropic/claude-haiku-4-5")
    assert str(haiku.price_in) == "0.5"
    assert model_info("openai/gpt-new").effort_levels == ("low",)
    assert "ollama" in providers()
    assert provider_status("ollama").available
    assert resolve("ollama/llama3.2").provider == "ollama"
    assert model_info("local/mine").gguf_path == Path("/tmp/mine.gguf")


def test_keyed_provider_without_a_key_is_unavailable_not_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    status = provider_status("openrouter")
    assert not status.available and "OPENROUTER_API_KEY" in status.reason
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    assert provider_status("openrouter").available


def test_config_file_keys_are_read_when_no_environment_key(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text('[keys]\nanthropic = "from-file"\n')
    assert provider_status("anthropic").available


def test_broken_config_file_is_a_clear_error(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text("[keys\n")
    with pytest.raises(UserError, match=r"config\.toml is not valid TOML"):
        provider_status("anthropic")
