"""The cache of loaded declarations (``bench/sources/cache.py``, issue 30 §4): a declaration
loaded again comes back equal without its rows being read again, lives under the sweepbench
home, and is loaded from its data again as soon as a file it read changes, appears or goes;
a resumed finished run says exactly what it said when it finished, cached or not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.sources import cache, declared
from sweepbench.bench.sources.declared import load_declared
from sweepbench.settings import home
from tests.helpers import run_cli

DECLARATION = """\
id: tiny
name: Tiny
areas:
  - {key: all, label: All}
tasks:
  - id: exact
    area: all
    data: items.jsonl
    fields: {id: id, prompt: question, reference: answer}
    scorer: exact
  - id: later
    area: all
    data: later.jsonl
    fields: {id: id, prompt: question, reference: answer}
    scorer: exact
"""


def write_items(path: Path, rows: list[tuple[str, str, str]]) -> None:
    lines = [json.dumps({"id": i, "question": q, "answer": a}) for i, q, a in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "benchmark.yaml").write_text(DECLARATION, encoding="utf-8")
    write_items(folder / "items.jsonl", [("q1", "One?", "1"), ("q2", "Two?", "2")])
    return folder / "benchmark.yaml"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The declarations loaded from their data (not from the cache), in order."""
    seen: list[Path] = []
    real = declared._load

    def counted(path: Path, allow_data_outside: bool) -> Any:
        seen.append(path)
        return real(path, allow_data_outside)

    monkeypatch.setattr(declared, "_load", counted)
    return seen


def prompts(path: Path, task: str = "exact") -> list[str]:
    benchmark = load_declared(path)
    return [item.prompt for item in benchmark.task(task).items]


def test_a_declaration_loaded_again_comes_from_the_cache_equal(
    tiny: Path, loads: list[Path]
) -> None:
    first = load_declared(tiny)
    again = load_declared(tiny)
    assert len(loads) == 1  # the second load read no row
    assert again == first and again is not first
    assert again.version == first.version  # the data fingerprint of the settings hash
    entries = list(home().joinpath(*cache.FOLDER).glob("*.marshal"))
    assert len(entries) == 1  # under the sweepbench home, never beside the data
    assert {p.name for p in tiny.parent.iterdir()} == {"benchmark.yaml", "items.jsonl"}


def test_an_edited_item_file_is_read_again(tiny: Path, loads: list[Path]) -> None:
    assert prompts(tiny) == ["One?", "Two?"]
    items = tiny.parent / "items.jsonl"
    write_items(items, [("q1", "One?", "1"), ("q2", "Two, edited?", "2")])  # another size
    assert prompts(tiny) == ["One?", "Two, edited?"]
    assert len(loads) == 2
    before = load_declared(tiny).version
    # the same size, only the modification time says it changed
    write_items(items, [("q1", "One?", "1"), ("q2", "Two, EDITED?", "2")])
    info = items.stat()
    os.utime(items, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    assert prompts(tiny) == ["One?", "Two, EDITED?"]
    assert load_declared(tiny).version != before  # a new data version: a new run
    assert len(loads) == 3


def test_a_data_file_that_appears_or_goes_is_seen(tiny: Path, loads: list[Path]) -> None:
    assert load_declared(tiny).task("later").missing is not None
    later = tiny.parent / "later.jsonl"
    write_items(later, [("l1", "Later?", "3")])
    assert prompts(tiny, "later") == ["Later?"]
    later.unlink()
    assert load_declared(tiny).task("later").missing is not None
    assert len(loads) == 3


def test_an_edited_declaration_is_read_again(tiny: Path, loads: list[Path]) -> None:
    assert load_declared(tiny).name == "Tiny"
    tiny.write_text(DECLARATION.replace("name: Tiny", "name: Tiny too"), encoding="utf-8")
    assert load_declared(tiny).name == "Tiny too"
    assert len(loads) == 2


def test_an_unreadable_entry_is_a_miss(tiny: Path, loads: list[Path]) -> None:
    first = load_declared(tiny)
    [entry] = home().joinpath(*cache.FOLDER).glob("*.marshal")
    entry.write_bytes(b"not an entry")
    assert load_declared(tiny) == first
    assert load_declared(tiny) == first
    assert len(loads) == 2  # read from the data once more, and the entry written whole again


def test_a_python_declaration_is_never_cached(tmp_path: Path, loads: list[Path]) -> None:
    module = tmp_path / "bench.py"
    module.write_text(
        "BENCHMARK = {'id': 'py', 'name': 'Py', 'areas': [{'key': 'all', 'label': 'All'}],"
        " 'tasks': [{'id': 't', 'area': 'all', 'data': 'items.jsonl', 'scorer': 'exact',"
        " 'fields': {'id': 'id', 'prompt': 'question', 'reference': 'answer'}}]}\n",
        encoding="utf-8",
    )
    write_items(tmp_path / "items.jsonl", [("q1", "One?", "1")])
    assert load_declared(module) == load_declared(module)
    assert len(loads) == 2
    assert not home().joinpath(*cache.FOLDER).exists()


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_resumed_finished_run_says_what_it_said_when_it_finished(
    tiny: Path,
    loads: list[Path],
    as_json: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["bench", "run", str(tiny), "--model", "scripted/echo?text=1", "--yes"]
    args += ["--json"] if as_json else []
    code, finished, _ = run_cli(monkeypatch, capsys, *args)
    assert code == 0
    assert len(loads) == 1
    code, resumed, err = run_cli(monkeypatch, capsys, *args)  # from the cache
    assert code == 0 and len(loads) == 1
    assert "Nothing left to run" in err
    assert resumed == finished
    for entry in home().joinpath(*cache.FOLDER).glob("*.marshal"):
        entry.unlink()
    code, uncached, _ = run_cli(monkeypatch, capsys, *args)  # from the data again
    assert code == 0 and len(loads) == 2
    assert uncached == finished
    if as_json:
        report = json.loads(resumed)
        assert report["status"] == "completed" and report["scored"] == 2
