"""Benchmark sweeps (issue 16): one question set under several settings, priced and checked as
a whole, run at once, each setting compared with the best on the same items."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

import sweepbench
from sweepbench.bench.items import SAMPLE_MARK, base_key
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.sweeps.plan import divide, plan_bench_sweep, sweep_start_check
from sweepbench.bench.sweeps.run import BenchSweepRunner
from sweepbench.bench.sweeps.store import SweepStore
from sweepbench.errors import UserError
from sweepbench.store import Store
from sweepbench.store.schema import bench_answers, bench_runs
from tests.bench.helpers import set_prices
from tests.bench.sweep_helpers import ACCURACIES, guess, marked_benchmark
from tests.helpers import run_cli

MODELS = [guess(a) for a in ACCURACIES]


def request(path: Path, **values: object) -> BenchRequest:
    models = {"target": values.pop("model", MODELS[0])}
    return BenchRequest.from_values(
        {"benchmark": str(path), "models": models, "confirmed": True, **values}
    )


def answered_keys(store: Store) -> dict[str, list[str]]:
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(bench_answers.c.run_id, bench_answers.c.key)).all()
    found: dict[str, list[str]] = {}
    for run_id, key in rows:
        found.setdefault(run_id, []).append(key)
    return found


# -- detection: what the sweep is for -----------------------------------------------------------


def test_at_2000_items_both_cheaper_settings_are_detectably_worse(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 2_000)
    result = sweepbench.bench_sweep(str(path), "model", MODELS)
    comparison = result.comparison
    assert comparison is not None and comparison.best == MODELS[0]
    by_label = {c.label: c for c in comparison.comparisons}
    for worse in MODELS[1:]:
        verdict = by_label[worse]
        assert verdict.n == 2_000 and verdict.detectably_worse, verdict.sentence
        assert "is worse by" in verdict.sentence
    assert 3 < -by_label[MODELS[1]].diff < 8  # about 5 points
    assert 25 < -by_label[MODELS[2]].diff < 35  # about 30 points
    assert [s.scored for s in result.settings] == [2_000] * 3
    # every setting is an ordinary run sharing the sweep's id
    with Store.open() as store:
        runs = BenchStore(store)
        for setting in result.settings:
            assert setting.run_id is not None
            run = runs.run(setting.run_id)
            assert run is not None and run.settings["sweep"] == result.sweep.id


def test_at_40_items_the_small_gap_is_not_detectable_and_the_detectable_size_is_said(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 2_000)
    result = sweepbench.bench_sweep(str(path), "model", MODELS, max_items=40)
    assert result.comparison is not None
    close = next(c for c in result.comparison.comparisons if c.label == MODELS[1])
    assert close.n == 40 and not close.detectably_worse
    assert "is not detectably worse" in close.sentence
    assert close.min_detectable > 10  # 40 items cannot see a 5-point gap
    assert f"could detect {close.min_detectable:.1f} points" in close.sentence
    frame = result.to_pandas()
    assert list(frame["setting"]) == MODELS
    assert frame.loc[frame["setting"] == MODELS[1], "detectably_worse"].item() is False


# -- the plan: axis refusals, pricing, limits, ceilings -----------------------------------------


def test_the_axis_is_refused_as_a_single_prompt_sweep_refuses_it(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 10)
    with Store.open() as store:
        one = plan_bench_sweep(request(path), "model", [MODELS[0]], store)
        assert any("at least two models" in e for e in one.errors)
        ignored = plan_bench_sweep(
            request(path, model="local/smollm2-135m"), "effort", ["low", "high"], store
        )
        assert any("does not accept the effort parameter" in e for e in ignored.errors)
        unknown = plan_bench_sweep(request(path), "prompt_version", ["1", "v9"], store)
        assert any("has no prompt version v9" in e for e in unknown.errors)
        with pytest.raises(UserError, match="unknown axis"):
            plan_bench_sweep(request(path), "colour", ["red"], store)
        assert sweep_start_check(one, request(path)).refused


def test_a_sweep_whose_low_estimate_exceeds_the_daily_ceiling_is_refused_before_any_call(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_prices(isolated_home, {"scripted.guess": (1_000, 1_000)})  # $0.001 a token
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "6")
    path = marked_benchmark(tmp_path / "bench", 200)  # about $4.35 a setting at the least
    with Store.open() as store:
        plan = plan_bench_sweep(request(path), "model", MODELS[:2], store)
        assert plan.low is not None and plan.low > 6
        # each setting alone is under the ceiling: only the sweep as a whole is above it
        assert all(s.low is not None and s.low < 6 for s in plan.settings)
        assert any("today's ceiling leaves" in p for p in plan.limit_problems)
        assert sweep_start_check(plan, request(path)).refused
        with pytest.raises(UserError, match="can't start"):
            BenchSweepRunner(plan, store)
    with pytest.raises(UserError, match="today's ceiling leaves"):
        sweepbench.bench_sweep(str(path), "model", MODELS[:2])
    with Store.open() as store:
        assert store.list_calls(limit=None) == []
        with store.engine.connect() as conn:
            assert conn.scalar(sa.select(sa.func.count()).select_from(bench_runs)) == 0


def test_the_sweep_limit_is_divided_so_the_settings_never_spend_more_together(
    isolated_home: Path, tmp_path: Path
) -> None:
    set_prices(isolated_home, {"scripted.guess": (100, 100)})
    path = marked_benchmark(tmp_path / "bench", 50)
    with Store.open() as store:
        plan = plan_bench_sweep(
            request(path, limit="0.5"), "max_tokens", ["16", "64", "256"], store
        )
        assert plan.ok, plan.limit_problems
        shares = [s.prepared.plan.limits.total for s in plan.settings]
        assert all(share is not None for share in shares)
        assert sum(s for s in shares if s is not None) <= Decimal("0.5")
        for setting, share in zip(plan.settings, shares, strict=True):
            assert setting.low is not None and share is not None and share >= setting.low
        # a larger budget's higher worst case gets the larger share
        assert shares[0] is not None and shares[2] is not None and shares[2] > shares[0]
        too_small = plan_bench_sweep(request(path, limit="0.0001"), "model", MODELS[:2], store)
        assert any("sweep's total limit" in p for p in too_small.limit_problems)


def test_divide_gives_lows_then_the_rest_by_spread_and_never_more_than_the_amount() -> None:
    costs = [(Decimal(0), Decimal(1), Decimal(2)), (Decimal(0), Decimal(1), Decimal(4))]
    assert divide(Decimal(5), costs) == [Decimal("1.75"), Decimal("3.25")]
    spent = [(Decimal("0.5"), Decimal(0), Decimal(0)), (Decimal(0), Decimal(0), Decimal(0))]
    assert divide(Decimal(1), spent) == [Decimal("0.75"), Decimal("0.25")]
    thirds = divide(Decimal(1), [(Decimal(0), Decimal(0), Decimal(1))] * 3)
    assert sum(thirds) <= 1 and thirds[0] == Decimal("0.333333")


# -- running: resume, stop, repeats, prompt versions --------------------------------------------


def test_stopping_keeps_every_answer_and_the_same_sweep_continues_every_setting(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 300)
    slow = [guess(a, ttft="0.002") for a in ACCURACIES[:2]]
    with Store.open() as store:
        plan = plan_bench_sweep(request(path), "model", slow, store)
        runner = BenchSweepRunner(plan, store, concurrency=4)

        def stop_soon(_index: int, progress: object) -> None:
            if sum(p.done for p in runner.progress if p is not None) >= 60:
                runner.stop()

        runner.on_progress(stop_soon)
        import asyncio

        first = asyncio.run(runner.run())
        assert first.status == "interrupted"
        partial = answered_keys(store)
        assert 0 < sum(len(k) for k in partial.values()) < 600
        again = plan_bench_sweep(request(path), "model", slow, store)
        assert again.previous is not None and again.previous.id == first.sweep_id
        assert sum(s.prepared.plan.already_done for s in again.settings) == sum(
            len(k) for k in partial.values()
        )
        second = asyncio.run(BenchSweepRunner(again, store, concurrency=4).run())
        assert second.sweep_id == first.sweep_id and second.status == "completed"
        keys = answered_keys(store)
        assert len(keys) == 2 and all(len(k) == len(set(k)) == 300 for k in keys.values())
        # every item was answered exactly once in all: one completed call per answer (a call
        # cancelled by the Stop is logged as cancelled, and its item asked again)
        calls = store.list_calls(limit=None)
        answered = Counter(c.item_key for c in calls if c.stop_reason != "cancelled")
        assert len(answered) == 300 and set(answered.values()) == {2}


def test_repeats_ask_each_item_k_times_and_report_pass_at_k(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 60)
    result = sweepbench.bench_sweep(
        str(path), "model", [guess("0.7"), guess("0.4")], repeats=3, temperature=0.7
    )
    with Store.open() as store:
        keys = answered_keys(store)
    for run_keys in keys.values():
        assert len(run_keys) == 180
        assert len({base_key(k) for k in run_keys}) == 60
        assert sum(1 for k in run_keys if SAMPLE_MARK in k) == 120
    assert result.comparison is not None
    summary = {s.label: s for s in result.comparison.settings}[guess("0.7")]
    assert summary.repeats == 3
    assert summary.pass_at_k is not None and summary.pass_hat_k is not None
    assert summary.pass_at_k[1] <= summary.pass_at_k[2] <= summary.pass_at_k[3]
    assert summary.pass_hat_k[3] <= summary.pass_hat_k[1]
    # the repeats draw anew (a deterministic model would give one answer three times)
    assert summary.pass_at_k[3] > summary.pass_at_k[1] + 0.05
    assert any(
        line.startswith(f"{guess('0.7')}, asked 3 times an item: pass@1") for line in result.lines()
    )
    frame = result.to_pandas()
    assert {"pass@1", "pass@3", "pass^3", "worse_share"} <= set(frame.columns)


def test_the_prompt_version_axis_sends_each_declared_version(
    isolated_home: Path, tmp_path: Path
) -> None:
    path = marked_benchmark(tmp_path / "bench", 5, prompt_versions=True)
    result = sweepbench.bench_sweep(
        str(path), "prompt_version", ["1", "terse", "careful"], model="scripted/echo"
    )
    assert [s.label for s in result.settings] == [
        "prompt_version=1", "prompt_version=terse", "prompt_version=careful"
    ]  # fmt: skip
    with Store.open() as store:
        requests = {}
        for call in store.list_calls(limit=None):
            requests.setdefault(call.run_id, []).append(json.dumps(call.request))
    texts = ["\n".join(v) for v in requests.values()]
    assert sum("Answer with the number only." in t for t in texts) == 1
    assert sum("Think it through." in t for t in texts) == 1


# -- the CLI ------------------------------------------------------------------------------------


def test_the_cli_prices_runs_shows_lists_and_exports_a_sweep(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", 40)
    values = ",".join(MODELS)
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "sweep", str(path), "--axis", "model", "--values", values,
        "--estimate-only", "--json",
    )  # fmt: skip
    assert code == 0, err
    estimate = json.loads(out)
    assert [s["questions"] for s in estimate["settings"]] == [40, 40, 40]
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "sweep", str(path), "--axis", "model", "--values", values,
    )  # fmt: skip
    assert code == 0, err
    assert "Sweep of Marked arithmetic: 3 settings varying models" in err
    assert "Best score:" in out and "Against it, on the same items" in out
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "sweeps", "list", "--json")
    [listed] = json.loads(out)
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "sweeps", "show", listed["id"], "--detail")
    assert code == 0 and "Scores per area and task" in out and "sums" in out
    code, out, _ = run_cli(monkeypatch, capsys, "bench", "sweeps", "show", listed["id"], "--json")
    shown = json.loads(out)
    assert len(shown["results"]) == 3 and shown["comparison"]["best"] == MODELS[0]
    code, out, _ = run_cli(
        monkeypatch, capsys, "bench", "sweeps", "export", listed["id"], "--out", str(tmp_path)
    )
    assert code == 0
    folder = tmp_path / listed["id"]
    assert {p.name for p in folder.iterdir()} == {
        "sweep.json", "settings.csv", "comparisons.csv"
    }  # fmt: skip
    assert len((folder / "comparisons.csv").read_text().splitlines()) == 3  # header + 2
    # the same command again: nothing left, the stored sweep is shown
    code, out, err = run_cli(
        monkeypatch, capsys, "bench", "sweep", str(path), "--axis", "model", "--values", values,
    )  # fmt: skip
    assert code == 0 and "Nothing left to run" in err
    with Store.open() as store:
        assert len(SweepStore(store).sweeps()) == 1


def test_the_cli_refuses_a_sweep_above_its_limit_with_exit_2(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    set_prices(isolated_home, {"scripted.guess": (1_000, 1_000)})
    path = marked_benchmark(tmp_path / "bench", 100)
    code, _, err = run_cli(
        monkeypatch, capsys, "bench", "sweep", str(path), "--axis", "model",
        "--values", ",".join(MODELS), "--limit", "0.01", "--yes",
    )  # fmt: skip
    assert code == 2
    assert "sweep's total limit ($0.01)" in err


def test_priced_settings_say_what_they_cost_against_the_best(
    isolated_home: Path, tmp_path: Path
) -> None:
    set_prices(isolated_home, {"scripted.guess": (1, 1_000)})  # output (reasoning too) dear
    path = marked_benchmark(tmp_path / "bench", 100)
    result = sweepbench.bench_sweep(
        str(path), "effort", ["low", "high"], model=guess("0.9"), max_tokens=64
    )
    assert result.comparison is not None
    low, high = result.settings
    assert low.reasoning_tokens < high.reasoning_tokens and low.spent < high.spent
    # the same answers at either effort: the tie goes to the cheaper, and the dearer one is
    # priced against it from the measured spend of the model under test
    assert result.comparison.best == "effort=low"
    [versus] = result.comparison.comparisons
    assert versus.cost_share == pytest.approx(float(high.spent / low.spent), rel=1e-6)
    assert versus.sentence.startswith(f"costs {100 * versus.cost_share:.0f}% as much and is")


def test_whether_a_sweep_spends_is_the_librarys_rule(isolated_home: Path, tmp_path: Path) -> None:
    path = marked_benchmark(tmp_path / "bench", 5)
    with Store.open() as store:
        free = plan_bench_sweep(request(path), "model", MODELS[:2], store)
        assert not free.spends and not any(s.prepared.plan.spends for s in free.settings)
        set_prices(isolated_home, {"scripted.guess": (1, 1)})
        paid = plan_bench_sweep(request(path), "model", MODELS[:2], store)
        assert paid.spends and all(s.prepared.plan.spends for s in paid.settings)
