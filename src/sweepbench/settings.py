"""Configuration from the environment and an optional TOML file.

Keys are read at call time, never at import, and never written anywhere.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import platformdirs

from sweepbench.errors import UserError

#: Environment variables that hold each provider's key, first match wins. This base layer names
#: no provider: the model layer's table (:mod:`sweepbench.models.providers`) registers its keyed
#: providers here when it is imported (:func:`register_key_variables`).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {}


def register_key_variables(provider: str, variables: tuple[str, ...]) -> None:
    """Say which environment variables hold ``provider``'s key (first match wins)."""
    KEY_VARIABLES[provider] = tuple(variables)


def home() -> Path:
    """The folder for the store, caches and the config file (``SWEEPBENCH_HOME``)."""
    env = os.environ.get("SWEEPBENCH_HOME")
    path = Path(env) if env else Path(platformdirs.user_data_dir("sweepbench"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def database_url() -> str:
    """SQLAlchemy URL of the store: ``SWEEPBENCH_DB`` or a SQLite file under the home folder."""
    return os.environ.get("SWEEPBENCH_DB") or f"sqlite:///{home() / 'sweepbench.db'}"


def config_path() -> Path:
    """The optional config file: ``SWEEPBENCH_CONFIG`` or ``config.toml`` in the home folder."""
    env = os.environ.get("SWEEPBENCH_CONFIG")
    return Path(env) if env else home() / "config.toml"


@dataclass(frozen=True)
class EndpointConfig:
    """An OpenAI-compatible server the user configured (vLLM, llama.cpp server, Ollama)."""

    name: str
    base_url: str
    api_key: str | None = None
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """What the config file says. Every section is optional."""

    keys: dict[str, str] = field(default_factory=dict)
    endpoints: dict[str, EndpointConfig] = field(default_factory=dict)
    local_models: dict[str, Path] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)


def _parse_config(data: dict[str, Any], where: Path) -> Config:
    def table(name: str) -> dict[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise UserError(f"{where}: [{name}] must be a table")
        return value

    keys = {str(k): str(v) for k, v in table("keys").items()}
    endpoints: dict[str, EndpointConfig] = {}
    for name, spec in table("endpoints").items():
        if not isinstance(spec, dict) or "base_url" not in spec:
            raise UserError(f"{where}: [endpoints.{name}] needs a base_url")
        key = spec.get("api_key")
        key_env = spec.get("api_key_env")
        if key_env:
            key = os.environ.get(str(key_env), key)
        endpoints[name] = EndpointConfig(
            name=name,
            base_url=str(spec["base_url"]),
            api_key=str(key) if key else None,
            models=tuple(str(m) for m in spec.get("models", ())),
        )
    local = {str(k): Path(str(v)).expanduser() for k, v in table("local_models").items()}
    return Config(keys=keys, endpoints=endpoints, local_models=local, raw=data)


@cache
def _load_config(path: Path, mtime: float) -> Config:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path} is not valid TOML: {exc}") from exc
    return _parse_config(data, path)


def load_config() -> Config:
    """Read the config file if there is one (re-read when it changes)."""
    path = config_path()
    if not path.is_file():
        return Config()
    return _load_config(path, path.stat().st_mtime)


def provider_key(provider: str) -> str | None:
    """The key for a provider: its environment variables first, then the config's [keys]."""
    for var in KEY_VARIABLES.get(provider, ()):
        value = os.environ.get(var)
        if value:
            return value
    return load_config().keys.get(provider) or None


def key_hint(provider: str) -> str:
    """How to give a provider its key, for error messages."""
    names = KEY_VARIABLES.get(provider, ())
    if not names:
        return "configure it in the config file"
    return f"set {names[0]} (or put {provider} = '…' under [keys] in {config_path()})"


def base_url_override(provider: str) -> str | None:
    """``SWEEPBENCH_<PROVIDER>_BASE_URL``: send a provider's calls elsewhere (proxies, tests)."""
    return os.environ.get(f"SWEEPBENCH_{provider.upper()}_BASE_URL") or None


REDACTED = "[redacted]"
_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_TOKEN", "_SECRET")


def secret_values() -> list[str]:
    """Every key this process could send: the providers' keys (environment and config file),
    endpoint keys, and any other ``*_API_KEY`` / ``*_TOKEN`` variable. Longest first."""
    from urllib.parse import quote

    found: set[str] = set()
    for provider, variables in KEY_VARIABLES.items():
        value = provider_key(provider)
        if value:
            found.add(value)
        found.update(os.environ.get(variable) or "" for variable in variables)
    # Every [keys] entry, registered provider or not: the scrubber must not depend on which
    # layers this process has imported.
    found.update(load_config().keys.values())
    for name, value in os.environ.items():
        if name.upper().endswith(_SECRET_SUFFIXES) and value:
            found.add(value)
    for endpoint in load_config().endpoints.values():
        key = getattr(endpoint, "api_key", None)
        if isinstance(key, str) and key:
            found.add(key)
    found = {v.strip() for v in found if len(v.strip()) >= 8}
    found |= {quote(v, safe="") for v in found}
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every key (and its URL-encoded form) replaced by ``[redacted]`` — for
    every message and file a run writes (spec benchmarks §5.2)."""
    for secret in secret_values() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
