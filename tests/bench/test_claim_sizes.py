"""How much a worker of a shared run claims (issue 30 §5): a fast worker claims more at a time,
up to a quarter second of its own pace, and tops its claims up in its group commit; a slow one
claims the least batch, only when it has none left; items claimed in a transaction that rolls
back are never handed out."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepbench.bench.claims import CLAIM_MOST, ClaimedItems, ClaimSizes, ItemClaims
from sweepbench.store import Store
from sweepbench.store.workers import this_worker
from tests.backends import BACKENDS, backend_url

KEYS = [f"items.jsonl::q{i:05d}" for i in range(3000)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return backend_url(str(request.param), tmp_path / "sizes.db")


def test_a_fast_worker_claims_more_at_a_time_up_to_the_most() -> None:
    clock = Clock()
    sizes = ClaimSizes(16, clock=clock)
    assert sizes.next() == 16  # the first claim: the least
    seen = []
    for _ in range(8):
        asked = sizes.next()
        seen.append(asked)
        sizes.took(asked)
        for _ in range(asked):
            sizes.started()
        clock.now += 0.001  # every item started within a millisecond: an instant model
    # the least until 4 batches show the pace, then at most doubling, up to the most
    assert seen == [16, 16, 16, 16, 32, 64, 128, 256]
    for _ in range(3):
        sizes.took(sizes.next())
        for _ in range(512):
            sizes.started()
        clock.now += 0.001
    assert sizes.next() == CLAIM_MOST


def test_a_slow_worker_claims_the_least() -> None:
    clock = Clock()
    sizes = ClaimSizes(16, clock=clock)
    for _ in range(4):
        sizes.took(16)
        for _ in range(16):
            sizes.started()
        clock.now += 4.0  # 4 items a second: a quarter second of them is one item
    assert sizes.next() == 16


def test_a_burst_then_a_wait_is_not_a_fast_worker() -> None:
    clock = Clock()
    sizes = ClaimSizes(16, clock=clock)
    sizes.took(16)
    for _ in range(10):  # ten answered at once, then every call waits (a gate, a slow model)
        sizes.started()
    clock.now += 0.001
    assert sizes.next() == 16


def _fast(items: ClaimedItems[str], clock: Clock) -> None:
    """Hand out every ready item within a millisecond (the pace of an instant model)."""
    while items.pending:
        assert items.next() is not None
    clock.now += 0.001


def test_top_ups_are_handed_out_only_once_committed(url: str) -> None:
    with Store.open(url) as store:
        queue = ItemClaims(store, "run-sizes")
        queue.enqueue(KEYS)
        me = this_worker(store.engine)
        clock = Clock()
        items = ClaimedItems(queue, me, {k: k for k in KEYS}, 4)
        items.sizes = ClaimSizes(4, clock=clock)
        handed = []
        for _ in range(4):  # four claims of the least, each in its own transaction
            handed.append(items.next())
            _fast(items, clock)
        assert queue.counts()[1] == 16
        handed = KEYS[:16]

        class Failed(Exception):
            pass

        with pytest.raises(Failed), queue.writer.begin() as conn:  # a group commit that fails
            items.top_up(conn)
            raise Failed
        items.rolled_back()
        assert not items.pending and queue.counts()[1] == 16  # nothing claimed, nothing handed

        with queue.writer.begin() as conn:  # one that commits
            items.top_up(conn)
        assert not items.pending  # not before the commit is known
        items.committed()
        assert items.pending == 8 and queue.counts()[1] == 24  # twice the last claim
        while (key := items.next()) is not None:
            handed.append(key)
            if len(handed) % 50 == 0:
                with queue.writer.begin() as conn:
                    queue.finish(conn, handed[-50:])
                    items.top_up(conn)
                items.committed()
        assert handed == KEYS  # in order, every item once
        assert queue.counts() == (0, len(KEYS) - len(handed) // 50 * 50)


def test_a_slow_worker_never_tops_up(url: str) -> None:
    with Store.open(url) as store:
        queue = ItemClaims(store, "run-slow")
        queue.enqueue(KEYS[:100])
        clock = Clock()
        items = ClaimedItems(queue, this_worker(store.engine), {k: k for k in KEYS}, 4)
        items.sizes = ClaimSizes(4, clock=clock)
        assert items.next() == KEYS[0]
        clock.now += 10.0  # one item in ten seconds
        with queue.writer.begin() as conn:
            items.top_up(conn)
        items.committed()
        assert items.pending == 3 and queue.counts()[1] == 4
