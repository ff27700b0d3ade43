"""What a benchmark run is, as stored: the selection a user chose, the spending limits, and
the settings that change answers or scores (``RunConfig``, whose hash names a run and lets a
later session continue it, spec §9). Plain data, shared by the plan, the runner, the store
and every surface."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import TypeVar

from sweepbench.bench.items import Scope
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION
from sweepbench.money.ceilings import parse_usd_amount
from sweepbench.roles import BENCH_ROLES, Role, label, parse_role

_V = TypeVar("_V")


@dataclass(frozen=True)
class Selection:
    """What to run, as the user chose it (spec §4)."""

    preset: str = "full"
    scope: Scope = "core"
    areas: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    """Task ids; when given they override the preset's and the areas' tasks."""
    dimensions: tuple[str, ...] = ()
    """Only items of these skills (empty = all)."""
    per_task: int | None = None
    """The first N items of each task (the quick preset sets 1)."""
    max_items: int | None = None
    """Stop after this many items overall."""


def bench_roles(values: Mapping[str, _V], what: str) -> dict[Role, _V]:
    """``values`` keyed by validated benchmark roles, in ``BENCH_ROLES`` order."""
    checked: dict[Role, _V] = {}
    for name, value in values.items():
        role = parse_role(name, allowed=BENCH_ROLES)
        if role in checked:
            raise ValueError(f"{what}: the {label(role)} is given twice")
        checked[role] = value
    return {role: checked[role] for role in BENCH_ROLES if role in checked}


def _limit_usd(value: object, what: str) -> Decimal:
    try:
        return parse_usd_amount(value)
    except ValueError as exc:
        raise ValueError(f"{what}: {value!r}: {exc}") from None


@dataclass(frozen=True)
class Limits:
    """Spending limits in USD, cumulative over a run's resumptions (§7): ``total`` (None = no
    total limit) and one per benchmark role (``{"judge": Decimal("1")}``; a role left out has
    none)."""

    total: Decimal | None = None
    roles: Mapping[str, Decimal] = field(default_factory=dict)
    """Keyed by role (``parse_role`` names, validated against ``BENCH_ROLES``)."""

    def __post_init__(self) -> None:
        if self.total is not None:
            object.__setattr__(self, "total", _limit_usd(self.total, "total limit"))
        roles = {
            role: _limit_usd(usd, f"{role} limit")
            for role, usd in bench_roles(self.roles, "limits").items()
        }
        object.__setattr__(self, "roles", MappingProxyType(roles))

    def __hash__(self) -> int:
        return hash((self.total, tuple(self.roles.items())))

    def for_role(self, role: str) -> Decimal | None:
        """The limit of one role (None = none)."""
        return self.roles.get(role)

    @property
    def any(self) -> bool:
        """True when some limit, total or per role, is set."""
        return self.total is not None or bool(self.roles)

    def as_json(self) -> dict[str, object]:
        """``{"total": "5" | None, "roles": {"judge": "1"}}``: amounts as text, exact."""
        return {
            "total": None if self.total is None else str(self.total),
            "roles": {role: str(usd) for role, usd in self.roles.items()},
        }


HASHED_AS_FIELDS: tuple[Role, ...] = ("target", "judge")
"""Roles whose model is hashed as the ``model`` / ``judge`` fields (as before roles were data),
so runs stored before keep their hash; any other role bound adds the whole ``models`` map."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that changes answers or scores (spec §9); its hash identifies a run.

    Limits, concurrency and keys are left out on purpose: raising a limit must continue the
    same run."""

    benchmark: str
    data_version: str
    prompt_version: str
    models: Mapping[str, str]
    """The model of every role the run uses (``target`` always; ``judge`` when a task is
    graded by one; any later role, such as ``student``, is hashed too)."""
    decision_judge: bool
    scope: str
    tasks: tuple[str, ...]
    dimensions: tuple[str, ...]
    per_task: int | None
    max_items: int | None
    max_tokens: int
    rule_scoring: bool = False
    """Judged tasks that have a rule scorer are scored by it instead (labelled rule-scored;
    never ranked with judged runs)."""
    scoring: str = DEFAULT_SCORING_VERSION
    """The scoring version of the rule scorers (``bench.scoring.versions``): hashed unless it
    is the default, so runs scored otherwise never share a hash (and older runs keep theirs)."""
    effort: str | None = None
    """The effort sent to the model under test (None: none is sent, the model's default).
    This and the two below are hashed only when set, so older runs keep their hash."""
    temperature: float | None = None
    """The temperature of the model under test's answers (None: the model's default)."""
    repeats: int = 1
    """How many times each item is asked (``--repeats``)."""
    routes: Mapping[str, str] = field(default_factory=dict)
    """What of each OpenRouter model's route changes its answers (the precision its calls are
    kept to, or ``cheapest``: :meth:`sweepbench.models.routes.Route.hashed`), by role; hashed
    only when a role has one, so older runs and unrouted ones keep their hash."""

    def __post_init__(self) -> None:
        models = bench_roles(self.models, "models")
        if "target" not in models:
            raise ValueError("models: the model under test (target) is missing")
        object.__setattr__(self, "models", MappingProxyType({r: str(m) for r, m in models.items()}))

    def __hash__(self) -> int:
        return hash(self.hash)

    @property
    def model(self) -> str:
        """The model under test."""
        return self.models["target"]

    @property
    def judge(self) -> str | None:
        """The judge, when a task is graded by one."""
        return self.models.get("judge")

    def as_json(self) -> dict[str, object]:
        """The canonical form (sorted lists) that is hashed and stored. A run binding only a
        model under test and a judge has the form (and so the hash) it had before roles were
        data; binding any other role adds ``models``, every role's model."""
        data: dict[str, object] = {
            "benchmark": self.benchmark,
            "data_version": self.data_version,
            "prompt_version": self.prompt_version,
            "model": self.model,
            "judge": self.judge,
            "decision_judge": self.decision_judge,
            "scope": self.scope,
            "tasks": sorted(self.tasks),
            "dimensions": sorted(self.dimensions),
            "per_task": self.per_task,
            "max_items": self.max_items,
            "max_tokens": self.max_tokens,
            "rule_scoring": self.rule_scoring,
        }
        if self.scoring != DEFAULT_SCORING_VERSION:
            data["scoring"] = self.scoring
        if self.effort is not None:
            data["effort"] = self.effort
        if self.temperature is not None:
            data["temperature"] = self.temperature
        if self.repeats != 1:
            data["repeats"] = self.repeats
        if set(self.models) - set(HASHED_AS_FIELDS):
            data["models"] = dict(sorted(self.models.items()))
        if self.routes:
            data["routes"] = dict(sorted(self.routes.items()))
        return data

    @property
    def hash(self) -> str:
        """SHA-256 over the canonical JSON."""
        text = json.dumps(self.as_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
