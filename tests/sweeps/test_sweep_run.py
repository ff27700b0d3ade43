"""Running sweeps on the scripted model: concurrency, isolation, Stop all, the ledger, history."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.errors import BudgetExceeded
from sweepbench.models.base import TextDelta
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.sweeps.export_html import render_html
from sweepbench.sweeps.history import list_sweeps, load_sweep
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.run import Spread, Sweep, SweepEvent


@pytest.fixture
def store() -> Store:
    return Store.open()


@pytest.fixture
def priced_lorem(isolated_home: Path) -> None:
    """Give the scripted models a price, so the ledger has real money to track."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        "[scripted.lorem]\nprice_in = 1000\nprice_out = 1000\n"
        "[scripted.echo]\nprice_in = 1000\nprice_out = 1000\n"
    )


async def test_cells_run_concurrently(store: Store) -> None:
    plan = build_plan(
        "x", "max_tokens", ["50", "60", "70"], model="scripted/lorem?words=30&tps=100"
    )
    result = await Sweep(plan, store=store).run()
    assert [s.status for s in result.samples] == ["done"] * 3
    starts = [s.started for s in result.samples if s.started is not None]
    ends = [s.ended for s in result.samples if s.ended is not None]
    assert len(starts) == len(ends) == 3
    assert max(starts) < min(ends)  # all three were running at once
    assert result.ran_at_once  # so the serial equivalent is said (not a timing: a state)
    assert result.serial_s == sum(s.seconds for s in result.samples)
    assert all(s.result and s.result.text.split()[0] == "Lorem" for s in result.samples)


async def test_one_failing_cell_never_stops_the_others(store: Store) -> None:
    plan = build_plan("a b c", "model", ["scripted/echo?fail=500", "scripted/echo?tps=200"])
    result = await Sweep(plan, store=store).run()
    failed, done = result.samples
    assert failed.status == "failed" and "scripted server error" in (failed.error or "")
    assert done.status == "done" and done.result is not None and done.result.text == "a b c"
    assert not result.ok


async def test_truncated_cell_is_marked(store: Store) -> None:
    plan = build_plan("one two three four five", "max_tokens", ["2", "100"], model="scripted/echo")
    small, large = (await Sweep(plan, store=store).run()).samples
    assert small.truncated and small.result is not None and small.result.usage.output_tokens == 2
    assert not large.truncated


async def test_stop_all_stops_every_cell_keeps_text_and_settles(
    store: Store, priced_lorem: None
) -> None:
    plan = build_plan(
        "x", "max_tokens", ["1000", "2000"], model="scripted/lorem?words=2000&tps=100"
    )
    ledger = Ledger(store)
    seen: dict[int, int] = {}
    sweep: Sweep

    def on_event(event: SweepEvent) -> None:
        if isinstance(event.event, TextDelta):
            seen[event.cell_index] = seen.get(event.cell_index, 0) + 1
            if sum(seen.values()) >= 10:
                sweep.stop_all()

    sweep = Sweep(plan, store=store, ledger=ledger, on_event=on_event)
    result = await sweep.run()
    assert result.stopped
    assert [s.status for s in result.samples] == ["stopped", "stopped"]
    for sample in result.samples:
        assert sample.result is not None and sample.result.text  # what was produced is kept
        assert sample.cost_usd is not None and sample.cost_usd > 0  # billed tokens are counted
    reservations = ledger.reservations(result.id)
    assert [r.state for r in reservations] == ["settled", "settled"]
    assert sum((r.settled_usd or Decimal(0)) for r in reservations) == result.cost_usd
    assert ledger.summary().reserved == 0


async def test_sweep_that_does_not_fit_is_refused_before_anything_runs(
    store: Store, priced_lorem: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.5")
    plan = build_plan("x", "max_tokens", ["1000", "2000"], model="scripted/lorem")
    with pytest.raises(BudgetExceeded, match="could cost up to"):
        await Sweep(plan, store=store, ledger=Ledger(store)).run()
    assert list_sweeps(store) == []
    assert store.list_calls() == []


async def test_repeats_give_mean_and_spread(store: Store) -> None:
    plan = build_plan(
        "a b c d e f g h", "max_tokens", ["3", "100"], model="scripted/echo", repeats=3
    )
    result = await Sweep(plan, store=store).run()
    assert len(result.samples) == 6
    assert [s.repeat for s in result.cell_samples(0)] == [0, 1, 2]
    spread = Spread.of([3.0, 5.0, 4.0])
    assert spread.text() == "4 ± 1 (3–5)"
    assert Spread.of([24.0, 31.0]).text() == "28 (24–31)"


async def test_history_and_exports(store: Store, tmp_path: Path) -> None:
    plan = build_plan("Tell me <b>something</b>", "max_tokens", ["2", "50"], model="scripted/echo")
    result = await Sweep(plan, store=store).run()
    [row] = list_sweeps(store)
    assert row.id == result.id and row.cells == 2 and row.status == "done"
    document = load_sweep(store, result.id[:6])
    assert document["format"] == "sweepbench-sweep" and document["version"] == 1
    assert [c["max_tokens"] for c in document["cells"]] == [2, 50]
    assert document["cells"][0]["truncated"] is True
    assert document["cells"][1]["text"] == "Tell me <b>something</b>"
    assert document["serial_s"] >= 0 and document["estimate"]["line"]
    calls = store.list_calls(run_id=result.id)
    assert {c.id for c in calls} == {c["call_id"] for c in document["cells"]}
    page = render_html(document)
    assert "&lt;b&gt;something&lt;/b&gt;" in page and "<b>something" not in page
    assert "http://" not in page and "https://" not in page  # usable offline
    assert "TRUNCATED at 2 tokens" in page


def test_python_api_sweep_and_estimate() -> None:
    import sweepbench

    estimate = sweepbench.estimate("a b", "max_tokens", [2, 9], model="scripted/echo")
    assert estimate.free and len(estimate.cells) == 2
    result = sweepbench.sweep("a b c", "max_tokens", [2, 9], model="scripted/echo")
    assert [s.status for s in result.samples] == ["done", "done"]
    assert result.samples[0].truncated


async def test_python_api_refuses_inside_a_running_loop() -> None:
    import sweepbench
    from sweepbench.errors import UserError

    with pytest.raises(UserError, match="asweep"):
        sweepbench.sweep("a", "max_tokens", [2, 9], model="scripted/echo")
    result = await sweepbench.asweep("a", "max_tokens", [2, 9], model="scripted/echo")
    assert len(result.samples) == 2


async def test_the_serial_figure_is_claimed_only_where_calls_overlapped(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # calls that ran one after the other (local ones) took their serial time: "≈Xs if run one
    # at a time" would be wrong in the CLI's status line and in the HTML export alike
    from sweepbench.cli.sweep import status_line
    from sweepbench.sweeps.results import SweepResult

    plan = build_plan("a b c", "max_tokens", ["2", "50"], model="scripted/echo?tps=200")
    result = await Sweep(plan, store=store).run()
    document = load_sweep(store, result.id)
    assert result.ran_at_once and document["ran_at_once"] is True
    assert "if run one at a time" in status_line(result)
    assert "if run one at a time" in render_html(document)
    monkeypatch.setattr(SweepResult, "ran_at_once", property(lambda self: False))
    assert "if run one at a time" not in status_line(result)
    assert "if run one at a time" not in render_html({**document, "ran_at_once": False})
