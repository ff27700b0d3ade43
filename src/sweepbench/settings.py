"""Configuration from the environment and an optional TOML file.

Every ``SWEEPBENCH_*`` variable is declared in :mod:`sweepbench.variables`; both settings
files (``config.toml``, ``models.toml``) are read through :func:`read_toml_file`, parsed once
per version of the file. ``sweepbench config`` shows what is in effect and where it came from.
Keys are read at call time, never at import, and never written anywhere.
"""

from __future__ import annotations

import os
import re
import threading
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import platformdirs

from sweepbench.errors import UserError
from sweepbench.toml_keys import ANY, Schema, refuse_unknown_keys
from sweepbench.variables import CONFIG, DB, HOME, SHARED, base_url_variable
from sweepbench.variables import utf8_problem as utf8_problem

#: Environment variables that hold each provider's key, first match wins. This base layer names
#: no provider: the model layer's table (:mod:`sweepbench.models.providers`) registers its keyed
#: providers here when it is imported (:func:`register_key_variables`).
KEY_VARIABLES: dict[str, tuple[str, ...]] = {}


def register_key_variables(provider: str, variables: tuple[str, ...]) -> None:
    """Say which environment variables hold ``provider``'s key (first match wins)."""
    KEY_VARIABLES[provider] = tuple(variables)


HOME_ENV = HOME.name
CONFIG_ENV = CONFIG.name


def home_folder() -> Path:
    """The home folder's path (``SWEEPBENCH_HOME``, else the platform's data folder), without
    creating it."""
    env = HOME.value()
    return Path(env) if env else Path(platformdirs.user_data_dir("sweepbench"))


def home() -> Path:
    """The folder for the store, caches and the config file (``SWEEPBENCH_HOME``), created
    when missing. A UserError naming the variable and the path when it cannot be a folder
    (a file is in the way, a parent is not a folder, no permission)."""
    env = HOME.is_set()
    path = home_folder()
    where = f"{HOME_ENV}={path}" if env else f"the home folder {path} (set {HOME_ENV})"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(
            f"{where} is not a folder; point {HOME_ENV} at a folder sweepbench may create or write"
        ) from None
    except OSError as exc:
        raise UserError(
            f"{where}: the folder cannot be created ({exc.strerror or exc}); point {HOME_ENV} "
            "at a folder sweepbench may create or write"
        ) from None
    return path


def database_url() -> str:
    """SQLAlchemy URL of the store: ``SWEEPBENCH_DB`` or a SQLite file under the home folder."""
    return DB.value() or f"sqlite:///{home() / 'sweepbench.db'}"


def config_path() -> Path:
    """The optional config file: ``SWEEPBENCH_CONFIG`` or ``config.toml`` in the home folder."""
    env = CONFIG.value()
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


_UTF8_BOM = b"\xef\xbb\xbf"


def read_toml(
    path: Path, shown: str | None = None, *, schema: Schema | None = None
) -> dict[str, Any]:
    """A TOML file's content. A UserError naming the file (``shown``, default its path) and
    the problem otherwise: it cannot be read (a folder, no permission), it is not UTF-8 (the
    first bad byte and its offset), it is not TOML (the parser's reason, line and column),
    it holds a section or setting ``schema`` does not know (the line and the nearest known
    name; see :mod:`sweepbench.toml_keys`). A leading byte-order mark is dropped."""
    shown = shown or str(path)
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise UserError(f"{shown} is a folder, not a TOML file") from None
    except OSError as exc:
        raise UserError(f"{shown} cannot be read ({exc.strerror or exc})") from None
    skip = len(_UTF8_BOM) if raw.startswith(_UTF8_BOM) else 0
    try:
        text = raw[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[skip + exc.start]
        raise UserError(
            f"{shown} is not UTF-8 text: byte 0x{bad:02x} at byte offset {skip + exc.start} "
            "(save the file as UTF-8)"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{shown} is not valid TOML: {exc}") from None
    if schema is not None:
        refuse_unknown_keys(data, schema, text, shown)
    return data


def _shown_config(path: Path) -> str:
    return f"{path} ({CONFIG_ENV})" if CONFIG.is_set() else str(path)


CONFIG_SCHEMA: Schema = {
    "keys": ANY,  # provider name → key
    "endpoints": {"*": frozenset({"base_url", "api_key", "api_key_env", "models", "free"})},
    "local_models": ANY,  # model name → GGUF file
    "leaderboard": frozenset({"shared"}),
    "benchmarks": frozenset({"folders"}),
}
"""Every section and setting the config file may hold; anything else is refused."""


_Stamp = tuple[int, int]
_PARSED: dict[tuple[Path, str], tuple[_Stamp, Any]] = {}
_PARSED_LOCK = threading.Lock()


def _stamp(path: Path) -> _Stamp:
    status = path.stat()
    return status.st_mtime_ns, status.st_size


def read_toml_file(
    path: Path, shown: str, schema: Schema, build: Any = None, *, kind: str = ""
) -> Any:
    """A settings file read with :func:`read_toml` against ``schema`` (``build(data)`` of it
    when given), parsed once per version of the file: again only when its modification time
    or size changes. ``kind`` names what is built, so two readers of one file keep apart."""
    key = (path, f"{kind}:{shown}")
    stamp = _stamp(path)
    with _PARSED_LOCK:
        found = _PARSED.get(key)
    if found is not None and found[0] == stamp:
        return found[1]
    data = read_toml(path, shown, schema=schema)
    value = data if build is None else build(data)
    with _PARSED_LOCK:
        _PARSED[key] = (stamp, value)
    return value


def load_config() -> Config:
    """Read the config file if there is one (parsed again only when it changes). A folder
    where the file should be, or a file that cannot be read or is not TOML, is a UserError
    naming it."""
    path = config_path()
    if path.is_dir():
        raise UserError(f"{_shown_config(path)} is a folder, not a TOML file")
    if not path.is_file():
        return Config()
    config: Config = read_toml_file(
        path,
        _shown_config(path),
        CONFIG_SCHEMA,
        lambda data: _parse_config(data, path),
        kind="config",
    )
    return config


SHARED_ENV = SHARED.name
SHARED_HINT = (
    f'set {SHARED_ENV} to a folder or an fsspec URL, or put shared = "…" under [leaderboard] '
    "in the config file"
)


def _shared_value(value: str, where: str, base: Path | None) -> str:
    """A shared place as given (stripped): a URL kept as it is, a folder made absolute
    (relative to ``base`` when given, else the working folder). UserError naming ``where``."""
    text = value.strip()
    problem = utf8_problem(text)
    if problem is not None:
        raise UserError(f"{where} is not valid UTF-8 text ({problem}); give a folder or a URL")
    if "\n" in text or "\r" in text or "\x00" in text:
        raise UserError(f"{where} holds a line break or a NUL; give one folder or one URL")
    if "://" in text:
        match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$", text)
        if match is None:
            raise UserError(
                f"{where} = {scrub(text)!r} is not a URL (protocol://…) nor a folder path"
            )
        if not match.group(2).strip("/"):
            raise UserError(f"{where} = {scrub(text)!r} names no place after {match.group(1)}://")
        return text
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if path.exists() and not path.is_dir():
        raise UserError(f"{where} = {str(path)!r} is a file, not a folder; give a folder or a URL")
    return str(path)


def shared_place() -> str | None:
    """Where the shared leaderboard lives (a folder or an fsspec URL), or None when none is
    configured: ``SWEEPBENCH_SHARED``, else ``shared`` under ``[leaderboard]`` in the config
    file (a relative folder there is relative to the file's folder). Read at call time. A bad
    value (not text, blank in the file, not UTF-8, a URL naming no place, a file where the
    folder should be) is a UserError naming where it came from."""
    env = SHARED.value()
    if env is not None:
        return _shared_value(env, SHARED_ENV, None)
    config = load_config()
    section = config.raw.get("leaderboard")
    if section is None:
        return None
    path = config_path()
    shown = _shown_config(path)
    if not isinstance(section, dict):
        raise UserError(f"{shown}: [leaderboard] must be a table")
    if "shared" not in section:
        return None
    value = section["shared"]
    where = f"{shown}: [leaderboard] shared"
    if not isinstance(value, str):
        raise UserError(f"{where} must be a text (a folder or an fsspec URL), not {value!r}")
    if not value.strip():
        raise UserError(f"{where} is empty; give a folder or an fsspec URL, or remove it")
    return _shared_value(value, where, path.parent)


def benchmark_folders() -> tuple[Path, ...]:
    """The folders whose benchmark declarations the web app may run: ``folders`` under
    ``[benchmarks]`` in the config file, a list of folders (a relative one is relative to the
    file's folder; ``~`` is the operator's home). None configured: ``()``. Read at call time;
    a bad value (not a table, not a list of texts, a blank or non-UTF-8 entry) is a UserError
    naming where it came from. Whether each folder exists is the web app's check."""
    config = load_config()
    section = config.raw.get("benchmarks")
    if section is None:
        return ()
    path = config_path()
    shown = _shown_config(path)
    if not isinstance(section, dict):
        raise UserError(f"{shown}: [benchmarks] must be a table")
    value = section.get("folders", [])
    where = f"{shown}: [benchmarks] folders"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f'{where} must be a list of folders, e.g. folders = ["benchmarks"]')
    folders: list[Path] = []
    for entry in value:
        problem = utf8_problem(entry)
        if problem is not None:
            raise UserError(f"{where}: {entry!r} is not valid UTF-8 text ({problem})")
        if not entry.strip() or "\x00" in entry:
            raise UserError(f"{where}: {entry!r} is not a folder; remove it or give a folder")
        folder = Path(entry.strip()).expanduser()
        folders.append(folder if folder.is_absolute() else path.parent / folder)
    return tuple(folders)


_RUN_KEYS: ContextVar[Mapping[str, str]] = ContextVar(
    "sweepbench_run_keys", default=MappingProxyType({})
)
"""Keys given for one run only (provider → key): set by :func:`run_keys` in the run's own
context, so only the calls made in that context (and the tasks it creates) see them."""
_LIVE_RUN_KEYS: list[str] = []
"""Every key held by a :func:`run_keys` block now, for the scrubber (one entry per block)."""
_LIVE_LOCK = threading.Lock()
MIN_RUN_KEY_CHARS = 8
"""A run key shorter than this is refused: the scrubber ignores such short strings."""


@contextmanager
def run_keys(keys: Mapping[str, str]) -> Iterator[None]:
    """Use ``keys`` (provider → key) for the calls made in this context only — a run started
    from the web page with a visitor's key: :func:`provider_key` answers them first, and while
    the block lasts :func:`secret_values` lists them, so every message and row is scrubbed of
    them. Nothing is written or put in the process environment; other contexts (other runs,
    other requests) never see them. A key shorter than :data:`MIN_RUN_KEY_CHARS` is a
    ValueError."""
    held = {p: k.strip() for p, k in keys.items() if k and k.strip()}
    if any(len(k) < MIN_RUN_KEY_CHARS for k in held.values()):
        raise ValueError(f"a key is at least {MIN_RUN_KEY_CHARS} characters long")
    token = _RUN_KEYS.set(MappingProxyType({**_RUN_KEYS.get(), **held}))
    with _LIVE_LOCK:
        _LIVE_RUN_KEYS.extend(held.values())
    try:
        yield
    finally:
        _RUN_KEYS.reset(token)
        with _LIVE_LOCK:
            for key in held.values():
                _LIVE_RUN_KEYS.remove(key)


def provider_key(provider: str) -> str | None:
    """The key for a provider: a key given for this run (:func:`run_keys`) first, then its
    environment variables, then the config's [keys]."""
    given = _RUN_KEYS.get().get(provider)
    if given:
        return given
    for var in KEY_VARIABLES.get(provider, ()):
        value = os.environ.get(var)
        if value:
            return value
    return load_config().keys.get(provider) or None


def key_variable_set(provider: str) -> str | None:
    """The first of a provider's key variables that is set (the one :func:`provider_key`
    reads), or None. For showing where a key came from, never the key."""
    return next((var for var in KEY_VARIABLES.get(provider, ()) if os.environ.get(var)), None)


def key_hint(provider: str) -> str:
    """How to give a provider its key, for error messages."""
    names = KEY_VARIABLES.get(provider, ())
    if not names:
        return "configure it in the config file"
    return f"set {names[0]} (or put {provider} = '…' under [keys] in {config_path()})"


def base_url_override(provider: str) -> str | None:
    """``SWEEPBENCH_<PROVIDER>_BASE_URL``: send a provider's calls elsewhere (proxies, tests);
    None for a provider without one (:func:`sweepbench.variables.base_url_variable`)."""
    variable = base_url_variable(provider)
    return None if variable is None else variable.value()


REDACTED = "[redacted]"
_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_TOKEN", "_SECRET")


def secret_values() -> list[str]:
    """Every key this process could send: the providers' keys (environment and config file),
    endpoint keys, keys held for live runs (:func:`run_keys`), and any other ``*_API_KEY`` /
    ``*_TOKEN`` variable. Longest first."""
    from urllib.parse import quote

    try:
        config = load_config()
    except UserError:  # a file that cannot be read sends no key, so it has none to scrub;
        config = Config()  # and the error that says so must still reach the user
    found: set[str] = set()
    for variables in KEY_VARIABLES.values():  # with config.keys: every provider_key() value
        found.update(os.environ.get(variable) or "" for variable in variables)
    # Every [keys] entry, registered provider or not: the scrubber must not depend on which
    # layers this process has imported.
    found.update(config.keys.values())
    for name, value in os.environ.items():
        if name.upper().endswith(_SECRET_SUFFIXES) and value:
            found.add(value)
    for endpoint in config.endpoints.values():
        key = getattr(endpoint, "api_key", None)
        if isinstance(key, str) and key:
            found.add(key)
    with _LIVE_LOCK:
        found.update(_LIVE_RUN_KEYS)
    found = {v.strip() for v in found if len(v.strip()) >= MIN_RUN_KEY_CHARS}
    found |= {quote(v, safe="") for v in found}
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every key (and its URL-encoded form) replaced by ``[redacted]`` — for
    every message and file a run writes (spec benchmarks §5.2)."""
    for secret in secret_values() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text
