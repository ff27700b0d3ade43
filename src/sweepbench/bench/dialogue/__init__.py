"""The teaching runtime (spec §15): multi-turn dialogues between the model under test (the
teacher), a simulated student and an evaluator.

- :mod:`.scenario`: what a dialogue task is (its prompts, flow, rubric, scale);
- :mod:`.turns`: a dialogue's turns and the messages each role is sent (memory window);
- :mod:`.ending`: the end keywords of a guided lesson;
- :mod:`.prompts`: the default teacher and student prompts;
- :mod:`.evaluation`: the evaluator's prompt, its parser, the veto and the score;
- :mod:`.flow`: one dialogue played to its end and evaluated, over an async ``call``.

The runtime knows nothing of the engine: it is handed a ``call(role, messages, max_tokens)``
function (the runner's goes through the engine) and an ``on_turn`` callback that stores each
finished turn.
"""

from sweepbench.bench.dialogue.evaluation import Evaluation, EvaluationFailed
from sweepbench.bench.dialogue.flow import Dialogue, Reply, play, run_dialogue
from sweepbench.bench.dialogue.scenario import Scenario, scenario_for
from sweepbench.bench.dialogue.turns import Turn

__all__ = [
    "Dialogue",
    "Evaluation",
    "EvaluationFailed",
    "Reply",
    "Scenario",
    "Turn",
    "play",
    "run_dialogue",
    "scenario_for",
]
