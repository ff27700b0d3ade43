"""The Hugging Face ``datasets`` loader: local files and the local cache only, never the network."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from sweepbench.bench.sources.declared import load_declared
from sweepbench.bench.sources.hf import hf_records
from sweepbench.errors import DataError, UserError

ROWS = [{"q": "Two plus two?", "a": "4"}, {"q": "Three times three?", "a": "9"}]


@pytest.fixture(autouse=True)
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every Hugging Face cache under tmp_path; the offline switches restored afterwards."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield home


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    """Rows as JSON lines."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_without_datasets_installed_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail
    with pytest.raises(UserError, match=r"pip install 'sweepbench\[hf\]'"):
        list(hf_records("anything.jsonl"))


def test_local_jsonl_and_csv_files(tmp_path: Path, hf_home: Path) -> None:
    pytest.importorskip("datasets")
    jsonl = write_jsonl(tmp_path / "d.jsonl", ROWS)
    records = list(hf_records(str(jsonl)))
    assert [(r.line, dict(r.data or {}), r.problem) for r in records] == [
        (1, ROWS[0], None),
        (2, ROWS[1], None),
    ]
    csv = tmp_path / "d.csv"
    csv.write_text("q,n\nfirst,1\nsecond,2\nthird,3\n", encoding="utf-8")
    rows = [r.data for r in hf_records(str(csv), split="train")]
    assert rows == [{"q": "first", "n": 1}, {"q": "second", "n": 2}, {"q": "third", "n": 3}]
    assert (hf_home / "datasets").is_dir()  # the cache named by the environment at call time


def test_a_local_folder_reads_every_data_file_in_order(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    folder = tmp_path / "set"
    folder.mkdir()
    write_jsonl(folder / "b.jsonl", [ROWS[1]])
    write_jsonl(folder / "a.jsonl", [ROWS[0]])
    (folder / "README.md").write_text("not data", encoding="utf-8")
    assert [r.data for r in hf_records(str(folder))] == ROWS
    (folder / "c.csv").write_text("q,a\nx,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="mixes data files of different kinds"):
        list(hf_records(str(folder)))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no data files"):
        list(hf_records(str(empty)))


def test_a_dataset_that_is_not_cached_is_a_user_error_without_network() -> None:
    pytest.importorskip("datasets")
    # The conftest guard turns any network attempt into a RuntimeError, which would give a
    # different message: this one proves the offline path was taken.
    with pytest.raises(UserError, match="download it first") as caught:
        list(hf_records("someone/not-cached-anywhere"))
    assert "give a local file" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_dataset_in_the_local_cache_loads_by_name(tmp_path: Path, hf_home: Path) -> None:
    pytest.importorskip("datasets")
    from datasets.packaged_modules.json.json import Json

    data = write_jsonl(tmp_path / "d.jsonl", ROWS)
    cache = hf_home / "datasets"
    builder = Json(cache_dir=str(cache), dataset_name="tiny_set", config_name="default",
                   hash="0123abcd", data_files={"test": [str(data)]})  # fmt: skip
    builder.download_and_prepare()
    # A dataset cached from the Hub sits under <name>/<config>/<version>/<hash>.
    (built,) = (cache / "tiny_set").iterdir()
    built.rename(cache / "tiny_set" / "default")
    assert [r.data for r in hf_records("tiny_set")] == ROWS
    with pytest.raises(UserError, match="has no split 'validation'"):
        list(hf_records("tiny_set", split="validation"))


def test_declared_hf_task_from_a_local_file(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    declaration = {
        "id": "h",
        "name": "HF",
        "areas": [{"key": "a", "label": "A"}],
        "tasks": [
            {"id": "local", "area": "a", "data": "d.jsonl", "format": "hf", "split": "train",
             "fields": {"prompt": "q", "reference": "a"}, "scorer": "numeric"},
            {"id": "remote", "area": "a", "data": "someone/uncached", "format": "hf",
             "config": "main", "fields": {"prompt": "q", "reference": "a"}, "scorer": "exact"},
        ],
    }  # fmt: skip
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(declaration), encoding="utf-8")
    benchmark = load_declared(path)
    local = benchmark.task("local")
    assert [(i.sample_id, i.prompt, i.reference, i.row) for i in local.items] == [
        ("local-1", "Two plus two?", "4", 1),
        ("local-2", "Three times three?", "9", 2),
    ]
    assert local.items[0].key == "d.jsonl#local::local-1"
    remote = benchmark.task("remote")
    assert remote.missing is not None and "download it first" in remote.missing
    assert not remote.available and local.available
