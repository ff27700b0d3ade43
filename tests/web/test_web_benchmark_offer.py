"""The web page runs nothing from the server's disk (issue 26 §3): a visitor runs the built-in
benchmarks and what the operator put in its benchmark folders, nothing else.

Every request here is what a hostile signed-in visitor off loopback can send: Dash's callback
POSTs, forged with the Flask test client (``tests/web/dash_protocol.py``), to every page that
loads a benchmark from a typed name or path."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dash import Dash

from sweepbench.bench.request import BenchRequest
from sweepbench.errors import SweepbenchError, UserError
from sweepbench.settings import benchmark_folders
from sweepbench.store import Store
from sweepbench.web.app import create_app
from sweepbench.web.gate import Gate
from sweepbench.web.offer import MAX_DECLARATION_BYTES, BenchmarkOffer
from tests.bench.sweep_helpers import marked_benchmark
from tests.helpers import run_cli
from tests.web.dash_protocol import Fired, Visitor, texts

TOKEN = "correct-horse-battery-staple-4417"
MODEL = "scripted/guess"

Make = Callable[..., Visitor]


@pytest.fixture(autouse=True)
def _no_operator_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SWEEPBENCH_TOKEN", "SWEEPBENCH_ENV", "SWEEPBENCH_ALLOWED_HOSTS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def visitor() -> Iterator[Make]:
    """``visitor(folders)``: a signed-in visitor of an app listening off loopback whose
    benchmark folders are ``folders``."""
    store = Store.open()
    apps: list[Dash] = []

    def make(folders: list[Path] | None = None) -> Visitor:
        app = create_app(
            store, host="0.0.0.0", gate=Gate("0.0.0.0", token=TOKEN), benchmark_folders=folders
        )
        app.server.config["sweepbench.site"].limiter.delay_s = 0
        apps.append(app)
        return Visitor(app, token=TOKEN)

    try:
        yield make
    finally:
        for app in apps:
            app.server.config["sweepbench.context"].close()
        store.close()


def python_declaration(path: Path, marker: Path) -> Path:
    """A Python declaration that writes ``marker`` when it runs (and defines a benchmark)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "from pathlib import Path\n"
        f"Path({str(marker)!r}).write_text('the server ran me')\n"
        "BENCHMARK = {'id': 'x', 'name': 'x', 'areas': [], 'tasks': []}\n",
        "utf-8",
    )
    return path


# -- the callbacks that load a typed benchmark ---------------------------------------------------


def run_page(visitor: Visitor, declaration: str, output: str = "bp-estimate.children") -> Fired:
    """Estimate (or Run, or choose) the typed declaration on Run a benchmark."""
    return visitor.fire(output, {
        "bp-benchmark.value": "declaration", "bp-declaration.value": declaration,
        "bp-model.value": MODEL, "bp-concurrency.value": "8", "bp-limit.value": "5",
        "bp-estimate-button.n_clicks": 1, "bp-run.n_clicks": 1, "bp-confirm.checked": True,
    })  # fmt: skip


def sweep_page(
    visitor: Visitor, benchmark: str, output: str = "bs-estimate.children", **more: Any
) -> Fired:
    """The Benchmark sweep page's estimate (or Run, or the values box) of a typed benchmark."""
    return visitor.fire(output, {
        "bs-benchmark.value": benchmark, "bs-axis.value": "model",
        "bs-values.value": [MODEL, "scripted/echo"], "bs-preset.value": "full",
        "bs-run.n_clicks": 1, "bs-confirm.checked": True, **more,
    })  # fmt: skip


LOADERS: list[tuple[str, Callable[[Visitor, str], Fired]]] = [
    ("estimate", lambda v, p: run_page(v, p)),
    ("run", lambda v, p: run_page(v, p, "bp-refusals.children")),
    ("choose", lambda v, p: run_page(v, p, "bp-preset.children")),
    ("sweep estimate", lambda v, p: sweep_page(v, p)),
    ("sweep run", lambda v, p: sweep_page(v, p, "bs-sweep-id.data")),
    ("sweep versions", lambda v, p: sweep_page(v, p, "bs-values.data",
                                               **{"bs-axis.value": "prompt_version"})),
]  # fmt: skip
"""Every callback that loads the benchmark a visitor typed."""


@pytest.mark.parametrize("inside", [False, True], ids=["anywhere", "in-the-folder"])
@pytest.mark.parametrize(("name", "load"), LOADERS, ids=[n for n, _ in LOADERS])
def test_a_python_declaration_a_visitor_types_is_never_run(
    visitor: Make, tmp_path: Path, inside: bool, name: str, load: Callable[[Visitor, str], Fired]
) -> None:
    folder = tmp_path / "operator"
    folder.mkdir()
    marker = tmp_path / "marker"
    declaration = python_declaration((folder if inside else tmp_path) / "evil.py", marker)
    link = folder / "looks-like.yaml"
    link.symlink_to(declaration)
    client = visitor([folder])
    for typed in (str(declaration), "evil.py", "looks-like.yaml", str(link)):
        fired = load(client, typed)
        assert fired.status in (200, 204), fired.text[:300]
        assert not marker.exists(), f"{name}: the server ran {typed}"
    said = " ".join(texts(run_page(client, "evil.py").response))
    assert "Python declaration: the web app never runs one" in said


def test_a_yaml_declaration_runs_only_from_the_operators_folders(
    visitor: Make, tmp_path: Path
) -> None:
    inside = marked_benchmark(tmp_path / "operator" / "marked", 3)
    outside = marked_benchmark(tmp_path / "elsewhere", 3)
    client = visitor([tmp_path / "operator"])
    for typed in ("marked/benchmark.yaml", str(inside)):  # by its name there, or its path
        said = " ".join(texts(run_page(client, typed).response))
        assert "3 questions for scripted/guess." in said, said
        swept = str(sweep_page(client, typed).response)
        assert "2 settings varying models" in swept and "Marked arithmetic" in swept, swept
    for typed in (str(outside), "../elsewhere/benchmark.yaml"):
        said = " ".join(texts(run_page(client, typed).response))
        assert "outside this server's benchmark folders" in said, said
        assert typed == str(outside) or str(outside) not in said  # nor where it leads
        swept = str(sweep_page(client, typed).response)
        assert "outside this server's benchmark folders" in swept, swept
    for typed in ("nothere.yaml", str(tmp_path / "operator" / "nothere.yaml")):
        said = " ".join(texts(run_page(client, typed).response))
        assert "not found in this server's benchmark folders" in said, said


def test_without_folders_the_pages_run_only_the_built_in_benchmarks(
    visitor: Make, tmp_path: Path
) -> None:
    declaration = marked_benchmark(tmp_path / "bench", 3)
    client = visitor([])
    said = " ".join(texts(run_page(client, str(declaration)).response))
    assert "this server offers no benchmark folders" in said and "--benchmarks-folder" in said
    sample = client.fire("bp-estimate.children", {
        "bp-benchmark.value": "sample", "bp-model.value": MODEL, "bp-judge.value": MODEL,
        "bp-concurrency.value": "8", "bp-estimate-button.n_clicks": 1,
    })  # fmt: skip
    said = " ".join(texts(sample.response))
    assert "40 questions for scripted/guess." in said, said
    swept = str(sweep_page(client, str(declaration)).response)
    assert "this server offers no benchmark folders" in swept


# -- the confinement rules, on the one function every page uses ----------------------------------


def _request(benchmark: str, data: str | None = None) -> BenchRequest:
    return BenchRequest(
        benchmark=benchmark, data=Path(data) if data else None, models={"target": MODEL},
        allow_data_outside=True,  # what a forged request might carry: never honoured
    )  # fmt: skip


def _refusal(offer: BenchmarkOffer, benchmark: str, data: str | None = None) -> str:
    with pytest.raises(SweepbenchError) as caught:
        offer.load(_request(benchmark, data))
    return str(caught.value)


def test_declarations_are_read_as_data_inside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "operator"
    declaration = marked_benchmark(folder / "ok", 3)
    offer = BenchmarkOffer.for_folders([folder])
    request, benchmark = offer.load(_request("ok/benchmark.yaml"))
    assert request.benchmark == str(declaration.resolve()) and not request.allow_data_outside
    assert benchmark.id == "marked" and offer.declarations() == ["ok/benchmark.yaml"]
    secret = tmp_path / "secret.yaml"
    secret.write_text("id: secret\n", "utf-8")
    (folder / "link.yaml").symlink_to(secret)  # a link leading out
    assert "outside this server's benchmark folders" in _refusal(offer, "link.yaml")
    os.mkfifo(folder / "pipe.yaml")  # would block a reader forever
    assert "not a regular file" in _refusal(offer, "pipe.yaml")
    (folder / "big.yaml").write_text("#" * (MAX_DECLARATION_BYTES + 1), "utf-8")
    assert f"at most {MAX_DECLARATION_BYTES:,} bytes" in _refusal(offer, "big.yaml")
    (folder / "deep.yaml").write_text("x: " + "[" * 200 + "]" * 200 + "\n", "utf-8")
    assert "nested deeper than" in _refusal(offer, "deep.yaml")
    assert "or a YAML declaration (.yaml)" in _refusal(offer, "notes.txt")
    assert "not a path" in _refusal(offer, "a\x00b.yaml")
    assert offer.declarations() == ["big.yaml", "deep.yaml", "ok/benchmark.yaml"]


def test_a_declarations_data_stays_in_its_folder_whatever_the_request_says(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "operator"
    declaration = marked_benchmark(folder / "b", 3)
    outside = tmp_path / "private.jsonl"
    outside.write_text('{"id": "p", "question": "secret", "answer": 1}\n', "utf-8")
    (folder / "b" / "questions.jsonl").unlink()
    (folder / "b" / "questions.jsonl").symlink_to(outside)
    _allowed, benchmark = BenchmarkOffer.for_folders([folder]).load(_request(str(declaration)))
    (task,) = benchmark.tasks
    assert task.items == () and task.missing is not None and "refused" in task.missing


def test_elbench_data_must_be_a_plain_folder_inside_the_folders(tmp_path: Path) -> None:
    folder = tmp_path / "operator"
    (folder / "elbench" / "benchmark_root").mkdir(parents=True)
    offer = BenchmarkOffer.for_folders([folder])
    request, benchmark = offer.load(_request("elbench", "elbench"))
    assert benchmark.id == "elbench" and request.data == (folder / "elbench").resolve()
    assert "outside this server's benchmark folders" in _refusal(offer, "elbench", str(tmp_path))
    assert "give its data folder" in _refusal(offer, "elbench")
    root = folder / "elbench" / "benchmark_root"
    (root / "leak.json").symlink_to(tmp_path / "private.json")
    (tmp_path / "private.json").write_text("{}", "utf-8")
    said = _refusal(offer, "elbench", "elbench")
    assert "benchmark_root/leak.json: refused: a link leading outside" in said
    (root / "leak.json").unlink()
    os.mkfifo(root / "pipe.json")
    assert "pipe.json: refused: not a plain file" in _refusal(offer, "elbench", "elbench")


def test_the_sweep_pages_data_field_is_confined_too(visitor: Make, tmp_path: Path) -> None:
    (tmp_path / "operator").mkdir()
    client = visitor([tmp_path / "operator"])
    swept = str(sweep_page(client, "elbench", **{"bs-data.value": str(tmp_path)}).response)
    assert "ELBench's data folder" in swept and "outside this server's benchmark folders" in swept
    said = " ".join(texts(client.fire("bp-preset.children", {
        "bp-benchmark.value": "elbench", "bp-data.value": str(tmp_path),
    }).response))  # fmt: skip
    assert "outside this server's benchmark folders" in said


# -- where the folders come from -----------------------------------------------------------------


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, "utf-8")


def test_the_folders_come_from_the_config_file(isolated_home: Path, tmp_path: Path) -> None:
    assert benchmark_folders() == ()
    (isolated_home / "mine").mkdir(parents=True)
    _config(isolated_home, f'[benchmarks]\nfolders = ["mine", "{tmp_path}"]\n')
    assert benchmark_folders() == (isolated_home / "mine", tmp_path)
    store = Store.open()
    try:
        app = create_app(store)  # no folders given: the config file's
        offer = app.server.config["sweepbench.context"].benchmarks
        assert offer.folders == ((isolated_home / "mine").resolve(), tmp_path.resolve())
        app.server.config["sweepbench.context"].close()
    finally:
        store.close()
    _config(isolated_home, '[benchmarks]\nfolders = "mine"\n')
    with pytest.raises(UserError, match=r"\[benchmarks\] folders must be a list of folders"):
        benchmark_folders()
    _config(isolated_home, '[benchmarks]\nfolders = ["nowhere"]\n')
    with pytest.raises(UserError, match=r"benchmarks folder .*nowhere: cannot be read"):
        create_app(Store.open())


def test_serve_refuses_a_benchmarks_folder_that_is_not_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:  # had it gone on: a bind error
        port = str(taken.getsockname()[1])
        missing = str(tmp_path / "no")
        code, _out, err = run_cli(
            monkeypatch, capsys, "serve", "--port", port, "--benchmarks-folder", missing
        )
    assert code == 2 and "Traceback" not in err
    said = " ".join(err.split())  # the console wraps long lines
    assert "error: benchmarks folder" in said and "cannot be read (No such file" in said, said
