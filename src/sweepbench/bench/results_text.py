"""A run's results in words: scores rounded for display, dollar amounts (spec §6.2), the
heading and body shown when a run ends (spec §8.3), and the one-line scores with the
partial-run note."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from sweepbench.bench.results_shapes import Summary
from sweepbench.money.prices import format_usd

Outcome = Literal["completed", "completed_with_errors", "paused_budget", "interrupted"]
"""How a run ended (spec §8.3)."""
Surface = Literal["cli", "web"]
"""Where the outcome text is shown: the CLI says what command to run, the web says which button."""


def format_score(value_100: float, decimals: int = 1) -> str:
    """A 0–100 score rounded half up (83.65 → "83.7"), ignoring float noise past 9 decimals."""
    exact = Decimal(f"{value_100:.9f}")
    return str(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def format_money(amount: Decimal | None) -> str:
    """Dollars as the run flow shows them (spec §6.2): ``?`` unknown, ``$1,234.56`` from 0.995,
    ``$0.12`` from 0.01, ``$0`` for exactly zero, else six decimals without trailing zeros (the
    one money formatter, :func:`~sweepbench.money.prices.format_usd`, in the benchmark style)."""
    return format_usd(amount, none="?", small_digits=6)


def _answers(count: int) -> str:
    """ "1 answer" / "N answers"."""
    return f"{count:,} answer" + ("" if count == 1 else "s")


def _error_clause(errors: int) -> str:
    """ "F hit errors" / "1 hit an error"."""
    return "1 hit an error" if errors == 1 else f"{errors:,} hit errors"


def _sentence(text: str) -> str:
    """Text with its first letter capitalised (the rest kept as is)."""
    return text[:1].upper() + text[1:]


def outcome_text(
    outcome: Outcome,
    *,
    scored: int,
    errors: int,
    spent: Decimal,
    reason: str | None = None,
    surface: Surface = "cli",
) -> tuple[str, str]:
    """The heading and body shown when a run ends (spec §8.3). ``reason`` (why an interrupted
    run stopped) must already be scrubbed of secrets."""
    done = f"{_answers(scored)} scored for {format_money(spent)}"
    again = "press Run again" if surface == "web" else "run the same command again"
    errors_note = f" {_sentence(_error_clause(errors))}." if errors else ""
    if outcome == "paused_budget":
        if reason and reason.strip():  # the refusal names the limit and what sets it
            why = reason.strip().rstrip(".")
            body = (f"{done}. Everything finished is saved.{errors_note} {why}. Then {again} "
                    "to carry on from here.")  # fmt: skip
        else:
            body = (f"{done}. Everything finished is saved.{errors_note} Raise the limit and "
                    f"{again} to carry on from here.")  # fmt: skip
        return "Paused at your spending limit", body
    if outcome == "interrupted":
        why = f": {reason.strip().rstrip('.')}" if reason and reason.strip() else ""
        body = f"{done} before the run stopped{why}.{errors_note} {_sentence(again)} to continue."
        return "Stopped early", body
    if outcome == "completed_with_errors":
        retry = (
            "press Run again" if surface == "web" else "run the same command with --retry-failed"
        )
        body = (f"{done}; {_error_clause(errors)}, usually rate limits or timeouts. "
                f"{_sentence(retry)} to retry only those.")  # fmt: skip
        return "Finished with some errors", body
    return "Finished", f"{done}."


PARTIAL_NOTE = "A partial run is too small to compare with the leaderboard."
TEACHING_NOTE = (
    "Teaching was scored by ELBench's runtime evaluator, the only Teaching scoring a run can "
    "replicate; the published Teaching figures come from a per-dialogue re-judge whose "
    "procedure is not in ELBench's repository, so this run's Teaching score and a published "
    "one are not the same measurement."
)
"""Said of an ELBench run with a Teaching task (issue 25: never shown as the same measurement
as the published Teaching figure without this)."""


def teaching_note(summary: Summary) -> str | None:
    """:data:`TEACHING_NOTE` for an ELBench run with a scored task of ELBench's teaching
    runtime (from its shipped registry); None for any other run."""
    if summary.benchmark != "elbench" or not summary.tasks:
        return None
    from sweepbench.bench.sources.elbench_registry import load_registry

    runtime = {t.id for t in load_registry().tasks if t.grading == "runtime"}
    return TEACHING_NOTE if any(t.task in runtime for t in summary.tasks) else None


def scores_line(summary: Summary) -> str:
    """ "Scores on the questions that ran: Knowledge & reasoning 71.2 · Safety 80.4 · …" (areas
    present, one decimal), with the partial-run note when the run does not cover its scope
    and :func:`teaching_note` for an ELBench run with a Teaching task."""
    if not summary.areas:
        return "No questions were scored."
    parts = " · ".join(f"{a.label} {format_score(a.score_100)}" for a in summary.areas)
    line = f"Scores on the questions that ran: {parts}"
    if not summary.covers_scope:
        line = f"{line}. {PARTIAL_NOTE}"
    teaching = teaching_note(summary)
    return f"{line.removesuffix('.')}. {teaching}" if teaching else line
