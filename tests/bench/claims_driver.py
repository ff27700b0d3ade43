"""A claiming worker for the claims tests: ``python -m tests.bench.claims_driver URL RUN N MODE``.

``drain``: claim batches of N and finish them (each batch in one transaction, as a runner stores
its answers) until none is free, printing every key it answered; ``die``: claim N, print them
and exit at once without finishing or releasing (a killed worker)."""

from __future__ import annotations

import os
import sys

from sweepbench.bench.claims import ItemClaims
from sweepbench.store import Store
from sweepbench.store.workers import this_worker


def main() -> None:
    url, run_id, size, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    store = Store.open(url)
    worker = this_worker(store.engine)
    queue = ItemClaims(store, run_id)
    if mode == "die":
        for key in queue.claim(worker, size):
            print(key, flush=True)
        os._exit(0)  # no finally, no release: the claims stay with a dead worker
    while keys := queue.claim(worker, size):
        with store.begin() as conn:
            queue.finish(conn, keys)
        for key in keys:
            print(key, flush=True)
    store.close()


if __name__ == "__main__":
    main()
