"""How long sweepbench takes to import, and what an import drags in.

Every figure comes from fresh processes: ``python -c pass`` (the interpreter alone),
``import sweepbench``, ``import sweepbench.errors``, ``sweepbench --help`` (wall time), and
``python -X importtime -c "import sweepbench"`` (the cumulative import time of the
``sweepbench`` package as the interpreter reports it). The processes run round-robin, N times
each, so noise on the machine falls on every row alike; each row is the median, and the ratio
column divides it by the median of ``python -c pass`` from the same run: the machine is noisy,
compare ratios between runs, not milliseconds.

    python benchmarks/import_time.py [--repeats 7] [--json import_time.json]

A second table says which heavy libraries each import leaves in ``sys.modules``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HEAVY = (
    "sqlalchemy",
    "pydantic",
    "anthropic",
    "openai",
    "numpy",
    "dash",
    "llama_cpp",
    "genai_prices",
    "typer",
    "rich",
)
"""Libraries whose presence after an import is worth a column."""

CLI_CODE = (
    "import sys; sys.argv = ['sweepbench', '--help']; from sweepbench.cli import main; main()"
)
"""``sweepbench --help`` when no console script is on PATH (same work, one less exec)."""

HELP_PROBE = (
    "import sys\nsys.argv = ['sweepbench', '--help']\nfrom sweepbench.cli import main\n"
    "try:\n    main()\nexcept SystemExit:\n    pass"
)
"""``sweepbench --help`` in this process, for the sys.modules table."""


@dataclass(frozen=True)
class Target:
    """One command to time: a label and the argv after the interpreter (or a full argv)."""

    label: str
    argv: tuple[str, ...]
    probe: str | None = None
    """Python that does the same imports, for the sys.modules table (None: no probe)."""


def targets() -> list[Target]:
    """The rows, in table order; ``python -c pass`` first (the denominator)."""
    py = sys.executable
    script = shutil.which("sweepbench")
    cli = (script, "--help") if script else (py, "-c", CLI_CODE)
    return [
        Target("python -c pass", (py, "-c", "pass")),
        Target("import sweepbench", (py, "-c", "import sweepbench"), "import sweepbench"),
        Target(
            "import sweepbench.errors",
            (py, "-c", "import sweepbench.errors"),
            "import sweepbench.errors",
        ),
        Target("sweepbench --help", cli, HELP_PROBE),
    ]


def wall(argv: tuple[str, ...]) -> float:
    """Seconds one fresh process takes from spawn to exit (output discarded)."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


def importtime(module: str) -> float:
    """Seconds of cumulative import time of ``module`` under ``-X importtime``: the top-level
    entries of the module and of its parent packages (importing ``a.b`` imports ``a`` first,
    as its own entry)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    parts = module.split(".")
    wanted = {".".join(parts[: i + 1]) for i in range(len(parts))}
    total = 0
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match and len(match.group(3)) == 1 and match.group(4) in wanted:
            total += int(match.group(2))
    if not total:
        raise RuntimeError(f"no importtime line for {module}:\n{done.stderr[-2000:]}")
    return total / 1e6


def loaded(probe: str) -> tuple[int, list[str]]:
    """How many modules ``probe`` leaves in sys.modules, and which of HEAVY are among them."""
    code = (
        f"{probe}\nimport json, sys\n"
        f"print(json.dumps([len(sys.modules), [m for m in {HEAVY!r} if m in sys.modules]]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    return int(count), list(heavy)


def measure(repeats: int) -> dict[str, object]:
    """All figures: per row the median seconds and the ratio to ``python -c pass``."""
    rows = targets()
    times: dict[str, list[float]] = {row.label: [] for row in rows}
    imports: dict[str, list[float]] = {"sweepbench": [], "sweepbench.errors": []}
    for row in rows:  # one warm-up each: the first process pays for cold disk caches
        wall(row.argv)
    for _ in range(repeats):
        for row in rows:
            times[row.label].append(wall(row.argv))
        for module, values in imports.items():
            values.append(importtime(module))
    base = statistics.median(times["python -c pass"])
    table: list[dict[str, object]] = []
    for row in rows:
        median = statistics.median(times[row.label])
        table.append({"what": row.label, "kind": "wall", "s": median, "ratio": median / base})
    for module, values in imports.items():
        median = statistics.median(values)
        label = f"-X importtime: {module} (cumulative)"
        table.append({"what": label, "kind": "importtime", "s": median, "ratio": median / base})
    modules = []
    for row in rows:
        if row.probe is not None:
            count, heavy = loaded(row.probe)
            modules.append({"what": row.label, "modules": count, "heavy": heavy})
    return {
        "python": sys.version.split()[0],
        "repeats": repeats,
        "cpus": os.cpu_count(),
        "baseline_s": base,
        "rows": table,
        "loaded": modules,
    }


def render(result: dict[str, object]) -> str:
    """The two tables as aligned text."""
    rows = result["rows"]
    loaded_rows = result["loaded"]
    assert isinstance(rows, list) and isinstance(loaded_rows, list)
    width = max(len(str(row["what"])) for row in rows)
    lines = [
        f"median of {result['repeats']} fresh processes each, Python {result['python']}",
        "",
        f"{'what':<{width}}  {'median ms':>10}  {'x python -c pass':>16}",
        f"{'-' * width}  {'-' * 10}  {'-' * 16}",
    ]
    for row in rows:
        lines.append(f"{row['what']:<{width}}  {row['s'] * 1000:>10.1f}  {row['ratio']:>16.2f}")
    width = max(len(str(row["what"])) for row in loaded_rows)
    lines += ["", f"{'imports':<{width}}  {'modules':>7}  heavy libraries loaded"]
    lines.append(f"{'-' * width}  {'-' * 7}  {'-' * 22}")
    for row in loaded_rows:
        heavy = ", ".join(row["heavy"]) or "none"
        lines.append(f"{row['what']:<{width}}  {row['modules']:>7}  {heavy}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", "-n", type=int, default=7, help="processes per row")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--quick", action="store_true", help="one process a row (CI)")
    args = parser.parse_args()
    if args.quick:
        args.repeats = 1
    result = measure(args.repeats)
    print(render(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
