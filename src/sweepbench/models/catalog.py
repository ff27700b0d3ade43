"""Capability facts of known models: effort levels, output limits, context window.

Callers ask the catalogue, never ``model.startswith(...)``. Prices live in
:mod:`sweepbench.money.prices`; a per-model price override is carried here as data.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from sweepbench.errors import UserError
from sweepbench.models.routes import Route
from sweepbench.settings import home, read_toml_file
from sweepbench.toml_keys import Schema, refuse_unknown_keys
from sweepbench.variables import LOCAL_CTX

EFFORT_LEVELS: tuple[str, ...] = ("none", "low", "medium", "high", "xhigh", "max")

LOCAL_CONTEXT_ENV = LOCAL_CTX.name
LOCAL_CONTEXT_CAP = LOCAL_CTX.default
"""Context (KV cache) the embedded model allocates when its window is larger: 4096 tokens cost
~90 MB for SmolLM2-135M instead of ~190 MB for its full 8192, and sweep prompts are short."""
LOCAL_CONTEXT_MIN = 64


@dataclass(frozen=True)
class ModelInfo:
    """What sweepbench knows about one model."""

    provider: str
    name: str
    label: str = ""
    effort_levels: tuple[str, ...] = ()
    """Accepted levels besides "none"; empty means the model rejects the effort parameter."""
    default_effort: str | None = None
    default_max_tokens: int = 4096
    max_output_tokens: int | None = None
    context_window: int | None = None
    price_in: Decimal | None = None
    """Operator override, USD per 1M input tokens (else genai-prices / OpenRouter)."""
    price_out: Decimal | None = None
    thinking: str = "adaptive"
    """Anthropic: how effort is sent — ``adaptive`` (the effort parameter with adaptive
    thinking) or ``budget`` (extended thinking with ``budget_tokens``, for older models)."""
    gguf_path: Path | None = None
    """Local models: the weights file (resolved lazily for packaged ones)."""
    gguf_package: str | None = None
    gguf_file: str | None = None
    known: bool = True
    """False for a model id the catalogue has no entry for (facts are guesses)."""
    size_b: float | None = None
    """Total parameters in billions when disclosed (operator-editable; a local model's GGUF
    says its own when this is unset: :func:`sweepbench.models.gguf_size.model_size_b`)."""
    route: Route | None = None
    """OpenRouter models: which of its hosts answer the calls (:mod:`sweepbench.models.routes`;
    set by :func:`sweepbench.models.registry.routed`); None: no route chosen."""

    @property
    def id(self) -> str:
        """The ``provider/name`` id."""
        return f"{self.provider}/{self.name}"

    @property
    def effort_capable(self) -> bool:
        """Whether the model accepts an effort setting at all."""
        return bool(self.effort_levels)

    def supported_efforts(self) -> list[str]:
        """``["none"]`` for models without effort, else "none" plus the accepted levels."""
        return ["none", *self.effort_levels]

    def resolve_effort(self, requested: str | None, *, strict: bool = True) -> str | None:
        """The effort to send, or None to send nothing.

        Empty → the model's default. "none" → nothing. A level the model rejects raises a
        UserError when ``strict``, else is ignored (nothing sent)."""
        if requested is None or requested == "":
            return self.default_effort
        level = requested.strip().lower()
        if level not in EFFORT_LEVELS:
            raise UserError(f"unknown effort {requested!r}; levels are {', '.join(EFFORT_LEVELS)}")
        if level == "none":
            return None
        if not self.effort_capable:
            if strict:
                raise UserError(f"{self.id} does not accept an effort setting")
            return None
        if level not in self.effort_levels:
            if strict:
                raise UserError(
                    f"{self.id} does not accept effort {level!r}; "
                    f"it accepts {', '.join(self.supported_efforts())}"
                )
            return None
        return level


def _info_from_table(provider: str, name: str, spec: dict[str, Any]) -> ModelInfo:
    def dec(key: str) -> Decimal | None:
        value = spec.get(key)
        return None if value is None else Decimal(str(value))

    gguf = spec.get("gguf_path")
    info = ModelInfo(
        provider=provider,
        name=name,
        label=str(spec.get("label", name)),
        effort_levels=tuple(str(level) for level in spec.get("effort_levels", ())),
        default_effort=spec.get("default_effort"),
        default_max_tokens=int(spec.get("default_max_tokens", 4096)),
        max_output_tokens=spec.get("max_output_tokens"),
        context_window=spec.get("context_window"),
        price_in=dec("price_in"),
        price_out=dec("price_out"),
        thinking=str(spec.get("thinking", "adaptive")),
        gguf_path=Path(gguf).expanduser() if gguf else None,
        gguf_package=spec.get("gguf_package"),
        gguf_file=spec.get("gguf_file"),
        size_b=_size_b(provider, name, spec.get("size_b")),
    )
    return with_local_limits(info) if provider == "local" else info


def _size_b(provider: str, name: str, value: Any) -> float | None:
    """A catalogue ``size_b``: a positive number of billions, or None when unset."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 < value < float("inf")
    ):
        raise UserError(
            f"[{provider}.{name}] size_b must be a positive number of billions of parameters, "
            f"got {value!r}"
        )
    return float(value)


def local_context_cap() -> int:
    """The context the embedded model allocates at most: ``SWEEPBENCH_LOCAL_CTX``, else 4096.
    A value that is not a whole number of at least 64 is warned about and 4096 used, for the
    listing and the loaded model alike."""
    return LOCAL_CTX.value()


def with_local_limits(info: ModelInfo) -> ModelInfo:
    """A local model's limits as loaded: the context window capped at
    :func:`local_context_cap`, and no more output (or default output) than that window."""
    cap = local_context_cap()
    window = min(info.context_window or cap, cap)
    output = min(info.max_output_tokens or window, window)
    return replace(
        info,
        context_window=window,
        max_output_tokens=output,
        default_max_tokens=min(info.default_max_tokens, output),
    )


MODEL_SETTINGS = frozenset({
    "label", "effort_levels", "default_effort", "default_max_tokens", "max_output_tokens",
    "context_window", "price_in", "price_out", "thinking", "gguf_path", "gguf_package",
    "gguf_file", "size_b",
})  # fmt: skip
"""What a model's table may set (``_info_from_table`` reads exactly these)."""
MODELS_SCHEMA: Schema = {"*": {"*": MODEL_SETTINGS}}
"""A catalogue file: ``[provider.model]`` tables of :data:`MODEL_SETTINGS`; a misspelt price
(``price_input``) is refused, never a model left free."""


def _read_tables(data: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for provider, models in data.items():
        if not isinstance(models, dict):
            raise UserError(f"{where}: [{provider}] must be a table of models")
        for name, spec in models.items():
            if not isinstance(spec, dict):
                raise UserError(f"{where}: [{provider}.{name}] must be a table")
            out[f"{provider}/{name}"] = dict(spec)
    return out


@cache
def _builtin_tables() -> dict[str, dict[str, Any]]:
    text = resources.files("sweepbench.models").joinpath("known_models.toml").read_text("utf-8")
    data = tomllib.loads(text)
    refuse_unknown_keys(data, MODELS_SCHEMA, text, "known_models.toml")
    return _read_tables(data, "known_models.toml")


def models_path() -> Path:
    """The operator's catalogue file: ``models.toml`` in the home folder (it may not exist)."""
    return home() / "models.toml"


_NO_TABLES: dict[str, dict[str, Any]] = {}


def operator_tables() -> dict[str, dict[str, Any]]:
    """The operator's ``models.toml`` by model id (``{}`` without one), parsed once per
    version of the file (:func:`sweepbench.settings.read_toml_file`). Not to be changed."""
    path = models_path()
    if not path.is_file():
        return _NO_TABLES
    tables: dict[str, dict[str, Any]] = read_toml_file(
        path, str(path), MODELS_SCHEMA, lambda data: _read_tables(data, str(path)), kind="models"
    )
    return tables


_KNOWN: list[tuple[object, str | None, dict[str, ModelInfo]]] = []
"""The last catalogue built: from which operator tables, under which ``SWEEPBENCH_LOCAL_CTX``."""


def known_models() -> dict[str, ModelInfo]:
    """Every catalogued model by id: the built-in table with the operator's file on top. Built
    again only when ``models.toml`` or ``SWEEPBENCH_LOCAL_CTX`` (the local models' limits)
    changes."""
    operator = operator_tables()
    context = LOCAL_CTX.text()
    last = _KNOWN[-1] if _KNOWN else None
    if last is not None and last[0] is operator and last[1] == context:
        return dict(last[2])
    tables = {k: dict(v) for k, v in _builtin_tables().items()}
    for model_id, spec in operator.items():
        tables.setdefault(model_id, {}).update(spec)
    result = {}
    for model_id, spec in tables.items():
        provider, name = model_id.split("/", 1)
        result[model_id] = _info_from_table(provider, name, spec)
    _KNOWN[:] = [(operator, context, result)]
    return dict(result)


def lookup(provider: str, name: str) -> ModelInfo | None:
    """The catalogue entry for ``provider/name``, or None."""
    return known_models().get(f"{provider}/{name}")


def info_from_table(provider: str, name: str, spec: dict[str, Any]) -> ModelInfo:
    """Build a ModelInfo from a table of the catalogue's shape (used for discovered models)."""
    return _info_from_table(provider, name, spec)
