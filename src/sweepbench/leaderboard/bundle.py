"""Run bundles (issue 15, item 8): one stored run as a self-contained, versioned, scrubbed JSON
file ``<run_id>.sweepbench.json`` — its shape, its building and its writing, which
``leaderboard publish`` does to a folder or any fsspec URL (``leaderboard pull`` reads bundles
back: :mod:`sweepbench.leaderboard.bundle_pull`).

A bundle holds the run's :class:`RunRecord`, its answers (key, task, skill, status, score,
passed, the answer text — left out with ``--no-answers`` — and the error type), the per-task
scores and the run's task catalogue. Every text passes the scrubber; a bundle that still holds
anything key-shaped is never written.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sweepbench.bench.record import RunRecord, ScoreRecord, UtcTime, config_hash
from sweepbench.bench.report import hosts_described
from sweepbench.bench.storage import BenchStore
from sweepbench.errors import UserError
from sweepbench.leaderboard.bundle_checks import trust_problem
from sweepbench.safe_files import FileRefused, write_file_atomically
from sweepbench.settings import REDACTED, scrub, secret_values

FORMAT: Final = "sweepbench-run-bundle"
VERSION: Final = 1
SUFFIX: Final = ".sweepbench.json"
MAX_ANSWER_CHARS: Final = 1024 * 1024
"""The longest text a bundle may hold (an answer text included: far beyond any model's
longest output); a longer one is refused before the bundle is validated."""

_PACKAGES: Final = {
    "s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
    "abfss": "adlfs", "hf": "huggingface_hub", "sftp": "paramiko", "ssh": "paramiko",
}  # fmt: skip


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class BundleAnswer(_Part):
    """One item's outcome as shared."""

    key: str = Field(min_length=1, max_length=500)
    task: str = Field(min_length=1, max_length=120)
    dimension: str = Field(max_length=200)
    status: Literal["scored", "failed"]
    score: float | None = Field(default=None, allow_inf_nan=False)
    passed: bool | None = None
    answer: str | None = Field(default=None, max_length=MAX_ANSWER_CHARS)
    """The answer text, scrubbed; None when the bundle leaves answer texts out."""
    error_type: str | None = Field(default=None, max_length=60)


class BundleTask(_Part):
    """One task of a run's catalogue: what its scores are made of."""

    id: str = Field(min_length=1, max_length=120)
    name: str = Field(max_length=500)
    grading: Literal["auto", "judge", "runtime"]
    scorer: str = Field(max_length=120)
    score_by: Literal["pass_rate", "mean_score"]
    scale: int | float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """The top of the task's raw score scale; None = 1."""
    region_specific: bool = False


class BundleArea(_Part):
    """One area of a run's catalogue, with its tasks in order."""

    key: str = Field(min_length=1, max_length=120)
    label: str = Field(max_length=500)
    tasks: list[BundleTask]


class RunBundle(_Part):
    """A published run: its record, answers and per-task scores."""

    format: Literal["sweepbench-run-bundle"]
    version: Literal[1]
    run_id: str = Field(min_length=1, max_length=120)
    published_at: UtcTime
    answers_included: bool
    """False when published with ``--no-answers`` (every ``answer`` is None)."""
    record: RunRecord
    answers: list[BundleAnswer]
    tasks: dict[str, ScoreRecord]
    """The per-task scores (0–100), as in the record."""
    benchmark_name: str = ""
    catalogue: list[BundleArea] = Field(default_factory=list)
    """The run's areas and tasks as stored with it: what its scores are recomputed with, and
    what lets ``bench show`` read a pulled run."""
    hosts: dict[str, Annotated[str, Field(max_length=500)]] = Field(
        default_factory=dict, max_length=8
    )
    """Which OpenRouter host answered each routed role, in words (the precision itself is in
    the record's hashed settings)."""

    @model_validator(mode="after")
    def _consistent(self) -> RunBundle:
        if self.run_id != self.record.run_id:
            raise ValueError(f"run_id {self.run_id!r} is not the record's {self.record.run_id!r}")
        if self.tasks != self.record.scores.tasks:
            raise ValueError("tasks are not the record's per-task scores")
        keys = [a.key for a in self.answers]
        if len(set(keys)) != len(keys):
            raise ValueError("answers: a key is listed twice")
        if not self.answers_included and any(a.answer is not None for a in self.answers):
            raise ValueError("answers_included is false but answer texts are present")
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.run_id):
            raise ValueError("run_id may hold only letters, digits, '.', '_' and '-'")
        if len(self.record.benchmark.id) > 120:
            raise ValueError("record.benchmark.id is longer than 120 characters")
        if any(len(r.model) > 300 for r in self.record.roles.values()):
            raise ValueError("record.roles: a model id is longer than 300 characters")
        return self


# ---------------------------------------------------------------- key shapes

_KEY_SHAPES: Final = re.compile(
    r"\bsk-[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic (sk-ant-…), OpenRouter (sk-or-v1-…)
    r"|\bhf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\bBearer\s+[A-Za-z0-9._~+/=-]{20,}"
)


_KEY_STARTS: Final = (
    "sk-", "hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "AKIA", "AIza",
    "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "Bearer",
)  # fmt: skip
"""How every shape of :data:`_KEY_SHAPES` begins: text holding none of them is not scanned
(a plain substring search is many times faster than the pattern over a large bundle)."""


def key_shaped(text: str, secrets: list[str] | None = None) -> bool:
    """True when ``text`` holds a key: one this process knows (:func:`secret_values`) or one
    shaped like a provider's key (``sk-…``, ``hf_…``, ``ghp_…``, ``AKIA…``, ``Bearer …``);
    placeholders (``sk-xxxx…``) are not keys."""
    from sweepbench.bench.sources.elbench_prompts import is_placeholder_key

    known = secret_values() if secrets is None else secrets
    if any(s in text for s in known):
        return True
    if not any(start in text for start in _KEY_STARTS):
        return False
    return any(not is_placeholder_key(m.group(0)) for m in _KEY_SHAPES.finditer(text))


def _scrubbed(value: Any, secrets: list[str]) -> Any:
    """Every string of a JSON value (map keys too) through the scrubber."""
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {scrub(str(k), secrets): _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value


# ---------------------------------------------------------------- building


def first_error(exc: ValidationError) -> str:
    """The first of a validation's errors as one line: ``where: what``."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    text = "required but missing" if error["type"] == "missing" else str(error["msg"])
    text = text.removeprefix("Value error, ")
    return f"{where}: {text}" if where else text


def build_bundle(
    bench: BenchStore, run_id: str, *, answers: bool = True, now: datetime | None = None
) -> RunBundle:
    """The scrubbed bundle of a stored run. UserError for an unknown run, one with no record
    yet, one that still holds something key-shaped after scrubbing (never named), or one
    whose record a pull would refuse (:func:`trust_problem`: still running, or scores that
    are not its answers')."""
    from sweepbench.bench.record import load_record

    row = bench.run(run_id)
    if row is None:
        raise UserError(f"no benchmark run {run_id!r} (see sweepbench bench runs)")
    if row.record is None:
        raise UserError(f"run {row.id} has no record yet (its first session has not ended)")
    record = load_record(row.record, where=f"run {row.id}'s record")
    shared = [
        {
            "key": a["key"], "task": a["task"], "dimension": a["dimension"],
            "status": a["status"], "score": a["score"],
            "passed": None if a["passed"] is None else bool(a["passed"]),
            "answer": a["answer"] if answers else None, "error_type": a["error_type"],
        }
        for a in bench.answers(row.id)
    ]  # fmt: skip
    published = now or datetime.now(UTC)
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "run_id": record.run_id,
        "published_at": published.isoformat(),
        "answers_included": answers,
        "record": record.model_dump(mode="json"),
        "answers": shared,
        "tasks": {k: v.model_dump(mode="json") for k, v in record.scores.tasks.items()},
        "benchmark_name": str(row.settings.get("benchmark_name", record.benchmark.name)),
        "catalogue": list(row.settings.get("catalogue", [])),
        "hosts": hosts_described(row.settings),
    }
    secrets = secret_values()
    data = _scrubbed(data, secrets)
    for part in (data, data["record"]):  # a key in the model id was in the run id's slug
        part["run_id"] = part["run_id"].replace(REDACTED, "redacted")
    settings = data["record"]["settings"]
    if settings["hash"] != config_hash(settings["config"]):  # a key was in the config
        settings["hash"] = config_hash(settings["config"])
    try:
        bundle = RunBundle.model_validate_json(json.dumps(data, ensure_ascii=False))
    except ValidationError as exc:
        raise UserError(f"the run cannot be bundled ({scrub(first_error(exc))})") from None
    if key_shaped(bundle_text(bundle), secrets):  # the run id may hold it: never named
        bare = bundle.model_copy(update={"answers": []})
        where = (
            "its answer texts (try --no-answers)"
            if answers and not key_shaped(bundle_text(bare), secrets)
            else "its record (model id or settings)"
        )
        raise UserError(
            f"the run still holds something key-shaped after scrubbing, in {where}, so no "
            "bundle is written"
        )
    problem = trust_problem(bundle, now=published)
    if problem is not None:
        raise UserError(
            f"run {row.id} is not shared, since a pull would refuse its bundle: {scrub(problem)}"
        )
    return bundle


def bundle_text(bundle: RunBundle) -> str:
    """A bundle as its file's JSON text."""
    return bundle.model_dump_json(indent=2) + "\n"


def bundle_name(run_id: str) -> str:
    """The file name of a run's bundle."""
    return f"{run_id}{SUFFIX}"


@dataclass(frozen=True)
class Summary:
    """What a publish shares, for the confirmation."""

    run_id: str
    model: str
    judge: str | None
    answers: int
    scored: int
    failed: int
    tasks: int
    answers_included: bool
    destination: str

    def lines(self) -> list[str]:
        texts = "included (scrubbed)" if self.answers_included else "left out (--no-answers)"
        return [
            f"Run:          {self.run_id}",
            f"Model:        {self.model}",
            f"Judge:        {self.judge or 'none'}",
            f"Answers:      {self.answers:,} ({self.scored:,} scored, {self.failed:,} failed)",
            f"Task scores:  {self.tasks:,}",
            f"Answer texts: {texts}",
            f"Destination:  {self.destination}",
        ]


def summary(bundle: RunBundle, destination: str) -> Summary:
    """What ``bundle`` shares, written to ``destination`` (a file path or URL)."""
    judge = bundle.record.roles.get("judge")
    return Summary(
        run_id=bundle.run_id,
        model=bundle.record.roles["target"].model,
        judge=None if judge is None else judge.model,
        answers=len(bundle.answers),
        scored=sum(1 for a in bundle.answers if a.status == "scored"),
        failed=sum(1 for a in bundle.answers if a.status == "failed"),
        tasks=len(bundle.tasks),
        answers_included=bundle.answers_included,
        destination=destination,
    )


# ---------------------------------------------------------------- file systems


def is_url(location: str) -> bool:
    """True for ``protocol://…`` (``file://`` included); False for a plain path."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", location) is not None


def file_system(url: str) -> tuple[Any, str]:
    """The fsspec file system of ``url`` (an ``AbstractFileSystem``; fsspec has no type hints)
    and the path within it. UserError (one sentence naming the package to install) when fsspec
    or the protocol's package is missing."""
    protocol = url.split("://", 1)[0].lower()
    try:
        import fsspec  # type: ignore[import-untyped]
    except ImportError:
        raise UserError(
            f"{protocol}:// locations need the fsspec package (pip install 'sweepbench[publish]')"
        ) from None
    try:
        fs, path = fsspec.core.url_to_fs(url)
        return fs, str(path)
    except ImportError:
        package = _PACKAGES.get(protocol, f"the fsspec package for {protocol}://")
        raise UserError(
            f"{protocol}:// locations need the {package} package (pip install {package})"
        ) from None
    except ValueError:
        known = _PACKAGES.get(protocol)
        install = f"install {known}" if known else "install the package that provides it"
        raise UserError(f"{protocol}:// is not a file system fsspec knows; {install}") from None


def write_bundle(bundle: RunBundle, destination: str) -> str:
    """Write ``bundle`` under ``destination`` (a folder or an fsspec URL), whole or not at
    all; its file's path. A folder's file is written to a temporary file and renamed into
    place (never through a link); an existing name that is not a regular file (a link, a
    FIFO, a folder) is refused, here and at a URL (``file://`` is a folder). UserError saying
    where and why when nothing was written."""
    text = bundle_text(bundle)
    if key_shaped(text):  # never written with a key, whatever built it
        raise UserError("the run's bundle holds something key-shaped, so it is not written")
    name = bundle_name(bundle.run_id)
    data = text.encode("utf-8")
    if not is_url(destination):
        return str(_write_in_folder(Path(destination).expanduser(), name, data))
    fs, root = file_system(destination)
    shown = f"{destination.rstrip('/')}/{name}"
    if is_local(fs):
        _write_in_folder(Path(root), name, data, shown=shown)
        return shown
    path = f"{root.rstrip('/')}/{name}"
    _check_remote_name(fs, path, shown)
    try:
        with contextlib.suppress(NotImplementedError, OSError):
            fs.makedirs(root, exist_ok=True)  # object stores and the Hub have no folders
        fs.pipe_file(path, data)
    except OSError as exc:
        raise UserError(f"{shown}: not published, it cannot be written ({exc})") from None
    return shown


def _write_in_folder(folder: Path, name: str, data: bytes, *, shown: str = "") -> Path:
    """:func:`write_file_atomically` into ``folder`` (made when missing), as a UserError."""
    try:
        return write_file_atomically(folder, name, data, create_folder=True)
    except FileRefused as exc:
        raise UserError(f"{shown or folder / name}: not published, {exc.reason}") from None


def is_local(fs: Any) -> bool:
    """True for fsspec's local file system (``file://``): read and written as a folder."""
    from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

    return isinstance(fs, LocalFileSystem)


def _check_remote_name(fs: Any, path: str, shown: str) -> None:
    """UserError when ``path`` exists at the URL and is not a regular file (a folder, a
    link): the rule a folder's bundle follows, as far as the file system says."""
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"{shown}: not published, it cannot be checked ({exc})") from None
    kind = str(info.get("type", "unknown"))
    if kind != "file" or info.get("islink"):
        found = "a link" if info.get("islink") else f"a {kind}"
        raise UserError(
            f"{shown}: not published, the name is taken by {found}, not a regular file, so "
            "nothing was written (remove it, or write elsewhere)"
        )


__all__ = [
    "FORMAT",
    "MAX_ANSWER_CHARS",
    "REDACTED",
    "SUFFIX",
    "VERSION",
    "BundleAnswer",
    "BundleArea",
    "BundleTask",
    "RunBundle",
    "build_bundle",
    "bundle_name",
    "bundle_text",
    "first_error",
    "is_local",
    "key_shaped",
    "summary",
    "write_bundle",
]
