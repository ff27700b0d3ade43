"""What the estimate says, in order (spec §6.2), for the CLI and the web app alike."""

from __future__ import annotations

from sweepbench.bench.dialogue.bench_item import ROLE_OF
from sweepbench.bench.dialogue.calibration import CALIBRATE_AFTER, FlowCalibration
from sweepbench.bench.plan import BenchPlan
from sweepbench.bench.results import format_money
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.scoring.judge import JUDGE_HIGH_OUTPUT_TOKENS
from sweepbench.money.prices import openrouter_price_line
from sweepbench.roles import label, role_word


def estimate_lines(prepared: PreparedRun, *, surface: str = "cli") -> list[str]:
    """The estimate as lines of text. Plan errors come alone, after "This run can't start
    yet:"; otherwise counts, grading, cost per role, limits, coverage and resumption."""
    plan = prepared.plan
    if plan.errors:
        return ["This run can't start yet:", *(f"• {e}" for e in plan.errors)]
    lines: list[str] = []
    config = plan.config
    done = f" ({plan.already_done:,} already answered)" if plan.already_done else ""
    lines.append(f"{len(plan.items):,} questions for {config.model}{done}.")
    lines.append(_grading_line(plan))
    lines.extend(_cost_lines(plan))
    policies = {route.policy for route in plan.routes.values()}
    prices = openrouter_price_line(
        (r.model for r in plan.roles), route=next(iter(policies)) if policies else None
    )
    if prices is not None:
        lines.append(prices)
    lines.extend(plan.hosts_lines)
    lines.extend(_limit_lines(plan, surface))
    lines.append(_coverage_line(plan))
    lines.extend(plan.notes)
    lines.extend(_calibration_line(c) for c in prepared.dialogue_calibration)
    if plan.blocked:  # priced all the same: what is missing is only needed to run it
        lines.append("It can't run here yet:")
        lines.extend(f"• {b}" for b in plan.blocked)
    previous = prepared.previous
    if previous is not None and not plan.items:
        lines.append(
            f"The run with these exact settings ({previous.id}) has answered every question: "
            "nothing is left to run. Add --no-resume to start a new run."
        )
    elif previous is not None:
        again = "Running again" if surface == "web" else "This run"
        lines.append(
            f"An earlier run with these exact settings ({previous.id}) stopped after "
            f"{plan.already_done:,} answers, having spent {format_money(plan.already_spent)}. "
            f"{again} picks up where it left off."
        )
    return lines


def _grading_line(plan: BenchPlan) -> str:
    judge = plan.config.judge
    total = len(plan.items)
    if judge is None or plan.judged == 0:
        return "Every answer is checked automatically against the answer key."
    mode = " (verdict only)" if plan.config.decision_judge else ""
    if plan.judged == total:
        return f"Every answer is graded by {judge}{mode}."
    return (
        f"{plan.judged:,} answers are graded by {judge}{mode}; the rest are checked "
        "automatically against the answer key."
    )


def _cost_lines(plan: BenchPlan) -> list[str]:
    low, high = plan.low, plan.high
    lines: list[str] = []
    if low is None or high is None:
        unpriced = ", ".join(r.model for r in plan.roles if r.low is None)
        lines.append(f"No cost estimate: no price is listed for {unpriced}.")
    else:
        text = (
            f"Estimated cost: {format_money(low)} to {format_money(high)}. The low end counts "
            "the questions only. The high end assumes every answer runs to the length limit "
            f"({plan.config.max_tokens:,} tokens), so real runs land well below it."
        )
        if plan.role("judge") is not None and not plan.config.decision_judge:
            text += (
                f" Each grade is assumed to take up to {JUDGE_HIGH_OUTPUT_TOKENS:,} tokens of "
                "judge output, thinking included."
            )
        lines.append(text)
    for role in plan.roles:
        cost = (
            "no estimate"
            if role.low is None or role.high is None
            else f"{format_money(role.low)} to {format_money(role.high)}"
        )
        limit = "" if role.limit is None else f" · limit {format_money(role.limit)}"
        spent = f" · already spent {format_money(role.spent)}" if role.spent else ""
        lines.append(
            f"{role_word(role.role)} ({role.model}): {role.calls:,} calls, {cost}{limit}{spent}"
        )
    return lines


_FLOW_WORDS = {"guided": "guided lessons", "single": "single-turn teaching dialogues"}


def _about(value: float, digits: int = 1) -> str:
    """A mean as a person reads it: whole when it is, else to ``digits`` decimals."""
    if abs(value - round(value)) < 10**-digits / 2:
        return f"{round(value):,}"
    return f"{value:,.{digits}f}"


def _counted(value: float, noun: str) -> str:
    """ "1 call", "2.5 calls"."""
    shown = _about(value)
    return f"{shown} {noun}" if shown == "1" else f"{shown} {noun}s"


def _calibration_line(found: FlowCalibration) -> str:
    """What the finished dialogues of these models came to (spec: the dialogue estimate is
    calibrated once there are five), or that there are not enough yet."""
    words = _FLOW_WORDS[found.flow]
    calibration = found.calibration
    if calibration is None:
        if not found.finished:
            return f"No finished {words} of these models yet to calibrate the estimate from."
        return (
            f"Only {found.finished:,} finished {words} of these models so far: the estimate is "
            f"calibrated from {CALIBRATE_AFTER}."
        )
    shares: list[str] = []
    for role, means in calibration.roles.items():
        tokens = "tokens in" if not shares else "in"
        shares.append(
            f"{_about(means.input_tokens, 0)} {tokens} and {_about(means.output_tokens, 0)} out "
            f"for the {label(ROLE_OF[role])} ({_counted(means.calls, 'call')})"
        )
    text = (
        f"{words[:1].upper()}{words[1:]} of these models so far ({calibration.dialogues:,} "
        f"finished): about {_counted(calibration.steps, 'step')} "
        f"({_counted(calibration.turns, 'turn')}) per dialogue; {', '.join(shares)}"
    )
    usd = calibration.usd_per_dialogue()
    if usd is None:
        return text + "; a model here has no listed price, so no cost per dialogue."
    return (
        f"{text}; at today's prices about {format_money(usd)} per dialogue, "
        f"{format_money(usd * found.pending)} for the {found.pending:,} to run."
    )


def _limit_lines(plan: BenchPlan, surface: str) -> list[str]:
    if plan.limit_problems:
        return ["Spending limit too low:", *(f"• {p}" for p in plan.limit_problems)]
    limits = plan.limits
    lines: list[str] = []
    high = plan.high
    if limits.total is None and _all_free(plan):
        lines.append("No spending limit is needed: every model here is free, so nothing is spent.")
    elif limits.total is None:
        lines.append(
            "No total spending limit: the run continues until it finishes or the key runs out "
            "of credit."
        )
    elif high is not None and high + plan.already_spent <= limits.total:
        lines.append(f"Your limit of {format_money(limits.total)} covers even the high estimate.")
    else:
        again = "press Run again" if surface == "web" else "run the same command again"
        lines.append(
            f"When spending reaches {format_money(limits.total)} the run pauses and keeps every "
            f"finished answer; {again} with a higher limit to carry on."
        )
    return lines


def _all_free(plan: BenchPlan) -> bool:
    """Every role's model is free (a local or scripted model, an own server sent no key): no
    key, so no credit to run out of. A $0 price called with the operator's key is not free."""
    from sweepbench.errors import UserError
    from sweepbench.models.registry import model_info
    from sweepbench.money.prices import price_for

    for role in plan.roles:
        try:
            price = price_for(model_info(role.model))
        except UserError:  # an unknown model is one of the plan's errors, said elsewhere
            return False
        if price is None or not price.free:
            return False
    return bool(plan.roles)


def _coverage_line(plan: BenchPlan) -> str:
    benchmark = plan.benchmark
    in_scope = benchmark.in_scope(plan.selection.scope)
    everything = sum(len(t.items) for t in in_scope)
    complete = plan.selected == everything and all(t.available for t in in_scope)
    if complete:
        text = "This is a complete run of the scope."
        if any(t.region_specific for t in benchmark.tasks) and plan.selection.scope == "core":
            text += " It leaves out the region-specific sets; add --scope paper to include them."
        return text
    unavailable = [t.id for t in in_scope if not t.available]
    if plan.selected == everything and unavailable:  # every question it has; a task it lacks
        return (
            f"This is a partial run: every question that loaded is selected, but "
            f"{', '.join(unavailable)} could not be loaded (see below), so its scores cannot "
            "cover the whole scope."
        )
    return (
        f"This is a partial run ({plan.selected:,} of {everything:,} questions in scope): its "
        "scores cover only the questions that ran."
    )


__all__ = ["estimate_lines"]
