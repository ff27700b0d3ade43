"""Are sweepbench's teaching-dialogue requests ELBench's, byte for byte? (issue 25 §1)

Plays ELBench's four teaching tasks twice against one recording OpenAI-compatible server on
127.0.0.1 — once with ELBench's own runtime (its bridge renders each template, then its
``basic_education_runtime`` ``pipeline`` runs the dialogues, exports and evaluates them), once
with ``sweepbench bench run elbench`` — and compares every request: the messages, byte for
byte, and the call settings per role.

The server answers from the request alone (a teacher's reply numbered by the turns it has
seen, with an inline ``<think>`` block; a student's hesitant reply; an evaluation with every
field at 4), so two runtimes that send the same requests play the same dialogues, and the
first request that differs shows where they part.

ELBench's code runs in its own Python environment, never in sweepbench's::

    python -m venv /tmp/elbvenv
    /tmp/elbvenv/bin/pip install "langchain>=0.3,<1" "langchain-openai>=0.3,<1" \\
        "langgraph>=0.4,<1" "langgraph-checkpoint-sqlite>=2,<3" aiosqlite click polyfactory \\
        tenacity tqdm pyyaml httpx
    # ELBench's source (ZeroLoss-Lab/ELBench at bdf8ea0), e.g. extracted to /tmp/elb
    python benchmarks/elbench_dialogue_requests.py --elbench /tmp/elb \\
        --elbench-python /tmp/elbvenv/bin/python --data ../shared/data/elbench/benchmark_root

``--per-task N`` plays the first N tasks of each template (``--quick``: 1; default: all 45).
The format example in the evaluator's system prompt is drawn at random by ELBench
(polyfactory) and by a seeded generator in sweepbench; it is masked before comparing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TEACHER = "teacher-model"
ENDPOINT = "endpoint-model"
"""ELBench plays the student and the evaluator on one test endpoint model; so does this run."""
START, END = "<START OF EVAL OUTPUT>", "<END OF EVAL OUTPUT>"
_EXAMPLE = re.compile(re.escape(START) + r"\n(\{.*?\})\n" + re.escape(END), re.DOTALL)


# --- the recording server -------------------------------------------------------------------


def reply_for(body: dict[str, Any]) -> str:
    """What the fake server answers a chat request: a function of the request alone."""
    messages = body.get("messages") or []
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    found = _EXAMPLE.search(system)
    if found:  # the evaluator: every field of the example at 4
        fields = list(json.loads(found.group(1)))
        values = json.dumps(dict.fromkeys(fields, 4), ensure_ascii=False)
        return f"评估如下。\n{START}\n{values}\n{END}"
    if body.get("model") == TEACHER:
        turn = 1 + sum(1 for m in messages if m.get("role") == "assistant")
        return f"<think>想想第{turn}步</think>\n\n第{turn}步：你觉得这里该怎么做？"
    heard = sum(1 for m in messages if m.get("role") == "user")
    return f"嗯……我听到了{heard}句话，我觉得是{heard * 7}吧？"


class Recorder(ThreadingHTTPServer):
    """A Chat Completions server that records every request body."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def take(self) -> list[dict[str, Any]]:
        with self.lock:
            taken, self.bodies = self.bodies, []
        return taken


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.bodies.append(body)
        text = reply_for(body)
        usage = {
            "prompt_tokens": 10,
            "completion_tokens": len(text),
            "total_tokens": 10 + len(text),
        }
        base = {"id": "chatcmpl-1", "created": 0, "model": body.get("model", "")}
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            chunk = {**base, "object": "chat.completion.chunk"}
            for piece in (
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"choices": [], "usage": usage},
            ):
                self.wfile.write(f"data: {json.dumps({**chunk, **piece})}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            return
        answer = {
            **base, "object": "chat.completion", "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
        }  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# --- the two runs ---------------------------------------------------------------------------

ELBENCH_DRIVER = textwrap.dedent(
    """
    # Renders each teaching template as ELBench's bridge does, then runs its runtime's
    # pipeline on it (generate, export, evaluate), as the bridge does with the judge enabled.
    import json, logging, os, subprocess, sys
    from pathlib import Path
    from types import SimpleNamespace
    import yaml
    root, data, url, work, per_task = sys.argv[1:6]
    sys.path.insert(0, str(Path(root) / "src"))
    from elbench.execution.basic_education import (
        BasicEducationExecutor, load_basic_education_config)
    from elbench.schemas.config import ModelConfig
    config = load_basic_education_config(Path(root) / "configs", Path(root), Path(data))
    config.test_endpoint_model_id = "endpoint"
    teacher = ModelConfig(model_id="teacher", provider_name="openai_compatible",
                          model_name="%(teacher)s", api_base=url, api_key_env="FAKE_KEY",
                          temperature=0, max_tokens=8192)
    endpoint = ModelConfig(model_id="endpoint", provider_name="openai_compatible",
                           model_name="%(endpoint)s", api_base=url, api_key_env="FAKE_KEY",
                           temperature=0)
    bridge = object.__new__(BasicEducationExecutor)
    bridge.config, bridge.model_config, bridge.logger = config, teacher, logging.getLogger()
    bridge.project_config = SimpleNamespace(
        models={"endpoint": endpoint}, providers={},
        judges=SimpleNamespace(default_judge_model_id="endpoint"),
        app=SimpleNamespace(default_run=SimpleNamespace(max_concurrency=1)))
    env = {**os.environ, "PYTHONPATH": str(Path(root) / "src"), "FAKE_KEY": "sk-fake"}
    for scenario in config.scenarios:
        memory = Path(work) / scenario.scenario_id
        memory.mkdir(parents=True)
        rendered = bridge._render_runtime_template(
            template_data=bridge._read_yaml_file(scenario.template_path), scenario=scenario,
            memory_path=memory, max_samples=int(per_task) if per_task != "all" else None)
        path = memory.parent / (scenario.scenario_id + ".yaml")
        path.write_text(yaml.safe_dump(rendered, allow_unicode=True, sort_keys=False),
                        encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "elbench.basic_education_runtime.cli.main", "pipeline",
             "--config", str(path)], env=env, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{scenario.scenario_id}: {done.stderr[-2000:]}")
    """
) % {"teacher": TEACHER, "endpoint": ENDPOINT}


def run_elbench(python: str, root: Path, data: Path, url: str, per_task: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        driver = Path(work) / "driver.py"
        driver.write_text(ELBENCH_DRIVER, encoding="utf-8")
        env = {**os.environ, "FAKE_KEY": "sk-fake"}
        done = subprocess.run(
            [python, str(driver), str(root), str(data), url, str(Path(work) / "runs"), per_task],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"ELBench's runtime failed:\n{done.stderr[-3000:]}")


def run_sweepbench(data: Path, url: str, per_task: str) -> None:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SWEEPBENCH_HOME": home, "SWEEPBENCH_COMPATIBLE_BASE_URL": url}
        env.pop("SWEEPBENCH_DB", None)
        command = [
            shutil.which("sweepbench") or "sweepbench", "bench", "run", "elbench",
            "--data", str(data),
            "--tasks", "knowledge,question,cross,guided", "--model", f"compatible/{TEACHER}",
            "--student", f"compatible/{ENDPOINT}", "--judge", f"compatible/{ENDPOINT}",
            "--temperature", "0", "--yes", "--json",
        ]  # fmt: skip
        if per_task != "all":
            command += ["--per-task", per_task]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"sweepbench failed:\n{done.stderr[-3000:]}")


# --- the comparison -------------------------------------------------------------------------

SETTINGS = ("max_tokens", "max_completion_tokens", "temperature", "chat_template_kwargs")


def role_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    if any(_EXAMPLE.search(m.get("content", "")) for m in messages if m.get("role") == "system"):
        return "evaluator"
    return "teacher" if body.get("model") == TEACHER else "student"


def messages_key(body: dict[str, Any]) -> str:
    """The request's messages as canonical JSON, the random format example masked."""
    shown = [
        {"role": m.get("role"), "content": _EXAMPLE.sub(f"{START}\n<example>\n{END}", m["content"])}
        for m in body.get("messages") or []
    ]
    return json.dumps([body.get("model"), shown], ensure_ascii=False)


def settings_of(body: dict[str, Any]) -> str:
    return json.dumps({k: body[k] for k in SETTINGS if k in body}, sort_keys=True)


def compare(elbench: list[dict[str, Any]], ours: list[dict[str, Any]]) -> Iterator[str]:
    theirs_keys = Counter(messages_key(b) for b in elbench)
    our_keys = Counter(messages_key(b) for b in ours)
    same = sum((theirs_keys & our_keys).values())
    yield f"requests: ELBench {len(elbench)}, sweepbench {len(ours)}; identical messages: {same}"
    for role in ("teacher", "student", "evaluator"):
        a = Counter(messages_key(b) for b in elbench if role_of(b) == role)
        b_ = Counter(messages_key(b) for b in ours if role_of(b) == role)
        yield (
            f"  {role:9} ELBench {sum(a.values()):4}  sweepbench {sum(b_.values()):4}  "
            f"identical {sum((a & b_).values()):4}"
        )
    only_theirs = theirs_keys - our_keys
    only_ours = our_keys - theirs_keys
    for label, extra in (("only ELBench sent", only_theirs), ("only sweepbench sent", only_ours)):
        for key in list(extra)[:2]:
            yield f"{label}: {key[:600]}…"
    yield "call settings per role (ELBench | sweepbench):"
    for role in ("teacher", "student", "evaluator"):
        theirs = sorted({settings_of(b) for b in elbench if role_of(b) == role})
        mine = sorted({settings_of(b) for b in ours if role_of(b) == role})
        yield f"  {role:9} {', '.join(theirs)} | {', '.join(mine)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--elbench",
        type=Path,
        default=Path("/tmp/elb"),
        help="ELBench's source tree (its src/ and configs/)",
    )
    parser.add_argument(
        "--elbench-python",
        default="/tmp/elbvenv/bin/python",
        help="a Python with ELBench's runtime dependencies",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared/data/elbench/benchmark_root",
    )
    parser.add_argument("--per-task", default="all", help="the first N tasks of each template")
    parser.add_argument("--quick", action="store_true", help="one task of each template")
    args = parser.parse_args()
    per_task = "1" if args.quick else str(args.per_task)
    with Recorder() as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        run_elbench(args.elbench_python, args.elbench, args.data, server.url, per_task)
        elbench = server.take()
        run_sweepbench(args.data, server.url, per_task)
        ours = server.take()
        server.shutdown()
    for line in compare(elbench, ours):
        print(line)


if __name__ == "__main__":
    main()
