"""The provider table: every fact the rest of sweepbench decides by a provider's name.

Code outside :mod:`sweepbench.models` asks this table (``provider(name).pricing``,
:func:`keyed`, :func:`default_models`…) instead of comparing names. Named endpoints from the
config file (``[endpoints.NAME]``) are providers too, though not in the table:
:func:`provider` answers for them with own-server pricing and no key.

Importing this module registers each keyed provider's variables with
:mod:`sweepbench.settings`, the base layer, which names no provider itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sweepbench.settings import register_key_variables

Pricing = Literal["genai-prices", "openrouter-catalogue", "free", "own-server"]
"""Where a provider's prices come from: the ``genai-prices`` snapshot, OpenRouter's catalogue,
nothing to pay (with :attr:`Provider.free_source` as the source), or the user's own server."""

Needs = Literal["key", "llama.cpp", "endpoint", "nothing"]
"""What a provider needs before it can be called: a key, the llama.cpp bindings, a configured
endpoint (a base URL), or nothing."""


@dataclass(frozen=True)
class Provider:
    """One provider and what the callers need to know about it."""

    name: str
    """The first part of a ``provider/model`` id."""
    label: str
    """The name shown to people ("Claude", "OpenAI")."""
    needs: Needs = "nothing"
    key_variables: tuple[str, ...] = ()
    """Environment variables that hold its key, first match wins (keyed providers only)."""
    vendor: str = ""
    """Who issues its keys, as in "no Anthropic key" (the label when empty)."""
    pricing: Pricing = "own-server"
    free_source: str = ""
    """The price source shown for ``free`` pricing ("local model: free")."""
    listed_without_key: bool = True
    """Whether the pickers list its catalogue when no key is set (OpenRouter's is too long)."""
    schema_grammar: bool = False
    """Whether it takes a JSON schema as a grammar on this machine (llama.cpp)."""
    default_model: str | None = None
    """The model offered by default when its key is set (the table's order decides)."""
    reports_credit: bool = False
    """Whether its key can be asked for the credit left (``sweepbench keys``)."""
    one_at_a_time: bool = False
    """Whether its calls run one at a time on this machine (llama.cpp's one generation thread
    per loaded model): a sweep queues them, and its estimate adds their times up."""
    paced_by_options: bool = False
    """Whether a call's time follows from its model id's own options (the scripted model's
    ``ttft`` and ``tps``), so an estimate needs no history of past calls."""
    adapter: str = "sweepbench.models.compatible:CompatibleModel"
    """The adapter class that speaks its wire API (``module:Class``, imported when a model of
    it is first resolved); a configured endpoint is an OpenAI-compatible server."""

    def __post_init__(self) -> None:
        if (self.needs == "key") != bool(self.key_variables):
            raise ValueError(f"{self.name}: key variables go with needs='key'")
        if (self.pricing == "free") != bool(self.free_source):
            raise ValueError(f"{self.name}: a free_source goes with pricing='free'")

    @property
    def keyed(self) -> bool:
        """Whether it needs a key (and spends money)."""
        return self.needs == "key"

    @property
    def key_owner(self) -> str:
        """Who issues its keys, for messages."""
        return self.vendor or self.label


_TABLE = (
    Provider(
        "anthropic",
        "Claude",
        needs="key",
        key_variables=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        vendor="Anthropic",
        pricing="genai-prices",
        default_model="anthropic/claude-opus-5",
        adapter="sweepbench.models.anthropic:AnthropicModel",
    ),
    Provider(
        "openai",
        "OpenAI",
        needs="key",
        key_variables=("OPENAI_API_KEY", "CHATGPT_API_KEY"),
        pricing="genai-prices",
        default_model="openai/gpt-5.6-luna",
        adapter="sweepbench.models.openai:OpenAIModel",
    ),
    Provider(
        "openrouter",
        "OpenRouter",
        needs="key",
        key_variables=("OPENROUTER_API_KEY",),
        pricing="openrouter-catalogue",
        listed_without_key=False,
        reports_credit=True,
        adapter="sweepbench.models.openrouter:OpenRouterModel",
    ),
    Provider("compatible", "compatible", needs="endpoint", pricing="own-server"),
    Provider(
        "local",
        "local",
        needs="llama.cpp",
        pricing="free",
        free_source="local model: free",
        schema_grammar=True,
        one_at_a_time=True,
        adapter="sweepbench.models.local:LocalModel",
    ),
    Provider(
        "scripted",
        "scripted",
        pricing="free",
        free_source="scripted model: free",
        paced_by_options=True,
        adapter="sweepbench.models.scripted:ScriptedModel",
    ),
)

#: Every built-in provider by name, in listing order.
PROVIDERS: dict[str, Provider] = {entry.name: entry for entry in _TABLE}

for _entry in _TABLE:
    if _entry.keyed:
        register_key_variables(_entry.name, _entry.key_variables)


def provider(name: str) -> Provider:
    """The table's entry for ``name``; any other name is a configured endpoint (own-server
    pricing, no key)."""
    found = PROVIDERS.get(name)
    if found is not None:
        return found
    return Provider(name, name, needs="endpoint", pricing="own-server")


def label(name: str) -> str:
    """A provider's name for people."""
    return provider(name).label


def needs_key(name: str) -> bool:
    """Whether calling ``name`` needs a key."""
    return provider(name).keyed


def keyed() -> list[Provider]:
    """The providers that need a key, in table order."""
    return [entry for entry in PROVIDERS.values() if entry.keyed]


def free() -> list[Provider]:
    """The providers whose models cost nothing to call, in table order."""
    return [entry for entry in PROVIDERS.values() if entry.pricing == "free"]


def default_models() -> list[tuple[str, str]]:
    """``(provider, model id)`` for the providers that offer a model by default, in the order
    they are tried (the first whose key is set wins)."""
    return [
        (entry.name, entry.default_model)
        for entry in PROVIDERS.values()
        if entry.default_model is not None
    ]


def grammar_providers() -> tuple[str, ...]:
    """The providers that take a JSON schema as a local grammar."""
    return tuple(entry.name for entry in PROVIDERS.values() if entry.schema_grammar)


def credit_reporters() -> list[Provider]:
    """The providers whose keys report the credit left."""
    return [entry for entry in PROVIDERS.values() if entry.reports_credit]
