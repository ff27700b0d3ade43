"""Issue 26 §3: one start rule for ``bench run``, ``bench sweep`` and ``sweep``. Under the same
tight daily ceiling all three are refused before anything is recorded or held — ``bench run``
no longer records a run that pauses before its first answer — each saying which ceiling and
what is left; with room for the run's lowest estimate, a benchmark run starts (and would pause
at the ceiling)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.start import prepare, start_check
from sweepbench.bench.sweeps.plan import plan_bench_sweep, sweep_start_check
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from tests.bench.helpers import set_prices
from tests.helpers import run_cli

MODEL = "scripted/echo?text=ANSWER: B"
TIGHT = "0.02"  # below every command's lowest estimate at these prices
CEILING = "today's ceiling leaves ($0.02 of $0.02, SWEEPBENCH_DAILY_USD)"


def flat(text: str) -> str:
    """Text with rich's line wrapping undone."""
    return " ".join(text.split())


@pytest.fixture
def tight_ceiling(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_prices(isolated_home, {"scripted.echo": (100, 100)})
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", TIGHT)


def nothing_recorded(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """No benchmark run, benchmark sweep or sweep is stored, and the ledger holds nothing."""
    for command in (("bench", "runs"), ("bench", "sweeps", "list"), ("sweeps", "list")):
        code, out, err = run_cli(monkeypatch, capsys, *command, "--json")
        assert code == 0, err
        assert json.loads(out) == [], command
    with Store.open() as store:
        summary = Ledger(store).summary()
    assert summary.spent_today == 0 and summary.reserved == 0


BENCH = ("sample", "-m", MODEL, "--preset", "auto", "--yes")


def test_bench_run_is_refused_under_the_tight_ceiling(
    tight_ceiling: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "bench", "run", *BENCH)
    assert code == 2
    assert f"The run's lowest estimate ($0.10) is more than {CEILING}" in flat(err)
    nothing_recorded(monkeypatch, capsys)


def test_bench_sweep_is_refused_under_the_tight_ceiling(
    tight_ceiling: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("bench", "sweep", *BENCH, "--axis", "max_tokens", "--values", "100,200")
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 2
    assert f"The sweep's lowest estimate ($0.21) is more than {CEILING}" in flat(err)
    nothing_recorded(monkeypatch, capsys)


def test_sweep_is_refused_under_the_tight_ceiling(
    tight_ceiling: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("sweep", "hi", "--axis", "max_tokens", "--values", "100,200", "--model", MODEL)
    code, out, err = run_cli(monkeypatch, capsys, *args, "--yes")
    assert code == 2 and out == ""
    text = flat(err)
    assert text.startswith("refused: This sweep could cost up to")  # admitted as a whole
    assert "only $0.02 of today's $0.02 is left (SWEEPBENCH_DAILY_USD)" in text
    nothing_recorded(monkeypatch, capsys)


def test_the_benchmark_rules_read_the_same_ceiling(tight_ceiling: None) -> None:
    request = BenchRequest(
        benchmark="sample", models={"target": MODEL}, preset="auto", confirmed=True
    )
    benchmark = load_benchmark("sample")
    with Store.open() as store:
        run = start_check(prepare(request, store, benchmark=benchmark), request)
        sweep = plan_bench_sweep(request, "max_tokens", ["100", "200"], store, benchmark=benchmark)
        swept = sweep_start_check(sweep, request)
    assert run.refused and swept.refused
    assert [r for r in run.reasons if CEILING in r]
    assert [r for r in swept.reasons if CEILING in r]


def test_a_ceiling_that_holds_the_lowest_estimate_lets_a_run_start(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    set_prices(isolated_home, {"scripted.echo": (100, 100)})
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.5")  # above the low $0.10, far below the high
    code, out, err = run_cli(monkeypatch, capsys, "bench", "run", *BENCH, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "completed" and report["scored"] == 32
    assert Decimal(str(report["spent_usd"])) <= Decimal("0.5")
