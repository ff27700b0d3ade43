"""``sweepbench bench run`` end to end at 10,000 and 100,000 items, from the CLI (issue 19).

A declared benchmark (``benchmark.yaml`` + JSONL) of N exact-match items is run by the real CLI
on an instantly answering priced scripted model (every call goes through the ledger, the call
log and the store), in a fresh process with a fresh store, then run again: the resume, with
nothing left to do (0 calls). Measured in the same script run:

- the wall time of each command and its **peak memory** (the child's maximum resident set);
- the **per-item cost** at N: ``(wall(N) − wall(small)) / (N − small)``, the command's fixed
  start-up taken out by a run of ``--small`` items, and its ratio at 100k to that at 10k
  (goal ≤ 1.2);
- the **plain-asyncio floor** on the same items (``bench_overhead.py``'s: ask, exact match, a
  JSON line each);
- ``sweepbench --help`` (median of ``--help-runs``), and ``lm_eval --help`` when lm-eval is
  installed (goal: no slower; else under 0.5 s).

Goals: per-item cost ratio ≤ 1.2, peak < 300 MB at 100k, resume of the finished 100k run < 2 s
with 0 calls, ``--help`` ≤ lm-eval's (or < 0.5 s).

    python benchmarks/cli_at_scale.py [--sizes 10000,100000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODEL = "scripted/echo?text=42"
CLI = [sys.executable, "-c", "from sweepbench.cli import main; main()"]


def write_benchmark(folder: Path, n: int) -> Path:
    """``n`` exact-match items, half of them expecting the scripted answer."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "items.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            answer = "42" if i % 2 == 0 else "41"
            row = {
                "id": f"q{i:06d}",
                "question": f"Question {i}: six times seven?",
                "answer": answer,
            }
            out.write(json.dumps(row) + "\n")
    (folder / "benchmark.yaml").write_text(
        "id: scale\nname: Scale\nareas:\n  - {key: all, label: All}\ntasks:\n"
        "  - id: exact\n    area: all\n    data: items.jsonl\n    fields:\n      id: id\n"
        "      prompt: question\n      reference: answer\n    scorer: exact\n",
        "utf-8",
    )
    return folder / "benchmark.yaml"


def measured(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run ``command`` in a child of a fresh measuring process: wall seconds and the child's
    peak memory (its own ``RUSAGE_CHILDREN``, so no other child counts)."""
    probe = [sys.executable, str(Path(__file__)), "--child", json.dumps(command)]
    done = subprocess.run(probe, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {command[3:6]} failed: {done.stderr[-1500:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def child(command: list[str]) -> None:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = usage.ru_maxrss / 1024
    report: dict[str, Any] = {}
    if done.stdout.strip().startswith("{"):
        report = json.loads(done.stdout)
    print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                      "peak_mb": peak_mb, "code": done.returncode,
                      "scored": report.get("scored"), "stderr": done.stderr[-400:]}))  # fmt: skip


def calls_in(home: Path) -> int:
    import sqlite3

    with sqlite3.connect(home / "sweepbench.db") as conn:
        return int(conn.execute("SELECT count(*) FROM calls").fetchone()[0])


def run_size(n: int, tmp: Path) -> dict[str, Any]:
    home = tmp / f"home-{n}"
    home.mkdir()
    (home / "models.toml").write_text("[scripted.echo]\nprice_in = 1\nprice_out = 1\n", "utf-8")
    path = write_benchmark(tmp / f"bench-{n}", n)
    env = {**os.environ, "SWEEPBENCH_HOME": str(home)}
    env.pop("SWEEPBENCH_DB", None)
    command = [*CLI, "bench", "run", str(path), "--model", MODEL, "--limit", "100", "--yes",
               "--json"]  # fmt: skip
    first = measured(command, env)
    if first["code"] != 0 or first["scored"] != n:
        raise SystemExit(f"the {n}-item run did not finish: {first}")
    made = calls_in(home)
    again = measured(command, env)
    new_calls = calls_in(home) - made
    if again["code"] != 0:
        raise SystemExit(f"the resume of the {n}-item run failed: {again}")
    out = {"items": n, "run_s": first["wall_s"], "run_peak_mb": first["peak_mb"],
           "resume_s": again["wall_s"], "resume_cpu_s": again["cpu_s"],
           "resume_peak_mb": again["peak_mb"], "resume_calls": new_calls}  # fmt: skip
    print(f"{n:>7,} items: run {first['wall_s']:6.2f} s, peak {first['peak_mb']:5.0f} MB; "
          f"resume {again['wall_s']:5.2f} s, CPU {again['cpu_s']:5.2f} s ({new_calls} calls), peak "
          f"{again['peak_mb']:4.0f} MB", flush=True)  # fmt: skip
    return out


def floor(n: int, tmp: Path) -> float:
    sys.path.insert(0, str(HERE))
    from bench_overhead import child_floor  # the same floor as the runner's own benchmark

    folder = tmp / f"floor-{n}"
    folder.mkdir()
    return float(child_floor(n, folder)["seconds"])


def help_time(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--help-runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--quick", action="store_true", help="a few items, once (CI: no figure judged)"
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.small, args.help_runs = "200,400", 100, 1
    if args.child:
        child(json.loads(args.child))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    out: dict[str, Any] = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        small = run_size(args.small, Path(tmp))
        rows = []
        for n in sizes:
            row = run_size(n, Path(tmp))
            row["per_item_us"] = 1e6 * (row["run_s"] - small["run_s"]) / (n - args.small)
            row["floor_s"] = floor(n, Path(tmp))
            row["floor_per_item_us"] = 1e6 * row["floor_s"] / n
            print(f"{n:>7,} items: {row['per_item_us']:6.1f} µs an item past start-up "
                  f"(floor {row['floor_per_item_us']:5.1f} µs)", flush=True)  # fmt: skip
            rows.append(row)
        out.update(small=small, sizes=rows)
    if len(rows) >= 2:
        ratio = rows[-1]["per_item_us"] / rows[0]["per_item_us"]
        out["per_item_ratio"] = ratio
        print(f"per-item cost at {rows[-1]['items']:,} ÷ at {rows[0]['items']:,}: {ratio:.2f} "
              "(goal ≤ 1.2)")  # fmt: skip
    exe = shutil.which("sweepbench")
    ours = help_time([exe, "--help"] if exe else [*CLI, "--help"], args.help_runs)
    out["help_s"] = ours
    line = f"sweepbench --help: {ours:.3f} s"
    run_help = help_time([exe, "bench", "run", "--help"] if exe else
                         [*CLI, "bench", "run", "--help"], args.help_runs)  # fmt: skip
    out["bench_run_help_s"] = run_help
    line += f"; bench run --help: {run_help:.3f} s ({run_help / ours:.2f}× sweepbench --help)"
    lm_eval = shutil.which("lm_eval") or shutil.which("lm-eval")
    if lm_eval:
        theirs = help_time([lm_eval, "--help"], args.help_runs)
        out["lm_eval_help_s"] = theirs
        line += (f"; lm_eval --help: {theirs:.2f} s ({ours / theirs:.2f}×, bench run --help "
                 f"{run_help / theirs:.2f}×, goal ≤ 1.0)")  # fmt: skip
    else:
        line += " (lm-eval not installed: goal < 0.5 s)"
    print(line)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), "utf-8")


if __name__ == "__main__":
    main()
