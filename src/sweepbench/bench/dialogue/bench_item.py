"""One benchmark item played by the teaching runtime: the bridge between a runner and
:mod:`.flow`.

Each dialogue role is a benchmark role — the teacher is the model under test (``target``), the
student the ``student`` model, the evaluator the ``judge`` — and every turn is one call through
the runner's engine call, retried at a fixed interval (spec §15.1: 5 attempts, 15 for a guided
lesson, 3 s apart). The outcome becomes the item's answer row: the transcript as the answer,
the evaluation's mean as the score, the evaluation itself in the metadata.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sweepbench.bench.dialogue.elbench_runtime import EVALUATOR_MAX_TOKENS, as_dialog
from sweepbench.bench.dialogue.evaluation import Evaluation, EvaluationFailed, evaluation_schema
from sweepbench.bench.dialogue.flow import Dialogue, DialogueRole, OnTurn, Reply, evaluate, play
from sweepbench.bench.dialogue.scenario import Scenario, payload_of
from sweepbench.bench.dialogue.turns import Turn, transcript
from sweepbench.bench.items import Item
from sweepbench.engine.retry import RetryPolicy, error_type
from sweepbench.errors import ProviderError
from sweepbench.models.base import GenerateSettings, Message, Request, Result
from sweepbench.roles import Role

ROLE_OF: dict[DialogueRole, Role] = {
    "teacher": "target",
    "student": "student",
    "evaluator": "judge",
}
"""The benchmark role each dialogue role is called, priced and limited as."""
RETRY_DELAY_S = 3.0
ATTEMPTS = {"single": 5, "guided": 15}
SOURCE = "basic_education_runtime"

EngineCall = Callable[[Role, Request, str, RetryPolicy], Awaitable[tuple[Result, int]]]
"""The runner's call: ``(role, request, item key, retry) -> (result, attempts)``; it raises to
stop the run."""


def dialogue_retry(scenario: Scenario, delay_s: float = RETRY_DELAY_S) -> RetryPolicy:
    """The fixed-interval retry of a dialogue's calls (spec §15.1; ELBench: the template's
    ``retry.attempt``)."""
    attempts = scenario.call_attempts or ATTEMPTS[scenario.flow]
    return RetryPolicy(
        max_attempts=attempts, base_delay_s=delay_s, max_delay_s=delay_s,
        rate_limit_floor_s=delay_s, jitter=0.0,
    )  # fmt: skip


class TurnFailed(Exception):
    """A dialogue call failed after its retries."""

    def __init__(self, role: DialogueRole, error: ProviderError) -> None:
        super().__init__(f"the {role}'s call failed: {error}")
        self.role = role
        self.error = error


@dataclass
class Tally:
    """What the item's calls came to (every attempt)."""

    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_ms: int = 0


@dataclass
class Taught:
    """How an item's dialogue came out: evaluated, or failed (the turns are kept either way)."""

    dialogue: Dialogue
    evaluation: Evaluation | None = None
    error_type: str | None = None
    error: str | None = None
    raw_evaluation: str | None = None
    tally: Tally = field(default_factory=Tally)

    def text(self, scenario: Scenario) -> str:
        """The dialogue as ``role: content`` lines (the item's answer), named as the
        evaluator read it (ELBench: its ``as_dialog()``, without the opening)."""
        if scenario.runtime == "elbench":
            return as_dialog(self.dialogue.turns, scenario.names)
        return transcript(self.dialogue.turns, dict(scenario.names))

    def metadata(self, scenario: Scenario, item: Item) -> dict[str, Any]:
        """The score metadata (spec §15.2): scene, turns, the evaluation's items and how the
        dialogue ended."""
        meta: dict[str, Any] = {
            "_scene": scenario.id, "multi_turn": scenario.flow == "guided",
            "message_count": len(self.dialogue.turns), "source": SOURCE,
            "sample_id": f"{scenario.id}-{item.sample_id}", "ended": self.dialogue.ended,
            "steps": self.dialogue.steps,
        }  # fmt: skip
        if self.evaluation is not None:
            meta["score_items"] = self.evaluation.values
            meta["vetoed"] = self.evaluation.vetoed
        return meta


def call_settings(
    scenario: Scenario,
    role: DialogueRole,
    budget: int,
    schema: dict[str, Any] | None = None,
    *,
    temperature: float | None = None,
) -> GenerateSettings:
    """A dialogue call's settings. The evaluator: thinking off where the model can turn it
    off (``effort none``: ``chat_template_kwargs.enable_thinking: false`` on a compatible
    server), at temperature 0 (ELBench's ``configs/models.yaml`` gives every model, its judge
    included, ``temperature: 0``); in ELBench's runtime its budget is 1,024 tokens, the
    bridge's floor. The teacher (the model under test): its budget and the run's
    ``temperature``; the student: its budget, at temperature 0 in ELBench's runtime (its
    ``ModelConfig`` default, which its test endpoint keeps)."""
    if role == "teacher":
        return GenerateSettings(max_tokens=budget, temperature=temperature)
    if role == "student":
        return GenerateSettings(
            max_tokens=budget, temperature=0.0 if scenario.runtime == "elbench" else None
        )
    if scenario.runtime == "elbench":
        budget = min(budget, EVALUATOR_MAX_TOKENS) if budget else EVALUATOR_MAX_TOKENS
    return GenerateSettings(
        max_tokens=budget, temperature=0.0, effort="none",
        response_format=schema,
    )  # fmt: skip


def runtime_payload(scenario: Scenario, item: Item) -> dict[str, Any]:
    """The fields an item's prompts are filled from: ELBench's runtime fills them from the
    task's own variables only; sweepbench's adds ``prompt`` (:func:`.scenario.payload_of`)."""
    raw = item.metadata.get("payload")
    if scenario.runtime == "elbench" and isinstance(raw, Mapping):
        return dict(raw)
    return payload_of(item)


async def teach(
    scenario: Scenario,
    item: Item,
    *,
    models: Mapping[DialogueRole, str],
    budgets: Mapping[DialogueRole, int],
    call: EngineCall,
    turns: list[Turn],
    on_turn: OnTurn,
    retry_delay_s: float = RETRY_DELAY_S,
    temperature: float | None = None,
) -> Taught:
    """Play ``item``'s dialogue on from its stored ``turns`` and evaluate it (``temperature``:
    the teacher's, the run's setting)."""
    tally = Tally()
    retry = dialogue_retry(scenario, retry_delay_s)
    schema = evaluation_schema(scenario.fields) if scenario.format_mode == "function" else None

    async def engine_call(role: DialogueRole, messages: tuple[Message, ...], budget: int) -> Reply:
        settings = call_settings(scenario, role, budget, schema, temperature=temperature)
        request = Request(models[role], messages, settings)
        result, attempts = await call(ROLE_OF[role], request, item.key, retry)
        tally.attempts += attempts
        tally.input_tokens += result.usage.input_tokens
        tally.output_tokens += result.usage.output_tokens
        tally.reasoning_tokens += result.usage.reasoning_tokens
        tally.latency_ms += int(result.wall_s * 1000)
        if result.error is not None:
            raise TurnFailed(role, result.error)
        usage = {"input_tokens": result.usage.input_tokens,
                 "output_tokens": result.usage.output_tokens,
                 "reasoning_tokens": result.usage.reasoning_tokens}  # fmt: skip
        return Reply(result.text, result.reasoning, usage)

    payload = runtime_payload(scenario, item)
    played = list(turns)  # what a failed dialogue keeps: every finished turn

    async def kept(index: int, turn: Turn) -> None:
        played.append(turn)
        stored = on_turn(index, turn)
        if stored is not None:
            await stored

    dialogue = Dialogue(played)
    try:
        dialogue = await play(
            scenario, payload, engine_call, budgets=budgets, turns=turns, on_turn=kept
        )
        evaluation = await evaluate(
            scenario, payload, dialogue.turns, engine_call, budget=budgets["evaluator"]
        )
    except TurnFailed as failed:
        where = "judge_error" if failed.role == "evaluator" else error_type(failed.error)
        return Taught(Dialogue(played), error_type=where, error=str(failed), tally=tally)
    except EvaluationFailed as failed:
        return Taught(dialogue, error_type="judge_unparseable", error=str(failed),
                      raw_evaluation=failed.raw, tally=tally)  # fmt: skip
    return Taught(dialogue, evaluation, tally=tally)
