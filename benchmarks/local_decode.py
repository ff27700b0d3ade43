"""Decode speed of the embedded model: raw llama-cpp-python vs sweepbench's LocalModel, on a
quiet machine and next to one competing busy process.

Each measurement runs in a fresh subprocess (so load time and peak memory are per arm), and
the arms rotate, each repetition starting one arm later, so that machine noise hits all alike.
The raw and sweepbench arms decode the same chat-formatted prompt greedily (temperature 0),
with the same context and the adapter's most threads, so they produce the same tokens. The
``-busy`` arms run the same while a subprocess spins (``while True: pass``) from before the
load to after the generation.

    python benchmarks/local_decode.py                 # 5 repetitions of 256 tokens
    python benchmarks/local_decode.py --reps 9 --tokens 512 --json results.json
    python benchmarks/local_decode.py --arms raw,raw-busy   # what two fixed threads suffer

Per run: load time (constructing the model, after ``import llama_cpp``), time to first token
(from the call to the first token's text; prompt evaluation included), decode tokens/s (from
the first token's text to the last: prompt processing excluded), peak RSS of the process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL = "local/smollm2-135m"
PROMPT = "Write a long story about a dragon who learns to bake bread."
WARMUP_PROMPT = "Say hello."
ARMS = ("raw", "sweepbench", "sweepbench-busy", "raw-busy")
DEFAULT_ARMS = ("raw", "sweepbench", "sweepbench-busy")
SPIN = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"
"""A busy process that spins until its parent is gone (a benchmark killed by a timeout, where
no ``finally`` runs, leaves no spinner behind)."""


def _import_sweepbench() -> None:
    try:
        import sweepbench  # noqa: F401
    except ImportError:  # running from a checkout without `pip install -e .`
        sys.path.insert(0, str(ROOT / "src"))


def _peak_rss_mb() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return kib / 1024 if sys.platform != "darwin" else kib / 1024 / 1024


def _decode_rate(tokens: int, first: float, last: float) -> float:
    return (tokens - 1) / (last - first) if tokens > 1 and last > first else 0.0


# --------------------------------------------------------------------------- the two arms


def worker_raw(args: argparse.Namespace) -> dict[str, Any]:
    """The baseline: llama_cpp used directly, the plainest streaming loop there is."""
    import llama_cpp
    import llama_cpp.llama_cpp as llama_capi
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    # Same as the adapter: no extra CPU buffer types (AMX repacking dies with SIGILL on the
    # VM this was measured on), so both arms run the same kernels.
    original = llama_capi.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    llama_capi.llama_model_default_params = defaults
    started = time.perf_counter()
    llm = llama_cpp.Llama(
        model_path=args.model_path,
        n_ctx=args.n_ctx,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    load_s = time.perf_counter() - started
    llama_capi.llama_model_default_params = original
    vocab = llm._model.vocab
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(llm.token_eos()),
        bos_token=llm._model.token_get_text(llm.token_bos()),
    )

    def generate(prompt: str, max_tokens: int) -> tuple[str, int, float, float, float]:
        called = time.perf_counter()
        text = formatter(messages=[{"role": "user", "content": prompt}]).prompt
        tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
        out, n, first, last = b"", 0, 0.0, 0.0
        for token in llm.generate(tokens, temp=0.0, repeat_penalty=args.repeat_penalty):
            if llama_capi.llama_vocab_is_eog(vocab, token):
                break
            out += llm.detokenize([token])
            n += 1
            last = time.perf_counter()
            first = first or last
            if n >= max_tokens:
                break
        return out.decode("utf-8", "replace"), n, called, first, last

    generate(WARMUP_PROMPT, 8)
    text, n, called, first, last = generate(PROMPT, args.tokens)
    return {
        "load_s": load_s,
        "ttft_s": first - called,
        "decode_tok_s": _decode_rate(n, first, last),
        "tokens": n,
        "text": text,
    }


def worker_sweepbench(args: argparse.Namespace) -> dict[str, Any]:
    """The adapter, through its public streaming API, from an asyncio consumer."""
    _import_sweepbench()
    import llama_cpp  # noqa: F401  (imported before the clock, as in the raw arm)

    from sweepbench.models.base import Request, TextDelta, UsageEvent
    from sweepbench.models.catalog import lookup
    from sweepbench.models.local import LocalModel, loaded_engine

    provider, name = args.model.split("/", 1)
    info = lookup(provider, name)
    assert info is not None
    started = time.perf_counter()
    engine = loaded_engine(info)
    load_s = time.perf_counter() - started
    model = LocalModel(info)

    async def generate(prompt: str, max_tokens: int) -> tuple[str, int, float, float, float]:
        request = Request.simple(model.id, prompt, max_tokens=max_tokens, temperature=0.0)
        text, n, first, last = "", 0, 0.0, 0.0
        called = time.perf_counter()
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                last = time.perf_counter()
                first = first or last
                text += event.text
            elif isinstance(event, UsageEvent):
                n = event.usage.output_tokens
        return text, n, called, first, last

    async def main() -> dict[str, Any]:
        await generate(WARMUP_PROMPT, 8)
        changes = engine.threads.changes
        text, n, called, first, last = await generate(PROMPT, args.tokens)
        return {
            "load_s": load_s,
            "ttft_s": first - called,
            "decode_tok_s": _decode_rate(n, first, last),
            "tokens": n,
            "text": text,
            "threads_end": engine.threads.threads,
            "thread_changes": engine.threads.changes - changes,
        }

    return asyncio.run(main())


# --------------------------------------------------------------------------- orchestration


def _settings(model_id: str) -> dict[str, Any]:
    """What the adapter would use for this model, so the raw arm can use the same."""
    _import_sweepbench()
    from sweepbench.models.catalog import lookup
    from sweepbench.models.local import (
        REPEAT_PENALTY,
        context_size,
        default_threads,
        resolve_weights,
    )

    provider, name = model_id.split("/", 1)
    info = lookup(provider, name)
    if info is None:
        raise SystemExit(f"unknown model {model_id}")
    return {
        "model": model_id,
        "model_path": str(resolve_weights(info)),
        "n_ctx": context_size(info),
        "threads": default_threads(),
        "repeat_penalty": REPEAT_PENALTY,
    }


@contextlib.contextmanager
def _busy(on: bool) -> Iterator[None]:
    """One competing CPU-bound process for the duration, when ``on``."""
    if not on:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", SPIN])
    try:
        time.sleep(0.3)  # let it start spinning before the worker loads
        yield
    finally:
        spinner.kill()
        spinner.wait()


def _run_worker(arm: str, settings: dict[str, Any], tokens: int) -> dict[str, Any]:
    worker = arm.removesuffix("-busy")
    command = [sys.executable, __file__, "--worker", worker, "--tokens", str(tokens)]
    for key in ("model", "model_path", "n_ctx", "threads", "repeat_penalty"):
        command += [f"--{key.replace('_', '-')}", str(settings[key])]
    with _busy(arm.endswith("-busy")):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{arm} worker failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["loadavg_after"] = os.getloadavg()[0]
    return result


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(run[key] for run in runs))


def _paired_ratio(runs: dict[str, list[dict[str, Any]]], top: str, bottom: str) -> float | None:
    """The median over repetitions of ``top``'s decode rate over ``bottom``'s (same rep)."""
    if top not in runs or bottom not in runs:
        return None
    ratios = [
        a["decode_tok_s"] / b["decode_tok_s"]
        for a, b in zip(runs[top], runs[bottom], strict=True)
        if b["decode_tok_s"]
    ]
    return statistics.median(ratios) if ratios else None


def _median_ratio(medians: dict[str, dict[str, float]], top: str, bottom: str) -> float | None:
    if top not in medians or bottom not in medians or not medians[bottom]["decode_tok_s"]:
        return None
    return medians[top]["decode_tok_s"] / medians[bottom]["decode_tok_s"]


RATIOS = {
    "sweepbench/raw": ("sweepbench", "raw"),
    "sweepbench-busy/sweepbench": ("sweepbench-busy", "sweepbench"),
    "raw-busy/raw": ("raw-busy", "raw"),
}
"""The ratios reported, each as (top arm, bottom arm)."""


def orchestrate(args: argparse.Namespace) -> dict[str, Any]:
    import llama_cpp

    settings = _settings(args.model)
    arms = tuple(args.arms)
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    for rep in range(args.reps):
        order = arms[rep % len(arms) :] + arms[: rep % len(arms)]
        for arm in order:
            result = _run_worker(arm, settings, args.tokens)
            runs[arm].append(result)
            threads = f" threads {result['threads_end']}" if "threads_end" in result else ""
            print(
                f"  rep {rep + 1}/{args.reps} {arm:<16} {result['decode_tok_s']:6.1f} tok/s "
                f"ttft {result['ttft_s'] * 1000:7.1f} ms  ({result['tokens']} tokens){threads}",
                file=sys.stderr,
            )
    medians = {
        arm: {
            key: _median(runs[arm], key)
            for key in ("load_s", "ttft_s", "decode_tok_s", "peak_rss_mb", "tokens")
        }
        for arm in arms
    }
    ratios = {
        name: {
            "of_medians": _median_ratio(medians, top, bottom),
            "median_paired": _paired_ratio(runs, top, bottom),
        }
        for name, (top, bottom) in RATIOS.items()
        if top in runs and bottom in runs
    }
    same_text = None
    if "raw" in runs and "sweepbench" in runs:
        same_text = all(
            r["text"] == s["text"] for r, s in zip(runs["raw"], runs["sweepbench"], strict=True)
        )
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "cpu": _cpu_model(),
            "python": platform.python_version(),
            "llama_cpp_python": llama_cpp.__version__,
        },
        "settings": {**settings, "tokens": args.tokens, "reps": args.reps, "prompt": PROMPT},
        "median": medians,
        "ratios": ratios,
        "same_text": same_text,
        "runs": {
            arm: [{k: v for k, v in r.items() if k != "text"} for r in runs[arm]] for arm in arms
        },
    }


def _fmt(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.3f}"


def print_table(report: dict[str, Any]) -> None:
    settings, median = report["settings"], report["median"]
    print(
        f"{settings['model']}, {settings['tokens']} tokens, {settings['threads']} threads, "
        f"n_ctx {settings['n_ctx']}, median of {settings['reps']} runs per arm"
    )
    print(f"{'arm':<18}{'load s':>8}{'TTFT ms':>10}{'decode tok/s':>14}{'peak RSS MB':>13}")
    for arm, row in median.items():
        print(
            f"{arm:<18}{row['load_s']:>8.2f}{row['ttft_s'] * 1000:>10.1f}"
            f"{row['decode_tok_s']:>14.1f}{row['peak_rss_mb']:>13.0f}"
        )
    for name, ratio in report["ratios"].items():
        print(
            f"decode ratio {name}: {_fmt(ratio['of_medians'])} "
            f"(median of per-rep ratios {_fmt(ratio['median_paired'])})"
        )
    if report["same_text"] is not None:
        print(f"same text in the raw and sweepbench arms: {report['same_text']}")


def _arms(text: str) -> tuple[str, ...]:
    arms = tuple(a.strip() for a in text.split(",") if a.strip())
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise argparse.ArgumentTypeError(f"arms are {', '.join(ARMS)}; got {text!r}")
    return arms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="runs per arm (default 5)")
    parser.add_argument("--tokens", type=int, default=256, help="tokens to decode (256)")
    parser.add_argument("--model", default=MODEL, help=f"catalogue id (default {MODEL})")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--arms",
        type=_arms,
        default=DEFAULT_ARMS,
        help=f"comma-separated, of {', '.join(ARMS)} (default {','.join(DEFAULT_ARMS)})",
    )
    parser.add_argument("--worker", choices=("raw", "sweepbench"), help=argparse.SUPPRESS)
    parser.add_argument("--model-path", help=argparse.SUPPRESS)
    parser.add_argument("--n-ctx", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--repeat-penalty", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="16 tokens, one run an arm (CI)")
    args = parser.parse_args()
    if args.quick and not args.worker:
        args.reps, args.tokens = 1, 16
    if args.worker:
        result = worker_raw(args) if args.worker == "raw" else worker_sweepbench(args)
        result["peak_rss_mb"] = _peak_rss_mb()
        print(json.dumps(result))
        return
    report = orchestrate(args)
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
