"""The README's two set-up commands exist, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_readme_gives_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2, commands
    main, tests = commands
    assert main.startswith("pip install -e . && sweepbench ")
    assert "pytest" in tests and tests.startswith("pip install -e")


def test_ci_runs_the_readme_test_command() -> None:
    test_command = setup_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert test_command in ci.splitlines(), "README's test command must be a line of .ci/run"


def test_ci_runs_the_checks_the_makefile_runs() -> None:
    """CI fails on what `make check` checks: lint, format and types, as a failing test does."""
    ci = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    make = (ROOT / "Makefile").read_text("utf-8")
    for check in (
        "ruff check src tests benchmarks scripts",
        "ruff format --check src tests benchmarks scripts",
    ):
        assert check in ci and f"\t{check}" in make, check
    assert "mypy" in ci and "\tmypy" in make
    pytest_command = setup_commands()[1].split(" && ", 1)[1]
    assert f"\t{pytest_command}" in make, "make test runs the README's pytest command"
