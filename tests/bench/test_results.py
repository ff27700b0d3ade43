"""Scores per task, skill and area, the overall, bootstrap ranges, the detailed table, money and
outcome wording (spec §8.3, §11, §16, §17.7, §6.2)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal

import numpy as np
import pytest

from sweepbench.bench.items import Area, Benchmark, Item, Task, TaskScore
from sweepbench.bench.results import (
    CSV_COLUMNS,
    PARTIAL_NOTE,
    ScoredAnswer,
    Summary,
    detailed_rows,
    format_money,
    format_score,
    outcome_text,
    scores_line,
    summarise,
    summary_csv,
    weighted_area_score,
)
from sweepbench.stats.bootstrap import (
    MAX_CELLS,
    chunk_rows,
    percentile_interval,
    resample_means,
)

# ---------------------------------------------------------------- builders


def make_task(
    task_id: str,
    area: str,
    items: int,
    *,
    score_by: TaskScore = "pass_rate",
    options: Mapping[str, Any] | None = None,
    region_specific: bool = False,
    dimensions: Sequence[str] = ("default",),
) -> Task:
    """A task with ``items`` placeholder items (skills assigned round-robin)."""
    built = tuple(
        Item(
            key=f"{task_id}.jsonl::{i}",
            sample_id=str(i),
            task=task_id,
            dimension=dimensions[i % len(dimensions)],
            prompt=f"q{i}",
        )
        for i in range(items)
    )
    return Task(
        id=task_id,
        area=area,
        name=task_id.upper(),
        grading="auto",
        scorer="choice",
        items=built,
        options=dict(options or {}),
        score_by=score_by,
        region_specific=region_specific,
    )


def make_benchmark(
    *areas: tuple[str, str, Sequence[Task]],
    overall: Literal["mean_of_areas", "mean_of_tasks"] = "mean_of_areas",
) -> Benchmark:
    """A benchmark from (key, label, tasks) triples."""
    return Benchmark(
        id="bench",
        name="Bench",
        areas=tuple(Area(key, label, tuple(tasks)) for key, label, tasks in areas),
        overall=overall,
    )


def passes(task: str, passed: int, total: int, dimension: str = "default") -> list[ScoredAnswer]:
    """``total`` answers of which the first ``passed`` pass (score 1) and the rest fail."""
    return [
        ScoredAnswer(task, dimension, 1.0 if i < passed else 0.0, i < passed) for i in range(total)
    ]


def run(benchmark: Benchmark, answers: Sequence[ScoredAnswer], **kw: Any) -> Summary:
    """Summarise with every task selected, core scope, bootstrap off unless asked."""
    kw.setdefault("scope", "core")
    kw.setdefault("selected_tasks", {t.id for t in benchmark.tasks})
    kw.setdefault("bootstrap", 0)
    return summarise(benchmark, answers, **kw)


# ---------------------------------------------------------------- spec §16


def test_acceptance_overall_is_the_unweighted_mean_of_four_areas() -> None:
    figures = {"k": 885, "s": 897, "t": 849, "c": 715}
    bench = make_benchmark(
        *((key, key.upper(), [make_task(key + "1", key, 1000)]) for key in figures)
    )
    answers = [a for key, n in figures.items() for a in passes(key + "1", n, 1000)]
    summary = run(bench, answers)
    assert [round(a.score_100, 6) for a in summary.areas] == [88.5, 89.7, 84.9, 71.5]
    assert summary.overall_100 == pytest.approx(83.65)
    assert format_score(summary.overall_100 or 0.0) == "83.7"
    assert format_score(summary.overall_100 or 0.0, 2) == "83.65"
    assert summary.covers_scope and summary.all_areas_present


def test_format_score_rounds_half_up_despite_float_noise() -> None:
    assert format_score(83.65) == "83.7"  # 83.65 is 83.6499999… as a float
    assert format_score(0.05) == "0.1"
    assert format_score(71.24) == "71.2"
    assert format_score(100.0) == "100.0"


def test_area_score_weights_tasks_by_count() -> None:
    bench = make_benchmark(
        ("a", "Area A", [make_task("small", "a", 100), make_task("big", "a", 300)])
    )
    summary = run(bench, passes("small", 50, 100) + passes("big", 270, 300))
    area = summary.area("a")
    assert area.score_100 == pytest.approx(80.0)  # (50 + 270) / 400, not (50 + 90) / 2
    assert area.count == 400 and area.tasks_present == 2 and area.complete
    assert summary.task("small").score == pytest.approx(0.5)
    assert summary.task("big").score == pytest.approx(0.9)
    assert weighted_area_score([100, 300], [0.5, 0.9]) == pytest.approx(80.0)


def test_mean_score_task_counts_partial_credit() -> None:
    satas = make_task("satas", "s", 4, score_by="mean_score")
    bench = make_benchmark(("s", "Safety", [satas]))
    answers = [
        ScoredAnswer("satas", "default", 1.0, True),
        ScoredAnswer("satas", "default", 0.5, False),
        ScoredAnswer("satas", "default", 0.5, False),
        ScoredAnswer("satas", "default", 0.0, False),
    ]
    result = run(bench, answers).task("satas")
    assert result.score == pytest.approx(0.5)
    assert result.mean_score == pytest.approx(0.5)
    assert result.pass_rate == pytest.approx(0.25)


def test_pass_rate_task_ignores_partial_scores() -> None:
    bench = make_benchmark(("s", "Safety", [make_task("strict", "s", 2)]))
    answers = [
        ScoredAnswer("strict", "default", 0.5, False),
        ScoredAnswer("strict", "default", 1.0, True),
    ]
    assert run(bench, answers).task("strict").score == pytest.approx(0.5)


def test_scaled_task_divides_mean_score_by_its_scale() -> None:
    knowledge = make_task("knowledge", "t", 3, score_by="mean_score", options={"scale": 10})
    question = make_task("question", "t", 2, score_by="mean_score", options={"scale": 5})
    guided = make_task("guided", "t", 2, options={"scale": 5})  # pass rate via score_by
    bench = make_benchmark(("t", "Teaching", [knowledge, question, guided]))
    answers = [ScoredAnswer("knowledge", "default", s, s >= 6) for s in (7.0, 8.0, 9.0)]
    answers += [ScoredAnswer("question", "default", s, s >= 3) for s in (4.0, 2.0)]
    answers += [ScoredAnswer("guided", "default", s, s >= 3) for s in (4.5, 1.0)]
    summary = run(bench, answers)
    assert summary.task("knowledge").score == pytest.approx(0.8)
    assert summary.task("knowledge").mean_score == pytest.approx(8.0)
    assert summary.task("question").score == pytest.approx(0.6)
    assert summary.task("guided").score == pytest.approx(0.5)
    # Teaching = count-weighted mean of the normalised task scores.
    assert summary.area("t").score_100 == pytest.approx(100 * (3 * 0.8 + 2 * 0.6 + 2 * 0.5) / 7)


def test_bad_scale_is_refused() -> None:
    task = make_task("k", "t", 1, score_by="mean_score", options={"scale": 0})
    with pytest.raises(ValueError, match="scale"):
        run(make_benchmark(("t", "T", [task])), [ScoredAnswer("k", "default", 5.0, True)])


# ---------------------------------------------------------------- presence, scope, selection


def two_area_benchmark() -> Benchmark:
    return make_benchmark(
        (
            "k",
            "Knowledge & reasoning",
            [make_task("mmlu", "k", 4), make_task("ceval", "k", 2, region_specific=True)],
        ),
        ("s", "Safety", [make_task("answer", "s", 2)]),
    )


def test_areas_without_answers_are_absent_not_zero() -> None:
    summary = run(two_area_benchmark(), passes("mmlu", 3, 4))
    assert [a.area for a in summary.areas] == ["k"]
    assert summary.overall_100 == pytest.approx(75.0)  # the mean of the areas present only
    assert not summary.all_areas_present and not summary.covers_scope
    assert summary.missing_tasks == ("answer",)
    with pytest.raises(KeyError):
        summary.area("s")


def test_core_scope_leaves_out_region_specific_answers() -> None:
    answers = passes("mmlu", 4, 4) + passes("ceval", 0, 2) + passes("answer", 1, 2)
    core = run(two_area_benchmark(), answers)
    assert core.area("k").score_100 == pytest.approx(100.0)
    assert core.area("k").tasks_in_scope == 1 and core.area("k").expected == 4
    assert core.left_out == 2 and core.covers_scope and core.expected == 6
    paper = run(two_area_benchmark(), answers, scope="paper")
    assert paper.area("k").score_100 == pytest.approx(400 / 6)
    assert paper.left_out == 0 and paper.covers_scope and paper.expected == 8
    assert paper.overall_100 == pytest.approx((400 / 6 + 50) / 2)


def test_unselected_tasks_do_not_count() -> None:
    answers = passes("mmlu", 4, 4) + passes("answer", 0, 2)
    summary = run(two_area_benchmark(), answers, selected_tasks={"mmlu"})
    assert [a.area for a in summary.areas] == ["k"] and summary.left_out == 2
    assert summary.missing_tasks == ()


def test_incomplete_task_makes_area_and_scope_incomplete() -> None:
    summary = run(two_area_benchmark(), passes("mmlu", 2, 3) + passes("answer", 2, 2))
    assert not summary.task("mmlu").complete and summary.task("mmlu").expected == 4
    assert not summary.area("k").complete and summary.area("s").complete
    assert summary.all_areas_present and not summary.covers_scope


def test_unknown_task_is_an_error() -> None:
    with pytest.raises(ValueError, match="nope"):
        run(two_area_benchmark(), [ScoredAnswer("nope", "default", 1.0, True)])


def test_mean_of_tasks_overall() -> None:
    bench = make_benchmark(
        ("a", "A", [make_task("x", "a", 1), make_task("y", "a", 3)]),
        ("b", "B", [make_task("z", "b", 1)]),
        overall="mean_of_tasks",
    )
    summary = run(bench, passes("x", 1, 1) + passes("y", 0, 3) + passes("z", 0, 1))
    assert summary.overall_100 == pytest.approx(100 / 3)


def test_nothing_scored() -> None:
    summary = run(two_area_benchmark(), [], bootstrap=100)
    assert summary.areas == () and summary.overall_100 is None and summary.overall_ci95 is None
    assert detailed_rows(summary) == []
    assert scores_line(summary) == "No questions were scored."


def test_skills_per_task_and_across_tasks() -> None:
    bench = make_benchmark(
        (
            "a",
            "A",
            [
                make_task("x", "a", 4, dimensions=("alg", "geo")),
                make_task("y", "a", 2, dimensions=("alg",)),
            ],
        )
    )
    answers = passes("x", 2, 2, "alg") + passes("x", 0, 2, "geo") + passes("y", 1, 2, "alg")
    summary = run(bench, answers)
    skills = {s.dimension: s for s in summary.task("x").skills}
    assert skills["alg"].pass_rate == 1.0 and skills["geo"].pass_rate == 0.0
    assert skills["alg"].score == 1.0 and skills["alg"].task == "x"
    overall = {s.dimension: s for s in summary.skills}
    assert overall["alg"].count == 4 and overall["alg"].pass_rate == pytest.approx(0.75)
    assert overall["geo"].count == 2 and overall["alg"].task is None


# ---------------------------------------------------------------- bootstrap


def test_ci_contains_the_estimate_and_narrows_with_more_items() -> None:
    def width(n: int) -> tuple[float, float, float]:
        bench = make_benchmark(("a", "A", [make_task("x", "a", n)]))
        summary = run(bench, passes("x", n * 3 // 5, n), bootstrap=2000)
        low, high = summary.overall_ci95 or (0.0, 0.0)
        return low, summary.overall_100 or 0.0, high

    low_s, point_s, high_s = width(20)
    low_l, point_l, high_l = width(2000)
    assert low_s < point_s < high_s and low_l < point_l < high_l
    assert point_s == pytest.approx(60.0) and point_l == pytest.approx(60.0)
    assert high_l - low_l < (high_s - low_s) / 5
    # Binomial standard error at n=2000: sqrt(.6 × .4 / 2000) ≈ 1.1 points → ±2.15.
    assert high_l - low_l == pytest.approx(4.3, abs=0.5)


def test_ranges_at_every_level() -> None:
    bench = make_benchmark(
        ("a", "A", [make_task("x", "a", 50), make_task("y", "a", 50)]),
        ("b", "B", [make_task("z", "b", 50)]),
    )
    answers = passes("x", 30, 50) + passes("y", 40, 50) + passes("z", 10, 50)
    summary = run(bench, answers, bootstrap=1000)
    for task in summary.tasks:
        assert task.ci95 is not None and task.ci95[0] <= task.score <= task.ci95[1]
        assert task.ci95[0] >= 0.0 and task.ci95[1] <= 1.0
    for area in summary.areas:
        assert area.ci95_100 is not None
        assert area.ci95_100[0] < area.score_100 < area.ci95_100[1]
    assert summary.overall_ci95 is not None
    # Averaging two areas narrows the range below the wider area's.
    overall_width = summary.overall_ci95[1] - summary.overall_ci95[0]
    assert overall_width < max(
        (a.ci95_100 or (0, 0))[1] - (a.ci95_100 or (0, 0))[0] for a in summary.areas
    )


def test_constant_scores_give_a_point_range() -> None:
    bench = make_benchmark(("a", "A", [make_task("x", "a", 30), make_task("one", "a", 1)]))
    summary = run(bench, passes("x", 30, 30) + passes("one", 0, 1), bootstrap=500)
    assert summary.task("x").ci95 == (1.0, 1.0)
    assert summary.task("one").ci95 == (0.0, 0.0)  # a 1-item task resamples to itself
    low, high = summary.overall_ci95 or (0.0, 1.0)
    assert low == pytest.approx(high) == pytest.approx(100 * 30 / 31)


def test_seed_zero_is_reproducible_and_the_seed_matters() -> None:
    bench = make_benchmark(
        ("a", "A", [make_task("x", "a", 40, score_by="mean_score")]),
        ("b", "B", [make_task("y", "b", 40)]),
    )
    answers = [ScoredAnswer("x", "default", (i * 37 % 40) / 40, i % 3 == 0) for i in range(40)]
    answers += passes("y", 29, 40)
    first = run(bench, answers, bootstrap=1000)
    again = run(bench, list(reversed(answers)), bootstrap=1000)
    assert first.seed == 0 and first.resamples == 1000
    assert first.overall_ci95 == again.overall_ci95
    assert [a.ci95_100 for a in first.areas] == [a.ci95_100 for a in again.areas]
    other = run(bench, answers, bootstrap=1000, seed=1)
    assert other.overall_ci95 != first.overall_ci95


def loop_bootstrap(
    tasks: Sequence[tuple[str, Sequence[float]]], resamples: int, seed: int
) -> list[float]:
    """A plain reference: per task (values in sorted order) one resample at a time with
    replacement, then the count-weighted area mean."""
    rng = np.random.default_rng(seed)
    per_task: list[list[float]] = []
    for _, unsorted in tasks:
        values = sorted(unsorted)
        means = []
        for _ in range(resamples):
            picked = rng.integers(0, len(values), size=len(values))
            means.append(sum(values[int(i)] for i in picked) / len(values))
        per_task.append(means)
    total = sum(len(v) for _, v in tasks)
    return [
        100 * sum(len(v) * per_task[t][b] for t, (_, v) in enumerate(tasks)) / total
        for b in range(resamples)
    ]


def test_vectorised_bootstrap_matches_a_plain_loop_exactly() -> None:
    # Many distinct raw scores → the index-matrix draw, which follows the same random stream.
    raw = {"k": [1.0 + (i * 7 % 10) * 0.9 for i in range(9)], "q": [1.0, 2.5, 3.0, 4.75, 5.0]}
    tasks = [
        make_task("k", "t", 9, score_by="mean_score", options={"scale": 10}),
        make_task("q", "t", 5, score_by="mean_score", options={"scale": 5}),
    ]
    bench = make_benchmark(("t", "Teaching", tasks))
    answers = [ScoredAnswer(t, "default", s, s > 3) for t, scores in raw.items() for s in scores]
    summary = run(bench, answers, bootstrap=300)
    scaled = [("k", [s / 10 for s in raw["k"]]), ("q", [s / 5 for s in raw["q"]])]
    expected = percentile_interval(np.array(loop_bootstrap(scaled, 300, 0)))
    assert summary.area("t").ci95_100 == pytest.approx(expected, abs=1e-9)
    assert summary.overall_ci95 == pytest.approx(expected, abs=1e-9)


def test_count_draw_agrees_statistically_with_a_plain_loop() -> None:
    # Pass/fail values → the multinomial-count draw; same distribution as the index draw.
    values = [1.0] * 30 + [0.0] * 20 + [0.5] * 10
    bench = make_benchmark(("s", "S", [make_task("x", "s", 60, score_by="mean_score")]))
    answers = [ScoredAnswer("x", "default", v, v == 1.0) for v in values]
    summary = run(bench, answers, bootstrap=4000)
    reference = percentile_interval(np.array(loop_bootstrap([("x", values)], 4000, 7)))
    assert summary.overall_ci95 == pytest.approx(reference, abs=1.0)


def test_resample_means_chunks_give_the_same_distribution() -> None:
    rng = np.random.default_rng(3)
    values = rng.random(500)
    whole = resample_means(values, 3000, np.random.default_rng(0))
    chunked = resample_means(values, 3000, np.random.default_rng(0), max_cells=1234)
    assert whole.shape == chunked.shape == (3000,)
    assert chunked.mean() == pytest.approx(values.mean(), abs=0.005)
    assert chunked.std() == pytest.approx(whole.std(), rel=0.1)
    assert chunked.std() == pytest.approx(values.std() / np.sqrt(500), rel=0.1)


def test_resample_means_edge_cases() -> None:
    rng = np.random.default_rng(0)
    assert resample_means(np.array([0.25]), 5, rng).tolist() == [0.25] * 5
    assert resample_means(np.array([0.0, 1.0]), 0, rng).size == 0
    with pytest.raises(ValueError):
        resample_means(np.array([]), 5, rng)


def test_chunks_stay_under_100_mb() -> None:
    for width in (1, 10, 10_000, 1_000_000):
        rows = chunk_rows(width)
        assert rows >= 1
        assert rows * width * 16 <= 100_000_000 or rows == 1
    assert chunk_rows(10_000) * 10_000 <= MAX_CELLS


def test_large_tasks_bootstrap_to_the_normal_interval() -> None:
    """Its time (2 × 10,000 items, 2,000 resamples) is measured in
    benchmarks/hostile_inputs.py, not asserted."""
    n = 10_000
    rng = np.random.default_rng(1)
    bench = make_benchmark(
        ("a", "A", [make_task("bin", "a", n)]),
        ("b", "B", [make_task("raw", "b", n, score_by="mean_score")]),
    )
    answers = [ScoredAnswer("bin", "default", float(p), bool(p)) for p in rng.random(n) < 0.7]
    answers += [ScoredAnswer("raw", "default", float(s), s > 0.5) for s in rng.random(n)]
    summary = run(bench, answers, bootstrap=2000)
    low, high = summary.area("a").ci95_100 or (0.0, 0.0)
    assert high - low == pytest.approx(2 * 1.96 * np.sqrt(0.7 * 0.3 / n) * 100, rel=0.15)


def test_negative_bootstrap_is_refused() -> None:
    with pytest.raises(ValueError):
        run(two_area_benchmark(), [], bootstrap=-1)


# ---------------------------------------------------------------- detailed table and CSV


def table_summary() -> Summary:
    bench = make_benchmark(
        ("k", "Knowledge & reasoning", [make_task("math", "k", 4, dimensions=("alg", "geo"))]),
        ("s", "Safety", [make_task("answer", "s", 2)]),
    )
    answers = passes("math", 2, 2, "alg") + passes("math", 1, 2, "geo") + passes("answer", 1, 2)
    return run(bench, answers, bootstrap=200)


def test_detailed_rows_are_area_then_tasks_then_skills() -> None:
    rows = detailed_rows(table_summary())
    assert [(r.group, r.name) for r in rows] == [
        ("Overall", "Overall"),
        ("Area", "Knowledge & reasoning"),
        ("Task", "MATH"),
        ("Skill", "MATH · alg"),
        ("Skill", "MATH · geo"),
        ("Area", "Safety"),
        ("Task", "ANSWER"),  # its only skill is "default": no Skill row
    ]
    math_row = rows[2]
    assert (math_row.count, math_row.pass_rate, math_row.score_100) == (4, 0.75, 75.0)
    assert math_row.ci95_100 is not None and math_row.task == "math" and math_row.area == "k"
    assert rows[4].pass_rate == 0.5 and rows[4].dimension == "geo" and rows[4].ci95_100 is None
    assert rows[0].score_100 == pytest.approx((75.0 + 50.0) / 2)


def test_summary_csv_has_the_columns_and_values() -> None:
    text = summary_csv(table_summary())
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert rows[3][:6] == ["Task", "MATH", "4", "0.7500", "0.7500", "75.00"]
    assert rows[4][5:] == ["100.00", "", ""]  # a skill: score, no range
    low, high = float(rows[3][6]), float(rows[3][7])
    assert 0.0 <= low <= 75.0 <= high <= 100.0
    assert len(rows) == 8


# ---------------------------------------------------------------- money


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (None, "?"),
        (Decimal("1234.56"), "$1,234.56"),
        (Decimal("1234567.891"), "$1,234,567.89"),
        (Decimal("0.995"), "$1.00"),
        (Decimal("1"), "$1.00"),
        (Decimal("0.994"), "$0.99"),
        (Decimal("0.125"), "$0.13"),
        (Decimal("0.12"), "$0.12"),
        (Decimal("0.01"), "$0.01"),
        (Decimal("0"), "$0"),
        (Decimal("0.00"), "$0"),
        (Decimal("0.00042"), "$0.00042"),
        (Decimal("0.0004217"), "$0.000422"),
        (Decimal("0.0099"), "$0.0099"),
        (Decimal("0.005"), "$0.005"),
    ],
)
def test_money_formats(amount: Decimal | None, text: str) -> None:
    assert format_money(amount) == text


# ---------------------------------------------------------------- outcome wording


def test_outcome_finished() -> None:
    heading, body = outcome_text("completed", scored=2481, errors=0, spent=Decimal("1.2345"))
    assert heading == "Finished" and body == "2,481 answers scored for $1.23."
    assert outcome_text("completed", scored=1, errors=0, spent=Decimal(0))[1] == (
        "1 answer scored for $0."
    )


def test_outcome_paused_at_budget() -> None:
    heading, body = outcome_text("paused_budget", scored=120, errors=0, spent=Decimal("5.01"))
    assert heading == "Paused at your spending limit"
    assert body == (
        "120 answers scored for $5.01. Everything finished is saved. "
        "Raise the limit and run the same command again to carry on from here."
    )
    web = outcome_text("paused_budget", scored=120, errors=0, spent=Decimal("5"), surface="web")
    assert "Raise the limit and press Run again to carry on from here." in web[1]
    daily = outcome_text(
        "paused_budget", scored=3, errors=0, spent=Decimal("0.01"),
        reason="Daily budget reached (SWEEPBENCH_DAILY_USD) — $0.01 of $0.01 spent today.",
    )  # fmt: skip
    assert daily[1] == (
        "3 answers scored for $0.01. Everything finished is saved. Daily budget reached "
        "(SWEEPBENCH_DAILY_USD) — $0.01 of $0.01 spent today. Then run the same command again "
        "to carry on from here."
    )


def test_outcome_interrupted_with_reason() -> None:
    heading, body = outcome_text(
        "interrupted", scored=3, errors=1, spent=Decimal("0.00042"), reason="quota exhausted."
    )
    assert heading == "Stopped early"
    assert body == (
        "3 answers scored for $0.00042 before the run stopped: quota exhausted. "
        "1 hit an error. Run the same command again to continue."
    )
    web = outcome_text("interrupted", scored=3, errors=0, spent=Decimal(0), surface="web")[1]
    assert web == "3 answers scored for $0 before the run stopped. Press Run again to continue."


def test_outcome_finished_with_errors() -> None:
    heading, body = outcome_text(
        "completed_with_errors", scored=90, errors=10, spent=Decimal("0.5")
    )
    assert heading == "Finished with some errors"
    assert body == (
        "90 answers scored for $0.50; 10 hit errors, usually rate limits or timeouts. "
        "Run the same command with --retry-failed to retry only those."
    )
    web = outcome_text(
        "completed_with_errors", scored=90, errors=10, spent=Decimal("0.5"), surface="web"
    )[1]
    assert web.endswith("Press Run again to retry only those.")


def test_scores_line_partial_and_complete() -> None:
    partial = run(two_area_benchmark(), passes("mmlu", 3, 4))
    assert scores_line(partial) == (
        f"Scores on the questions that ran: Knowledge & reasoning 75.0. {PARTIAL_NOTE}"
    )
    full = run(two_area_benchmark(), passes("mmlu", 3, 4) + passes("answer", 2, 2))
    assert (
        scores_line(full)
        == "Scores on the questions that ran: Knowledge & reasoning 75.0 · Safety 100.0"
    )
