"""Small in-code benchmarks for runner tests (no data files needed), prices given the
operator's way, and a fake OpenAI-compatible server to call through the real adapters."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.items import Area, Benchmark, Item, JudgeSpec, Task
from sweepbench.store import CallRecord, Store
from tests.servers import OpenAIServer, Reply
from tests.servers.base import Exchange, HttpError


def exact_task(task_id: str, n: int, *, area: str = "math", answer: str = "42") -> Task:
    """``n`` items whose reference is ``answer`` for even rows and something else otherwise."""
    items = tuple(
        Item(
            key=Item.make_key(f"{task_id}.jsonl", f"{task_id}-{i}"),
            sample_id=f"{task_id}-{i}",
            task=task_id,
            dimension="even" if i % 2 == 0 else "odd",
            prompt=f"Question {i}: what is six times seven?",
            reference=answer if i % 2 == 0 else "41",
            source_file=f"{task_id}.jsonl",
            row=i + 1,
        )
        for i in range(n)
    )
    name = f"Task {task_id}"
    return Task(task_id, area, name, "auto", "exact", items, source_file=f"{task_id}.jsonl")


def judged_task(task_id: str, n: int, *, area: str = "talk") -> Task:
    items = tuple(
        Item(
            key=Item.make_key(f"{task_id}.jsonl", f"{task_id}-{i}"),
            sample_id=f"{task_id}-{i}",
            task=task_id,
            dimension="default",
            prompt=f"Explain idea {i} kindly.",
            source_file=f"{task_id}.jsonl",
            row=i + 1,
        )
        for i in range(n)
    )
    judge = JudgeSpec("A kind, correct explanation.", "pass", "fail")
    return Task(task_id, area, f"Judged {task_id}", "judge", "judge", items, judge=judge)


def toy_benchmark(n: int = 10, *, judged: int = 0) -> Benchmark:
    areas = [Area("math", "Math", (exact_task("arith", n),))]
    if judged:
        areas.append(Area("talk", "Talk", (judged_task("explain", judged),)))
    return Benchmark("toy", "Toy", tuple(areas), version="v1", source="tests")


def elbench_root() -> Path:
    """The reference copy of ELBench's data (never part of the project):
    ``$SWEEPBENCH_ELBENCH_DATA``, else ``shared/data/elbench/benchmark_root`` beside the
    checkout, else the work folder's copy (so a CI clone elsewhere still finds it). Tests skip
    when none exists."""
    env = os.environ.get("SWEEPBENCH_ELBENCH_DATA")
    candidates = [Path(env)] if env else []
    tail = Path("shared", "data", "elbench", "benchmark_root")
    candidates += [Path(__file__).resolve().parents[2].parent / tail, Path("/work") / tail]
    return next((p for p in candidates if p.is_dir()), candidates[0])


# -- prices and fake servers, the public way ------------------------------------------------------


def set_prices(
    home: Path, prices: Mapping[str, tuple[Decimal | int | str, Decimal | int | str]]
) -> None:
    """Give models a price the operator's way: ``$SWEEPBENCH_HOME/models.toml``, in USD per
    million tokens in and out, keyed ``provider.name`` (``{"scripted.echo": (1, 2)}`` prices
    every ``scripted/echo?…`` id)."""
    home.mkdir(parents=True, exist_ok=True)
    lines = [
        f"[{key}]\nprice_in = {price_in}\nprice_out = {price_out}\n"
        for key, (price_in, price_out) in prices.items()
    ]
    (home / "models.toml").write_text("".join(lines), "utf-8")


class CompatibleServer(OpenAIServer):
    """A fake OpenAI-compatible server for ``compatible/NAME``. A reply's ``cost`` is sent as
    OpenRouter's ``usage.cost`` in the final chat chunk (negative or NaN too); every HTTP error
    it sends repeats the key the client presented, as a careless proxy might."""

    def chat_usage(self, reply: Reply, model: str) -> dict[str, Any]:
        usage = super().chat_usage(reply, model)
        if reply.cost is not None:
            usage["cost"] = reply.cost
        return usage

    def send_error(self, ex: Exchange, err: HttpError) -> None:
        key = self.presented_key(ex.request)
        if key:
            err = replace(err, message=f"{err.message or 'request refused'} (key: {key})")
        super().send_error(ex, err)


@contextmanager
def compatible_server(
    monkeypatch: pytest.MonkeyPatch, *, api_key: str | None = None, default: Reply | None = None
) -> Iterator[CompatibleServer]:
    """A :class:`CompatibleServer` on 127.0.0.1 that ``compatible/NAME`` ids are sent to (with
    ``api_key`` as ``SWEEPBENCH_COMPATIBLE_API_KEY``); ``default`` answers when no script is
    queued."""
    with CompatibleServer(default_reply=default) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        if api_key is not None:
            monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", api_key)
        yield server


def calls_of(store: Store, run_id: str) -> list[CallRecord]:
    """Every ``calls`` row of a run (answers, grades, retries and second tries alike)."""
    return store.list_calls(limit=None, run_id=run_id)
