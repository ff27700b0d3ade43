"""A dialogue scenario from an ELBench teaching template (spec §15.1): its agents' prompts and
names, memory and seeded opening, its evaluation prompt and format fields, its superstep limit
and retries (played by ELBench's rules, :mod:`.elbench_runtime`), as ``options.dialogue``
(the same plain form a declaration writes, so a task's options stay JSON). The template's own
model entries are ignored: the roles' models are the run's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sweepbench.bench.dialogue.scenario import scenario_from_options
from sweepbench.errors import DataError

FUNCTION_MODES = ("function", "function_call", "tool", "tools")
"""A template's ``format_mode`` values that ask for a structured result call."""


def _prompt(agent: Any, where: str, unnamed: str = "system") -> list[dict[str, str]]:
    """A prompt list; an entry without a role is ``unnamed`` (the rubric's are user messages,
    as ELBench's evaluator sends them)."""
    prompt = agent.get("prompt") if isinstance(agent, Mapping) else None
    if not isinstance(prompt, list) or not prompt:
        raise DataError(f"{where}.prompt: expected a list of {{role, content}}")
    return [
        {"role": str(m.get("role") or unnamed), "content": str(m.get("content") or "")}
        for m in prompt
        if isinstance(m, Mapping)
    ]


def dialogue_options(document: Mapping[str, Any], scenario_id: str) -> dict[str, Any]:
    """``options.dialogue`` for a teaching template; DataError naming the part that is
    missing. A template with a ``student`` agent is a guided lesson; otherwise its one agent
    (``teacher`` or ``test_model``) answers once."""
    agents = document.get("agents")
    if not isinstance(agents, Mapping) or not agents:
        raise DataError("agents: expected the teacher's (and the student's) prompts")
    guided = "student" in agents
    teacher_name = next((str(k) for k in agents if k != "student"), None)
    if teacher_name is None:
        raise DataError("agents: no teacher agent")
    teacher = agents[teacher_name]
    evaluation = document.get("evaluation")
    if not isinstance(evaluation, Mapping):
        raise DataError("evaluation: expected the evaluator's prompt and format")
    fields = evaluation.get("format")
    options: dict[str, Any] = {
        "scenario_id": scenario_id,
        "flow": "guided" if guided else "single",
        "teacher": _prompt(teacher, f"agents.{teacher_name}"),
        "rubric": _prompt(evaluation, "evaluation", unnamed="user"),
        "fields": list(fields) if isinstance(fields, list) else fields,
        "format_mode": "function" if evaluation.get("format_mode") in FUNCTION_MODES else "prompt",
        # ELBench's runtime plays it: its agent names, superstep budget and retries
        "runtime": "elbench",
        "names": {"teacher": teacher_name, "student": "student"},
    }
    settings = document.get("globals")
    if isinstance(settings, Mapping):
        if "recursion_limit" in settings:
            options["recursion_limit"] = settings["recursion_limit"]
        retry = settings.get("retry")
        if isinstance(retry, Mapping):
            options["retry"] = {k: retry[k] for k in ("attempt", "interval") if k in retry}
    memory = teacher.get("memory") if isinstance(teacher, Mapping) else None
    if isinstance(memory, Mapping) and isinstance(memory.get("keep_turns"), int):
        options["keep_turns"] = memory["keep_turns"]
    if guided:
        options["student"] = _prompt(agents["student"], "agents.student")
        tasks = document.get("tasks")
        start = tasks.get("start_prompt") if isinstance(tasks, Mapping) else None
        if isinstance(start, Mapping) and start.get("content"):
            options["opening"] = str(start["content"])
    scenario_from_options(scenario_id, options)  # every part checked now, not mid-run
    return options
