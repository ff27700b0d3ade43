"""What the ``sweepbench bench`` commands share: the consoles, the options, turning them into a
``BenchRequest``, and the estimate's rendering."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Collection
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar, get_type_hints

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.resume import PreparedRun
    from sweepbench.bench.start import StartDecision
from sweepbench.bench.defaults import DEFAULT_CONCURRENCY
from sweepbench.models.routes import DEFAULT_ROUTE, POLICY_HELP
from sweepbench.roles import BENCH_ROLES, Role

err = Console(stderr=True)
out = Console()
DEFAULT_MODEL = "local/smollm2-135m"

BenchArg = Annotated[
    str, typer.Argument(help="sample, elbench (with --data), or the path of a declaration.")
]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="The data folder (ELBench: PATH/benchmark_root).")
]
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="The model under test.")]
JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="The judge model (default: the benchmark's own, when it has one: ELBench's is "
        "the paper's judge).",
    ),
]
StudentOpt = Annotated[
    str | None,
    typer.Option(
        "--student", help="The simulated student of teaching dialogues (default: the judge)."
    ),
]
DecisionOpt = Annotated[
    bool, typer.Option("--decision-judge", help="Verdict-only judge: cheaper, no reasons.")
]
RouteOpt = Annotated[str, typer.Option("--route", help=f"OpenRouter hosts: {POLICY_HELP}.")]
PresetOpt = Annotated[str, typer.Option("--preset", help="quick, auto-checked or full.")]
ScopeOpt = Annotated[
    str, typer.Option("--scope", help="core, or paper (include region-specific sets).")
]
AreasOpt = Annotated[str | None, typer.Option("--areas", help="Comma-separated area keys.")]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids.")]
SkillsOpt = Annotated[str | None, typer.Option("--skills", help="Only these dimensions.")]
PerTaskOpt = Annotated[int | None, typer.Option("--per-task", help="First N items per task.")]
MaxItemsOpt = Annotated[int | None, typer.Option("--max-items", help="Stop after N items.")]


def _budget(text: str) -> int:
    """``--max-tokens`` read by the one budget parser ("64000", "64,000", "64.000", "64k")."""
    from sweepbench.axes.cells import read_budget
    from sweepbench.errors import UserError

    try:
        return read_budget(text)
    except UserError as exc:
        raise typer.BadParameter(str(exc)) from None


MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens", parser=_budget, help="Answer length limit (default 8,192; 64k reads)."
    ),
]
LimitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--limit",
        metavar="[ROLE=]USD",
        help="Spending limit, USD: the total (--limit 5) or one role's (--limit judge=1; "
        f"roles: {', '.join(BENCH_ROLES)}). Repeatable.",
    ),
]
LimitTargetOpt = Annotated[
    str | None,
    typer.Option("--limit-target", metavar="USD", help="Same as --limit target=USD."),
]
LimitJudgeOpt = Annotated[
    str | None, typer.Option("--limit-judge", metavar="USD", help="Same as --limit judge=USD.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")]
EffortOpt = Annotated[
    str | None,
    typer.Option("--effort", help="Effort for the model under test (default: none sent)."),
]
TemperatureOpt = Annotated[
    float | None, typer.Option("--temperature", help="The model under test's temperature.")
]
RepeatsOpt = Annotated[
    int,
    typer.Option(
        "--repeats", help="Ask each item K times; scores become per-item means (pass@k too)."
    ),
]
PromptVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--prompt-version",
        help="One of the benchmark's declared prompt versions (default: its own).",
    ),
]
AllowDataOutsideOpt = Annotated[
    bool,
    typer.Option(
        "--allow-data-outside",
        help="Let a declaration read data outside its own folder (absolute paths, .., "
        "symlinks): only for declarations you trust, as their rows become prompts.",
    ),
]
EduScoringOpt = Annotated[
    str,
    typer.Option(
        "--edu-scoring",
        help="judge (default), or rule: score judged tasks that have a fixed-rule fallback "
        "(ELBench's highlevel_edu) offline; such runs are labelled rule-scored.",
    ),
]

ScoringOpt = Annotated[
    str,
    typer.Option(
        "--scoring",
        help="replicated (default: answers read as ELBench reads them, comparable with its "
        "published results) or corrected (its known misreadings fixed; never ranked with "
        "published results). See docs/benchmarks.md.",
    ),
]

COMMANDS = ("estimate", "run", "sweep")
"""The commands that price or start a benchmark run, and share :class:`RunOptions`."""
STARTS = ("run", "sweep")


@dataclass(frozen=True)
class RunOptions:
    """The options of ``bench estimate``, ``bench run`` and ``bench sweep``, declared once:
    each field is one option (its type, flag and help in the annotation, its default), given
    to the commands listed for it in :data:`ONLY` (all three otherwise) by :func:`run_options`,
    and turned into the run's :class:`~sweepbench.bench.request.BenchRequest` by
    :func:`build_request`. A field named as a ``BenchRequest`` field passes on as it is."""

    benchmark: BenchArg
    model: ModelOpt = DEFAULT_MODEL
    judge: JudgeOpt = None
    student: StudentOpt = None
    decision_judge: DecisionOpt = False
    route: RouteOpt = DEFAULT_ROUTE
    preset: PresetOpt = "full"
    scope: ScopeOpt = "core"
    areas: AreasOpt = None
    tasks: TasksOpt = None
    skills: SkillsOpt = None
    per_task: PerTaskOpt = None
    max_items: MaxItemsOpt = None
    max_tokens: MaxTokensOpt = None
    effort: EffortOpt = None
    temperature: TemperatureOpt = None
    repeats: RepeatsOpt = 1
    prompt_version: PromptVersionOpt = None
    limit: LimitOpt = None
    limit_target: LimitTargetOpt = None
    limit_judge: LimitJudgeOpt = None
    edu_scoring: EduScoringOpt = "judge"
    scoring: ScoringOpt = "replicated"
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", help="Requests at once (1–100; a sweep's: per provider)."),
    ] = DEFAULT_CONCURRENCY
    no_resume: Annotated[
        bool, typer.Option("--no-resume", help="Start afresh even if a run can continue.")
    ] = False
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run only the items that errored.")
    ] = False
    accept_unpriced: Annotated[
        bool, typer.Option("--accept-unpriced", help="Run a model that has no listed price.")
    ] = False
    rpm: Annotated[
        int | None, typer.Option("--rpm", help="At most N requests a minute, per model.")
    ] = None
    tpm: Annotated[
        int | None, typer.Option("--tpm", help="At most N tokens a minute, per model.")
    ] = None
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before spending.")] = False
    data: DataOpt = None
    allow_data_outside: AllowDataOutsideOpt = False


ONLY: dict[str, tuple[str, ...]] = {
    "concurrency": STARTS, "accept_unpriced": STARTS, "rpm": STARTS, "tpm": STARTS,
    "yes": STARTS, "no_resume": ("run",), "retry_failed": ("run",),
}  # fmt: skip
"""The options only some of :data:`COMMANDS` have (a field left out: all of them)."""

COMPOSED = {
    "model": "models", "judge": "models", "student": "models", "limit": "limit",
    "limit_target": "role_limits", "limit_judge": "role_limits", "no_resume": "resume",
    "yes": "confirmed",
}  # fmt: skip
"""The options that :func:`build_request` composes into a request field (option → field);
every other option is the request field of its name."""

FLAGS: dict[str, str] = {
    "benchmark": "BENCHMARK",
    "models": "--model/--judge/--student",
    "limit": "--limit",
    "role_limits": "--limit",
    "resume": "--no-resume",
    "confirmed": "--yes",
}
"""How the CLI names a BenchRequest field in its errors, where the option's name does not
say it (the others: ``--`` and the field's name, dashed)."""

_R = TypeVar("_R")


def run_options(command: str) -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Give a command (one of :data:`COMMANDS`) the :class:`RunOptions` it has, before its
    own parameters: the command is called with them as one value, ``options``."""
    hints = get_type_hints(RunOptions, include_extras=True)
    shared = [
        inspect.Parameter(
            f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=hints[f.name],
            default=inspect.Parameter.empty if f.default is MISSING else f.default,
        )
        for f in fields(RunOptions)
        if command in ONLY.get(f.name, COMMANDS)
    ]  # fmt: skip
    names = {p.name for p in shared}

    def decorate(function: Callable[..., _R]) -> Callable[..., _R]:
        own = [p for p in inspect.signature(function).parameters.values() if p.name != "options"]
        own_hints = get_type_hints(function, include_extras=True)

        @functools.wraps(function)
        def command_function(**values: Any) -> _R:
            options = RunOptions(**{k: v for k, v in values.items() if k in names})
            return function(options=options, **{k: v for k, v in values.items() if k not in names})

        required = [p for p in own if p.default is inspect.Parameter.empty]
        optional = [p for p in own if p.default is not inspect.Parameter.empty]
        parameters = [shared[0], *required, *shared[1:], *optional]
        parameters = [
            p.replace(annotation=own_hints[p.name] if p.name in own_hints else hints[p.name])
            for p in parameters
        ]
        # Typer reads these (the annotations resolved: the wrapper's module is not the command's)
        command_function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command_function.__annotations__ = {p.name: p.annotation for p in parameters}
        del command_function.__wrapped__
        return command_function

    return decorate


def build_request(options: RunOptions) -> BenchRequest:
    """The request a command's :class:`RunOptions` make (UserError naming the options that
    are wrong)."""
    from sweepbench.bench.request import BenchRequest, merge_limits, parse_limit

    parsed = [parse_limit(text) for text in options.limit or ()]
    per_role: tuple[tuple[Role, str | None], ...] = (
        ("target", options.limit_target), ("judge", options.limit_judge),
    )  # fmt: skip
    for role, text in per_role:
        if text is not None and text.strip():
            parsed.append(parse_limit(text, f"--limit-{role}", role=role))
    limits = merge_limits(parsed)
    models = {"target": options.model, "judge": options.judge}
    if options.student:
        models["student"] = options.student
    values: dict[str, Any] = {
        name: value
        for name, value in vars(options).items()
        if name not in COMPOSED and value is not None
    }
    values.update(
        models={role: model for role, model in models.items() if model is not None},
        limit=limits.total, role_limits=dict(limits.roles), resume=not options.no_resume,
        confirmed=options.yes,
    )  # fmt: skip
    names = {name: f"--{name.replace('_', '-')}" for name in values} | FLAGS
    return BenchRequest.from_values(values, names=names)


def print_estimate(prepared: PreparedRun) -> None:
    """The estimate's lines, on standard error."""
    from sweepbench.bench.wording import estimate_lines

    for line in estimate_lines(prepared):
        err.print(line, highlight=False, markup=False)


def refuse(decision: StartDecision, shown: Collection[str]) -> NoReturn:
    """Print the refusal's reasons the estimate did not already list (``shown``), exit 2."""
    for reason in decision.reasons:
        if reason not in shown:
            err.print(f"[red]refused:[/red] {escape(reason)}")
    raise typer.Exit(2)


def confirm_spending(decision: StartDecision, *, noun: str, question: str) -> None:
    """When the start rule asks for it, ask before spending (on a terminal; exit 2 without
    one, or when the answer is no). ``question`` is the prompt with ``{high}`` for the most
    that may be spent; ``noun`` names what spends ("run", "sweep")."""
    from sweepbench.bench.results import format_money

    if not decision.needs_confirmation:
        return
    if not sys.stdin.isatty():
        err.print(f"[red]refused:[/red] this {noun} spends money; confirm with --yes")
        raise typer.Exit(2)
    up_to = decision.spend_up_to
    high = "an unknown amount" if up_to is None else format_money(up_to)
    if not typer.confirm(question.format(high=high), default=False, err=True):
        err.print("Not confirmed; nothing was spent.")
        raise typer.Exit(2)
