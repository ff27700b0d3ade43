"""Write ``src/sweepbench/leaderboard/published_elbench.json`` from ELBench's published
figures (``python scripts/build_published_snapshot.py [PUBLISHED_DIR]``).

Reads ``leaderboard.csv`` (final table, paper scope), ``bootstrap_ci.json`` (its ranges) and
``per_task_2026-06-08.csv`` (the 2026-06-08 revision's per-task figures). Writes figures only.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from sweepbench.leaderboard.published import (
    PAPER_JUDGE,
    PER_TASK_REVISION,
    CoreAreaScore,
    PublishedModel,
    PublishedScore,
    PublishedSnapshot,
    PublishedTask,
)

DEFAULT_DIR = Path("/work/shared/data/elbench/published")
OUTPUT = Path(__file__).resolve().parents[1] / "src/sweepbench/leaderboard/published_elbench.json"

AREAS = {  # published column → catalogue area key
    "general": "通用模型",
    "safety": "安全可信",
    "basic_education": "基本教育",
    "high_level": "高阶育人",
}
FILES = {  # published task file → (task id, area key)
    "mmlu_pro_sampled.jsonl": ("mmlu_pro", "通用模型"),
    "ceval_sampled.jsonl": ("ceval", "通用模型"),
    "ifeval_sampled.jsonl": ("ifeval", "通用模型"),
    "math_500_sampled.jsonl": ("math_500", "通用模型"),
    "aime24_sampled.jsonl": ("aime24", "通用模型"),
    "aime25.jsonl": ("aime25", "通用模型"),
    "aime26.jsonl": ("aime26", "通用模型"),
    "gsm8k_sampled.jsonl": ("gsm8k", "通用模型"),
    "安全拒答.jsonl": ("safety_refusal", "安全可信"),
    "安全引导.jsonl": ("safety_guidance", "安全可信"),
    "安全回答.jsonl": ("safety_answer", "安全可信"),
    "SATAs.xlsx": ("teaching_harm", "安全可信"),
    "adversarial_prompts.xlsx": ("adversarial_safety", "安全可信"),
    "knowledge.yaml": ("knowledge", "基本教育"),
    "question.yaml": ("question", "基本教育"),
    "cross.yaml": ("cross", "基本教育"),
    "config_guided_task.yaml": ("guided", "基本教育"),
    "高阶育人-omni.jsonl": ("highlevel_omni", "高阶育人"),
    "高阶育人-edu.jsonl": ("highlevel_edu", "高阶育人"),
}
OPENROUTER = {
    "deepseek-v4-flash": "deepseek/deepseek-v4-flash",
    "deepseek-v4-pro": "deepseek/deepseek-v4-pro",
    "gemini-3.5-flash": "google/gemini-3.5-flash",
    "claude-opus-4-8": "anthropic/claude-opus-4.8",
    "gpt-5.4": "openai/gpt-5.4",
    "glm-5.1": "z-ai/glm-5.1",
}
SIZES_B = {"innospark-235b": 235.0, "qwen3.6-35B-sft-v1": 35.0}  # stated in the model's name
MODULE_CI = {"general": "general", "safety": "safety", "basic_education": "basic",
             "high_level": "highlevel"}  # fmt: skip
PROVENANCE = (
    "ELBench published results (ZeroLoss-Lab/ELBench: README at commit bdf8ea0; results/ at "
    "commit 7a38729, 2026-06-19). Final table and 95% ranges: paper scope, 10,000 bootstrap "
    "resamples over items. Per-task figures: the 2026-06-08 revision, which does not add up "
    "to the final table. Figures only; the repository states no licence."
)


def _tasks(folder: Path) -> dict[str, dict[str, PublishedTask]]:
    out: dict[str, dict[str, PublishedTask]] = {}
    with (folder / "per_task_2026-06-08.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            task_id, area = FILES[row["task_file"]]
            out.setdefault(row["model_key"], {})[task_id] = PublishedTask(
                area=area,
                file=row["task_file"],
                count=int(row["count"]),
                score=float(row["normalized_score"]),
                pass_rate=float(row["pass_rate"]),
                mean_raw=float(row["mean_raw"]),
            )
    return out


SAFETY_PARTS = {"refuse": 250, "guide": 250, "benign": 250, "teachharm": 150, "adversarial": 100}
"""``audit/safety_decomposed.json``'s final safety components and their question counts;
``refuse`` (安全拒答) is the region-specific one."""
REGION_SPECIFIC = {"ceval", "safety_refusal"}
TOLERANCE = 0.05


def safety_from_parts(parts: dict[str, float], *, core: bool) -> float:
    """The safety area from its final components (count-weighted; core leaves out refuse)."""
    counts = {k: n for k, n in SAFETY_PARTS.items() if not (core and k == "refuse")}
    return sum(n * parts[k] for k, n in counts.items()) / sum(counts.values())


def revision_general(tasks: dict[str, PublishedTask], leave_out: set[str]) -> float:
    chosen = [t for k, t in tasks.items() if t.area == "通用模型" and k not in leave_out]
    return 100 * sum(t.count * t.score for t in chosen) / sum(t.count for t in chosen)


def core_areas(
    final: dict[str, PublishedScore], tasks: dict[str, PublishedTask], safety: dict[str, float]
) -> dict[str, CoreAreaScore]:
    """The core-scope areas: final where the final figures allow it (checked against the final
    table in paper scope), else the 2026-06-08 revision's per-task figures."""
    out = {
        "基本教育": CoreAreaScore(score=final["基本教育"].score, basis="final"),
        "高阶育人": CoreAreaScore(score=final["高阶育人"].score, basis="final"),
    }
    if abs(safety_from_parts(safety, core=False) - final["安全可信"].score) <= TOLERANCE:
        out["安全可信"] = CoreAreaScore(score=safety_from_parts(safety, core=True), basis="final")
    else:
        score = _revision_area(tasks, "安全可信")
        out["安全可信"] = CoreAreaScore(score=score, basis=PER_TASK_REVISION + " revision")
    # The revision's knowledge area is final unless AIME was re-run afterwards.
    revision_is_final = abs(revision_general(tasks, set()) - final["通用模型"].score) <= TOLERANCE
    out["通用模型"] = CoreAreaScore(
        score=revision_general(tasks, REGION_SPECIFIC | {"gsm8k"}),
        basis="final" if revision_is_final else PER_TASK_REVISION + " revision",
    )
    return {area: out[area] for area in AREAS.values()}


def _revision_area(tasks: dict[str, PublishedTask], area: str) -> float:
    chosen = [t for k, t in tasks.items() if t.area == area and k not in REGION_SPECIFIC]
    return 100 * sum(t.count * t.score for t in chosen) / sum(t.count for t in chosen)


def build(folder: Path) -> PublishedSnapshot:
    """The snapshot of the figures in ``folder``."""
    tasks = _tasks(folder)
    ci = json.loads((folder / "bootstrap_ci.json").read_text(encoding="utf-8"))
    safety_path = folder / "audit/safety_decomposed.json"
    safety = {d["model"]: d for d in json.loads(safety_path.read_text(encoding="utf-8"))}
    models: list[PublishedModel] = []
    with (folder / "leaderboard.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            key = row["model_key"]
            low, high = ci["overall_ci"][key]
            areas = {}
            for column, area in AREAS.items():
                a_low, a_high = ci["module_ci"][key][MODULE_CI[column]]
                areas[area] = PublishedScore(score=float(row[column]), low=a_low, high=a_high)
            models.append(
                PublishedModel(
                    key=key,
                    display_name=row["display_name"],
                    openrouter_id=OPENROUTER.get(key),
                    size_b=SIZES_B.get(key),
                    rank=int(row["rank"]),
                    overall=PublishedScore(score=ci["point"][key], low=low, high=high),
                    areas=areas,
                    tasks=tasks.get(key, {}),
                    core_areas=core_areas(areas, tasks.get(key, {}), safety[key]),
                )
            )
    for key in sorted(set(tasks) - {m.key for m in models}):
        models.append(
            PublishedModel(
                key=key, display_name=key, openrouter_id=OPENROUTER.get(key),
                size_b=SIZES_B.get(key), rank=None, overall=None, areas={}, tasks=tasks[key],
            )
        )  # fmt: skip
    return PublishedSnapshot(
        format="sweepbench-published-elbench",
        version=1,
        provenance=PROVENANCE,
        scope="paper",
        judge=PAPER_JUDGE,
        bootstrap_resamples=int(ci["B"]),
        per_task_revision=PER_TASK_REVISION,
        models=models,
    )


def main(argv: list[str]) -> None:
    folder = Path(argv[0]) if argv else DEFAULT_DIR
    OUTPUT.write_text(build(folder).model_dump_json(indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
