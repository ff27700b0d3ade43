"""A model whose provider has no key here is still priced (``bench estimate``, ``bench sweep
--estimate-only``): the missing key only stops running it, as single-prompt sweeps do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.settings import KEY_VARIABLES
from sweepbench.store import Store
from tests.helpers import run_cli

PRICED = "anthropic/claude-opus-5"


@pytest.fixture
def no_keys(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sweepbench.models.providers  # noqa: F401 (registers every provider's key variables)

    assert KEY_VARIABLES
    for names in KEY_VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


def test_bench_estimate_prices_a_model_without_a_key(
    no_keys: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run_cli(
        monkeypatch, capsys, "bench", "estimate", "sample", "--preset", "auto-checked",
        "--model", PRICED, "--json",
    )  # fmt: skip
    assert code == 2  # it could not start here
    plan = json.loads(out)
    assert plan["errors"] == []
    assert plan["low_usd"] is not None and plan["high_usd"] is not None
    assert float(plan["high_usd"]) > float(plan["low_usd"]) > 0
    assert len(plan["blocked"]) == 1 and "no key" in plan["blocked"][0]
    assert "It can't run here yet:" in plan["text"]


def test_bench_run_without_a_key_is_refused_before_anything(
    no_keys: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run_cli(
        monkeypatch, capsys, "bench", "run", "sample", "--preset", "auto-checked",
        "--model", PRICED, "--yes",
    )  # fmt: skip
    assert code == 2
    assert "Estimated cost" in err and "cannot be called: no key" in err
    with Store.open() as store:
        assert store.list_calls(limit=None) == []


def test_bench_sweep_estimate_prices_every_setting_without_a_key(
    no_keys: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run_cli(
        monkeypatch, capsys, "bench", "sweep", "sample", "--preset", "auto-checked",
        "--model", PRICED, "--axis", "max_tokens", "--values", "256,1024", "--estimate-only",
        "--json",
    )  # fmt: skip
    plan = json.loads(out)
    assert plan["errors"] == [] and plan["blocked"]
    assert plan["low_usd"] is not None and plan["high_usd"] is not None
    assert code == 2
