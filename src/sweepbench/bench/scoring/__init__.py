"""Scoring: one entry point, :func:`score_answer`, that checks an answer by its task's rule.

Judged tasks are graded by a judge model through the runner (see :mod:`.judge` for the
request and verdict contract); multi-turn tasks by the teaching runtime (later).
"""

from __future__ import annotations

from collections.abc import Callable

from sweepbench.bench.items import Item, Task
from sweepbench.bench.scoring.base import Score
from sweepbench.errors import DataError

RULE_SCORERS = ("choice", "choice_multi", "option_set", "ifeval", "math", "aime", "exact",
                "normalised", "regex", "numeric", "edu_rule")  # fmt: skip
JUDGED_SCORERS = ("judge", "runtime")
SCORERS = RULE_SCORERS + JUDGED_SCORERS

__all__ = ["RULE_SCORERS", "SCORERS", "Score", "format_checker", "score_answer"]


def _prefixes(task: Task, default: str) -> tuple[str, ...]:
    from sweepbench.bench.scoring.choice import EN_PREFIXES, ZH_PREFIXES

    language = str(task.options.get("prefixes", default)).lower()
    return tuple(ZH_PREFIXES if language == "zh" else EN_PREFIXES)


def _choices(task: Task, item: Item) -> int:
    """The number of options: an item's own ``choices`` (a count, or the list of option
    texts), else the task's, else 4."""
    given = item.metadata.get("choices") or task.options.get("choices") or 4
    return len(given) if isinstance(given, list | tuple) else int(given)


def score_answer(task: Task, item: Item, response: str) -> Score:
    """Check ``response`` to ``item`` by the rule of ``task``. DataError for a task whose
    scorer is not a rule (judged tasks) or whose item lacks what the rule needs."""
    name = task.scorer
    ref = item.reference
    if name == "choice":
        from sweepbench.bench.scoring.choice import score_choice

        return score_choice(
            response, str(ref), choices=_choices(task, item), prefixes=_prefixes(task, "en")
        )
    if name == "choice_multi":
        from sweepbench.bench.scoring.choice import score_choice_multi

        return score_choice_multi(
            response, str(ref), choices=_choices(task, item), prefixes=_prefixes(task, "zh")
        )
    if name == "option_set":
        from sweepbench.bench.scoring.option_set import score_option_set

        return score_option_set(response, str(ref))
    if name == "ifeval":
        from sweepbench.bench.scoring.ifeval import score_ifeval

        meta = item.metadata
        return score_ifeval(
            response,
            meta.get("instruction_id_list") or [],
            meta.get("kwargs") or [],
            prompt=str(meta.get("ifeval_prompt") or item.prompt),
        )
    if name in ("math", "aime"):
        from sweepbench.bench.scoring.mathanswer import score_aime, score_math

        return (score_math if name == "math" else score_aime)(response, str(ref))
    if name in ("exact", "normalised"):
        from sweepbench.bench.scoring.text import score_exact, score_normalised

        return (score_exact if name == "exact" else score_normalised)(response, ref)
    if name == "regex":
        from sweepbench.bench.scoring.text import score_regex

        pattern = task.options.get("pattern") or item.metadata.get("pattern")
        if not pattern:
            raise DataError(f"task {task.id}: the regex scorer needs a pattern")
        return score_regex(response, str(pattern), None if ref is None else str(ref))
    if name == "numeric":
        from sweepbench.bench.scoring.text import score_numeric

        return score_numeric(
            response,
            ref,
            tolerance=float(task.options.get("tolerance", 1e-6)),
            relative=bool(task.options.get("relative", False)),
        )
    if name == "edu_rule":
        from sweepbench.bench.scoring.edu_rule import score_edu_rule

        return score_edu_rule(response, item)
    raise DataError(f"task {task.id}: {name!r} is not a rule scorer (known: {', '.join(SCORERS)})")


def format_checker(task: Task, item: Item) -> Callable[[str], bool] | None:
    """For choice tasks, a check that an answer has an extractable letter (spec §10.3: a
    reply without one gets one reminder); None for other tasks."""
    if task.scorer not in ("choice", "choice_multi"):
        return None
    from sweepbench.bench.scoring.choice import extract_choice, extract_choices

    prefixes = _prefixes(task, "en" if task.scorer == "choice" else "zh")
    choices = _choices(task, item)
    if task.scorer == "choice":
        return lambda text: extract_choice(text, choices, prefixes) is not None
    return lambda text: extract_choices(text, choices, prefixes) is not None
