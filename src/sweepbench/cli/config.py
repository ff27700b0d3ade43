"""``sweepbench config``: every setting in effect and where it came from (rendering only).

The settings are the ``SWEEPBENCH_*`` variables (:mod:`sweepbench.variables`), the provider
keys, and what ``config.toml`` and ``models.toml`` hold. A key or token is shown as set or
unset only, never its value; a password in a URL is masked; and every line is scrubbed of
every key the process knows besides.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from sweepbench.errors import UserError
from sweepbench.variables import CONFIG, DB, HOME, SHARED, VARIABLES, Reading, Variable


def register(app: typer.Typer) -> None:
    """Add the ``config`` command to ``app``."""
    app.command("config")(config)


@dataclass(frozen=True)
class Setting:
    """One setting as shown: its name, its value in effect, and where that came from."""

    setting: str
    value: str
    source: str
    """``environment``, ``default``, ``config.toml (PATH)`` or ``models.toml (PATH)``."""
    meaning: str = ""
    secret: bool = False
    problem: str | None = None
    """Why what was given is not in use (a value that cannot be read, a file that cannot)."""


def config(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """The settings in effect and where each came from (keys: set or unset).

    Every SWEEPBENCH_* variable (its value, or its default), the provider keys, and what
    config.toml and models.toml hold. Keys and tokens are shown as set or unset, never their
    values.
    """
    from sweepbench.settings import scrub

    settings = effective_settings()
    if as_json:
        document = {"settings": [asdict(s) for s in settings]}
        typer.echo(scrub(json.dumps(document, indent=2, ensure_ascii=False)))
        return
    table = Table()
    widest = max(len(s.setting) for s in settings)  # names whole while they fit in 30
    table.add_column("setting", overflow="fold", width=min(widest, 30))
    table.add_column("value", overflow="fold")
    table.add_column("from", overflow="fold")
    for s in settings:
        source = s.source if s.problem is None else f"{s.source}: {s.problem}"
        table.add_row(Text(s.setting), Text(scrub(s.value)), Text(scrub(source)))
    Console().print(table)


def effective_settings() -> list[Setting]:
    """Every setting in effect, in the order shown: the variables, the keys, the files."""
    from sweepbench import settings

    try:
        loaded: settings.Config | None = settings.load_config()
        config_problem = None
    except UserError as exc:  # shown, not raised: the rest is still worth seeing
        loaded, config_problem = None, str(exc)
    config_path = settings.config_path()
    in_config = f"config.toml ({config_path})"
    rows: list[Setting] = []
    for variable in VARIABLES.values():
        rows.append(_variable_row(variable, variable.reading(warn=False), settings))
    rows[[r.setting for r in rows].index(SHARED.name)] = _shared_row(settings, in_config)
    rows.extend(_key_rows(loaded, in_config))
    rows.extend(_file_rows(loaded, config_path, config_problem, in_config))
    return rows


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, Decimal):
        return f"{value:f}"
    return str(value)


def masked_url(url: str) -> str:
    """``url`` with the password of its ``user:password@`` part replaced by ``***``."""
    return re.sub(r"(://[^/@:]*:)[^/@]*@", r"\1***@", url)


def _variable_row(variable: Variable[Any], reading: Reading[Any], settings: Any) -> Setting:
    source = "environment" if reading.applied else "default"
    if variable.secret:
        value = "set" if reading.text is not None else "unset"
    elif reading.applied and reading.value is not None:
        value = _shown(reading.value)
    elif variable is CONFIG:
        value = str(settings.config_path())
    elif variable is DB:
        value = settings.database_url()
    elif variable is HOME:
        value = str(settings.home_folder())
    else:
        value = variable.shown_default
    if "://" in value:
        value = masked_url(value)
    return Setting(variable.name, value, source, variable.meaning, variable.secret, reading.problem)


def _shared_row(settings: Any, in_config: str) -> Setting:
    meaning = SHARED.meaning
    try:
        place = settings.shared_place()
    except UserError as exc:
        return Setting(SHARED.name, "unusable", "—", meaning, problem=str(exc))
    if place is None:
        return Setting(SHARED.name, "none", "default", meaning)
    source = "environment" if SHARED.is_set() else f"{in_config} [leaderboard] shared"
    return Setting(SHARED.name, masked_url(place), source, meaning)


def _key_rows(loaded: Any, in_config: str) -> list[Setting]:
    import sweepbench.models.providers  # noqa: F401  (registers the providers' key variables)
    from sweepbench.settings import KEY_VARIABLES, key_variable_set

    rows = []
    for provider, variables in KEY_VARIABLES.items():
        meaning = f"{provider}'s key ({' or '.join(variables)}, or [keys] in config.toml)"
        setting = f"{provider} key"
        held = key_variable_set(provider)
        if held is not None:
            rows.append(Setting(setting, "set", f"environment ({held})", meaning, True))
        elif loaded is not None and loaded.keys.get(provider):
            rows.append(Setting(setting, "set", f"{in_config} [keys]", meaning, True))
        else:
            rows.append(Setting(setting, "unset", "—", meaning, True))
    if loaded is not None:
        for provider in loaded.keys:
            if provider not in KEY_VARIABLES:
                rows.append(
                    Setting(f"[keys] {provider}", "set", in_config, "a key for this name", True)
                )
    return rows


def _file_rows(
    loaded: Any, config_path: Path, problem: str | None, in_config: str
) -> list[Setting]:
    from sweepbench.models.catalog import models_path, operator_tables

    exists = config_path.is_file()
    rows = [
        Setting(
            "config.toml",
            str(config_path) if exists else f"{config_path} (no file)",
            "environment (SWEEPBENCH_CONFIG)" if CONFIG.is_set() else "default",
            "keys, endpoints, local models, the shared leaderboard, benchmark folders",
            problem=problem,
        )
    ]
    if loaded is not None:
        for name, endpoint in loaded.endpoints.items():
            value = masked_url(endpoint.base_url)
            if endpoint.api_key:
                value += " (a key: set)"
            rows.append(Setting(f"[endpoints.{name}]", value, in_config, "a compatible server"))
        for name, path in loaded.local_models.items():
            rows.append(Setting(f"[local_models] {name}", str(path), in_config, "a GGUF file"))
        from sweepbench.settings import benchmark_folders

        try:
            folders = benchmark_folders()
        except UserError as exc:
            rows.append(Setting("[benchmarks] folders", "unusable", in_config, problem=str(exc)))
        else:
            if folders:
                shown = ", ".join(str(f) for f in folders)
                rows.append(Setting("[benchmarks] folders", shown, in_config, "runnable here"))
    path = models_path()
    where = f"models.toml ({path})"
    try:
        tables = operator_tables()
    except UserError as exc:
        rows.append(Setting("models.toml", str(path), "home folder", problem=str(exc)))
        return rows
    if not path.is_file():
        rows.append(Setting("models.toml", f"{path} (no file)", "default", "model facts"))
        return rows
    count = f"{len(tables)} model{'s' if len(tables) != 1 else ''}"
    rows.append(Setting("models.toml", f"{path} ({count})", "home folder", "model facts"))
    for model_id, spec in tables.items():
        shown = ", ".join(f"{k} = {v}" for k, v in spec.items())
        rows.append(Setting(model_id, shown, where, "a model's facts (the built-in ones beneath)"))
    return rows
