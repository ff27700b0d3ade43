"""``sweepbench db status|upgrade``: the store's URL (password hidden) and schema version, and
one command that creates or upgrades the schema (SQLite, and PostgreSQL when one is given)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sweepbench.store.migrations import latest_version
from tests.backends import BACKENDS, backend_url
from tests.helpers import run_cli


@pytest.mark.parametrize("backend", BACKENDS)
def test_upgrade_creates_the_schema_and_status_says_so(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    url = backend_url(backend, tmp_path / "team.db")
    code, out, _ = run_cli(monkeypatch, capsys, "db", "status", "--url", url, "--json")
    assert code == 1 and json.loads(out)["pending"] == list(range(1, latest_version() + 1))
    code, out, _ = run_cli(monkeypatch, capsys, "db", "upgrade", "--url", url)
    assert code == 0 and f"schema version {latest_version()} (applied 1," in " ".join(out.split())
    code, out, _ = run_cli(monkeypatch, capsys, "db", "upgrade", "--url", url)
    assert code == 0 and "nothing to apply" in out
    code, out, _ = run_cli(monkeypatch, capsys, "db", "status", "--url", url, "--json")
    status = json.loads(out)
    assert code == 0 and status["version"] == latest_version() and status["pending"] == []


def test_a_store_that_cannot_be_reached_is_one_sentence_without_its_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    password = "pw-" + "x" * 12
    url = f"postgresql+psycopg://someone:{password}@127.0.0.1:1/nothing"
    for command in ("status", "upgrade"):
        code, out, err = run_cli(monkeypatch, capsys, "db", command, "--url", url)
        said = " ".join(err.split())  # the console wraps long lines
        assert code == 2 and "cannot open the store at postgresql+psycopg://someone:***@" in said
        assert password not in out + err
