"""One item of a benchmark run: the model's answer (and its one second try, spec §10.3), the
judge's grade or a teaching dialogue, and the answer row each ends in, queued for the runner's
group commit.

:class:`ItemAnswering` is a part of :class:`~sweepbench.bench.run.BenchRunner`, which holds the
state it reads and makes its calls (``_call``: through the engine, raising :class:`StopRun` when
the run must stop making calls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sweepbench.bench.answers import Answer, from_result, verdict_schema
from sweepbench.bench.dialogue.bench_item import Taught, teach
from sweepbench.bench.dialogue.flow import DialogueRole
from sweepbench.bench.dialogue.scenario import Scenario, is_dialogue, scenario_for
from sweepbench.bench.dialogue.storage import StoredTurn, read_turns
from sweepbench.bench.dialogue.turns import Turn
from sweepbench.bench.followups import second_try
from sweepbench.bench.items import Item, Task
from sweepbench.bench.plan import BenchPlan
from sweepbench.bench.resume import JUDGE_ERRORS, PreparedRun
from sweepbench.bench.run_progress import Progress
from sweepbench.bench.scoring import format_checker, score_answer
from sweepbench.bench.scoring.base import Score
from sweepbench.bench.scoring.judge import JUDGE_MAX_TOKENS, judge_messages, parse_verdict
from sweepbench.bench.storage_rows import AnswerRow
from sweepbench.engine import Executor
from sweepbench.engine.retry import RetryPolicy, error_type
from sweepbench.errors import DataError, SweepbenchError
from sweepbench.models.base import GenerateSettings, Message, Request, Result
from sweepbench.roles import Role
from sweepbench.store import Store


class StopRun(Exception):
    """Raised inside a worker when the run must stop making calls."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class ItemAnswering:
    """How the runner answers one item and turns it into an answer row."""

    plan: BenchPlan
    prepared: PreparedRun
    store: Store
    executor: Executor
    run_id: str
    progress: Progress
    on_progress: Callable[[Progress], None] | None
    _tasks: dict[str, Task]
    _answer_settings: GenerateSettings
    _dialogue_retry_delay_s: float
    _retries: dict[str, list[dict[str, Any]]]
    _pending_answers: list[AnswerRow]
    _pending_turns: list[StoredTurn]
    _wake: asyncio.Event

    if TYPE_CHECKING:  # the runner's own

        async def _call(
            self, role: Role, request: Request, key: str, retry: RetryPolicy | None = None
        ) -> tuple[Result, int]: ...

        def _halt(self, status: str, reason: str) -> None: ...

    # -- one item ----------------------------------------------------------------------------

    async def _process(self, item: Item) -> None:
        task = self._tasks[item.task]
        if is_dialogue(task):
            await self._teach(task, item)
            return
        stored = self.prepared.regrade.get(item.key)
        if stored is not None:
            answer = Answer(
                text=stored["answer"], stop_reason=stored["stop_reason"] or "end",
                attempts=stored["attempts"], input_tokens=stored["input_tokens"],
                output_tokens=stored["output_tokens"],
                reasoning_tokens=stored["reasoning_tokens"], latency_ms=stored["latency_ms"] or 0,
            )  # fmt: skip
        else:
            answer = await self._answer(task, item)
        if answer.error is not None:
            self._queue(
                self._failure(item, error_type(answer.error), str(answer.error), answer=answer)
            )
            return
        if task.needs_judge:
            await self._judge(task, item, answer)
            return
        self._queue(self._auto_scored(task, item, answer))

    def _auto_scored(self, task: Task, item: Item, answer: Answer) -> AnswerRow:
        """The row of an answer checked by its task's rule (a scoring error is a failure)."""
        try:
            score = score_answer(task, item, answer.text)
        except SweepbenchError as exc:
            return self._failure(item, "scoring_error", str(exc), answer=answer)
        return self._scored(item, answer, score, judge=None)

    async def _answer(self, task: Task, item: Item) -> Answer:
        """Ask the model under test (with retries), then once more where spec §10.3 says so:
        a choice answer without a letter, or a math answer cut by the length limit."""
        config = self.plan.config
        messages = ((Message("system", item.system),) if item.system else ()) + (
            Message("user", item.prompt),
        )
        settings = self._answer_settings
        if item.sample:
            settings = replace(settings, sample=item.sample)
        request = Request(config.model, messages, settings)
        result, attempts = await self._call("target", request, item.key)
        answer = from_result(result, attempts, self._scrub)
        if answer.error is not None:
            return answer
        check = format_checker(task, item)
        if check is not None and not check(result.text):
            answer.format_valid = False
        second = second_try(task, item, messages, result, config.max_tokens, check)
        if second is None:
            return answer
        if settings.effort or settings.temperature is not None or settings.sample:
            # the follow-up is asked with the setting's own knobs, as the first try was
            knobs = replace(
                second.settings, effort=settings.effort, temperature=settings.temperature,
                sample=settings.sample,
            )  # fmt: skip
            second = replace(second, settings=knobs)
        try:
            retried, more = await self._call("target", second, item.key)
        except StopRun as stop:  # a limit or Stop between the tries: the paid answer stands
            self._halt(stop.status, stop.reason)
            return answer
        except asyncio.CancelledError:  # stopped during the second try: keep the first
            self._queue(self._auto_scored(task, item, answer))
            raise
        again = from_result(retried, attempts + more, self._scrub)
        if again.error is None and (check is None or check(again.text)):
            return again.after(answer)
        answer.attempts = again.attempts  # the first answer stands; both tries are counted
        return answer.after(again)

    async def _judge(self, task: Task, item: Item, answer: Answer) -> None:
        """Grade with the judge model; an unparseable verdict is retried once, then kept as a
        failure with the raw text (never a silent 0)."""
        config = self.plan.config
        assert config.judge is not None and task.judge is not None
        decision = config.decision_judge
        messages = judge_messages(task, item, answer.text, decision=decision)
        schema = verdict_schema(task, decision)
        request = Request(
            config.judge,
            messages,
            GenerateSettings(max_tokens=self._judge_max_tokens(), temperature=0.0,
                             response_format=schema),
        )  # fmt: skip
        raw = ""
        for _ in range(2):
            try:
                result, _attempts = await self._call("judge", request, item.key)
            except StopRun as stop:
                self._queue(self._failure(item, "judge_not_run", stop.reason, answer=answer))
                raise
            except asyncio.CancelledError:  # stopped while grading: keep the paid-for answer
                reason = "stopped before the judge answered"
                self._queue(self._failure(item, "judge_not_run", reason, answer=answer))
                raise
            if result.error is not None:
                self._queue(self._failure(item, "judge_error", str(result.error), answer=answer))
                return
            raw = result.text
            verdict = parse_verdict(raw, task.judge, decision=decision)
            if verdict is not None:
                self._queue(self._scored(item, answer, verdict, judge=config.judge))
                return
        self._queue(
            self._failure(
                item, "judge_unparseable", "the judge's reply was not a usable verdict",
                answer=answer, raw_judge=raw,
            )
        )  # fmt: skip

    async def _teach(self, task: Task, item: Item) -> None:
        """A teaching item: its dialogue played on from the turns already stored (each new turn
        is stored with its call's row, in the group commit), then evaluated (``bench.dialogue``).
        A stop mid-dialogue stores no answer: a resume continues the dialogue."""
        try:
            scenario = scenario_for(task)
        except DataError as exc:
            self._queue(self._failure(item, "data_error", str(exc)))
            return
        config = self.plan.config
        judge = config.judge or config.model
        models: dict[DialogueRole, str] = {
            "teacher": config.model, "student": config.models.get("student", judge),
            "evaluator": judge,
        }  # fmt: skip
        student_limit = self.executor.model(models["student"]).info.max_output_tokens
        budgets: dict[DialogueRole, int] = {
            "teacher": config.max_tokens,
            "student": min(config.max_tokens, student_limit or config.max_tokens),
            "evaluator": self._judge_max_tokens(),
        }

        def on_turn(index: int, turn: Turn) -> None:
            self._pending_turns.append(StoredTurn(item.key, index, turn))
            self._wake.set()

        turns = read_turns(self.store, self.run_id, item.key)
        taught = await teach(
            scenario, item, models=models, budgets=budgets, call=self._call, turns=turns,
            on_turn=on_turn, retry_delay_s=self._dialogue_retry_delay_s,
            temperature=config.temperature,
        )  # fmt: skip
        self._queue(self._taught_row(item, scenario, taught, judge))

    def _taught_row(self, item: Item, scenario: Scenario, taught: Taught, judge: str) -> AnswerRow:
        """The answer row of a taught item: the transcript, the evaluation's mean and items."""
        tally = taught.tally
        answer = Answer(
            text=self._scrub(taught.text(scenario)), stop_reason=taught.dialogue.ended or "end",
            attempts=max(tally.attempts, 1), input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens, reasoning_tokens=tally.reasoning_tokens,
            latency_ms=tally.latency_ms,
        )  # fmt: skip
        meta = taught.metadata(scenario, item)
        evaluation = taught.evaluation
        if evaluation is None:
            return self._failure(
                item, taught.error_type or "judge_error", taught.error or "no evaluation",
                answer=answer, raw_judge=taught.raw_evaluation,
            )  # fmt: skip
        if evaluation.score is None:  # ELBench's "unknown": counted, never a pass
            reason = f"{scenario.id}: unknown (the evaluation held no readable score)"
            value = 0.0
        else:
            reason = f"{scenario.id}: mean {evaluation.score:.2f} (pass at {scenario.threshold:g})"
            value = evaluation.score
        if evaluation.vetoed:
            reason += "; vetoed for role confusion"
        score = Score(value, evaluation.result, evaluation.passed, reason, meta)
        row = self._scored(item, answer, score, judge=judge)
        row.raw_judge = self._scrub(evaluation.raw)
        return row

    def _judge_max_tokens(self) -> int:
        judge = self.executor.model(self.plan.config.judge or "")
        limit = judge.info.max_output_tokens
        return min(JUDGE_MAX_TOKENS, limit) if limit else JUDGE_MAX_TOKENS

    # -- records -----------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return self.executor.scrub(text)

    def _scored(self, item: Item, answer: Answer, score: Score, *, judge: str | None) -> AnswerRow:
        meta = dict(score.metadata)
        if not answer.format_valid or not score.format_valid:
            meta["format_valid"] = False
        return AnswerRow(
            key=item.key, task=item.task, dimension=item.dimension, status="scored",
            answer=answer.text, stop_reason=answer.stop_reason, score=float(score.score),
            passed=bool(score.passed), result=score.result, reason=self._scrub(score.reason),
            judge=judge, score_metadata=meta or None, attempts=answer.attempts,
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
            reasoning_tokens=answer.reasoning_tokens, latency_ms=answer.latency_ms,
            retries=self._retries.pop(item.key, None),
        )  # fmt: skip

    def _failure(
        self,
        item: Item,
        error_type: str,
        message: str,
        *,
        answer: Answer | None = None,
        raw_judge: str | None = None,
    ) -> AnswerRow:
        return AnswerRow(
            key=item.key, task=item.task, dimension=item.dimension, status="failed",
            answer=None if answer is None or answer.error else answer.text,
            stop_reason=None if answer is None else answer.stop_reason,
            error_type=error_type, error=self._scrub(message),
            raw_judge=None if raw_judge is None else self._scrub(raw_judge),
            judge=self.plan.config.judge if error_type in JUDGE_ERRORS else None,
            attempts=1 if answer is None else answer.attempts,
            input_tokens=0 if answer is None else answer.input_tokens,
            output_tokens=0 if answer is None else answer.output_tokens,
            reasoning_tokens=0 if answer is None else answer.reasoning_tokens,
            latency_ms=None if answer is None else answer.latency_ms,
            retries=self._retries.pop(item.key, None),
        )  # fmt: skip

    def _queue(self, row: AnswerRow) -> None:
        self._pending_answers.append(row)
        if row.status == "scored":
            self.progress.scored += 1
        else:
            self.progress.failed += 1
        self._wake.set()
        if self.on_progress is not None:
            self.on_progress(self.progress)
