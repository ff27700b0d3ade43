"""The benchmark plan: which items run, which models play which role, and what it may cost —
built by one function that the estimate, the run and the CLI share, so a run can never differ
from what was priced (spec §6).

Building a plan never raises on user input: every problem is collected, so the user sees them
all at once (``errors``: the run cannot start; ``limit_problems``: a spending limit is below the
lowest the run can cost).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Protocol

from sweepbench.bench.catalog import PRESET_ALIASES, PRESETS
from sweepbench.bench.defaults import DEFAULT_ANSWER_TOKENS, MAX_REPEATS
from sweepbench.bench.dialogue.estimate import plan_dialogues
from sweepbench.bench.dialogue.prompts import DIALOGUE_PROMPT_VERSION
from sweepbench.bench.items import Benchmark, Item, Task
from sweepbench.bench.results import format_money
from sweepbench.bench.run_config import Limits, RunConfig, Selection
from sweepbench.bench.scoring.judge import (
    JUDGE_HIGH_OUTPUT_TOKENS,
    JUDGE_MAX_TOKENS,
    JUDGE_PROMPT_VERSION,
    judge_request_text_chars,
)
from sweepbench.bench.scoring.versions import rules_for
from sweepbench.bench.selection import (
    prompt_version_of,
    rule_scored,
    scored_by,
    select_items,
    selected_tasks,
)
from sweepbench.errors import UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.registry import model_info, provider_status, route_problem, routed
from sweepbench.models.routes import Route, RoutePolicy
from sweepbench.models.tokens import tokens_in
from sweepbench.money.prices import Price, price_for
from sweepbench.roles import Role, label, role_word

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest

MAX_TEMPERATURE = 2.0
MILLION = Decimal(1_000_000)


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


class Priced(Protocol):
    """A role's estimate: its low and high (None: no price)."""

    @property
    def low(self) -> Decimal | None: ...

    @property
    def high(self) -> Decimal | None: ...


class Totals:
    """Whether a plan may start and its low and high totals, over its roles' estimates and
    its problems (a run's plan and a benchmark sweep's)."""

    roles: Sequence[Priced]
    errors: tuple[str, ...]
    blocked: tuple[str, ...]
    limit_problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Nothing stops it (price acknowledgement aside): no error, nothing blocked, no limit
        below its lowest estimate."""
        return not self.errors and not self.limit_problems and not self.blocked

    @property
    def low(self) -> Decimal | None:
        """The total low estimate (None when a model has no price)."""
        return sum_estimates(r.low for r in self.roles)

    @property
    def high(self) -> Decimal | None:
        """The total high estimate (None when a model has no price)."""
        return sum_estimates(r.high for r in self.roles)


@dataclass(frozen=True)
class BenchPlan(Totals):
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
    routes: Mapping[str, Route] = field(default_factory=dict)
    """The route of each role whose model has one (OpenRouter's: which host answers)."""

    @property
    def hosts_lines(self) -> list[str]:
        """The estimate's Hosts lines: each routed model's route in words, once per model."""
        said: dict[str, str] = {}
        for role, route in self.routes.items():
            said.setdefault(self.config.models[role], route.describe())
        return [f"Hosts of {model}: {text}." for model, text in said.items()]

    def hosts_json(self) -> dict[str, object]:
        """The routes as the run's settings keep them, by role."""
        return {role: route.as_json() for role, route in self.routes.items()}

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


def _info(
    model_id: str, errors: list[str], role: str, blocked: list[str], route: RoutePolicy
) -> ModelInfo | None:
    """The model's facts, with the route its calls take (:func:`routed`); an unknown model is
    an error, one that cannot be called here now (no key, no llama.cpp bindings, hosts that
    could not be read for its route) only blocks running it: it is still priced."""
    try:
        info = routed(model_info(model_id), route)
    except UserError as exc:
        errors.append(f"{role_word(role)}: {exc}")
        return None
    status = provider_status(info.provider)
    if not status.available:
        blocked.append(f"{role_word(role)} {model_id} cannot be called: {status.reason}")
    problem = route_problem(info)
    if problem is not None:
        blocked.append(f"{role_word(role)} {problem}")
    return info


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


@dataclass(frozen=True)
class Choice:
    """What a request selects on a benchmark before anything is priced: the tasks and items,
    the models' facts, the settings that name the run (``config``, whose hash finds the run a
    session continues) and every problem and note found so far. :func:`build_plan` prices
    it; resuming looks the previous run up by ``config.hash`` in between, so a run is planned
    once."""

    benchmark: Benchmark
    selection: Selection
    limits: Limits
    config: RunConfig
    tasks: tuple[Task, ...]
    items: tuple[Item, ...]
    """Every selected item (repeats included), done ones too."""
    needs_judge: frozenset[str]
    """The ids of the selected tasks a judge grades."""
    answer_limit: int
    target_info: ModelInfo | None
    judge_info: ModelInfo | None
    student_info: ModelInfo | None
    errors: tuple[str, ...]
    blocked: tuple[str, ...]
    notes: tuple[str, ...]


def choose(benchmark: Benchmark, request: BenchRequest) -> Choice:
    """What ``request`` selects on ``benchmark`` and the settings that name the run; every
    problem collected, never raised."""
    models_asked = request.models
    model = models_asked["target"]
    judge = models_asked.get("judge")
    student = models_asked.get("student")
    selection = request.selection
    limits = request.limits
    max_tokens = request.max_tokens
    rule_scoring = request.edu_scoring == "rule"
    temperature = request.temperature
    repeats = request.repeats
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
    tasks = selected_tasks(benchmark, selection, chosen, errors, notes)
    if rule_scoring:
        tasks = [rule_scored(t) for t in tasks]
        ruled = [t.id for t in tasks if t.options.get("rule_scored")]
        if ruled:
            notes.append(
                f"Rule-scored: {', '.join(ruled)} scored by a fixed rule instead of the judge; "
                "such runs are never ranked with judged ones."
            )
    scoring = rules_for(request.scoring).version
    tasks = [scored_by(t, scoring) for t in tasks]
    items = select_items(tasks, selection, per_task, errors)
    version = prompt_version_of(benchmark, request.prompt_version, errors)
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
    route = request.route
    target_info = _info(model, errors, "target", blocked, route)
    applied_effort = _effort(target_info, request.effort, errors)
    needs_judge = {t.id for t in tasks if t.needs_judge}
    judge_info: ModelInfo | None = None
    if judge is not None and needs_judge:  # a judge no task needs is not checked, nor used
        judge_info = _info(judge, errors, "judge", blocked, route)
        if judge == model:
            notes.append(f"The judge is the model under test: {model} grades its own answers.")
    if max_tokens is not None and max_tokens < 1:
        errors.append(f"the answer length limit must be at least 1 token, not {max_tokens}")
        max_tokens = None
    answer_limit = max_tokens or DEFAULT_ANSWER_TOKENS
    if target_info is not None and target_info.max_output_tokens:
        answer_limit = min(answer_limit, target_info.max_output_tokens)
    if any(i.task in needs_judge for i in items) and judge is None:
        count = sum(1 for i in items if i.task in needs_judge)
        errors.append(
            f"{count:,} answers are graded by a judge model but none is chosen: add --judge "
            "MODEL (offline: local/smollm2-135m), or run only the automatically checked tasks "
            "with --preset auto-checked"
        )
    talks = plan_dialogues(  # which tasks are dialogues, and whether one needs a student
        tasks, items, (), limit=answer_limit, evaluator_limit=JUDGE_MAX_TOKENS
    )
    models: dict[str, str] = {"target": model}
    if judge is not None and needs_judge:
        models["judge"] = judge
    student_info: ModelInfo | None = None
    if talks.needs_student and (student or judge):
        models["student"] = student or judge or ""
        student_info = (
            _info(models["student"], errors, "student", blocked, route) if student else judge_info
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
        decision_judge=request.decision_judge if needs_judge else False,
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
        routes=_hashed_routes(
            {"target": target_info, "judge": judge_info, "student": student_info}, models
        ),
    )
    return Choice(
        benchmark=benchmark, selection=selection, limits=limits, config=config,
        tasks=tuple(tasks), items=tuple(items), needs_judge=frozenset(needs_judge),
        answer_limit=answer_limit, target_info=target_info, judge_info=judge_info,
        student_info=student_info, errors=tuple(errors), blocked=tuple(blocked),
        notes=tuple(notes),
    )  # fmt: skip


def _hashed_routes(
    infos: Mapping[str, ModelInfo | None], models: Mapping[str, str]
) -> dict[str, str]:
    """What of each bound role's route changes its answers (:meth:`Route.hashed`), by role."""
    routes: dict[str, str] = {}
    for role, info in infos.items():
        if role in models and info is not None and info.route is not None:
            hashed = info.route.hashed()
            if hashed is not None:
                routes[role] = hashed
    return routes


def _routes(chosen: Choice) -> dict[str, Route]:
    """The route of each role whose model has one (OpenRouter models)."""
    infos = {"target": chosen.target_info, "judge": chosen.judge_info}
    infos["student"] = chosen.student_info
    return {
        role: info.route
        for role, info in infos.items()
        if role in chosen.config.models and info is not None and info.route is not None
    }


def build_plan(
    benchmark: Benchmark,
    request: BenchRequest,
    *,
    done: Collection[str] = (),
    spent: Mapping[str, Decimal] | None = None,
    judge_only: Collection[str] = (),
    choice: Choice | None = None,
) -> BenchPlan:
    """The plan for running ``request`` on ``benchmark``: :func:`choose`, priced. ``done``
    holds the keys already answered and scored by an earlier session of the same run (they
    are skipped and not estimated); ``spent`` what each role already spent there (limits are
    cumulative); ``judge_only`` the keys whose stored answer only needs grading again (no call
    to the model under test); ``choice``: :func:`choose`'s answer, when already made."""
    chosen = choice if choice is not None else choose(benchmark, request)
    config, limits, tasks = chosen.config, chosen.limits, list(chosen.tasks)
    items, needs_judge, answer_limit = list(chosen.items), chosen.needs_judge, chosen.answer_limit
    model, judge = config.model, config.judge
    decision_judge = config.decision_judge
    target_info, judge_info, student_info = (
        chosen.target_info, chosen.judge_info, chosen.student_info,
    )  # fmt: skip
    models = dict(config.models)
    errors, blocked, notes = list(chosen.errors), list(chosen.blocked), list(chosen.notes)
    spent = dict(spent or {})
    done_set = set(done)
    pending = [i for i in items if i.key not in done_set]
    judged = [i for i in pending if i.task in needs_judge]
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
        selection=chosen.selection,
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
        routes=_routes(chosen),
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
