"""Scale-out figures for issue 18: one benchmark run shared by worker processes or Ray actors.

Four parts, each against a baseline measured in the same script run (this machine is shared and
noisy, so ratios matter more than seconds):

- **throughput**: a latency-bound scripted model (``--latency`` seconds to the first token,
  200 ms by default), ``--slow-items`` items, ``--concurrency 1`` per worker, with 1, 2 and 4
  workers on the local executor and on Ray: items/s over the answering span (first call's start
  to the last call's end, from the ``calls`` rows) and the ratio to the ideal
  (``workers / latency``); the command's whole wall time too (start-up, Ray's cluster included);
- **overhead**: an instantly answering priced model, ``--fast-items`` items, ``--concurrency 8``:
  the per-item cost of one unshared worker (the baseline), two local workers and two Ray workers
  (the span per item, ms), and the ratio of each to the baseline;
- **store**: the claim queue and the ledger alone, on SQLite and (``--postgres URL``, a database
  whose schema is wiped) PostgreSQL: items claimed and finished per second at batch sizes 1, 16
  and 128, and ledger transactions per second (a lease taken and settled);
- with ``--postgres``, the overhead part's unshared and two-worker runs on PostgreSQL as well.

Every ``bench run`` is a fresh subprocess with its own ``SWEEPBENCH_HOME``.

    python benchmarks/scale_workers.py [--postgres URL] [--json out.json]
    python benchmarks/scale_workers.py --quick      # a few items, local workers: that it runs
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def write_benchmark(folder: Path, n: int) -> Path:
    """``n`` arithmetic items whose prompts carry the scripted reference marker."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"q{i:06d}", "question": f"What is {i} + 7?", "answer": i + 7} for i in range(n)]
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (folder / "benchmark.yaml").write_text(
        "id: scale\nname: Scale\nareas:\n  - {key: math, label: Math}\ntasks:\n"
        "  - id: sums\n    area: math\n    data: questions.jsonl\n    fields:\n      id: id\n"
        "      prompt_template: |-\n"
        "        {{ question }} Write only the final number on the last line.\n"
        "        [scripted-reference: {{ answer }}]\n"
        "      reference: answer\n    scorer: numeric\n",
        "utf-8",
    )
    return folder / "benchmark.yaml"


def reset_postgres(url: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP SCHEMA IF EXISTS public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    engine.dispose()


def span_s(db_url: str) -> float:
    """From the first call's start to the last call's end, as the ``calls`` rows say."""
    import sqlalchemy as sa

    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        first, last = conn.execute(
            sa.text("SELECT min(created_at), max(finished_at) FROM calls")
        ).one()
    engine.dispose()
    if isinstance(first, str):
        first, last = datetime.fromisoformat(first), datetime.fromisoformat(last)
    return float((last - first).total_seconds())


def bench_run(
    path: Path, model: str, *, workers: int, executor: str, concurrency: int,
    postgres: str | None,
) -> dict[str, Any]:  # fmt: skip
    with tempfile.TemporaryDirectory() as home:
        (Path(home) / "models.toml").write_text(
            "[scripted.guess]\nprice_in = 1\nprice_out = 1\n", "utf-8"
        )  # priced: every call is held by a lease and settled
        env = {**os.environ, "SWEEPBENCH_HOME": home, "RAY_USAGE_STATS_ENABLED": "0"}
        db_url = f"sqlite:///{home}/sweepbench.db"
        if postgres:
            reset_postgres(postgres)
            env["SWEEPBENCH_DB"] = db_url = postgres
        else:
            env.pop("SWEEPBENCH_DB", None)
        command = [
            sys.executable, "-c", "from sweepbench.cli import main; main()", "bench", "run",
            str(path), "--model", model, "--workers", str(workers), "--executor", executor,
            "--concurrency", str(concurrency), "--limit", "50", "--yes", "--json",
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"bench run failed ({done.returncode}): {done.stderr[-800:]}")
        report = json.loads(done.stdout)
        if report["scored"] + report["errors"] == 0:
            raise SystemExit("nothing was answered")
        return {"wall_s": wall, "span_s": span_s(db_url), "items": report["scored"]}


def throughput(tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    path = write_benchmark(tmp / "slow", args.slow_items)
    model = f"scripted/guess?accuracy=0.9&ttft={args.latency}"
    rows = []
    for executor in args.executors:
        for workers in args.workers:
            got = bench_run(path, model, workers=workers, executor=executor, concurrency=1,
                            postgres=None)  # fmt: skip
            rate = got["items"] / got["span_s"]
            ideal = workers / args.latency
            rows.append({"executor": executor, "workers": workers, **got,
                         "items_per_s": rate, "of_ideal": rate / ideal})  # fmt: skip
            print(f"throughput {executor:5} {workers} worker(s): {rate:5.1f} items/s "
                  f"({rate / ideal:.2f} of ideal), span {got['span_s']:.1f} s, "
                  f"command {got['wall_s']:.1f} s", flush=True)  # fmt: skip
    return rows


def overhead(tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    path = write_benchmark(tmp / "fast", args.fast_items)
    model = "scripted/guess?accuracy=0.9"
    arms: list[tuple[str, int, str | None]] = [("local", 1, None), ("local", 2, None)]
    if "ray" in args.executors:
        arms.append(("ray", 2, None))
    if args.postgres:
        arms += [("local", 1, args.postgres), ("local", 2, args.postgres)]
    rows = []
    base: float | None = None
    for executor, workers, pg in arms:
        got = bench_run(path, model, workers=workers, executor=executor, concurrency=8,
                        postgres=pg)  # fmt: skip
        per_item_ms = 1000 * got["span_s"] / got["items"]
        base = per_item_ms if base is None else base
        store = "postgres" if pg else "sqlite"
        rows.append({"executor": executor, "workers": workers, "store": store, **got,
                     "per_item_ms": per_item_ms, "vs_baseline": per_item_ms / base})  # fmt: skip
        print(f"overhead {executor:5} {workers} worker(s) {store:8}: {per_item_ms:6.2f} ms an "
              f"item ({per_item_ms / base:.2f} × one unshared worker), command "
              f"{got['wall_s']:.1f} s", flush=True)  # fmt: skip
    return rows


def store_rates(tmp: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "src"))
    from decimal import Decimal

    from sweepbench.bench.claims import ItemClaims
    from sweepbench.money.ledger import Ledger, Settlement
    from sweepbench.store import Store
    from sweepbench.store.workers import forget_workers, this_worker

    urls = [("sqlite", f"sqlite:///{tmp}/store-rates.db")]
    if args.postgres:
        urls.append(("postgres", args.postgres))
    rows = []
    for name, url in urls:
        if name == "postgres":
            reset_postgres(url)
            forget_workers()
        with Store.open(url) as store:
            worker = this_worker(store.engine)
            for batch in (1, 16, 128):
                n = min(args.claim_items, batch * 400)
                claims = ItemClaims(store, f"rates-{batch}")
                claims.enqueue([f"item-{i:07d}" for i in range(n)])
                started = time.perf_counter()
                while keys := claims.claim(worker, batch):
                    with store.engine.begin() as conn:
                        claims.finish(conn, keys)
                rate = n / (time.perf_counter() - started)
                rows.append({"store": name, "part": "claims", "batch": batch, "per_s": rate})
                print(f"store {name:8}: claim + finish, batches of {batch:3}: {rate:8.0f} "
                      "items/s", flush=True)  # fmt: skip
            ledger = Ledger(store)
            started = time.perf_counter()
            for _ in range(args.ledger_txns):
                rid, _held = ledger.lease("rates-ledger", "target", "m", Decimal("0.01"),
                                      Decimal("0.001"))  # fmt: skip
                ledger.settle_many([Settlement(rid, Decimal("0.0001"))])
            rate = 2 * args.ledger_txns / (time.perf_counter() - started)
            rows.append({"store": name, "part": "ledger", "per_s": rate})
            print(f"store {name:8}: ledger transactions (lease, settle): {rate:6.0f} a second",
                  flush=True)  # fmt: skip
        if name == "postgres":
            forget_workers()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--slow-items", type=int, default=60)
    parser.add_argument("--fast-items", type=int, default=2000)
    parser.add_argument("--claim-items", type=int, default=20_000)
    parser.add_argument("--ledger-txns", type=int, default=500)
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--parts", default="throughput,overhead,store")
    parser.add_argument("--postgres", default=None, help="a throwaway database (wiped)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--quick", action="store_true", help="a few items, local workers, once (CI)"
    )
    args = parser.parse_args()
    args.workers = (1, 2, 4)
    if args.quick:
        args.latency, args.slow_items, args.fast_items = 0.05, 8, 200
        args.claim_items, args.ledger_txns, args.executors = 200, 20, "local"
        args.workers = (1, 2)
    args.executors = args.executors.split(",")
    parts = args.parts.split(",")
    out: dict[str, Any] = {"cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        if "throughput" in parts:
            out["throughput"] = throughput(Path(tmp), args)
        if "overhead" in parts:
            out["overhead"] = overhead(Path(tmp), args)
        if "store" in parts:
            out["store"] = store_rates(Path(tmp), args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), "utf-8")


if __name__ == "__main__":
    main()
