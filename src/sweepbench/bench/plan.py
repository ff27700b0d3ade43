"""The benchmark plan: which items run, which models play which role, and what it may cost —
built by one function that the estimate, the run and the CLI share, so a run can never differ
from what was priced (spec §6).

Building a plan never raises on user input: every problem is collected, so the user sees them
all at once (``errors``: the run cannot start; ``limit_problems``: a spending limit is below the
lowest the run can cost).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from types import MappingProxyType
from typing import TypeVar

from sweepbench.bench.catalog import PRESET_ALIASES, PRESETS, Preset
from sweepbench.bench.defaults import DEFAULT_ANSWER_TOKENS, MAX_REPEATS
from sweepbench.bench.dialogue.estimate import plan_dialogues
from sweepbench.bench.dialogue.prompts import DIALOGUE_PROMPT_VERSION
from sweepbench.bench.items import Benchmark, Item, PromptVersion, Scope, Task
from sweepbench.bench.results import format_money
from sweepbench.bench.scoring.judge import (
    JUDGE_HIGH_OUTPUT_TOKENS,
    JUDGE_MAX_TOKENS,
    JUDGE_PROMPT_VERSION,
    judge_request_text_chars,
)
from sweepbench.bench.scoring.versions import DEFAULT_SCORING_VERSION, rules_for
from sweepbench.errors import UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.registry import model_info, provider_status
from sweepbench.models.tokens import tokens_in
from sweepbench.money.ceilings import parse_usd_amount
from sweepbench.money.prices import Price, price_for
from sweepbench.roles import BENCH_ROLES, Role, label, parse_role

MAX_TEMPERATURE = 2.0
MILLION = Decimal(1_000_000)
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


def role_word(role: str) -> str:
    """A role's name for a person, capitalised ("Model under test", "Judge")."""
    word = label(role)
    return word[:1].upper() + word[1:]


def _bench_roles(values: Mapping[str, _V], what: str) -> dict[Role, _V]:
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
            for role, usd in _bench_roles(self.roles, "limits").items()
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

    def __post_init__(self) -> None:
        models = _bench_roles(self.models, "models")
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
        return data

    @property
    def hash(self) -> str:
        """SHA-256 over the canonical JSON."""
        text = json.dumps(self.as_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RoleCost:
    """What one role (model under test, judge) will do and may cost."""

    role: Role
    model: str
    calls: int
    input_tokens: int
    """Estimated prompt tokens over all calls (characters ÷ 4)."""
    low: Decimal | None
    """Prompts only; None when the model has no price."""
    high: Decimal | None
    """Every answer at its length limit (the judge: a stated output allowance)."""
    limit: Decimal | None
    spent: Decimal = Decimal(0)
    """Already spent by this role in earlier sessions of the same run."""


@dataclass(frozen=True)
class BenchPlan:
    """The plan of a run; ``items`` are the ones still to answer."""

    benchmark: Benchmark
    selection: Selection
    limits: Limits
    config: RunConfig
    tasks: tuple[Task, ...]
    items: tuple[Item, ...]
    selected: int
    """Items selected in all (done ones included)."""
    judged: int
    """Items (still to run) whose answers a judge grades."""
    roles: tuple[RoleCost, ...]
    errors: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    """What stops the run but not its estimate: a model that cannot be called here now (no
    key, no llama.cpp bindings). The run is priced all the same; running it is refused."""
    limit_problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    needs_price_ack: bool = False
    already_done: int = 0
    already_spent: Decimal = Decimal(0)
    counts: Mapping[str, int] = field(default_factory=dict)
    """Items still to run per task id."""
    selected_keys: tuple[str, ...] = ()
    """The keys of every selected item (done ones included)."""
    dialogues: tuple[Mapping[str, object], ...] = ()
    """How each selected teaching task's dialogues are played and scored (turns, each role's
    call settings, evaluation attempts, pass mark): the estimate's technical details."""

    @property
    def ok(self) -> bool:
        """True when the run may start (price acknowledgement aside)."""
        return not self.errors and not self.limit_problems and not self.blocked

    @property
    def low(self) -> Decimal | None:
        """The total low estimate (None when a role has no price)."""
        return sum_estimates(r.low for r in self.roles)

    @property
    def high(self) -> Decimal | None:
        """The total high estimate."""
        return sum_estimates(r.high for r in self.roles)

    def role(self, name: str) -> RoleCost | None:
        """One role's figures, if the run has that role."""
        return next((r for r in self.roles if r.role == name), None)

    @property
    def spends(self) -> bool:
        """Whether running this plan may cost money, so that a surface must gate it: a model
        has no price, the high estimate is above $0, or a model is called with a key the
        operator holds ($0 on paper, but not free to whoever holds that key)."""
        if self.needs_price_ack or bool(self.high):
            return True
        for model in self.config.models.values():
            try:
                price = price_for(model_info(model))
            except UserError:
                return True
            if price is None or not price.free:
                return True
        return False


def sum_estimates(values: Iterable[Decimal | None]) -> Decimal | None:
    total = Decimal(0)
    for value in values:
        if value is None:
            return None
        total += value
    return total


def _info(model_id: str, errors: list[str], role: str, blocked: list[str]) -> ModelInfo | None:
    """The model's facts; an unknown model is an error, one that cannot be called here now
    (no key, no llama.cpp bindings) only blocks running it: it is still priced."""
    try:
        info = model_info(model_id)
    except UserError as exc:
        errors.append(f"{role_word(role)}: {exc}")
        return None
    status = provider_status(info.provider)
    if not status.available:
        blocked.append(f"{role_word(role)} {model_id} cannot be called: {status.reason}")
    return info


def _selected_tasks(
    benchmark: Benchmark, selection: Selection, chosen: Preset, errors: list[str], notes: list[str]
) -> list[Task]:
    """The tasks to run, with a problem or note for each one left out."""
    in_scope = {t.id for t in benchmark.in_scope(selection.scope)}
    known = {t.id for t in benchmark.tasks}
    if selection.tasks:
        unknown = [t for t in selection.tasks if t not in known]
        if unknown:
            errors.append(
                f"unknown task(s) {', '.join(unknown)}; {benchmark.name} has "
                f"{', '.join(t.id for t in benchmark.tasks)}"
            )
        tasks = [t for t in benchmark.tasks if t.id in selection.tasks]
        for task in tasks:
            if task.id not in in_scope:
                errors.append(
                    f"{task.id} is region-specific and outside the core scope; "
                    "add --scope paper to include it"
                )
            elif task.missing:
                errors.append(f"{task.id}: data missing ({task.missing})")
            elif not task.available:
                errors.append(
                    f"{task.id} is a multi-turn teaching task whose template gives no "
                    "dialogue to play (see its problems in bench list)"
                )
        return [t for t in tasks if t.id in in_scope and t.available]
    tasks = list(chosen.tasks(benchmark, selection.scope))
    if selection.areas:
        areas = {a.key for a in benchmark.areas} | {a.label for a in benchmark.areas}
        unknown = [a for a in selection.areas if a not in areas]
        if unknown:
            errors.append(
                f"unknown area(s) {', '.join(unknown)}; {benchmark.name} has "
                f"{', '.join(a.key for a in benchmark.areas)}"
            )
        wanted = {a.key for a in benchmark.areas if {a.key, a.label} & set(selection.areas)}
        tasks = [t for t in tasks if t.area in wanted]
    missing = [t for t in tasks if t.missing]
    if missing:
        notes.append(
            "Left out, data missing: "
            + "; ".join(f"{t.id} ({t.missing})" for t in missing)
            + ". An area containing them cannot be complete."
        )
    multi = [t for t in tasks if t.missing is None and not t.available]
    if multi:
        count = sum(len(t.items) for t in multi)
        notes.append(
            f"Left out: {len(multi)} multi-turn teaching task(s) ({count} dialogues: "
            f"{', '.join(t.id for t in multi)}); their templates give no dialogue the "
            "teaching runtime can play (see the task's problems in bench list)."
        )
    return [t for t in tasks if t.available]


def scored_by(task: Task, version: str) -> Task:
    """``task`` with its rule scorers reading answers by the scoring ``version``."""
    return replace(task, options={**task.options, "scoring_version": version})


def rule_scored(task: Task) -> Task:
    """A judged task scored by its declared rule scorer instead (``options.rule_scorer``), or
    the task unchanged when it has none."""
    rule = task.options.get("rule_scorer")
    if not rule or task.grading != "judge":
        return task
    options = {**task.options, "rule_scored": True}
    return replace(task, scorer=str(rule), grading="auto", judge=None, options=options)


def _select_items(
    tasks: list[Task], selection: Selection, per_task: int | None, errors: list[str]
) -> list[Item]:
    dims = set(selection.dimensions)
    if dims:
        known = {i.dimension for t in tasks for i in t.items}
        unknown = sorted(dims - known)
        if unknown:
            sample = ", ".join(sorted(known)[:12])
            errors.append(
                f"unknown skill(s) {', '.join(unknown)}; the selected tasks have {sample}"
            )
    items: list[Item] = []
    for task in tasks:
        chosen = [i for i in task.items if not dims or i.dimension in dims]
        items.extend(chosen[:per_task] if per_task else chosen)
    if selection.max_items is not None:
        items = items[: max(selection.max_items, 0)]
    return items


def _prompt_version(
    benchmark: Benchmark, name: str | None, errors: list[str]
) -> PromptVersion | None:
    """The declared prompt version a run asks for (None: the benchmark's own)."""
    if name is None or not name.strip():
        return None
    try:
        return benchmark.prompt_variant(name.strip())
    except KeyError:
        errors.append(
            f"{benchmark.name} has no prompt version {name!r}; versions: "
            f"{', '.join(benchmark.versions)}"
        )
        return None


def _effort(info: ModelInfo | None, effort: str | None, errors: list[str]) -> str | None:
    """The effort level to send the model under test (None: send none)."""
    if effort is None or not effort.strip() or info is None:
        return None
    if effort.strip().lower() == "none":
        return None
    try:
        return info.resolve_effort(effort, strict=True)
    except UserError as exc:
        errors.append(str(exc))
        return None


def _role_cost(
    role: Role,
    model: str,
    price: Price | None,
    calls: int,
    input_chars: int,
    high_input_tokens: int,
    high_output_tokens: int,
    limit: Decimal | None,
    spent: Decimal,
) -> RoleCost:
    input_tokens = tokens_in(input_chars)
    if price is None:
        return RoleCost(role, model, calls, input_tokens, None, None, limit, spent)
    low = input_tokens * price.input / MILLION
    high = low + (high_input_tokens * price.input + high_output_tokens * price.output) / MILLION
    return RoleCost(role, model, calls, input_tokens, low, high, limit, spent)


def build_plan(
    benchmark: Benchmark,
    *,
    model: str,
    judge: str | None = None,
    decision_judge: bool = False,
    selection: Selection | None = None,
    limits: Limits | None = None,
    max_tokens: int | None = None,
    done: Collection[str] = (),
    spent: Mapping[str, Decimal] | None = None,
    rule_scoring: bool = False,
    judge_only: Collection[str] = (),
    scoring: str = DEFAULT_SCORING_VERSION,
    student: str | None = None,
    effort: str | None = None,
    temperature: float | None = None,
    repeats: int = 1,
    prompt_version: str | None = None,
) -> BenchPlan:
    """The plan for running ``model`` on ``benchmark``. ``done`` holds the keys already answered
    and scored by an earlier session of the same run (they are skipped and not estimated);
    ``spent`` what each role already spent there (limits are cumulative); ``judge_only`` the
    keys whose stored answer only needs grading again (no call to the model under test);
    ``student`` the simulated student of guided teaching dialogues (default: the judge);
    ``effort`` and ``temperature`` the model under test's (None: its default); ``repeats``
    how many times each item is asked; ``prompt_version`` one of the benchmark's declared
    prompt versions (None: its own)."""
    selection = selection or Selection()
    limits = limits or Limits()
    spent = dict(spent or {})
    errors: list[str] = []
    blocked: list[str] = []
    notes: list[str] = []
    key = selection.preset.strip().lower()
    chosen = PRESETS.get(PRESET_ALIASES.get(key, key))
    if chosen is None:
        errors.append(f"unknown preset {selection.preset!r}; choose quick, auto-checked or full")
        chosen = PRESETS["full"]
    per_task = selection.per_task if selection.per_task is not None else chosen.per_task
    if per_task is not None and per_task < 1:
        errors.append(f"questions per task must be at least 1, not {per_task}")
        per_task = None
    tasks = _selected_tasks(benchmark, selection, chosen, errors, notes)
    if rule_scoring:
        tasks = [rule_scored(t) for t in tasks]
        ruled = [t.id for t in tasks if t.options.get("rule_scored")]
        if ruled:
            notes.append(
                f"Rule-scored: {', '.join(ruled)} scored by a fixed rule instead of the judge; "
                "such runs are never ranked with judged ones."
            )
    scoring = rules_for(scoring).version
    tasks = [scored_by(t, scoring) for t in tasks]
    items = _select_items(tasks, selection, per_task, errors)
    version = _prompt_version(benchmark, prompt_version, errors)
    if version is not None:
        items = [version.apply(i) for i in items]
    if not 1 <= repeats <= MAX_REPEATS:
        errors.append(f"repeats must be between 1 and {MAX_REPEATS}, not {repeats}")
        repeats = 1
    if temperature is not None and not 0 <= temperature <= MAX_TEMPERATURE:
        errors.append(f"the temperature must be between 0 and {MAX_TEMPERATURE}, not {temperature}")
        temperature = None
    if repeats > 1:
        items = [i.repeated(n) for i in items for n in range(repeats)]
        if temperature == 0:
            notes.append(
                f"Each item is asked {repeats} times at temperature 0: the samples may all be "
                "the same answer."
            )
    if not items and not errors:
        errors.append("nothing selected: no task has items after the filters")
    target_info = _info(model, errors, "target", blocked)
    applied_effort = _effort(target_info, effort, errors)
    needs_judge = {t.id for t in tasks if t.needs_judge}
    judge_info: ModelInfo | None = None
    if judge is not None and needs_judge:  # a judge no task needs is not checked, nor used
        judge_info = _info(judge, errors, "judge", blocked)
        if judge == model:
            notes.append(f"The judge is the model under test: {model} grades its own answers.")
    if max_tokens is not None and max_tokens < 1:
        errors.append(f"the answer length limit must be at least 1 token, not {max_tokens}")
        max_tokens = None
    answer_limit = max_tokens or DEFAULT_ANSWER_TOKENS
    if target_info is not None and target_info.max_output_tokens:
        answer_limit = min(answer_limit, target_info.max_output_tokens)
    done_set = set(done)
    pending = [i for i in items if i.key not in done_set]
    judged = [i for i in pending if i.task in needs_judge]
    if any(i.task in needs_judge for i in items) and judge is None:
        count = sum(1 for i in items if i.task in needs_judge)
        errors.append(
            f"{count:,} answers are graded by a judge model but none is chosen: add --judge "
            "MODEL (offline: local/smollm2-135m), or run only the automatically checked tasks "
            "with --preset auto-checked"
        )
    talks = plan_dialogues(
        tasks, items, pending, limit=answer_limit, evaluator_limit=JUDGE_MAX_TOKENS
    )
    graded = [i for i in judged if i.key not in talks.keys]  # dialogues have their own share
    if talks.keys:
        notes.append(
            f"{len(talks.keys):,} teaching dialogue(s): the low end counts each role's opening "
            "turn and the evaluation; the high end every turn a dialogue may take (a guided "
            "lesson of ELBench's: 10 teacher and 10 student turns) with each at its role's "
            "length limit, then every evaluation attempt."
        )
    models: dict[str, str] = {"target": model}
    if judge is not None and needs_judge:
        models["judge"] = judge
    student_info: ModelInfo | None = None
    if talks.needs_student and (student or judge):
        models["student"] = student or judge or ""
        student_info = (
            _info(models["student"], errors, "student", blocked) if student else judge_info
        )
    version_name = benchmark.prompt_version if version is None else version.name
    config = RunConfig(
        benchmark=benchmark.id,
        data_version=benchmark.version,
        # the judge's own prompt changes scores too: a new version is a new run
        prompt_version=(
            f"{version_name}+judge-{JUDGE_PROMPT_VERSION}"
            if needs_judge and judge
            else version_name
        )
        # the teaching runtime's own wording (default prompts, the evaluation's format) too
        + (f"+dialogue-{DIALOGUE_PROMPT_VERSION}" if talks.tasks else ""),
        models=models,
        decision_judge=decision_judge if needs_judge else False,
        scope=selection.scope,
        tasks=tuple(t.id for t in tasks),
        dimensions=selection.dimensions,
        per_task=per_task,
        max_items=selection.max_items,
        max_tokens=answer_limit,
        rule_scoring=rule_scoring,
        scoring=scoring,
        effort=applied_effort,
        temperature=temperature,
        repeats=repeats,
    )
    roles: list[RoleCost] = []
    needs_price_ack = False
    if target_info is not None:
        price = price_for(target_info)
        needs_price_ack |= price is None
        regrade = set(judge_only)
        asked = [i for i in pending if i.key not in regrade and i.key not in talks.keys]
        chars = sum(len(i.prompt) + len(i.system or "") for i in asked)
        share = talks.share("target")
        roles.append(
            _role_cost(
                "target", model, price, len(asked) + share.calls, chars + share.low_chars,
                share.high_input_tokens, len(asked) * answer_limit + share.high_output_tokens,
                limits.for_role("target"), spent.get("target", Decimal(0)),
            )
        )  # fmt: skip
    if judge is not None and judge_info is not None and needs_judge:
        price = price_for(judge_info)
        needs_price_ack |= price is None
        task_of = {t.id: t for t in tasks}
        chars = sum(judge_request_text_chars(task_of[i.task], i) for i in graded)
        # spec §6.1: a chat judge's high adds the answers at their limit and a stated output
        # allowance; a verdict-only (decision) judge's high is its low
        answers_in = 0 if decision_judge else len(graded) * answer_limit
        out = 0 if decision_judge else len(graded) * JUDGE_HIGH_OUTPUT_TOKENS
        share = talks.share("judge")  # the evaluator of teaching dialogues
        roles.append(
            _role_cost(
                "judge", judge, price, len(graded) + share.calls, chars + share.low_chars,
                answers_in + share.high_input_tokens, out + share.high_output_tokens,
                limits.for_role("judge"), spent.get("judge", Decimal(0)),
            )
        )  # fmt: skip
    if student_info is not None:
        price = price_for(student_info)
        needs_price_ack |= price is None
        share = talks.share("student")
        roles.append(
            _role_cost(
                "student", models["student"], price, share.calls, share.low_chars,
                share.high_input_tokens, share.high_output_tokens,
                limits.for_role("student"), spent.get("student", Decimal(0)),
            )
        )  # fmt: skip
    free = [m for m in set(config.models.values()) if m.endswith(":free")]
    if free:
        notes.append(
            f"Free models on OpenRouter ({', '.join(sorted(free))}) are limited to about 20 "
            "requests a minute, so this will be slow."
        )
    for role_name, usd in limits.roles.items():
        if not errors and role_name not in {r.role for r in roles}:
            notes.append(
                f"The limit for the {label(role_name)} ({format_money(usd)}) is not used: this "
                f"run calls no {label(role_name)}."
            )
    already_spent = sum(spent.values(), Decimal(0))
    limit_problems = _limit_problems(roles, limits, already_spent)
    if limits.any:
        notes.append(
            "A limit is held by reserving each answer's worst case (its prompt at the most "
            "tokens it can be and its whole length limit) before the call, so the answers "
            "still in flight when it is reached are already inside it and do not take the "
            "total over it; when a worst case no longer fits, an answer may hold what is left "
            "and is stopped there if it goes past it (asked again when the run continues), and "
            "the run pauses when not even that fits."
        )
    counts = Counter(i.task for i in pending)
    if needs_price_ack:
        unpriced = [r.model for r in roles if r.low is None]
        notes.append(
            f"No cost estimate: no price is listed for {', '.join(unpriced)}. "
            "To run anyway, add --accept-unpriced."
        )
        if limits.any:
            notes.append(
                f"Spending limits cannot hold calls to {', '.join(unpriced)}: with no price "
                "their cost is unknown, so they count as $0 against every limit."
            )
    return BenchPlan(
        benchmark=benchmark,
        selection=selection,
        limits=limits,
        config=config,
        tasks=tuple(tasks),
        items=tuple(pending),
        selected=len(items),
        judged=len(judged),
        roles=tuple(roles),
        errors=tuple(errors),
        blocked=tuple(dict.fromkeys(blocked)),
        limit_problems=tuple(limit_problems),
        notes=tuple(notes),
        needs_price_ack=needs_price_ack,
        already_done=len(items) - len(pending),
        already_spent=already_spent,
        counts=dict(counts),
        selected_keys=tuple(i.key for i in items),
        dialogues=talks.settings,
    )


def _limit_problems(roles: list[RoleCost], limits: Limits, spent: Decimal) -> list[str]:
    """Limits below their role's low estimate (what is left of them, for a resumed run)."""
    problems: list[str] = []
    for role in roles:
        if role.limit is None or role.low is None:
            continue
        left = role.limit - role.spent
        if left < role.low:
            problems.append(
                f"The limit for the {label(role.role)} ({format_money(role.limit)}"
                f"{', ' + format_money(left) + ' left' if role.spent else ''}) is below its "
                f"lowest estimate ({format_money(role.low)})"
            )
    low = sum_estimates(r.low for r in roles)
    if limits.total is not None and low is not None and limits.total - spent < low:
        total_left = f", {format_money(limits.total - spent)} left" if spent else ""
        problems.append(
            f"The total limit ({format_money(limits.total)}{total_left}) is below the lowest "
            f"estimate ({format_money(low)})"
        )
    return problems


def run_id_for(config: RunConfig, started: str) -> str:
    """``<model slug>-<YYYYMMDD-HHMMSS>-<first 8 hex of the config hash>`` (spec §9)."""
    slug = config.model.replace("/", "_").replace("\\", "_").replace(":", "_")
    slug = "".join(c if c.isalnum() or c in "._-" else "_" for c in slug)[:80]
    return f"{slug}-{started}-{config.hash[:8]}"
