"""Protocol-accurate fake HTTP servers for the LLM providers sweepbench talks to.

Each server is a context manager on ``127.0.0.1:<random port>``; see :mod:`.base` for the
scripting API they share and each provider module for its wire format.
"""

from .anthropic import AnthropicServer
from .base import FakeServer, HttpError, RecordedRequest, Reply, Sse, StreamFailure
from .openai import OpenAIServer
from .openrouter import OpenRouterServer, openrouter_model

__all__ = [
    "AnthropicServer",
    "FakeServer",
    "HttpError",
    "OpenAIServer",
    "OpenRouterServer",
    "RecordedRequest",
    "Reply",
    "Sse",
    "StreamFailure",
    "openrouter_model",
]
