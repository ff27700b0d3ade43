"""Any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, LM Studio…).

Two ways to name one:

* ``compatible/<model>`` with ``SWEEPBENCH_COMPATIBLE_BASE_URL`` (and optionally
  ``SWEEPBENCH_COMPATIBLE_API_KEY``) in the environment;
* a named endpoint in the config file, used as its own provider (``ollama/llama3.2``)::

      [endpoints.ollama]
      base_url = "http://127.0.0.1:11434/v1"
      api_key_env = "OLLAMA_KEY"      # optional
      models = ["llama3.2"]           # optional: listed by `sweepbench models`
      free = true                     # optional: see below

These servers speak Chat Completions; they run on the user's own hardware, so they are priced
at zero unless the operator sets a price, and do not take an effort setting unless declared.
One that is sent a key (``api_key``, ``api_key_env``, ``SWEEPBENCH_COMPATIBLE_API_KEY``) may be
a paid service behind a proxy, so its calls are not *free* (:attr:`Price.free
<sweepbench.money.prices.Price.free>`): the web app gates them like a paid provider's — unless
the operator marks the endpoint ``free = true`` (``SWEEPBENCH_COMPATIBLE_FREE=1`` for the
environment's endpoint).
"""

from __future__ import annotations

from sweepbench.errors import UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.openai import ChatCompletionsModel
from sweepbench.settings import EndpointConfig, base_url_override, config_path, load_config
from sweepbench.variables import COMPATIBLE_API_KEY, COMPATIBLE_FREE

FREE_VARIABLE = COMPATIBLE_FREE.name
"""Set to 1 / true / yes: the environment's endpoint costs nothing even though it is sent a key."""


def env_endpoint() -> EndpointConfig | None:
    """The ``compatible`` endpoint from the environment, if configured."""
    url = base_url_override("compatible")
    if not url:
        return None
    key = COMPATIBLE_API_KEY.value()
    return EndpointConfig(name="compatible", base_url=url, api_key=key)


def marked_free(endpoint: EndpointConfig) -> bool:
    """Whether the operator says ``endpoint`` costs nothing though it is sent a key:
    ``free = true`` in its ``[endpoints.NAME]`` section, or ``SWEEPBENCH_COMPATIBLE_FREE`` for
    the environment's endpoint. A ``free`` that is not true or false is a UserError."""
    if endpoint.name == "compatible" and env_endpoint() is not None:
        return COMPATIBLE_FREE.value()
    sections = load_config().raw.get("endpoints", {})
    section = sections.get(endpoint.name, {}) if isinstance(sections, dict) else {}
    value = section.get("free", False) if isinstance(section, dict) else False
    if not isinstance(value, bool):
        raise UserError(f"{config_path()}: [endpoints.{endpoint.name}] free must be true or false")
    return value


class CompatibleModel(ChatCompletionsModel):
    """A model served by an OpenAI-compatible endpoint."""

    key_required = False
    chat_template_thinking = True

    def __init__(self, info: ModelInfo, endpoint: EndpointConfig | None) -> None:
        super().__init__(info)
        self.endpoint = endpoint
        self.provider = info.provider

    @classmethod
    def for_info(cls, info: ModelInfo) -> CompatibleModel:
        """The adapter with its configured server (none: calling it says how to add one)."""
        from sweepbench.models.registry import endpoints

        return cls(info, endpoints().get(info.provider))

    def base_url(self) -> str | None:
        if self.endpoint is None:
            raise UserError(
                "no compatible endpoint: set SWEEPBENCH_COMPATIBLE_BASE_URL "
                "(e.g. http://127.0.0.1:8000/v1) or add [endpoints.NAME] to the config file"
            )
        return self.endpoint.base_url

    def api_key(self) -> str | None:
        return self.endpoint.api_key if self.endpoint else None
