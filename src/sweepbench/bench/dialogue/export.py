"""A stored dialogue as a document (spec §15.1): ``{task: {…}, messages: [{role, content,
reasoning, usage_metadata}], evaluation: {…}}`` — for ``bench show RUN --item ID`` and the
``dialogues.jsonl`` of ``bench export`` — and each task's evaluations as CSV."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sweepbench.bench.dialogue.evaluation import numeric_leaves
from sweepbench.bench.dialogue.storage import dialogue_keys, read_turns
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import UserError
from sweepbench.store import Store


def find_key(store: Store, run_id: str, wanted: str) -> str:
    """The key of a run's dialogue from its key or sample id (``guided-01``); UserError
    naming a few when none or several match."""
    keys = dialogue_keys(store, run_id)
    if wanted in keys:
        return wanted
    matches = [k for k in keys if k.endswith(f"::{wanted}") or k.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    some = ", ".join(k.rsplit("::", 1)[-1] for k in (matches or keys)[:5])
    if not keys:
        raise UserError(f"run {run_id} holds no dialogues")
    if matches:
        raise UserError(f"{wanted!r} matches {len(matches)} dialogues ({some}…); give more")
    raise UserError(f"run {run_id} has no dialogue {wanted!r}; it has {some}…")


def dialogue_document(
    store: Store, run_id: str, key: str, answer: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One item's dialogue with its outcome (``answer``: its answer row, None while the
    dialogue is unfinished)."""
    task: dict[str, Any] = {"key": key, "sample_id": key.rsplit("::", 1)[-1]}
    evaluation: dict[str, Any] | None = None
    if answer is not None:
        meta = answer.get("score_metadata") or {}
        task.update({"task": answer["task"], "status": answer["status"]})
        task.update({k: meta[k] for k in ("_scene", "ended", "steps") if k in meta})
        evaluation = {
            "score": answer.get("score"), "result": answer.get("result"),
            "passed": answer.get("passed"), "score_items": meta.get("score_items"),
            "vetoed": meta.get("vetoed"), "error_type": answer.get("error_type"),
            "error": answer.get("error"), "raw_eval": answer.get("raw_judge"),
        }  # fmt: skip
    messages = [turn.as_json() for turn in read_turns(store, run_id, key)]
    return {"task": task, "messages": messages, "evaluation": evaluation}


def dialogue_documents(store: Store, run_id: str) -> Iterator[dict[str, Any]]:
    """Every dialogue of a run, in key order."""
    answers = {row["key"]: row for row in BenchStore(store).answers(run_id)}
    for key in dialogue_keys(store, run_id):
        yield dialogue_document(store, run_id, key, answers.get(key))


def evaluation_csv(documents: Iterable[Mapping[str, Any]]) -> str:
    """One task's evaluations as CSV (spec §15.2): ``task_id``, each field, ``avg`` (the
    item's score), then an ``Avg`` row of the column means. Unevaluated dialogues are left
    out; a field that is not a number is left empty."""
    rows = [d for d in documents if (d.get("evaluation") or {}).get("score") is not None]
    fields: list[str] = []
    for document in rows:
        for name in document["evaluation"].get("score_items") or {}:
            if name not in fields:
                fields.append(name)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["task_id", *fields, "avg"])
    columns: list[list[float]] = [[] for _ in [*fields, "avg"]]
    for document in rows:
        items = document["evaluation"].get("score_items") or {}
        values = [_number(items.get(name)) for name in fields]
        values.append(float(document["evaluation"]["score"]))
        for column, value in zip(columns, values, strict=True):
            if value is not None:
                column.append(value)
        writer.writerow([document["task"]["sample_id"], *("" if v is None else f"{v:g}"
                                                         for v in values)])  # fmt: skip
    means = [f"{sum(c) / len(c):.4g}" if c else "" for c in columns]
    writer.writerow(["Avg", *means])
    return buffer.getvalue()


def dialogue_files(store: Store, run_id: str) -> dict[str, str]:
    """The export files of a run's dialogues by name: ``dialogues.jsonl`` (one document a
    line) and ``evaluation_<task>.csv`` per task; none when the run holds no dialogue."""
    documents = list(dialogue_documents(store, run_id))
    if not documents:
        return {}
    lines = (json.dumps(d, ensure_ascii=False, default=str) + "\n" for d in documents)
    files = {"dialogues.jsonl": "".join(lines)}
    for task in sorted({str(d["task"]["task"]) for d in documents if "task" in d["task"]}):
        name = "evaluation_" + re.sub(r"[^A-Za-z0-9_.-]", "_", task) + ".csv"
        files[name] = evaluation_csv(d for d in documents if d["task"].get("task") == task)
    return files


def _number(value: Any) -> float | None:
    numbers = numeric_leaves(value)
    return sum(numbers) / len(numbers) if numbers else None
