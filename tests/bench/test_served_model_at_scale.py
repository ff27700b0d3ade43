"""Local models at scale go through one OpenAI-compatible server (llama.cpp's server, vLLM,
Ollama) that every worker reaches, not through in-process inference in each worker (issue 18,
item 6). Here the server is the protocol-accurate fake one on 127.0.0.1 (streamed chat
completions with usage), reached through the real ``openai`` SDK by every worker process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.helpers import compatible_server
from tests.bench.scale_helpers import answered_exactly_once
from tests.bench.sweep_helpers import marked_benchmark
from tests.helpers import run_cli
from tests.servers import Reply

ITEMS = 60
SERVED = "compatible/served-model"


def test_a_benchmark_shared_by_worker_processes_asks_the_served_model_once_an_item(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = marked_benchmark(tmp_path / "bench", ITEMS)
    answer = Reply(text="The answer is\n12", input_tokens=20, output_tokens=4)
    with compatible_server(monkeypatch, default=answer) as server:
        code, out, err = run_cli(
            monkeypatch, capsys, "bench", "run", str(path), "--model", SERVED,
            "--workers", "3", "--concurrency", "2", "--accept-unpriced", "--yes", "--json",
        )  # fmt: skip
        asked = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "completed" and report["scored"] == ITEMS
    assert len(asked) == ITEMS  # every item sent to the server once, by whichever worker
    assert {r.json["model"] for r in asked} == {"served-model"}
    assert all(r.json["stream"] is True for r in asked)
    answered_exactly_once(ITEMS)


def test_a_sweep_of_settings_on_the_served_model(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = Reply(text="A calm grey sea.", input_tokens=9, output_tokens=5)
    with compatible_server(monkeypatch, default=reply) as server:
        code, out, err = run_cli(
            monkeypatch, capsys, "sweep", "Write a line about the sea.", "--model", SERVED,
            "--axis", "max_tokens", "--values", "16,64", "--yes", "--json",
        )  # fmt: skip
        asked = [r.json for r in server.requests if r.path.endswith("/chat/completions")]
    assert code == 0, err
    cells = json.loads(out)["cells"]
    assert [c["text"] for c in cells] == ["A calm grey sea."] * 2
    assert sorted(a.get("max_completion_tokens") or a.get("max_tokens") for a in asked) == [16, 64]
