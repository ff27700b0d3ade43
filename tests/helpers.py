"""Small helpers shared by test modules."""

from __future__ import annotations

import sys

import pytest

from sweepbench.cli import main


def cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``sweepbench ARGS`` in-process through the real entry point; return the exit code."""
    monkeypatch.setattr(sys, "argv", ["sweepbench", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
