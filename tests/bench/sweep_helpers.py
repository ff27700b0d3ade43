"""A declared benchmark whose prompts mark their reference for ``scripted/guess?accuracy=P``,
so a sweep of accuracies can be told apart offline (issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

ACCURACIES = ("0.9", "0.85", "0.6")


def guess(accuracy: str, **options: str) -> str:
    """``scripted/guess?accuracy=…`` (one seed for every setting: a lower accuracy answers
    right on a subset of the items a higher one does)."""
    query = "&".join([f"accuracy={accuracy}", *(f"{k}={v}" for k, v in options.items())])
    return f"scripted/guess?{query}"


def marked_benchmark(folder: Path, n: int, *, prompt_versions: bool = False) -> Path:
    """``n`` arithmetic questions with a numeric answer, each prompt carrying the
    ``[scripted-reference: X]`` marker; returns the declaration's path."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"q{i:05d}", "question": f"What is {i} + 7?", "answer": i + 7} for i in range(n)]
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    versions = ""
    if prompt_versions:
        versions = (
            "prompt_versions:\n"
            "  terse:\n"
            "    system: Answer with the number only.\n"
            "  careful:\n"
            '    template: "Think it through. {prompt}"\n'
        )
    (folder / "benchmark.yaml").write_text(
        "id: marked\n"
        "name: Marked arithmetic\n" + versions + "areas:\n  - {key: math, label: Math}\n"
        "tasks:\n"
        "  - id: sums\n"
        "    area: math\n"
        "    data: questions.jsonl\n"
        "    fields:\n"
        "      id: id\n"
        "      prompt_template: |-\n"
        "        {{ question }} Write only the final number on the last line.\n"
        "        [scripted-reference: {{ answer }}]\n"
        "      reference: answer\n"
        "    scorer: numeric\n",
        "utf-8",
    )
    return folder / "benchmark.yaml"
