"""ELBench's teaching templates (spec §2.3): one YAML file per scenario whose ``tasks``
section lists (``iter``) or crosses (``union``) the payloads, each payload one item. A template
holding a literal API key is rejected (spec §20 #18).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from sweepbench.bench.dialogue.template import dialogue_options
from sweepbench.bench.items import Item, LoadProblem
from sweepbench.bench.sources import elbench_prompts as prompts
from sweepbench.bench.sources.elbench_registry import Scenario
from sweepbench.bench.sources.elbench_rows import RowContext, TaskLoad, first_filled, make_item
from sweepbench.bench.sources.records import read_text
from sweepbench.errors import DataError

# --- teaching templates ---------------------------------------------------------------------


def _read_yaml(path: Path, shown: str) -> Any:
    """A YAML file parsed with the C loader when available; DataError when it cannot be."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = read_text(path, shown)
    except OSError as exc:
        raise DataError(f"{shown}: cannot read the file ({exc.strerror or exc})") from exc
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{shown}:{mark.line + 1}" if mark is not None else shown
        raise DataError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc


def teaching_payloads(tasks: Any, shown: str) -> tuple[str, list[tuple[int, Any]]]:
    """The ``tasks`` section's mode and its payloads as (row, payload): ``iter`` lists them,
    ``union`` crosses the value lists (3 learner profiles × 5 problems = 15)."""
    if not isinstance(tasks, Mapping):
        raise DataError(f"{shown}: tasks: expected a mapping with mode and content")
    mode = str(tasks.get("mode") or "iter").lower()
    content = tasks.get("content")
    if mode == "iter":
        if not isinstance(content, list):
            raise DataError(f"{shown}: tasks.content: expected a list for mode iter")
        return mode, list(enumerate(content, start=1))
    if mode == "union":
        if not isinstance(content, Mapping) or not content:
            raise DataError(f"{shown}: tasks.content: expected lists by field for mode union")
        if not all(isinstance(values, list) for values in content.values()):
            raise DataError(f"{shown}: tasks.content: every field needs a list for mode union")
        keys = [str(key) for key in content]
        combos = itertools.product(*content.values())
        return mode, [(row, dict(zip(keys, c, strict=True))) for row, c in enumerate(combos, 1)]
    raise DataError(f"{shown}: tasks.mode: unknown mode {mode!r} (iter or union)")


def load_teaching(ctx: RowContext, path: Path, shown: str, scenario: Scenario) -> TaskLoad:
    """A teaching template's tasks as items, and its dialogue scenario as the task's
    ``dialogue`` option (played by ``bench.dialogue``). A template holding a literal API key
    is rejected (spec §20 #18)."""
    document = _read_yaml(path, shown)
    result = TaskLoad()
    if not isinstance(document, Mapping):
        result.missing = f"{shown} is not a teaching template (expected a YAML mapping)"
        return result
    if secrets := prompts.literal_key_paths(document):
        for where in secrets:
            message = (
                "holds a literal API key; keys come only from the environment, so this "
                "template is rejected: leave api_key empty or use ${YOUR_KEY_VARIABLE}"
            )
            result.problems.append(LoadProblem(shown, message, None, where))
        result.missing = (
            f"{shown} rejected: {', '.join(secrets)} holds a literal API key "
            "(keys come only from the environment)"
        )
        return result
    try:
        result.options["dialogue"] = dialogue_options(document, scenario.scenario_id)
    except DataError as exc:  # its tasks are still counted; without a scenario none runs
        where = str(exc).split(":", 1)[0].split(".", 1)[0]
        message = f"cannot be played: {exc}"
        result.problems.append(LoadProblem(shown, message, None, where))
    mode, payloads = teaching_payloads(document.get("tasks"), shown)
    for row, payload in payloads:
        if not isinstance(payload, Mapping):
            kind = type(payload).__name__
            result.problems.append(LoadProblem(shown, f"a task is a {kind}", row, "tasks"))
            continue
        result.items.append(_teaching_item(ctx, scenario, mode, row, payload))
    if scenario.expected_tasks and len(payloads) != scenario.expected_tasks:
        message = f"expected {scenario.expected_tasks} tasks, found {len(payloads)}"
        result.problems.append(LoadProblem(shown, message, None, "tasks"))
    return result


def _teaching_item(
    ctx: RowContext, scenario: Scenario, mode: str, row: int, payload: Mapping[str, Any]
) -> Item:
    """One teaching task: a stable id from its payload, the question or query as its prompt."""
    canonical = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    seed = f"{ctx.entry.canonical_name}::{row}::{canonical}"
    digest = hashlib.sha1(seed.encode("utf-8")).hexdigest()[:16]
    text = first_filled(payload, ctx.mapping.prompt_fields)
    prompt = prompts.stringify(text) if text is not None else canonical
    return make_item(
        ctx,
        f"{ctx.stem}-{digest}",
        row,
        dimension=scenario.dimension,
        prompt=prompt,
        reference=None,
        metadata={"payload": dict(payload), "mode": mode, "scenario_id": scenario.scenario_id},
    )
