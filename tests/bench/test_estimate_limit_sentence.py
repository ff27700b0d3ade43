"""Issue 26 §1: what an estimate says of a spending limit is one sentence, true to the ledger
(each answer's worst case is held before it is sent), never "the final total can go slightly
over it" beside "so it is never exceeded"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.helpers import set_prices
from tests.helpers import run_cli

MODEL = "scripted/echo?text=ANSWER: B"
HELD = "A limit is held by reserving each answer's worst case"


def flat(text: str) -> str:
    """Text with rich's line wrapping undone."""
    return " ".join(text.split())


@pytest.mark.parametrize("limit", ["1", "0.01"])  # covers the high estimate; does not
def test_the_estimate_says_once_how_a_limit_holds(
    limit: str,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_prices(isolated_home, {"scripted.echo": (1, 2)})
    args = ("bench", "estimate", "sample", "-m", MODEL, "--preset", "auto", "--limit", limit)
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    text = flat(err)
    assert text.count(HELD) == 1
    assert "over it" not in text.replace("do not take the total over it", "")
    assert "slightly" not in text
    assert "still in flight when it is reached are already inside it" in text
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json")
    assert code == 0, err
    lines = json.loads(out)["text"]
    assert sum(HELD in line for line in lines) == 1
    assert not any("slightly over" in line for line in lines)
