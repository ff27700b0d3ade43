"""Which tasks and items a benchmark run's selection picks (spec §4), with a problem or a note
for each one left out, and how its tasks are scored (the scoring version, a rule scorer in
place of the judge) — the first step of a plan (``bench.plan.choose``)."""

from __future__ import annotations

from dataclasses import replace

from sweepbench.bench.catalog import Preset
from sweepbench.bench.items import Benchmark, Item, PromptVersion, Task
from sweepbench.bench.run_config import Selection


def selected_tasks(
    benchmark: Benchmark, selection: Selection, chosen: Preset, errors: list[str], notes: list[str]
) -> list[Task]:
    """The tasks to run, with a problem or note for each one left out."""
    in_scope = {t.id for t in benchmark.in_scope(selection.scope)}
    known = {t.id for t in benchmark.tasks}
    if selection.tasks:
        unknown = [t for t in selection.tasks if t not in known]
        if unknown:
            errors.append(
                f"unknown task(s) {', '.join(unknown)}; {benchmark.name} has "
                f"{', '.join(t.id for t in benchmark.tasks)}"
            )
        tasks = [t for t in benchmark.tasks if t.id in selection.tasks]
        for task in tasks:
            if task.id not in in_scope:
                errors.append(
                    f"{task.id} is region-specific and outside the core scope; "
                    "add --scope paper to include it"
                )
            elif task.missing:
                errors.append(f"{task.id}: data missing ({task.missing})")
            elif not task.available:
                errors.append(
                    f"{task.id} is a multi-turn teaching task whose template gives no "
                    "dialogue to play (see its problems in bench list)"
                )
        return [t for t in tasks if t.id in in_scope and t.available]
    tasks = list(chosen.tasks(benchmark, selection.scope))
    if selection.areas:
        areas = {a.key for a in benchmark.areas} | {a.label for a in benchmark.areas}
        unknown = [a for a in selection.areas if a not in areas]
        if unknown:
            errors.append(
                f"unknown area(s) {', '.join(unknown)}; {benchmark.name} has "
                f"{', '.join(a.key for a in benchmark.areas)}"
            )
        wanted = {a.key for a in benchmark.areas if {a.key, a.label} & set(selection.areas)}
        tasks = [t for t in tasks if t.area in wanted]
    missing = [t for t in tasks if t.missing]
    if missing:
        notes.append(
            "Left out, data missing: "
            + "; ".join(f"{t.id} ({t.missing})" for t in missing)
            + ". An area containing them cannot be complete."
        )
    multi = [t for t in tasks if t.missing is None and not t.available]
    if multi:
        count = sum(len(t.items) for t in multi)
        notes.append(
            f"Left out: {len(multi)} multi-turn teaching task(s) ({count} dialogues: "
            f"{', '.join(t.id for t in multi)}); their templates give no dialogue the "
            "teaching runtime can play (see the task's problems in bench list)."
        )
    return [t for t in tasks if t.available]


def scored_by(task: Task, version: str) -> Task:
    """``task`` with its rule scorers reading answers by the scoring ``version``."""
    return replace(task, options={**task.options, "scoring_version": version})


def rule_scored(task: Task) -> Task:
    """A judged task scored by its declared rule scorer instead (``options.rule_scorer``), or
    the task unchanged when it has none."""
    rule = task.options.get("rule_scorer")
    if not rule or task.grading != "judge":
        return task
    options = {**task.options, "rule_scored": True}
    return replace(task, scorer=str(rule), grading="auto", judge=None, options=options)


def select_items(
    tasks: list[Task], selection: Selection, per_task: int | None, errors: list[str]
) -> list[Item]:
    dims = set(selection.dimensions)
    if dims:
        known = {i.dimension for t in tasks for i in t.items}
        unknown = sorted(dims - known)
        if unknown:
            sample = ", ".join(sorted(known)[:12])
            errors.append(
                f"unknown skill(s) {', '.join(unknown)}; the selected tasks have {sample}"
            )
    items: list[Item] = []
    for task in tasks:
        chosen = [i for i in task.items if not dims or i.dimension in dims]
        items.extend(chosen[:per_task] if per_task else chosen)
    if selection.max_items is not None:
        items = items[: max(selection.max_items, 0)]
    return items


def prompt_version_of(
    benchmark: Benchmark, name: str | None, errors: list[str]
) -> PromptVersion | None:
    """The declared prompt version a run asks for (None: the benchmark's own)."""
    if name is None or not name.strip():
        return None
    try:
        return benchmark.prompt_variant(name.strip())
    except KeyError:
        errors.append(
            f"{benchmark.name} has no prompt version {name!r}; versions: "
            f"{', '.join(benchmark.versions)}"
        )
        return None
