"""Memory of a long-lived ``sweepbench serve``: many sweeps through the web app's own callbacks.

The app runs in this process (``create_app`` on a fresh store). A small client speaks Dash's
callback protocol to it over the Flask test client — the same POSTs to
``/_dash-update-component`` a browser sends: open the Sweep page, price the plan (the estimate
callback), press Run, render the cell grid, poll the live cells until the sweep is done (the
tick callback, as the page's interval does), and every so often open History. The models are
instant scripted ones, so the figure is the app's own memory, not a model's.

Several visitors sweep at once (``--clients``, threads, each with its own session), as on a
shared server. The resident set size (``VmRSS``) is sampled after every ``--every`` sweeps done
in all; the goal is that it stays within 20 % of its value after the first ``--warmup`` sweeps
(issues 12 and 26). ``--trace`` also samples the Python heap (tracemalloc) and lists where it
grew after the warm-up: what the server keeps per sweep, if anything.

    python benchmarks/soak_web.py [--sweeps 1000] [--warmup 100] [--every 100] [--clients 8]
    python benchmarks/soak_web.py --quick [--trace]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = {
    "text": ["scripted/echo?tps=0", "scripted/lorem?words=60&tps=0"],
    "excalidraw": ["scripted/sketch?tps=0", "scripted/sketch?tps=0&ttft=0"],
    "sculpture": ["scripted/sculpt?tps=0", "scripted/sculpt?tps=0&ttft=0"],
}
"""The sweeps take turns: text, a drawing, a sculpture (each kind's page and renderer)."""
REPLACES = "cells"
"""The container whose new children replace every pattern-id component (the cell grid)."""
GOAL = 1.20
"""RSS at the end over RSS after the warm-up."""
FULL = {"sweeps": 1000, "warmup": 100, "every": 100, "clients": 8}
"""The figure: 1,000 sweeps by 8 visitors at once."""
QUICK = {"sweeps": 24, "warmup": 8, "every": 8, "clients": 2}
"""``--quick``: a check that it runs (CI), in seconds; ``--sweeps 160 --warmup 40 --every 40
--clients 4`` shows it levelling off in under a minute."""


def rss_mb() -> float:
    """The process's resident set size now (not its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _outputs(spec: str) -> list[tuple[Any, str]]:
    """A dependency's output string as (id, property) pairs (``..a.b...c.d..`` when many)."""
    parts = spec[2:-2].split("...") if spec.startswith("..") else [spec]
    pairs = []
    for part in parts:
        ident, prop = part.rsplit(".", 1)
        pairs.append((json.loads(ident) if ident.startswith("{") else ident, prop))
    return pairs


def _key(ident: Any) -> str:
    """One spelling of a component id (pattern ids as compact JSON with sorted keys)."""
    if isinstance(ident, str) and ident.startswith("{"):
        ident = json.loads(ident)
    return (
        json.dumps(ident, sort_keys=True, separators=(",", ":"))
        if isinstance(ident, dict)
        else ident
    )


def _walk(tree: Any) -> Iterator[dict[str, Any]]:
    """Every component of a layout tree (as Dash serialises it)."""
    if isinstance(tree, list):
        for child in tree:
            yield from _walk(child)
    elif isinstance(tree, dict) and "props" in tree:
        yield tree
        props = tree["props"]
        for value in props.values():
            if isinstance(value, dict | list):
                yield from _walk(value)


class DashClient:
    """Fires the app's callbacks the way the browser does, keeping the components it saw."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.deps: list[dict[str, Any]] = client.get("/_dash-dependencies").get_json()
        self.props: dict[str, dict[str, Any]] = {}
        """Component id (JSON text for pattern ids) → its last known props."""

    def dependency(self, output: str) -> dict[str, Any]:
        """The callback whose outputs include ``output`` (``id.property``)."""
        for dep in self.deps:
            spec = dep["output"]
            parts = spec[2:-2].split("...") if spec.startswith("..") else [spec]
            if output in (part.split("@")[0] for part in parts):
                return dep
        raise LookupError(output)

    def learn(self, tree: Any) -> None:
        """Remember the components of a layout fragment (their ids and props)."""
        for component in _walk(tree):
            ident = component["props"].get("id")
            if ident is not None:
                self.props[_key(ident)] = component["props"]

    def _matching(self, pattern: dict[str, Any]) -> list[dict[str, Any]]:
        """Known ids matching a pattern id with ``ALL`` wildcards, in index order."""
        fixed = {k: v for k, v in pattern.items() if v != ["ALL"]}
        found = []
        for key in self.props:
            if key.startswith("{"):
                ident = json.loads(key)
                if set(ident) == set(pattern) and all(ident[k] == v for k, v in fixed.items()):
                    found.append(ident)
        return sorted(found, key=_key)

    def _value(self, ident: Any, prop: str, given: dict[str, Any]) -> Any:
        name = f"{ident}.{prop}"
        if name in given:
            return given[name]
        return self.props.get(ident, {}).get(prop) if isinstance(ident, str) else None

    def _slots(self, wanted: list[dict[str, Any]], given: dict[str, Any]) -> list[Any]:
        slots: list[Any] = []
        for item in wanted:
            ident, prop = item["id"], item["property"]
            if ident.startswith("{"):
                slots.append(
                    [
                        {"id": i, "property": prop, "value": self.props.get(_key(i), {}).get(prop)}
                        for i in self._matching(json.loads(ident))
                    ]
                )  # fmt: skip
            else:
                slots.append(
                    {"id": ident, "property": prop, "value": self._value(ident, prop, given)}
                )
        return slots

    def fire(self, output: str, changed: str, **given: Any) -> dict[str, Any]:
        """Fire the callback of ``output`` as if ``changed`` (``id.property``) had changed;
        ``given`` overrides input and state values (keys ``id.property``, dots as ``__``)."""
        values = {k.replace("__", "."): v for k, v in given.items()}
        dep = self.dependency(output)
        outputs: list[Any] = []
        for ident, prop in _outputs(dep["output"]):
            if isinstance(ident, dict):
                outputs.append([{"id": i, "property": prop} for i in self._matching(ident)])
            else:
                outputs.append({"id": ident, "property": prop})
        body = {
            "output": dep["output"],
            "outputs": outputs if len(outputs) > 1 else outputs[0],
            "inputs": self._slots(dep["inputs"], values),
            "state": self._slots(dep["state"], values),
            "changedPropIds": [changed],
        }
        response = self.client.post("/_dash-update-component", json=body)
        if response.status_code == 204:  # PreventUpdate / no_update everywhere
            return {}
        if response.status_code != 200:
            raise RuntimeError(f"{output}: HTTP {response.status_code}: {response.data[:300]!r}")
        reply: dict[str, Any] = response.get_json()["response"]
        if "children" in reply.get(REPLACES, {}):  # a new grid: the old cells are gone
            self.props = {k: v for k, v in self.props.items() if not k.startswith("{")}
        for ident, props in reply.items():
            self.props.setdefault(_key(ident), {}).update(props)
            for value in props.values():
                self.learn(value)
        return reply


@dataclass
class Soak:
    """What the clients share: the app, its runner, the count of sweeps done and the samples
    (taken by whichever client finishes a multiple of ``every``)."""

    app: Any
    runner: Any
    every: int
    trace: bool
    done: int = 0
    polls: int = 0
    samples: list[tuple[int, float, float | None]] = field(default_factory=list)
    """(sweeps done, RSS MB, Python heap MB traced by tracemalloc or None)."""
    snapshots: dict[int, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def sample(self, done: int) -> None:
        """Record the memory now, after ``done`` sweeps (a snapshot too when tracing)."""
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] / 2**20 if self.trace else None
        if self.trace:
            self.snapshots[done] = tracemalloc.take_snapshot()
        self.samples.append((done, rss_mb(), traced))


def one_sweep(soak: Soak, dash: DashClient, name: str, n: int) -> int:
    """Price, run, render and poll one sweep to its end, as the Sweep page does; the number
    of tick polls it took."""
    kind = list(KINDS)[n % len(KINDS)]
    controls = {"kind__value": kind, "axis__value": "model",
                "vary-model__value": KINDS[kind],
                "prompt__value": f"soak sweep {name}: a small lighthouse"}  # fmt: skip
    dash.fire("estimate.children", "prompt.value", **controls)
    reply = dash.fire("sweep-id.data", "run.n_clicks", run__n_clicks=n, **controls)
    sweep_id = reply.get("sweep-id", {}).get("data")
    if not sweep_id:
        raise RuntimeError(f"sweep {name} did not start: {reply.get('status')}")
    dash.fire("cells.children", "sweep-id.data", **{"sweep-id__data": sweep_id})
    live = soak.runner.get(sweep_id)
    polls = 0
    while True:
        done = live is None or live.done
        dash.fire("{\"index\":[\"ALL\"],\"type\":\"cell-badges\"}.children",
                  "tick.n_intervals", tick__n_intervals=polls)  # fmt: skip
        polls += 1
        if done:
            break
        live.wait_done(0.05)
    view = soak.runner.view(sweep_id)
    if view["status"] != "done":
        raise RuntimeError(f"sweep {name} ({kind}) ended {view['status']}: {view.get('error')}")
    return polls


def client(soak: Soak, index: int, sweeps: int) -> None:
    """One visitor: its own session on the app, ``sweeps`` sweeps one after another, History
    opened after each multiple of ``every`` sweeps done in all (when the sample is taken)."""
    dash = DashClient(soak.app.server.test_client())
    page = dash.fire("page.children", "url.pathname", url__pathname="/", url__search="")
    assert page, "the Sweep page did not render"
    for n in range(1, sweeps + 1):
        polls = one_sweep(soak, dash, f"{index}-{n}", n)
        with soak.lock:
            soak.done += 1
            soak.polls += polls
            done = soak.done
        if done % soak.every == 0:
            dash.fire("page.children", "url.pathname", url__pathname="/history")
            dash.fire("page.children", "url.pathname", url__pathname="/")
            with soak.lock:
                soak.sample(done)


def soak(
    sweeps: int, warmup: int, every: int, clients: int = 1, trace: bool = False
) -> dict[str, Any]:
    """Run ``sweeps`` sweeps through the callbacks, ``clients`` visitors at once; memory
    samples along the way (and, with ``trace``, where the Python heap grew)."""
    os.environ["SWEEPBENCH_HOME"] = tempfile.mkdtemp(prefix="sweepbench-soak-")
    if trace:
        tracemalloc.start(1)
    from sweepbench.store import Store
    from sweepbench.web.app import create_app

    store = Store.open()
    app = create_app(store)
    state = Soak(app, app.server.config["sweepbench.runner"], every, trace)
    state.sample(0)
    started = time.perf_counter()
    shares = [sweeps // clients + (1 if i < sweeps % clients else 0) for i in range(clients)]
    try:
        with ThreadPoolExecutor(clients) as pool:
            for future in [pool.submit(client, state, i, k) for i, k in enumerate(shares)]:
                future.result()
        kept = len(state.runner.recent())  # what the runner holds at the end (bounded)
    finally:
        app.server.config["sweepbench.context"].close()
        store.close()
    wall = time.perf_counter() - started
    samples = sorted(state.samples)
    base = next(mb for k, mb, _ in samples if k >= warmup)
    out = {"sweeps": sweeps, "clients": clients, "wall_s": wall, "polls": state.polls,
           "samples": samples, "base_mb": base, "end_mb": samples[-1][1],
           "ratio": samples[-1][1] / base, "kept": kept, "growth": []}  # fmt: skip
    if trace:
        first = next(k for k in sorted(state.snapshots) if k >= warmup)
        last = max(state.snapshots)
        stats = state.snapshots[last].compare_to(state.snapshots[first], "lineno")
        out["growth"] = [(str(s.traceback[0]), s.size_diff, s.count_diff) for s in stats[:8]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK['sweeps']} sweeps by {QUICK['clients']} clients, "
                        f"sampled every {QUICK['every']} (a check, not the figure)")  # fmt: skip
    parser.add_argument("--sweeps", type=int)
    parser.add_argument("--warmup", type=int)
    parser.add_argument("--every", type=int)
    parser.add_argument("--clients", type=int, help="visitors sweeping at once (threads)")
    parser.add_argument("--trace", action="store_true",
                        help="tracemalloc on: the Python heap per sample and where it grew "
                        "(RSS then includes tracemalloc's own bookkeeping)")  # fmt: skip
    args = parser.parse_args()
    chosen = {**(QUICK if args.quick else FULL)}
    chosen.update({k: v for k in FULL if (v := getattr(args, k)) is not None})
    sweeps, warmup, every, clients = (chosen[k] for k in ("sweeps", "warmup", "every", "clients"))
    if every < 1 or warmup % every or warmup > sweeps or clients < 1:
        parser.error("--every ≥ 1, --warmup a multiple of --every and at most --sweeps, "
                     "--clients ≥ 1")  # fmt: skip
    out = soak(sweeps, warmup, every, clients, args.trace)
    print(f"{out['sweeps']:,} sweeps of 2 cells (text, drawing, sculpture in turn) by "
          f"{clients} client{'s' if clients != 1 else ''} through the web callbacks in "
          f"{out['wall_s']:.1f} s ({out['polls']:,} tick polls); the runner holds "
          f"{out['kept']} sweeps at the end")  # fmt: skip
    print("RSS by sweeps done: " + ", ".join(f"{n}: {mb:.0f} MB" for n, mb, _ in out["samples"]))
    if args.trace:
        print("Python heap (tracemalloc) by sweeps done: "
              + ", ".join(f"{n}: {py:.1f} MB" for n, _, py in out["samples"]))  # fmt: skip
        print(f"where it grew after {warmup} sweeps (top {len(out['growth'])}):")
        for where, size, count in out["growth"]:
            print(f"  {size / 1024:+9.1f} KiB {count:+7,} blocks  {where}")
    verdict = "met" if out["ratio"] <= GOAL else "NOT met"
    print(f"end / after {warmup} sweeps: {out['end_mb']:.0f} / {out['base_mb']:.0f} MB = "
          f"{out['ratio']:.3f} (goal ≤ {GOAL:.2f}: {verdict})")  # fmt: skip


if __name__ == "__main__":
    main()
