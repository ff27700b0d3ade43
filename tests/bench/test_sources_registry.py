"""The one benchmark-source registry (issue 28 §3): the catalogue, the report, ``bench list``
and the web page read the same table, so a new source is one row."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.items import Benchmark
from sweepbench.bench.sources import registry
from sweepbench.bench.sources.registry import BenchmarkSource, find, names, register, source
from sweepbench.bench.storage_rows import RunRow
from sweepbench.errors import UserError
from tests.helpers import run_cli


def run_row(benchmark: str, **settings: Any) -> RunRow:
    """A stored run of ``benchmark`` with these settings."""
    now = datetime.now(UTC)
    return RunRow("r1", "h", benchmark, "m/x", None, "completed", None, now, now, 1, settings)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A throwaway source ``toy`` (the sample's questions under another id), registered for
    this test only; the ids of the runs it reloads."""
    monkeypatch.setattr(registry, "_ADDED", {})
    reloaded: list[str] = []

    def load(data: Path | None) -> Benchmark:
        return replace(load_benchmark("sample"), id="toy", name="Toy benchmark")

    def reload(run: RunRow) -> Benchmark:
        reloaded.append(run.id)
        return load(None)

    register(BenchmarkSource("toy", "Toy benchmark", False, load, reload))
    return reloaded


def test_the_built_in_sources_in_their_order() -> None:
    assert names() == ["sample", "sample-teaching", "elbench"]
    sample = find(" Sample ")
    assert sample is not None and sample.name == "sample" and not sample.needs_data
    elbench = source("ELBENCH")
    assert elbench.needs_data and elbench.label == "ELBench (your copy of its data)"
    assert [s.name for s in registry.sources() if s.listed] == ["sample", "elbench"]


def test_an_unknown_name_says_it_and_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        source("nope")
    assert str(caught.value) == (
        "unknown benchmark 'nope': use one of sample, sample-teaching, elbench, or the path of "
        "your own declaration (.yaml or .py)"
    )


def test_elbench_needs_its_data() -> None:
    with pytest.raises(UserError, match="--data PATH/benchmark_root"):
        load_benchmark("elbench")


def test_a_declaration_path_is_one_rule(tmp_path: Path) -> None:
    missing = tmp_path / "mine.yaml"
    declared = source(str(missing))
    assert declared.name == str(missing) and not declared.listed
    with pytest.raises(UserError, match="no benchmark declaration at"):
        declared.load(None)
    teaching = load_benchmark("sample-teaching")
    again = registry.reload_run(run_row(teaching.id, benchmark_source=teaching.source))
    assert again.id == teaching.id and again.source == teaching.source


def test_the_web_page_offers_the_registrys_sources() -> None:
    from sweepbench.web.bench_page import BENCHMARKS

    assert BENCHMARKS[:-1] == [(s.name, s.label) for s in registry.sources()]
    assert BENCHMARKS[-1][0] == "declaration"


def test_a_registered_source_is_listed_loadable_and_reloaded(
    toy: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert names()[-1] == "toy"
    assert load_benchmark(" TOY ").id == "toy"
    code, out, err = run_cli(monkeypatch, capsys, "bench", "list", "--json")
    assert code == 0, err
    assert [b["id"] for b in json.loads(out)] == ["sample", "toy"]
    code, out, err = run_cli(monkeypatch, capsys, "bench", "list")
    assert code == 0, err
    assert "Toy benchmark (toy)" in out
    assert registry.reload_run(run_row("toy")).id == "toy"
    assert toy == ["r1"]


def test_a_source_name_must_read_as_a_name() -> None:
    def never(data: Path | None) -> Benchmark:
        raise AssertionError

    for bad in ("Toy", "my toy", "toy.yaml", ""):
        with pytest.raises(ValueError):
            register(BenchmarkSource(bad, "x", False, never, lambda run: never(None)))
