"""The provider table (models/providers.py) and the callers that ask it instead of names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sweepbench import settings
from sweepbench.models.catalog import known_models
from sweepbench.models.providers import (
    PROVIDERS,
    Provider,
    credit_reporters,
    default_models,
    free,
    grammar_providers,
    keyed,
    needs_key,
    provider,
)
from sweepbench.models.registry import model_info, provider_status, providers, resolve
from sweepbench.money.prices import price_for
from sweepbench.settings import KEY_VARIABLES, key_hint, secret_values
from sweepbench.sweeps.plan import DEFAULT_LOCAL_MODEL, default_model
from sweepbench.web.offer import Offer, situation

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "sweepbench"


def _a_model(entry: Provider) -> str:
    """A model id of the provider: its default, else its first catalogue entry."""
    if entry.default_model is not None:
        return entry.default_model
    listed = [info.id for info in known_models().values() if info.provider == entry.name]
    return listed[0] if listed else f"{entry.name}/some-model"


def test_table_is_in_listing_order() -> None:
    assert list(PROVIDERS) == [
        "anthropic",
        "openai",
        "openrouter",
        "compatible",
        "local",
        "scripted",
    ]
    assert providers()[: len(PROVIDERS)] == list(PROVIDERS)
    labels = [entry.label for entry in PROVIDERS.values()]
    assert labels == ["Claude", "OpenAI", "OpenRouter", "compatible", "local", "scripted"]


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_every_provider_resolves_a_model(name: str) -> None:
    model_id = _a_model(PROVIDERS[name])
    model = resolve(model_id)
    assert model.info.provider == name
    assert model.id == model_id


@pytest.mark.parametrize("entry", keyed(), ids=lambda entry: entry.name)
def test_keyed_providers_name_their_variables(entry: Provider) -> None:
    assert entry.key_variables
    assert KEY_VARIABLES[entry.name] == entry.key_variables
    assert entry.key_variables[0] in key_hint(entry.name)
    status = provider_status(entry.name)
    assert not status.available and entry.key_variables[0] in status.reason


def test_keyed_is_exactly_the_registered_variables() -> None:
    assert [entry.name for entry in keyed()] == ["anthropic", "openai", "openrouter"]
    assert set(KEY_VARIABLES) == {entry.name for entry in keyed()}
    assert not any(needs_key(name) for name in PROVIDERS if name not in KEY_VARIABLES)


@pytest.mark.parametrize("entry", keyed(), ids=lambda entry: entry.name)
def test_every_key_variable_opens_its_provider(
    entry: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in entry.key_variables:
        monkeypatch.setenv(variable, f"key-from-{variable}")
        assert settings.provider_key(entry.name) == f"key-from-{entry.key_variables[0]}"
        assert provider_status(entry.name).available
    for variable in entry.key_variables[:-1]:
        monkeypatch.delenv(variable)
    assert settings.provider_key(entry.name) == f"key-from-{entry.key_variables[-1]}"


def test_the_scrubber_finds_every_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {}
    for entry in keyed():
        for variable in entry.key_variables:
            values[variable] = f"secret-{variable.lower()}-0123456789"
            monkeypatch.setenv(variable, values[variable])
    found = secret_values()
    for value in values.values():
        assert value in found


def test_the_scrubber_finds_config_keys(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text(
        "[keys]\nanthropic = 'placeholder-config-anthropic'\n"
        "someone = 'placeholder-config-someone'\n"
    )
    found = secret_values()
    assert "placeholder-config-anthropic" in found and "placeholder-config-someone" in found


def test_default_model_follows_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    order = default_models()
    assert order == [
        ("anthropic", "anthropic/claude-opus-5"),
        ("openai", "openai/gpt-5.6-luna"),
    ]
    assert default_model() == DEFAULT_LOCAL_MODEL
    for name, model in reversed(order):  # each key set makes its provider's model win
        monkeypatch.setenv(PROVIDERS[name].key_variables[-1], "k")
        assert default_model() == model
    monkeypatch.delenv(PROVIDERS["anthropic"].key_variables[-1])
    assert default_model() == "openai/gpt-5.6-luna"
    monkeypatch.setenv("OPENROUTER_API_KEY", "k")
    assert default_model() == "openai/gpt-5.6-luna"
    monkeypatch.delenv(PROVIDERS["openai"].key_variables[-1])
    assert default_model() == DEFAULT_LOCAL_MODEL


def test_pricing_comes_from_the_table() -> None:
    assert {entry.name for entry in free()} == {"local", "scripted"}
    for entry in PROVIDERS.values():
        info = model_info(_a_model(entry))
        price = price_for(info)
        if entry.pricing == "free":
            assert price is not None and price.free and price.source == entry.free_source
        elif entry.pricing == "own-server":
            assert price is not None and price.free and price.source == "own server: free"
        elif entry.pricing == "genai-prices":
            assert price is not None and not price.free
            assert price.source.startswith("genai-prices")


def test_a_configured_endpoint_is_a_provider_outside_the_table(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text(
        '[endpoints.ollama]\nbase_url = "http://127.0.0.1:11434/v1"\nmodels = ["llama3.2"]\n'
    )
    entry = provider("ollama")
    assert "ollama" not in PROVIDERS and "ollama" in providers()
    assert (entry.label, entry.pricing, entry.keyed, entry.listed_without_key) == (
        "ollama",
        "own-server",
        False,
        True,
    )
    assert provider_status("ollama").available
    price = price_for(model_info("ollama/llama3.2"))
    assert price is not None and price.free and price.source == "own server: free"
    assert provider_status("nowhere").reason == "unknown provider"


def test_compatible_needs_its_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    status = provider_status("compatible")
    assert not status.available and status.reason == "set SWEEPBENCH_COMPATIBLE_BASE_URL"
    monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")
    assert provider_status("compatible").available


def test_grammar_and_credit_facts() -> None:
    from sweepbench.artifacts import artifact_kind

    assert grammar_providers() == ("local",)
    drawing = artifact_kind("excalidraw")
    assert drawing.schema("v1", "local") is not None
    assert drawing.schema("v1", "anthropic") is None
    assert [entry.name for entry in credit_reporters()] == ["openrouter"]
    assert [n for n, e in PROVIDERS.items() if not e.listed_without_key] == ["openrouter"]


def test_the_table_refuses_inconsistent_entries() -> None:
    with pytest.raises(ValueError, match="key variables"):
        Provider("x", "X", needs="key")
    with pytest.raises(ValueError, match="free_source"):
        Provider("x", "X", pricing="free")


def _offers(*available: tuple[str, int]) -> list[Offer]:
    return [
        Offer(f"{name}/m{i}", f"m{i}", name, True)
        for name, count in available
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("available", "line"),
    [
        ((), "No provider keys: paid models are listed but cannot run."),
        (
            (("local", 1), ("scripted", 2)),
            "No provider keys: paid models are listed but cannot run; local and scripted "
            "models run free.",
        ),
        ((("anthropic", 3), ("openai", 4)), "Claude models, plus 4 OpenAI models."),
        (
            (("anthropic", 3), ("scripted", 1)),
            "Claude models only (no OpenAI key); scripted models run free.",
        ),
        ((("openai", 2),), "OpenAI models only (no Anthropic key)."),
        ((("openrouter", 5), ("local", 1)), "OpenRouter models; local models run free."),
        ((("openrouter", 5), ("openai", 1)), "OpenAI models only (no Anthropic key)."),
    ],
)
def test_situation_line(available: tuple[tuple[str, int], ...], line: str) -> None:
    assert situation(_offers(*available)) == line


# -- no provider name outside the model layer ---------------------------------------------------


def _docstring_ids(tree: ast.AST) -> set[int]:
    """Ids of the string constants that stand alone as statements (docstrings, attribute
    docstrings): prose, allowed to name providers."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


NOT_PROVIDERS = {("bench/workers.py", "local"), ("bench/ray_workers.py", "local")}
"""Constants that only look like a provider's name: ``--executor local`` (worker processes on
this machine), defined once as ``LOCAL_EXECUTOR``; Ray's own named address ``local``."""


def provider_literals(root: Path = PACKAGE) -> list[str]:
    """``path:line: 'name'`` for every string constant equal to a provider's name in the
    package outside ``models/`` (but for :data:`NOT_PROVIDERS`)."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "models":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = _docstring_ids(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in PROVIDERS
                and id(node) not in prose
                and (path.relative_to(root).as_posix(), node.value) not in NOT_PROVIDERS
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.value!r}")
    return found


def test_no_provider_name_is_hard_coded_outside_models() -> None:
    assert provider_literals() == [], "ask sweepbench.models.providers instead"


def test_the_literal_scan_sees_a_comparison(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "ok.py").write_text('X = "openai"\n')
    (tmp_path / "caller.py").write_text(
        '"""Mentions "local" and anthropic in prose."""\n\n'
        "# openrouter in a comment\n"
        'def f(p: str) -> bool:\n    """openai"""\n    return p == "openrouter"\n'
    )
    assert provider_literals(tmp_path) == ["caller.py:6: 'openrouter'"]


def test_each_provider_row_names_an_adapter_that_resolving_uses() -> None:
    """Resolving a model is a lookup in the provider table (issue 28 §3), not a chain of
    provider names: each row's adapter is a Model class, and resolve() returns one."""
    import importlib

    from sweepbench.models.base import Model
    from sweepbench.models.providers import PROVIDERS
    from sweepbench.models.registry import resolve

    for entry in PROVIDERS.values():
        module, _, name = entry.adapter.partition(":")
        adapter = getattr(importlib.import_module(module), name)
        assert issubclass(adapter, Model), entry.name
    assert type(resolve("scripted/echo")).__name__ == "ScriptedModel"
    assert type(resolve("anthropic/claude-opus-5")).__name__ == "AnthropicModel"
