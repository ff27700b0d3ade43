"""What the ``sweepbench bench`` commands share: the consoles, the options, turning them into a
``BenchRequest``, and the estimate's rendering."""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from sweepbench.bench.request import BenchRequest, StartDecision
    from sweepbench.bench.resume import PreparedRun
from sweepbench.roles import BENCH_ROLES

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
JudgeOpt = Annotated[str | None, typer.Option("--judge", help="The judge model.")]
StudentOpt = Annotated[
    str | None,
    typer.Option(
        "--student", help="The simulated student of teaching dialogues (default: the judge)."
    ),
]
DecisionOpt = Annotated[
    bool, typer.Option("--decision-judge", help="Verdict-only judge: cheaper, no reasons.")
]
PresetOpt = Annotated[str, typer.Option("--preset", help="quick, auto-checked or full.")]
ScopeOpt = Annotated[
    str, typer.Option("--scope", help="core, or paper (include region-specific sets).")
]
AreasOpt = Annotated[str | None, typer.Option("--areas", help="Comma-separated area keys.")]
TasksOpt = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids.")]
SkillsOpt = Annotated[str | None, typer.Option("--skills", help="Only these dimensions.")]
PerTaskOpt = Annotated[int | None, typer.Option("--per-task", help="First N items per task.")]
MaxItemsOpt = Annotated[int | None, typer.Option("--max-items", help="Stop after N items.")]
MaxTokensOpt = Annotated[
    int | None, typer.Option("--max-tokens", help="Answer length limit (default 8,192).")
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

FLAGS: dict[str, str] = {
    "benchmark": "BENCHMARK", "data": "--data", "preset": "--preset", "scope": "--scope",
    "areas": "--areas", "tasks": "--tasks", "skills": "--skills", "per_task": "--per-task",
    "max_items": "--max-items", "models": "--model/--judge/--student", "max_tokens": "--max-tokens",
    "decision_judge": "--decision-judge", "edu_scoring": "--edu-scoring", "limit": "--limit",
    "role_limits": "--limit", "concurrency": "--concurrency", "rpm": "--rpm", "tpm": "--tpm",
    "resume": "--no-resume", "retry_failed": "--retry-failed",
    "accept_unpriced": "--accept-unpriced", "confirmed": "--yes",
    "allow_data_outside": "--allow-data-outside", "scoring": "--scoring", "effort": "--effort",
    "temperature": "--temperature", "repeats": "--repeats", "prompt_version": "--prompt-version",
}  # fmt: skip
"""How the CLI names each field of a BenchRequest, for its errors."""

RUN_OPTIONS: dict[str, str] = {
    "concurrency": "concurrency", "rpm": "rpm", "tpm": "tpm", "retry_failed": "retry_failed",
    "accept_unpriced": "accept_unpriced", "yes": "confirmed",
}  # fmt: skip
"""Options only ``bench run`` has: option name → BenchRequest field."""


def build_request(options: Mapping[str, Any]) -> BenchRequest:
    """The request of ``bench estimate`` / ``bench run`` out of a command's arguments (its
    ``locals()``: Typer reads each command's own signature, so both declare the options and
    this is the one place that passes them on)."""
    from sweepbench.bench.request import BenchRequest, merge_limits, parse_limit

    parsed = [parse_limit(text) for text in options["limit"] or ()]
    for role in ("target", "judge"):
        text = options[f"limit_{role}"]
        if text is not None and text.strip():
            parsed.append(parse_limit(text, f"--limit-{role}", role=role))
    limits = merge_limits(parsed)
    models = {"target": options["model"], "judge": options["judge"]}
    if options.get("student"):
        models["student"] = options["student"]
    values: dict[str, Any] = {
        "benchmark": options["benchmark_name"],
        "data": options["data"],
        "preset": options["preset_name"],
        "scope": options["scope_name"],
        "areas": options["areas"],
        "tasks": options["tasks"],
        "skills": options["skills"],
        "per_task": options["per_task"],
        "max_items": options["max_items"],
        "models": models,
        "max_tokens": options["max_tokens"],
        "decision_judge": options["decision_judge"],
        "edu_scoring": options["edu_scoring"],
        "limit": limits.total,
        "role_limits": dict(limits.roles),
        "allow_data_outside": options["allow_data_outside"],
        "scoring": options["scoring"],
    }
    for knob in ("effort", "temperature", "repeats", "prompt_version"):
        if options.get(knob) is not None:
            values[knob] = options[knob]
    values.update({field: options[name] for name, field in RUN_OPTIONS.items() if name in options})
    if "no_resume" in options:
        values["resume"] = not options["no_resume"]
    return BenchRequest.from_values(values, names=FLAGS)


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
