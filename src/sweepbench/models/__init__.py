"""The model layer: one adapter per wire API behind one async streaming interface."""

from sweepbench.models.base import (
    Event,
    Finish,
    GenerateSettings,
    Message,
    Model,
    ReasoningDelta,
    Request,
    Result,
    StopReason,
    TextDelta,
    Usage,
    UsageEvent,
    collect,
)
from sweepbench.models.catalog import EFFORT_LEVELS, ModelInfo, known_models
from sweepbench.models.providers import PROVIDERS, Provider, provider
from sweepbench.models.registry import listed_models, model_info, provider_status, resolve

__all__ = [
    "EFFORT_LEVELS",
    "PROVIDERS",
    "Event",
    "Finish",
    "GenerateSettings",
    "Message",
    "Model",
    "ModelInfo",
    "Provider",
    "ReasoningDelta",
    "Request",
    "Result",
    "StopReason",
    "TextDelta",
    "Usage",
    "UsageEvent",
    "collect",
    "known_models",
    "listed_models",
    "model_info",
    "provider",
    "provider_status",
    "resolve",
]
