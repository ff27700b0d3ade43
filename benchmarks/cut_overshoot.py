"""How far past its hold can a call cut at the limit go? (issue 26 §2)

A benchmark run with a limit far below one answer's worst case holds what is left and cuts the
answer's stream at it (``engine/cut.py``). What the provider bills is every token it *made*
before it saw the connection close; what sweepbench settles is an upper bound of what it
*received* (the bytes) plus :data:`~sweepbench.engine.cut.CUT_MARGIN_TOKENS`. This script
streams one token a chunk from a local OpenAI-compatible server at several rates, lets the run
cut the answer, and counts the tokens the server wrote before its writes failed: the tokens in
flight at the cut. It prints, per rate, the tokens received and made, the settlement, what the
server would bill, and how far each lies from the hold, in tokens and dollars.

    python benchmarks/cut_overshoot.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PRICE_OUT = Decimal(1000)  # USD per million output tokens: $0.001 a token; prompts free
TOKEN = "tok "  # four bytes, one token


class Streamer(ThreadingHTTPServer):
    """Streams one token a chunk, ``delay`` seconds apart, until the client goes away."""

    daemon_threads = True

    def __init__(self, delay: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = delay
        self.written = 0
        self.done = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    server: Streamer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        try:
            for _ in range(100_000):
                piece = {**base, "choices": [{"index": 0, "delta": {"content": TOKEN}}]}
                self.wfile.write(f"data: {json.dumps(piece)}\n\n".encode())
                self.wfile.flush()
                self.server.written += 1
                if self.server.delay:
                    time.sleep(self.server.delay)
        except OSError:  # the client closed the stream: what was written so far was "made"
            pass
        finally:
            self.server.done.set()


async def measure(delay: float, limit: Decimal) -> dict[str, Any]:
    from sweepbench.bench.items import Area, Benchmark, Item, Task
    from sweepbench.bench.request import BenchRequest
    from sweepbench.bench.resume import plan_run
    from sweepbench.bench.run import BenchRunner
    from sweepbench.money.ledger import Ledger
    from sweepbench.store import Store

    with Streamer(delay) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        os.environ["SWEEPBENCH_COMPATIBLE_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
        key = Item.make_key("t.jsonl", "t-0")
        item = Item(key, "t-0", "t", "d", "Go on.", reference="x", source_file="t.jsonl", row=1)
        task = Task("t", "a", "T", "auto", "exact", (item,), source_file="t.jsonl")
        bench = Benchmark("cut", "Cut", (Area("a", "A", (task,)),))
        with tempfile.TemporaryDirectory() as home:
            store = Store.open(f"sqlite:///{Path(home) / 'b.db'}")
            request = BenchRequest(benchmark="cut", models={"target": "compatible/m"}, limit=limit)
            prepared = plan_run(bench, request, store)
            outcome = await BenchRunner(prepared, store, concurrency=1).run()
            server.done.wait(30)
            (call,) = store.list_calls(limit=None, run_id=outcome.run_id)
            settled = Ledger(store).run_spent(outcome.run_id)
            store.close()
        server.shutdown()
    received = len(call.text) // len(TOKEN)
    made = server.written
    per = PRICE_OUT / 1_000_000
    billed = made * per
    return {
        "rate": "as fast as it can" if not delay else f"{1 / delay:,.0f} tokens/s",
        "status": outcome.status,
        "cut": call.provider_reason,
        "received": received,
        "made": made,
        "in_flight": made - received,
        "settled_tokens": call.output_tokens,
        "settled_usd": settled,
        "billed_usd": billed,
        "hold_usd": limit,
        "billed_past_hold_usd": max(billed - limit, Decimal(0)),
        "settled_minus_billed_tokens": call.output_tokens - made,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one rate only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["SWEEPBENCH_HOME"] = home
        (Path(home) / "models.toml").write_text(
            f"[compatible.m]\nprice_in = 0\nprice_out = {PRICE_OUT}\n", "utf-8"
        )
        limit = Decimal("1.0")  # a hold of 1,000 tokens against an 8,192-token worst case
        delays = [0.001] if args.quick else [0.0, 0.001, 0.01, 0.05]
        print("rate | received | made | in flight | settled | billed | billed past the hold")
        for delay in delays:
            row = asyncio.run(measure(delay, limit))
            print(
                f"{row['rate']} | {row['received']} | {row['made']} | {row['in_flight']} tokens"
                f" | {row['settled_tokens']} tokens ${row['settled_usd']:.3f} | "
                f"${row['billed_usd']:.3f} | ${row['billed_past_hold_usd']:.3f}"
                f" ({row['status']}, {row['cut']}; settled − made: "
                f"{row['settled_minus_billed_tokens']} tokens)"
            )


if __name__ == "__main__":
    main()
