"""Any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, LM Studio…).

Two ways to name one:

* ``compatible/<model>`` with ``SWEEPBENCH_COMPATIBLE_BASE_URL`` (and optionally
  ``SWEEPBENCH_COMPATIBLE_API_KEY``) in the environment;
* a named endpoint in the config file, used as its own provider (``ollama/llama3.2``)::

      [endpoints.ollama]
      base_url = "http://127.0.0.1:11434/v1"
      api_key_env = "OLLAMA_KEY"      # optional
      models = ["llama3.2"]           # optional: listed by `sweepbench models`

These servers speak Chat Completions; they run on the user's own hardware, so they are priced
at zero unless the operator sets a price, and do not take an effort setting unless declared.
"""

from __future__ import annotations

import os

from sweepbench.errors import UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.openai import ChatCompletionsModel
from sweepbench.settings import EndpointConfig, base_url_override


def env_endpoint() -> EndpointConfig | None:
    """The ``compatible`` endpoint from the environment, if configured."""
    url = base_url_override("compatible")
    if not url:
        return None
    key = os.environ.get("SWEEPBENCH_COMPATIBLE_API_KEY") or None
    return EndpointConfig(name="compatible", base_url=url, api_key=key)


class CompatibleModel(ChatCompletionsModel):
    """A model served by an OpenAI-compatible endpoint."""

    key_required = False

    def __init__(self, info: ModelInfo, endpoint: EndpointConfig | None) -> None:
        super().__init__(info)
        self.endpoint = endpoint
        self.provider = info.provider

    def base_url(self) -> str | None:
        if self.endpoint is None:
            raise UserError(
                "no compatible endpoint: set SWEEPBENCH_COMPATIBLE_BASE_URL "
                "(e.g. http://127.0.0.1:8000/v1) or add [endpoints.NAME] to the config file"
            )
        return self.endpoint.base_url

    def api_key(self) -> str | None:
        return self.endpoint.api_key if self.endpoint else None
