"""Model sizes for the board's size filters (spec §17.5): the catalogue's ``size_b``
(overridable in the operator's ``models.toml``), a local model's GGUF metadata, otherwise
undisclosed, which ``include_undisclosed=False`` (``--no-undisclosed``) hides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.bench.storage import BenchStore
from sweepbench.errors import UserError
from sweepbench.leaderboard.board import Catalogue, CatalogueTask, Filters, build_board
from sweepbench.leaderboard.rows import OVERALL
from sweepbench.leaderboard.sources import stored_run_rows
from sweepbench.models.gguf_size import (
    gguf_parameters,
    model_size_b,
    size_label_parameters,
)
from sweepbench.models.registry import model_info
from sweepbench.settings import home
from sweepbench.store import Store
from tests.bench.test_declared import ROWS, declare, numeric_task, write_jsonl
from tests.helpers import cli


def _models_toml(text: str) -> None:
    home().mkdir(parents=True, exist_ok=True)
    (home() / "models.toml").write_text(text, "utf-8")


def test_an_override_in_models_toml_sets_a_size() -> None:
    assert model_info("scripted/echo").size_b is None
    assert model_size_b("scripted/echo?text=1") is None
    _models_toml('[scripted.echo]\nsize_b = 7\n\n[openai."gpt-4.1-mini"]\nsize_b = 0.5\n')
    assert model_info("scripted/echo?text=1").size_b == 7.0
    assert model_size_b("scripted/echo?text=1") == 7.0
    assert model_size_b("openai/gpt-4.1-mini") == 0.5
    assert model_info("openai/gpt-4.1-mini").label == "GPT-4.1 mini"  # the rest is kept
    assert model_size_b("scripted/lorem") is None


@pytest.mark.parametrize("value", ["0", "-3", '"7B"', "true", "inf", "nan"])
def test_a_size_that_is_not_a_positive_number_is_refused(value: str) -> None:
    _models_toml(f"[scripted.echo]\nsize_b = {value}\n")
    with pytest.raises(UserError, match=r"\[scripted\.echo\] size_b must be a positive"):
        model_info("scripted/echo")


def test_unknown_models_are_undisclosed() -> None:
    assert model_size_b("nobody/knows") is None
    assert model_size_b("local/not-registered") is None


def test_the_bundled_local_models_gguf_gives_its_size() -> None:
    from sweepbench.models.local import resolve_weights

    try:
        weights = resolve_weights(model_info("local/smollm2-135m"))
    except UserError:
        pytest.skip("the bundled SmolLM2 weights are not installed")
    if not weights.is_file():
        pytest.skip(f"no bundled GGUF at {weights}")
    count = gguf_parameters(weights)
    assert count is not None and 130_000_000 < count < 140_000_000
    size = model_size_b("local/smollm2-135m")
    assert size == pytest.approx(0.135, abs=0.002)


def test_a_registered_gguf_says_its_size_from_its_metadata(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    import numpy as np

    path = tmp_path / "tiny.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint64("general.parameter_count", 7_250_000_000)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert gguf_parameters(path) == 7_250_000_000
    _models_toml(f'[local.tiny]\ngguf_path = "{path}"\n')
    assert model_size_b("local/tiny") == 7.25
    # an operator's size_b wins over the file's
    _models_toml(f'[local.tiny]\ngguf_path = "{path}"\nsize_b = 7\n')
    assert model_size_b("local/tiny") == 7.0
    # a file that is not GGUF: undisclosed
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file")
    assert gguf_parameters(junk) is None
    assert gguf_parameters(tmp_path / "missing.gguf") is None


def test_size_labels() -> None:
    assert size_label_parameters("135M") == 135_000_000
    assert size_label_parameters("7B") == 7_000_000_000
    assert size_label_parameters("8x7B") == 56_000_000_000
    assert size_label_parameters("1.5b") == 1_500_000_000
    assert size_label_parameters("large") is None


def test_the_board_filters_runs_by_size_and_hides_undisclosed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _models_toml(
        "[scripted.echo]\nsize_b = 7\nprice_in = 1\nprice_out = 1\n\n"
        "[scripted.guess]\nsize_b = 70\nprice_in = 2\nprice_out = 2\n\n"
        "[scripted.lorem]\nprice_in = 1\nprice_out = 1\n"
    )
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = declare(tmp_path, [numeric_task()])
    for model in ("scripted/echo", "scripted/guess", "scripted/lorem"):
        code = cli(monkeypatch, "bench", "run", str(path), "-m", model, "--yes", "--json")
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert json.loads(captured.out)["run_id"]
    with Store.open() as store:
        bench = BenchStore(store)
        (benchmark,) = {r.benchmark for r in bench.runs(limit=10)}
        rows = stored_run_rows(bench, "core", benchmark=benchmark).rows
    assert {r.model: r.size_b for r in rows} == {
        "scripted/echo": 7.0, "scripted/guess": 70.0, "scripted/lorem": None
    }  # fmt: skip
    catalogue = Catalogue(areas={"main": "Main"}, tasks={"sums": CatalogueTask("main", True)})

    def shown(filters: Filters) -> tuple[set[str], int]:
        board = build_board(rows, judge="j", metric=OVERALL, scope="core",
                            catalogue=catalogue, filters=filters)  # fmt: skip
        return {p.row.model for p in board.placed}, board.hidden

    everyone = {"scripted/echo", "scripted/guess", "scripted/lorem"}
    assert shown(Filters()) == (everyone, 0)
    assert shown(Filters(include_undisclosed=False)) == ({"scripted/echo", "scripted/guess"}, 1)
    assert shown(Filters(max_size_b=10)) == ({"scripted/echo", "scripted/lorem"}, 1)
    both = Filters(max_size_b=10, include_undisclosed=False)
    assert shown(both) == ({"scripted/echo"}, 2)
