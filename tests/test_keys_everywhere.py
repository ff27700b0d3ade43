"""A key echoed back by the provider (an OpenAI-compatible server on 127.0.0.1 that repeats the
key in its error bodies) never reaches the store, an export or the output: after ``generate``,
a sweep and every sweep export, the key occurs 0 times anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.store import Store
from tests.helpers import cli, store_texts
from tests.servers import OpenAIServer

KEY = "echoed-secret-7731-value"


def scan_store(url: str) -> list[str]:
    """Every table where the key appears in a text value."""
    texts = store_texts(Store.open(url))
    return [table for table, values in texts.items() if any(KEY in v for v in values)]


def test_an_echoed_key_reaches_no_store_export_or_output(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    isolated_home: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    monkeypatch.setenv("SWEEPBENCH_DB", url)
    with OpenAIServer(api_key=KEY) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", KEY)
        for _ in range(3):  # generate retries a failure before the first token
            server.error(500, f"upstream failed for key {KEY}")
        code = cli(monkeypatch, "generate", "compatible/m", f"hello {KEY}", "--json")
        out = capsys.readouterr()
        assert code != 0 or json.loads(out.out)["stop_reason"] == "error"
        for _ in range(6):
            server.error(400, f"bad request with key {KEY} (Bearer {KEY})")
        code = cli(
            monkeypatch, "sweep", f"say {KEY}", "--axis", "max_tokens", "--values", "16,32",
            "--model", "compatible/m", "--yes", "--json",
        )  # fmt: skip
        sweep_out = capsys.readouterr()
    assert code == 1
    document = json.loads(sweep_out.out)
    assert all(c["status"] == "failed" for c in document["cells"])
    assert any("[redacted]" in (c.get("error") or "") for c in document["cells"])
    json_file, html_file = tmp_path / "sweep.json", tmp_path / "sweep.html"
    assert cli(monkeypatch, "sweeps", "export", document["id"], "--json", str(json_file),
               "--html", str(html_file), "--artifacts", str(tmp_path / "art")) == 0  # fmt: skip
    export_out = capsys.readouterr()
    assert cli(monkeypatch, "sweeps", "show", document["id"]) in (0, 1)
    show_out = capsys.readouterr()
    outputs = [out.out, out.err, sweep_out.out, sweep_out.err, export_out.out, export_out.err,
               show_out.out, show_out.err]  # fmt: skip
    assert not [o for o in outputs if KEY in o]
    files = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.startswith("keys.db")]
    assert json_file in files and html_file in files
    assert not [p for p in files if KEY in p.read_text("utf-8", errors="replace")]
    assert scan_store(url) == []
    db_bytes = b"".join(p.read_bytes() for p in tmp_path.glob("keys.db*"))
    assert KEY.encode() not in db_bytes
