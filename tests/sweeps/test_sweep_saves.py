"""A sweep's fixed cost (issue 30 §5): the cells that finish together are stored by one write,
a failed write still lets every cell finish and every hold be settled, the parts of the document
a run cannot change are built once, and the estimate reads the store once a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from sweepbench.money import estimate as money_estimate
from sweepbench.money.ledger import Ledger
from sweepbench.store import Store
from sweepbench.store.schema import sweeps as sweeps_table
from sweepbench.sweeps import run as sweep_run
from sweepbench.sweeps.history import load_sweep, save_sweep, sweep_document
from sweepbench.sweeps.plan import build_plan
from sweepbench.sweeps.pricing import estimate_plan
from sweepbench.sweeps.run import Sweep


@pytest.fixture
def store() -> Store:
    return Store.open()


@pytest.fixture
def priced(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        "[scripted.lorem]\nprice_in = 1000\nprice_out = 1000\n"
        "[scripted.echo]\nprice_in = 1000\nprice_out = 1000\n"
    )


@pytest.mark.usefixtures("priced")
async def test_a_failed_write_lets_every_cell_finish_and_is_raised_at_the_end(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[str] = []

    def failing_once(store_: Store, result: Any) -> None:
        writes.append(result.id)
        if len(writes) == 2:  # the first write after a cell finished
            raise OSError("disk full")
        save_sweep(store_, result)

    monkeypatch.setattr(sweep_run, "save_sweep", failing_once)
    plan = build_plan("a b c", "max_tokens", ["50", "60", "70"], model="scripted/echo?tps=200")
    ledger = Ledger(store)
    sweep = Sweep(plan, store=store, ledger=ledger)
    with pytest.raises(OSError, match="disk full"):
        await sweep.run()
    assert [s.status for s in sweep.samples] == ["done"] * 3
    document = load_sweep(store, sweep.id)  # the last write stored every cell
    assert document["status"] == "done"
    assert [c["text"] for c in document["cells"]] == ["a b c"] * 3
    holds = ledger.reservations(sweep.id)
    assert len(holds) == 3 and all(h.state == "settled" for h in holds)
    assert ledger.summary().open_reservations == 0


async def test_no_more_writes_than_one_a_cell_and_the_last_holds_everything(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored: list[str] = []

    def counting(store_: Store, result: Any) -> None:
        save_sweep(store_, result)
        stored.append(load_sweep(store_, result.id)["status"])

    monkeypatch.setattr(sweep_run, "save_sweep", counting)
    plan = build_plan(
        "x", "max_tokens", ["50", "60", "70"], model="scripted/lorem?words=20", repeats=2
    )
    result = await Sweep(plan, store=store).run()
    # at the start, at most once per finished sample, and at the end
    assert 2 <= len(stored) <= 2 + len(result.samples)
    assert stored[0] == "running" and stored[-1] == "done"


async def test_the_stored_document_is_the_document(store: Store) -> None:
    plan = build_plan(
        "a b c", "model", ["scripted/echo", "scripted/lorem?words=5", "scripted/echo?tps=500"]
    )
    sweep = Sweep(plan, store=store)
    result = await sweep.run()
    with store.engine.connect() as conn:
        stored = conn.execute(
            sa.select(sweeps_table.c.document).where(sweeps_table.c.id == result.id)
        ).scalar_one()
    document = sweep_document(result)
    assert json.loads(stored) == json.loads(json.dumps(document, ensure_ascii=False))
    assert list(document["prices_used"]) == [
        "scripted/echo", "scripted/lorem?words=5", "scripted/echo?tps=500"
    ]  # fmt: skip
    assert document["estimate"]["line"] == result.estimate.line()
    assert [v["model"] for v in document["variants"]] == [c.model for c in plan.cells]


@pytest.mark.usefixtures("priced")
async def test_the_estimate_reads_each_models_history_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # history to calibrate from: five finished calls of the model
    await Sweep(
        build_plan("x", "max_tokens", ["40", "50", "60", "70", "80"], model="scripted/lorem"),
        store=store,
    ).run()
    reads: list[tuple[str, str]] = []
    real = money_estimate.observed_utilisation

    def counted(store_: Store, model: str, effort: str) -> tuple[float, int] | None:
        reads.append((model, effort))
        return real(store_, model, effort)

    monkeypatch.setattr(money_estimate, "observed_utilisation", counted)
    plan = build_plan("x", "max_tokens", ["100", "200", "300", "400"], model="scripted/lorem")
    estimate = estimate_plan(plan, store)
    assert reads == [("scripted/lorem", "none")]
    assert {c.call.calibrated_from for c in estimate.cells} == {5}  # every cell calibrated
    reads.clear()
    estimate_plan(build_plan("x", "model", ["scripted/lorem", "scripted/echo"]), store)
    assert sorted(reads) == [("scripted/echo", "none"), ("scripted/lorem", "none")]
