"""What the model under test answered, as the runner keeps it between the call and the score:
its text, stop reason, tries and tokens; and the judge's verdict schema."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sweepbench.bench.followups import filter_code
from sweepbench.errors import ProviderError
from sweepbench.judging.contract import verdict_schema as verdict_schema  # re-exported
from sweepbench.models.base import Result


@dataclass
class Answer:
    text: str
    stop_reason: str
    attempts: int
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_ms: int = 0
    error: ProviderError | None = None
    format_valid: bool = True

    def after(self, other: Answer) -> Answer:
        """This answer, counting the tokens and time of the other try too."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.latency_ms += other.latency_ms
        return self


def from_result(result: Result, attempts: int, scrub: Callable[[str], str]) -> Answer:
    """The answer a call gave. A provider's content filter refusing the prompt is an answer
    (``[UPSTREAM_FILTERED:<code>] <message>``, scored like any other, usually a fail), not an
    error: it says something about the model as deployed (spec §10.2)."""
    usage = result.usage
    error = result.error if result.stop_reason == "error" else None
    text = result.text
    code = None if error is None else filter_code(error)
    if error is not None and code is not None:
        text, error = scrub(f"[UPSTREAM_FILTERED:{code}] {error.args[0]}"), None
    return Answer(
        text=text,
        stop_reason=result.stop_reason if code is None else "refusal",
        attempts=attempts,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        latency_ms=int(result.wall_s * 1000),
        error=error,
    )
