"""The benchmark runner of two commits side by side, interleaved on one machine (issue 30).

Extracts ``src/`` and ``benchmarks/`` of ``--base`` (default e5b5734, the code before the
engine) and of ``--head`` (default: this working tree) into a temporary folder, then runs, in a
fresh process each and interleaved so that every arm sees the same machine load:

- **floor**: ``bench_overhead.py``'s plain-asyncio floor (ask, exact match, a JSON line);
- **base**: the base commit's own ``bench_overhead.py --child run`` on its own code (priced as
  that commit's script prices it);
- **head unpriced** / **head priced**: this code's runner with the scripted model unpriced (no
  hold, $0) and priced ($1 per 1M: every call held, logged and settled);
- **CLI** (``--cli``): ``bench run DECLARATION --yes --json`` of each commit in a fresh process
  with a fresh home, its CPU time (user + system) and wall time.

Figures are medians over ``--repeats``; ratios are against the floor and the base of the same
run (this machine is shared and noisy: only ratios in one run mean anything). The load average
before and after is printed beside them.

    python benchmarks/compare_commits.py [--base e5b5734] [--head REV] [--items 10000]
        [--repeats 5] [--cli] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODEL = "scripted/echo?text=42"


def extract(rev: str, into: Path) -> Path:
    """``src/`` and ``benchmarks/`` of ``rev`` under ``into``; the folder holding them."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "src", "benchmarks"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def spawn(tree: Path, part: str, n: int, *, priced: bool = True) -> dict[str, Any]:
    """One ``bench_overhead.py --child`` run of ``tree``'s code in a fresh process: its
    figures, and the CPU seconds the process used."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    env.pop("SWEEPBENCH_DB", None)
    if not priced:
        env["SWEEPBENCH_OVERHEAD_UNPRICED"] = "1"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        script = tree / "benchmarks" / "bench_overhead.py"
        done = subprocess.run(
            [sys.executable, str(script), "--child", part, "--items", str(n), "--folder", folder],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{tree.name} {part} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def cli_run(tree: Path, n: int, folder: Path) -> dict[str, float]:
    """``bench run`` of ``n`` declared items by ``tree``'s CLI, in a fresh home: wall and CPU
    seconds of the whole process."""
    sys.path.insert(0, str(HERE))
    from cli_at_scale import write_benchmark

    home = Path(tempfile.mkdtemp(dir=folder))
    (home / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 1\n", "utf-8")
    declaration = write_benchmark(folder / f"bench-{n}", n)
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "SWEEPBENCH_HOME": str(home)}
    env.pop("SWEEPBENCH_DB", None)
    command = [sys.executable, "-c", "from sweepbench.cli import main; main()", "bench", "run",
               str(declaration), "--model", MODEL, "--yes", "--json"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{tree.name} CLI run failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="e5b5734")
    parser.add_argument("--head", default=None, help="a commit (default: this working tree)")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cli", action="store_true", help="also the whole CLI process")
    parser.add_argument("--quick", action="store_true", help="a few items, once (CI)")
    args = parser.parse_args()
    if args.quick:
        args.items, args.repeats = 200, 1
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = extract(args.base, root / "base")
        head = REPO if args.head is None else extract(args.head, root / "head")
        arms: dict[str, list[dict[str, Any]]] = {
            "floor": [], "base": [], "head unpriced": [], "head priced": [],
        }  # fmt: skip
        cli: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
        for _ in range(args.repeats):
            arms["floor"].append(spawn(head, "floor", args.items))
            arms["base"].append(spawn(base, "run", args.items))
            arms["head unpriced"].append(spawn(head, "run", args.items, priced=False))
            arms["head priced"].append(spawn(head, "run", args.items))
            if args.cli:
                cli["base"].append(cli_run(base, args.items, root))
                cli["head"].append(cli_run(head, args.items, root))
    load_after = os.getloadavg()[0]
    floor_s = median(arms["floor"], "seconds")
    base_s = median(arms["base"], "seconds")
    head_name = args.head or "working tree"
    print(f"{args.items:,} items, median of {args.repeats}; base {args.base}, head {head_name}; "
          f"load average {load_before:.2f} before, {load_after:.2f} after")  # fmt: skip
    print(f"{'arm':<16} {'run':>8} {'÷ floor':>8} {'÷ base':>8} {'resume':>8} {'CPU':>8}")
    for name, rows in arms.items():
        run_s = median(rows, "seconds")
        resume = f"{median(rows, 'resume_seconds'):.3f}" if "resume_seconds" in rows[0] else ""
        print(f"{name:<16} {run_s:8.3f} {run_s / floor_s:8.2f} {run_s / base_s:8.2f} "
              f"{resume:>8} {median(rows, 'cpu_s'):8.2f}")  # fmt: skip
    if args.cli:
        base_cpu, head_cpu = median(cli["base"], "cpu_s"), median(cli["head"], "cpu_s")
        print(f"CLI bench run: base {median(cli['base'], 'wall_s'):.2f} s wall, {base_cpu:.2f} s "
              f"CPU; head {median(cli['head'], 'wall_s'):.2f} s wall, {head_cpu:.2f} s CPU "
              f"(CPU head ÷ base {head_cpu / base_cpu:.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
