"""A fake of OpenRouter (``openai.AsyncOpenAI(base_url=srv.url + "/api/v1")``).

Routes: ``POST /api/v1/chat/completions``, ``GET /api/v1/models`` (and
``?output_modalities=decisions``), ``GET /api/v1/models/{author}/{slug}/endpoints`` (the
model's hosts: ``endpoints``, by model id; a listed model not in it has one host, of unstated
precision, at its listed price; an unlisted one is a 404), ``GET /api/v1/key``.

Chat streams are the OpenAI ones (see :mod:`.openai`) with OpenRouter's differences:

* ``keepalives`` SSE comments (``: OPENROUTER PROCESSING``) come first;
* chunk ids are ``gen-…`` and every chunk carries ``provider``;
* reasoning arrives as ``delta.reasoning`` (plus ``delta.reasoning_details``
  ``[{"type": "reasoning.text", "text", "format", "index"}]``);
* the final ``choices: []`` chunk's usage also has ``cost`` (float USD: ``Reply.cost``, or
  priced from the model list: uncached input x prompt + cached x input_cache_read + output x
  completion), ``is_byok`` and ``cost_details``; it is sent on every stream (OpenRouter always
  reports usage) unless ``usage_always=False``, then only with ``stream_options.include_usage``;
* a :class:`StreamFailure` is a chunk with ``error {code (int, default 502), message[,
  metadata]}`` and ``choices[0].finish_reason "error"`` (the SDK raises ``openai.APIError``).

HTTP errors: ``{"error": {"code": <int status>, "message"[, "metadata"]}}`` (default messages in
:attr:`OpenRouterServer.ERRORS`, e.g. 402 insufficient credits). ``GET /api/v1/key`` answers
``{"data": key_info}`` when ``Authorization: Bearer <api_key>`` matches, else 401.
``models_fetches`` / ``key_fetches`` count the look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any, ClassVar

from .base import Exchange, HttpError, RecordedRequest, Reply, Sse, StreamFailure, new_id
from .openai import OpenAIServer


def openrouter_model(
    model_id: str,
    *,
    name: str | None = None,
    prompt: str = "0.000001",
    completion: str = "0.000004",
    input_cache_read: str = "0.00000025",
    request: str = "0",
    image: str = "0",
    context_length: int = 128_000,
    max_completion_tokens: int | None = 16_384,
    reasoning: bool = False,
    is_moderated: bool = False,
    created: int = 1767225600,
) -> dict[str, Any]:
    """One ``/api/v1/models`` entry; prices are decimal strings in USD per token."""
    params = ["max_tokens", "temperature", "top_p", "stop", "seed", "response_format"]
    params += ["structured_outputs"] + (["reasoning", "include_reasoning"] if reasoning else [])
    return {
        "id": model_id,
        "canonical_slug": model_id,
        "name": name or model_id,
        "created": created,
        "description": f"Fake {model_id}.",
        "context_length": context_length,
        "architecture": {
            "modality": "text->text",
            "input_modalities": ["text"],
            "output_modalities": ["text"],
            "tokenizer": "Other",
            "instruct_type": None,
        },
        "pricing": {
            "prompt": prompt,
            "completion": completion,
            "request": request,
            "image": image,
            "web_search": "0",
            "internal_reasoning": "0",
            "input_cache_read": input_cache_read,
        },
        "top_provider": {
            "context_length": context_length,
            "max_completion_tokens": max_completion_tokens,
            "is_moderated": is_moderated,
        },
        "per_request_limits": None,
        "supported_parameters": params,
    }


def openrouter_endpoint(
    provider_name: str,
    *,
    quantization: str | None = "unknown",
    prompt: str = "0.000001",
    completion: str = "0.000004",
    tag: str | None = None,
) -> dict[str, Any]:
    """One host of a model, as ``/api/v1/models/{author}/{slug}/endpoints`` lists it (prices
    in USD per token)."""
    slug = provider_name.lower().replace(" ", "-")
    return {
        "name": f"{provider_name} | model",
        "model_name": "model",
        "context_length": 128_000,
        "pricing": {"prompt": prompt, "completion": completion, "request": "0", "image": "0"},
        "provider_name": provider_name,
        "tag": tag or (f"{slug}/{quantization}" if quantization not in (None, "unknown") else slug),
        "quantization": quantization,
        "max_completion_tokens": 16_384,
        "max_prompt_tokens": None,
        "supported_parameters": ["max_tokens", "temperature"],
        "status": 0,
        "uptime_last_30m": 99.5,
        "supports_implicit_caching": False,
    }


DEFAULT_MODELS: tuple[dict[str, Any], ...] = (
    openrouter_model(
        "openai/gpt-5.6-luna",
        name="OpenAI: GPT-5.6 Luna",
        prompt="0.00000025",
        completion="0.000002",
        input_cache_read="0.000000025",
        context_length=400_000,
        max_completion_tokens=128_000,
        reasoning=True,
        is_moderated=True,
    ),
    openrouter_model(
        "mistralai/mistral-small-3.2",
        name="Mistral: Mistral Small 3.2",
        prompt="0.0000001",
        completion="0.0000003",
        input_cache_read="0",
        context_length=131_072,
        max_completion_tokens=None,
    ),
)

DEFAULT_KEY_INFO: dict[str, Any] = {
    "label": "sk-or-v1-fak...ake",
    "limit": 10.0,
    "limit_remaining": 9.75,
    "limit_reset": None,
    "include_byok_in_limit": False,
    "usage": 0.25,
    "usage_daily": 0.05,
    "usage_weekly": 0.1,
    "usage_monthly": 0.25,
    "byok_usage": 0.0,
    "is_free_tier": False,
    "is_provisioning_key": False,
    "rate_limit": {"requests": -1, "interval": "10s"},
}


class OpenRouterServer(OpenAIServer):
    """Fake ``openrouter.ai``.

    ``OpenRouterServer(models=None, api_key="sk-or-v1-fake", key_info=None,
    provider_name="OpenAI", keepalives=2, usage_always=True, enforce_key=False,
    default_reply=None, decision_models=())``: ``models`` is the ``/api/v1/models`` data
    (build entries with :func:`openrouter_model`; default :data:`DEFAULT_MODELS`, the first supports
    "reasoning"); ``api_key`` is the one key ``/api/v1/key`` accepts (chat and models check it
    too only with ``enforce_key``); ``key_info`` overrides fields of :data:`DEFAULT_KEY_INFO`;
    ``decision_models`` is what ``/api/v1/models?output_modalities=decisions`` lists (both
    listings count in ``models_fetches``); ``endpoints`` the hosts of models by id (build them
    with :func:`openrouter_endpoint`; ``endpoints_fetches`` counts the look-ups by model).
    """

    ERRORS: ClassVar[dict[int, tuple[str | None, str | int | None, str]]] = {
        400: (None, None, "Invalid request."),
        401: (None, None, "User not found."),
        402: (
            None,
            None,
            "Insufficient credits. Add more using https://openrouter.ai/settings/credits",
        ),
        403: (None, None, "Input was flagged by moderation."),
        404: (None, None, "No endpoints found for this model."),
        408: (None, None, "Request timed out."),
        429: (None, None, "Rate limit exceeded."),
        500: (None, None, "Internal Server Error"),
        502: (None, None, "Provider returned error"),
        503: (None, None, "No available model provider that meets your routing requirements."),
    }
    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/api/v1/chat/completions"): "chat",
        ("GET", "/api/v1/models"): "models",
        ("GET", "/api/v1/key"): "key",
    }

    def __init__(
        self,
        *,
        models: Sequence[dict[str, Any]] | None = None,
        api_key: str = "sk-or-v1-fake",
        key_info: dict[str, Any] | None = None,
        provider_name: str = "OpenAI",
        keepalives: int = 2,
        usage_always: bool = True,
        enforce_key: bool = False,
        default_reply: Reply | None = None,
        decision_models: Sequence[dict[str, Any]] = (),
        endpoints: dict[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        super().__init__(
            models=list(models if models is not None else DEFAULT_MODELS),
            api_key=api_key,
            enforce_key=enforce_key,
            default_reply=default_reply,
        )
        self.key_info = {**DEFAULT_KEY_INFO, **(key_info or {})}
        self.provider_name = provider_name
        self.keepalives = keepalives
        self.usage_always = usage_always
        self.decision_models = list(decision_models)
        self.endpoints = dict(endpoints or {})
        self.endpoints_fetches: dict[str, int] = {}

    # hooks -----------------------------------------------------------------------------------

    def route(self, method: str, path: str) -> str | None:
        prefix, suffix = "/api/v1/models/", "/endpoints"
        if method == "GET" and path.startswith(prefix) and path.endswith(suffix):
            return "model_endpoints"
        return super().route(method, path)

    def response_headers(self) -> dict[str, str]:
        return {"x-generation-id": new_id("gen-")}

    def error_body(self, err: HttpError) -> dict[str, Any]:
        _, _, message = self.error_defaults(err)
        error: dict[str, Any] = {
            "code": err.code if isinstance(err.code, int) else err.status,
            "message": err.message or message,
        }
        if err.metadata is not None:
            error["metadata"] = err.metadata
        return {"error": error}

    def models(self, ex: Exchange) -> None:
        if ex.request.query.get("output_modalities") == "decisions":  # the decision models
            ex.request.outcome = "completed"
            ex.send_json(200, {"data": self.decision_models}, self.response_headers())
            return
        super().models(ex)

    def models_body(self) -> dict[str, Any]:
        return {"data": self.models_list}

    def include_usage(self, req: RecordedRequest) -> bool:
        return self.usage_always or super().include_usage(req)

    def chunk_extra(self) -> dict[str, Any]:
        return {"id": new_id("gen-"), "provider": self.provider_name, "system_fingerprint": None}

    def reasoning_delta(self, piece: str) -> dict[str, Any]:
        detail = {"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0}
        return {"reasoning": piece, "reasoning_details": [detail]}

    def chat_usage(self, reply: Reply, model: str) -> dict[str, Any]:
        usage = super().chat_usage(reply, model)
        usage["cost"] = reply.cost if reply.cost is not None else self.price(reply, model)
        usage["is_byok"] = reply.is_byok
        usage["cost_details"] = {"upstream_inference_cost": None}
        return usage

    def chat_preamble(self) -> list[Sse]:
        return [Sse(comment="OPENROUTER PROCESSING") for _ in range(self.keepalives)]

    def chat_failure(self, failure: StreamFailure, base: dict[str, Any]) -> list[Sse]:
        error: dict[str, Any] = {"code": failure.code or 502, "message": failure.message}
        if failure.metadata is not None:
            error["metadata"] = failure.metadata
        choice = {"index": 0, "delta": {"content": ""}, "finish_reason": "error"}
        return [Sse({**base, "error": error, "choices": [choice]})]

    def price(self, reply: Reply, model: str) -> float:
        """The cost OpenRouter would report for ``reply`` on ``model`` (0.0 if not listed)."""
        entry = next((m for m in self.models_list if m.get("id") == model), None)
        if entry is None:
            return 0.0
        pricing = {k: Decimal(str(v)) for k, v in entry.get("pricing", {}).items()}
        cached = reply.cache_read_tokens
        cost = (
            (reply.input_tokens - cached) * pricing.get("prompt", Decimal(0))
            + cached * pricing.get("input_cache_read", pricing.get("prompt", Decimal(0)))
            + reply.output_total * pricing.get("completion", Decimal(0))
            + pricing.get("request", Decimal(0))
        )
        return float(cost)

    # routes ----------------------------------------------------------------------------------

    def model_endpoints(self, ex: Exchange) -> None:
        model = ex.request.path[len("/api/v1/models/") : -len("/endpoints")]
        with self._lock:
            self.endpoints_fetches[model] = self.endpoints_fetches.get(model, 0) + 1
        script = self.next_script("endpoints")
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        hosts = self.endpoints.get(model)
        if hosts is None:
            entry = next((m for m in self.models_list if m.get("id") == model), None)
            if entry is None:
                return self.send_error(ex, HttpError(404))
            pricing = entry.get("pricing", {})
            hosts = [
                openrouter_endpoint(
                    self.provider_name, prompt=pricing.get("prompt", "0"),
                    completion=pricing.get("completion", "0"),
                )
            ]  # fmt: skip
        ex.request.outcome = "completed"
        body = {"data": {"id": model, "name": model, "endpoints": hosts}}
        ex.send_json(200, body, self.response_headers())

    def key(self, ex: Exchange) -> None:
        script = self.next_script("key")
        if isinstance(script, HttpError):
            return self.send_error(ex, script)
        if self.presented_key(ex.request) != self.api_key:
            return self.send_error(ex, HttpError(401))
        ex.request.outcome = "completed"
        ex.send_json(200, {"data": dict(self.key_info)}, self.response_headers())
