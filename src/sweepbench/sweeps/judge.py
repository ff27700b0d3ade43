"""Judge-scored sweeps: a judge model grades each cell's output into a score from 0 to 1.

The judge is asked through the judge contract benchmarks use too
(:mod:`sweepbench.judging.contract`): the same messages (``judge_messages``), the same strict
JSON verdict schema (``verdict_schema``) and the same parser (``parse_verdict``), on a one-item
task built from the sweep's prompt and the rubric (or the reference answer). Every grade is
one engine call with role ``judge``, priced in the sweep's estimate and admitted with the sweep
at its worst case: the judge prompt with the cell's answer at its whole output budget
(:data:`ANSWER_BYTES_PER_TOKEN` bytes a token; a longer answer is cut to that before it is
sent, so the call never needs more than was held), and the judge's own budget out.

With repeats, each cell is a :class:`~sweepbench.bench.sweeps.compare.SettingScores` whose items
are its samples (``sample-<r>``): the r-th sample of every cell is paired with the r-th of the
others, and every cell is compared with the best (:func:`compare_cells`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sweepbench.errors import UserError
from sweepbench.judging.contract import (
    JUDGE_MAX_TOKENS,
    JudgeSpec,
    PlainItem,
    PlainTask,
    judge_messages,
    parse_verdict,
    verdict_schema,
)
from sweepbench.models.base import GenerateSettings, Request
from sweepbench.models.registry import model_info, routed
from sweepbench.models.routes import DEFAULT_ROUTE, RoutePolicy
from sweepbench.models.tokens import prompt_token_bound, typical_prompt_tokens
from sweepbench.money.estimate import UTILISATION, CallEstimate
from sweepbench.money.prices import MILLION, price_for

if TYPE_CHECKING:
    from sweepbench.axes.cells import Cell
    from sweepbench.sweeps.results import SweepResult

ANSWER_BYTES_PER_TOKEN = 8
"""Bytes of answer the judge's worst case allows per output token of the cell (English text
is about 4 bytes a token). An answer longer than its cell's budget × this is cut to it before
it is sent to the judge, and the grade says so."""
MAX_GUIDE_CHARS = 50_000
"""The longest rubric or reference taken."""
PASS_AT = 0.5
"""A score at or above this counts as a pass (the judge contract's rule)."""
SAMPLE_TASK = "sweep"
"""The task every cell's samples belong to in the paired comparison."""
REFERENCE_RUBRIC = (
    "The answer agrees with the reference answer given in [REFERENCE]: it says what the "
    "reference says (in any wording) and contradicts none of it. Score 1 for full agreement, "
    "0 for none, partial credit in between."
)
"""The rubric used when the sweep is graded against a reference answer."""

GradeStatus = Literal["graded", "unparseable", "failed", "not_run"]
"""``graded``: a score; ``unparseable``: the judge answered but gave no usable verdict;
``failed``: the judge's call failed; ``not_run``: nothing to grade, or stopped first."""


@dataclass(frozen=True)
class SweepJudge:
    """Who grades a sweep's cells and against what."""

    model: str
    rubric: str | None = None
    """What a good answer does (exactly one of ``rubric`` and ``reference``)."""
    reference: str | None = None
    """A reference answer to compare with."""
    max_tokens: int = JUDGE_MAX_TOKENS
    """The judge's output budget (capped by the judge model's own maximum)."""

    @property
    def spec(self) -> JudgeSpec:
        """The judge contract's configuration of this sweep's one task."""
        return JudgeSpec(rubric=self.rubric or REFERENCE_RUBRIC, template="sweep")

    def as_json(self) -> dict[str, Any]:
        """The judge as stored with the sweep."""
        return {
            "model": self.model,
            "rubric": self.rubric,
            "reference": self.reference,
            "max_tokens": self.max_tokens,
        }


@dataclass
class Grade:
    """One sample's grade (a failure is kept as one, never a score of 0)."""

    status: GradeStatus
    score: float | None = None
    """0–1 when graded."""
    passed: bool | None = None
    reason: str = ""
    """The judge's reason, or why there is no score."""
    cost_usd: Decimal | None = None
    """What the judge's call cost (None: no price, or not run)."""
    call_id: str | None = None
    raw: str = ""
    """The judge's reply as received, kept when it could not be read."""
    cut: bool = False
    """The answer was cut to the judge's byte allowance before it was sent."""

    def as_json(self) -> dict[str, Any]:
        """The grade as stored and exported."""
        return {
            "status": self.status,
            "score": self.score,
            "passed": self.passed,
            "reason": self.reason,
            "cost_usd": None if self.cost_usd is None else str(self.cost_usd),
            "call_id": self.call_id,
            "raw": self.raw,
            "answer_cut": self.cut,
        }


def read_guide(value: str | None, what: str) -> str | None:
    """A rubric or reference: the file's text when ``value`` names an existing file, else
    ``value`` itself; None when not given. UserError for an empty, unreadable or too long
    one."""
    if value is None:
        return None
    text = value
    if _names_file(value):
        try:
            text = Path(value).read_text("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"the {what} file {value} is not UTF-8 text") from None
        except OSError as exc:
            raise UserError(
                f"cannot read the {what} file {value} ({exc.strerror or exc})"
            ) from None
    if not text.strip():
        raise UserError(f"the {what} is empty: say what a good answer is")
    if len(text) > MAX_GUIDE_CHARS:
        raise UserError(
            f"the {what} is {len(text):,} characters; a sweep takes at most {MAX_GUIDE_CHARS:,}"
        )
    return text


def _names_file(value: str) -> bool:
    """Whether ``value`` is the path of an existing file (text with line breaks never is)."""
    if not value.strip() or "\n" in value or len(value) > 1024:
        return False
    try:
        return Path(value).expanduser().is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte
        return False


def resolve_judge(
    judge: str | None, rubric: str | None = None, reference: str | None = None
) -> SweepJudge | None:
    """The sweep's judge from what was asked (None: no judge). UserError unless exactly one of
    ``rubric`` and ``reference`` comes with ``judge``, or when the judge model is unknown."""
    model = (judge or "").strip()
    if not model:
        if rubric is not None or reference is not None:
            given = "a rubric" if rubric is not None else "a reference"
            raise UserError(f"{given} needs a judge model to grade with (--judge MODEL)")
        return None
    if rubric is not None and reference is not None:
        raise UserError("give the judge a rubric (--rubric) or a reference (--reference), not both")
    if rubric is None and reference is None:
        raise UserError(
            "the judge needs a rubric (--rubric TEXT|FILE) or a reference answer "
            "(--reference TEXT|FILE) to grade against"
        )
    info = model_info(model)  # UserError for an unknown model
    limit = info.max_output_tokens
    budget = min(JUDGE_MAX_TOKENS, limit) if limit else JUDGE_MAX_TOKENS
    return SweepJudge(
        model=model,
        rubric=read_guide(rubric, "rubric"),
        reference=read_guide(reference, "reference"),
        max_tokens=budget,
    )


def _task(judge: SweepJudge, kind: str) -> PlainTask:
    return PlainTask(id=f"sweep-{kind}", area="sweep", judge=judge.spec)


def _item(judge: SweepJudge, kind: str, prompt: str) -> PlainItem:
    return PlainItem(
        prompt=prompt, dimension=kind, reference=judge.reference, metadata={"kind": kind}
    )


def answer_allowance(cell: Cell) -> int:
    """The most bytes of a cell's answer the judge is sent (and its worst case holds)."""
    return cell.max_tokens * ANSWER_BYTES_PER_TOKEN


def cut_answer(text: str, allowance: int) -> tuple[str, bool]:
    """``text`` within ``allowance`` UTF-8 bytes (cut at a character boundary); whether it was
    cut."""
    data = text.encode("utf-8")
    if len(data) <= allowance:
        return text, False
    return data[:allowance].decode("utf-8", errors="ignore"), True


def judge_request(judge: SweepJudge, kind: str, prompt: str, answer: str) -> Request:
    """The judge call grading ``answer`` (already within its allowance)."""
    task = _task(judge, kind)
    messages = judge_messages(task, _item(judge, kind, prompt), answer)
    settings = GenerateSettings(
        max_tokens=judge.max_tokens,
        temperature=0.0,
        response_format=verdict_schema(task, False),
    )
    return Request(judge.model, messages, settings)


def estimate_judge(
    judge: SweepJudge,
    kind: str,
    prompt: str,
    cell: Cell,
    answer_fraction: float,
    *,
    route: RoutePolicy = DEFAULT_ROUTE,
) -> CallEstimate:
    """The price of grading one of ``cell``'s samples: typical (the answer at the cell's
    typical share of its budget, the judge at its typical share of its own) and the worst case
    that is held (the judge prompt plus the answer at its whole allowance, the judge's whole
    budget out; an OpenRouter judge on its ``route``)."""
    info = routed(model_info(judge.model), route)
    empty = judge_request(judge, kind, prompt, "")
    contents = [m.content for m in empty.messages]
    answer_tokens = math.ceil(cell.max_tokens * answer_fraction)
    input_tokens = typical_prompt_tokens(contents) + answer_tokens
    fraction = UTILISATION["none"]
    out = judge.max_tokens
    price = price_for(info)
    if price is None:
        return CallEstimate(info.id, input_tokens, out, fraction, 0, None, None)
    bound = prompt_token_bound(contents) + answer_allowance(cell)
    held = price.held()
    hold = (bound * held.input + out * held.output) / MILLION
    typical_out = (Decimal(out) * Decimal(str(fraction))).quantize(Decimal(1), rounding=ROUND_UP)
    typical = (input_tokens * price.input + typical_out * price.output) / MILLION
    return CallEstimate(
        info.id, input_tokens, out, fraction, 0, typical, hold, price.free, hold,
    )  # fmt: skip


def read_grade(judge: SweepJudge, text: str) -> Grade:
    """The grade a judge's reply gives (``unparseable`` when it gives none)."""
    verdict = parse_verdict(text, judge.spec)
    if verdict is None:
        return Grade("unparseable", reason="the judge's reply was not a usable verdict", raw=text)
    return Grade("graded", score=verdict.score, passed=verdict.passed, reason=verdict.reason)


def compare_cells(result: SweepResult) -> dict[str, Any] | None:
    """With a judge and repeats: every cell against the best-scoring cell, paired by repeat
    number (:func:`~sweepbench.bench.sweeps.compare.compare_settings`), as JSON data; None
    without a judge or repeats. Cells with no graded sample are left out (named in
    ``left_out``); fewer than two graded cells give the reason instead of a comparison."""
    plan = result.plan
    if plan.judge is None or plan.repeats < 2 or len(plan.cells) < 2:
        return None
    from sweepbench.bench.sweeps.compare import ItemSamples, SettingScores, compare_settings

    settings: list[SettingScores] = []
    left_out: list[str] = []
    labels = [cell.label for cell in plan.cells]
    for cell in plan.cells:
        label = (
            cell.label if labels.count(cell.label) == 1 else f"{cell.label} (cell {cell.index + 1})"
        )
        samples = result.cell_samples(cell.index)
        items = {
            f"sample-{s.repeat}": ItemSamples(
                SAMPLE_TASK, (float(s.grade.score),), (float(s.grade.score) >= PASS_AT,)
            )
            for s in samples
            if s.grade is not None and s.grade.status == "graded" and s.grade.score is not None
        }
        if not items:
            left_out.append(label)
            continue
        costs = [s.cost_usd for s in samples]
        cost = (
            None
            if any(c is None for c in costs)
            else sum((c for c in costs if c is not None), Decimal(0))
        )
        settings.append(SettingScores(label, items, cost, graded_tasks=frozenset({SAMPLE_TASK})))
    document: dict[str, Any] = {"paired_by": "repeat number", "left_out": left_out}
    try:
        comparison = compare_settings(settings)
    except UserError as exc:
        return {**document, "error": str(exc)}
    return {**document, **comparison.as_json()}
