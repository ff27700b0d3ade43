"""``provider/model`` ids → adapters, and which providers are usable now."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

from sweepbench.errors import UserError
from sweepbench.models.base import Model
from sweepbench.models.catalog import ModelInfo, info_from_table, known_models, lookup
from sweepbench.models.providers import PROVIDERS
from sweepbench.models.providers import provider as provider_entry
from sweepbench.models.routes import RoutePolicy
from sweepbench.settings import EndpointConfig, key_hint, load_config, provider_key
from sweepbench.variables import base_url_variable


@dataclass(frozen=True)
class ProviderStatus:
    """Whether a provider can be called now, and why not."""

    name: str
    available: bool
    reason: str = ""


def endpoints() -> dict[str, EndpointConfig]:
    """Configured OpenAI-compatible endpoints by provider name (env ``compatible`` included)."""
    from sweepbench.models.compatible import env_endpoint

    found = dict(load_config().endpoints)
    env = env_endpoint()
    if env is not None:
        found["compatible"] = env
    return found


def uses_operator_key(provider: str) -> bool:
    """Whether a call to ``provider`` is made with a key the operator holds: every keyed
    provider (its key is what pays), and a configured endpoint that is sent a key unless its
    config marks it ``free = true``. Such calls are never *free*, whatever their price: the
    web app gates them like paid ones (the ledger still counts a $0 call against no ceiling)."""
    entry = PROVIDERS.get(provider)
    if entry is not None and entry.needs != "endpoint":
        return entry.keyed
    from sweepbench.models.compatible import marked_free

    endpoint = endpoints().get(provider)
    return endpoint is not None and bool(endpoint.api_key) and not marked_free(endpoint)


def providers() -> list[str]:
    """Every provider name an id may start with."""
    return [*PROVIDERS, *(n for n in endpoints() if n not in PROVIDERS)]


def provider_status(provider: str) -> ProviderStatus:
    """Usable now? What the table says it needs: a key, the llama.cpp bindings, a configured
    endpoint, or nothing; a name outside the table must be a configured endpoint."""
    entry = PROVIDERS.get(provider)
    needs = "endpoint" if entry is None else entry.needs
    if needs == "key":
        if provider_key(provider):
            return ProviderStatus(provider, True)
        return ProviderStatus(provider, False, f"no key ({key_hint(provider)})")
    if needs == "nothing":
        return ProviderStatus(provider, True)
    if needs == "llama.cpp":
        from sweepbench.models.local import llama_available

        problem = llama_available()
        return ProviderStatus(provider, problem is None, problem or "")
    if provider in endpoints():
        return ProviderStatus(provider, True)
    if entry is not None:
        variable = base_url_variable(provider)
        hint = f"set {variable.name}" if variable else "add [endpoints.NAME] to the config file"
        return ProviderStatus(provider, False, hint)
    return ProviderStatus(provider, False, "unknown provider")


def split_id(model_id: str) -> tuple[str, str]:
    """``"openrouter/qwen/qwen3"`` → ``("openrouter", "qwen/qwen3")``; bad ids are a UserError."""
    provider, sep, name = model_id.strip().partition("/")
    if not sep or not name or not provider:
        raise UserError(
            f"model ids look like provider/model, got {model_id!r}; "
            f"providers: {', '.join(providers())}"
        )
    return provider, name


def model_info(model_id: str) -> ModelInfo:
    """Catalogue facts for an id; unknown models of a known provider get cautious defaults."""
    provider, name = split_id(model_id)
    if provider not in providers():
        raise UserError(f"unknown provider {provider!r}; providers: {', '.join(providers())}")
    if provider == "scripted":
        from sweepbench.models.scripted import parse_options

        base, _ = parse_options(name)
        info = lookup(provider, base)
        if info is None:
            raise UserError(f"unknown scripted model {base!r}; try scripted/echo or scripted/lorem")
        return replace(info, name=name)
    info = lookup(provider, name)
    if info is not None:
        return info
    if provider == "local":
        config_path = load_config().local_models.get(name)
        if config_path is None:
            local = [m.id for m in known_models().values() if m.provider == "local"]
            raise UserError(
                f"unknown local model {name!r}; known: {', '.join(local)} "
                "(register a GGUF file under [local_models] in the config file)"
            )
        return info_from_table(
            "local", name, {"label": config_path.name, "gguf_path": str(config_path)}
        )
    if provider == "openrouter":
        from sweepbench.models.openrouter import catalogue

        entry = catalogue().get(name)  # fetched when missing or stale (once a process)
        if entry is not None:
            return entry.info()
    return replace(info_from_table(provider, name, {}), known=False)


def routed(info: ModelInfo, policy: RoutePolicy) -> ModelInfo:
    """``info`` with the route its calls take under ``policy`` (OpenRouter models: their hosts
    are read, :func:`sweepbench.models.openrouter.route`); any other model as it is. A route
    that could not be read is there too, marked unknown (``route.known``)."""
    if info.provider != "openrouter":
        return info
    from sweepbench.models.openrouter import route

    return replace(info, route=route(info.name, policy))


def route_problem(info: ModelInfo) -> str | None:
    """Why a model cannot be called on the route it was given (its hosts could not be read
    under a policy that needs them); None when it can."""
    if info.route is None or info.route.known:
        return None
    return (
        f"{info.id}: its hosts could not be read from OpenRouter ({info.route.why}), and "
        f"--route {info.route.policy} needs them: try again, or give --route none to let "
        "OpenRouter choose the host"
    )


def resolve(model_id: str, *, route: RoutePolicy | None = None) -> Model:
    """The adapter for an id, its calls routed by ``route`` (None: no route; see
    :func:`routed`). Raises UserError for unknown providers or models, and for a model whose
    route could not be chosen."""
    info = model_info(model_id)
    if route is not None:
        info = routed(info, route)
        problem = route_problem(info)
        if problem is not None:
            raise UserError(problem)
    module, _, name = provider_entry(info.provider).adapter.partition(":")
    adapter: type[Model] = getattr(importlib.import_module(module), name)
    return adapter.for_info(info)


def listed_models(*, refresh: bool = False) -> list[ModelInfo]:
    """What ``sweepbench models`` shows: the catalogue, configured local files and endpoint
    models, and OpenRouter's catalogue (fetched when missing or stale; ``refresh`` fetches it
    now)."""
    from sweepbench.models.openrouter import catalogue

    infos = list(known_models().values())
    seen = {info.id for info in infos}
    config = load_config()
    for name, path in config.local_models.items():
        if f"local/{name}" not in seen:
            infos.append(
                info_from_table("local", name, {"label": path.name, "gguf_path": str(path)})
            )
    for endpoint in endpoints().values():
        for name in endpoint.models:
            if f"{endpoint.name}/{name}" not in seen:
                infos.append(info_from_table(endpoint.name, name, {}))
    for entry in catalogue(refresh=refresh).values():
        infos.append(entry.info())
    return infos
