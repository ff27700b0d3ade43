"""Pulling run bundles (``leaderboard pull``): reading the bundle files of a folder, a file
or an fsspec URL, validating each and storing each new run as a bench run.

Pulling reads JSON only (nothing in a bundle is ever executed), from regular files only; a
bundle that holds anything key-shaped is refused. Each new run is stored as a bench run whose
settings say ``source = "pulled"`` and where it came from. A bundle's shape, building and
writing are :mod:`sweepbench.leaderboard.bundle`'s.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError

from sweepbench.bench.record import RunRecord, dump_record
from sweepbench.bench.storage import BenchStore
from sweepbench.bench.storage_rows import AnswerRow, RunRow
from sweepbench.errors import UserError
from sweepbench.leaderboard.bundle import (
    FORMAT,
    MAX_ANSWER_CHARS,
    SUFFIX,
    VERSION,
    RunBundle,
    file_system,
    first_error,
    is_local,
    is_url,
    key_shaped,
)
from sweepbench.leaderboard.bundle_checks import content_fingerprint, trust_problem
from sweepbench.nesting import TooDeep, bounded_json_loads
from sweepbench.safe_files import FileRefused, printable, read_regular_file
from sweepbench.settings import scrub

PULLED: Final = "pulled"
"""The ``source`` a pulled run's stored settings carry."""
MAX_BYTES: Final = 64 * 1024 * 1024
"""A bundle file larger than this is refused unread (and no more than this is ever read)."""
MAX_RUNS: Final = 100_000
"""The most stored runs a pull compares a bundle's content with."""


@dataclass
class PullResult:
    """What a pull did, file by file (names, never contents)."""

    imported: list[str] = field(default_factory=list)
    """Run ids stored."""
    present: list[str] = field(default_factory=list)
    """Run ids already in the store (skipped)."""
    skipped: list[str] = field(default_factory=list)
    """One sentence per bundle that was not imported, naming its file."""


def _sources(source: str) -> Iterator[tuple[str, bytes | str]]:
    """Each bundle file under ``source`` (a file, a folder, a URL of either) as its name and
    its bytes — or a sentence saying why it was not read. Only regular files are read, and at
    most :data:`MAX_BYTES` of each (:func:`read_regular_file`)."""
    if not is_url(source):
        yield from _folder_sources(Path(source).expanduser())
        return
    fs, root = file_system(source)
    if is_local(fs):
        yield from _folder_sources(Path(root))
        return
    protocol = source.split("://", 1)[0]
    try:
        if fs.isdir(root):
            paths = sorted(p for p in fs.ls(root, detail=False) if str(p).endswith(SUFFIX))
        elif fs.isfile(root):
            paths = [root]
        else:
            raise UserError(f"{source}: no such file or folder")
    except OSError as exc:
        raise UserError(f"{source} cannot be listed ({exc})") from None
    for p in paths:
        shown = printable(f"{protocol}://{str(p).lstrip('/')}")
        yield shown, _remote_bytes(fs, str(p), shown)


def _folder_sources(path: Path) -> Iterator[tuple[str, bytes | str]]:
    """The bundle files of a local folder, or the one file named (whatever it is: a FIFO or a
    device is refused unread, never opened for a blocking read)."""
    if path.is_dir():
        folder: Path | None = path
        files = sorted(p for p in path.iterdir() if p.name.endswith(SUFFIX))
    elif os.path.lexists(path):
        folder, files = None, [path]
    else:
        raise UserError(f"{path}: no such file or folder")
    for file in files:
        shown = printable(str(file))
        try:
            yield shown, read_regular_file(file, max_bytes=MAX_BYTES, within=folder)
        except FileRefused as exc:
            yield shown, f"{shown}: skipped, {exc.reason}"


def _remote_bytes(fs: Any, path: str, shown: str) -> bytes | str:
    """A file at a URL, at most :data:`MAX_BYTES` of it; or why it was not read."""
    try:
        info = fs.info(path)
        kind = str(info.get("type", "unknown"))
        if kind != "file" or info.get("islink"):
            found = "a link" if info.get("islink") else f"a {kind}"
            return f"{shown}: skipped, {found}, not a regular file"
        size = int(info.get("size") or 0)
        if size > MAX_BYTES:
            return f"{shown}: skipped, {size:,} bytes, more than the {MAX_BYTES:,} bytes allowed"
        with fs.open(path, "rb") as handle:  # a size it did not say is bounded by the read
            data = bytes(handle.read(MAX_BYTES + 1))
    except OSError as exc:
        return f"{shown}: skipped, it cannot be read ({exc})"
    if len(data) > MAX_BYTES:
        return f"{shown}: skipped, more than the {MAX_BYTES:,} bytes allowed"
    return data


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _long_text(data: Any) -> str | None:
    """Where the parsed JSON ``data`` holds a text (a value or a key) longer than
    :data:`MAX_ANSWER_CHARS`, and how long, as ``answers.0.answer: …``; None when none is."""
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                place = f"{where}.{key}" if where else str(key)
                if len(key) > MAX_ANSWER_CHARS:
                    return f"{where or 'the bundle'}: a key of {len(key):,} characters"
                pending.append((place, item))
        elif isinstance(value, list):
            pending.extend((f"{where}.{i}", item) for i, item in enumerate(value))
        elif isinstance(value, str) and len(value) > MAX_ANSWER_CHARS:
            return (
                f"{where}: a text of {len(value):,} characters, more than the "
                f"{MAX_ANSWER_CHARS:,} a bundle's text may hold"
            )
    return None


def parse_bundle(name: str, content: bytes) -> RunBundle | str:
    """A bundle from its file's bytes, or one sentence naming the file saying why not (never
    echoing a key it holds). JSON nested deeper than :data:`~sweepbench.nesting.MAX_DEPTH`
    is refused before it is parsed."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{name}: skipped, not UTF-8 text (byte offset {exc.start})"
    if key_shaped(text):
        return f"{name}: refused, it holds something key-shaped (a key is never imported)"
    try:
        data = bounded_json_loads(text, parse_constant=_no_constant)
    except TooDeep as exc:
        return f"{name}: skipped, not a run bundle (its JSON is {exc})"
    except ValueError as exc:
        return f"{name}: skipped, not JSON ({str(exc).split(':')[0]})"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return f"{name}: skipped, not a sweepbench run bundle (no format {FORMAT!r})"
    if data.get("version") != VERSION:
        return (
            f"{name}: skipped, bundle version {data.get('version')!r} is not one this "
            f"sweepbench reads ({VERSION}); a newer sweepbench may have written it"
        )
    too_long = _long_text(data)
    del data  # the bundle is read from the text; the parsed copy is not kept meanwhile
    if too_long is not None:
        return f"{name}: skipped, not a valid run bundle ({too_long})"
    try:
        return RunBundle.model_validate_json(text)
    except ValidationError as exc:
        return f"{name}: skipped, not a valid run bundle ({scrub(first_error(exc))})"


def pulled_hash(record: RunRecord) -> str:
    """The stored ``config_hash`` of a pulled run: derived from its settings hash, so that a
    local run with the same settings never resumes (or is refused by) a pulled one."""
    return hashlib.sha256(f"{PULLED}:{record.settings.hash}".encode()).hexdigest()


def store_bundle(bench: BenchStore, bundle: RunBundle, origin: str) -> None:
    """Store a bundle as a bench run (its record and answers) marked ``source = pulled``."""
    record = bundle.record
    judge = record.roles.get("judge")
    settings = {
        "source": PULLED,
        "pulled_from": scrub(origin),
        "pulled_at": datetime.now(UTC).isoformat(),
        "published_at": bundle.published_at.isoformat(),
        "answers_included": bundle.answers_included,
        "config": record.settings.config,
        "selection": {
            "preset": record.selection.preset, "scope": record.selection.scope,
            "areas": list(record.selection.areas), "tasks": list(record.selection.tasks),
        },
        "benchmark_name": bundle.benchmark_name or record.benchmark.name,
        "selected": record.coverage.overall.selected,
        "catalogue": [area.model_dump(mode="json") for area in bundle.catalogue],
    }  # fmt: skip
    bench.create_run(
        RunRow(
            id=record.run_id, config_hash=pulled_hash(record), benchmark=record.benchmark.id,
            model=record.roles["target"].model, judge=None if judge is None else judge.model,
            status=record.status, reason=record.reason, created_at=record.created_at,
            updated_at=record.updated_at, items=record.coverage.overall.selected,
            settings=settings,
        )
    )  # fmt: skip
    try:
        rows = [
            AnswerRow(
                key=a.key, task=a.task, dimension=a.dimension, status=a.status, answer=a.answer,
                score=a.score, passed=a.passed, error_type=a.error_type,
            )
            for a in bundle.answers
        ]  # fmt: skip
        for start in range(0, len(rows), 1000):
            bench.write(record.run_id, rows[start : start + 1000], [])
        bench.set_record(record.run_id, dump_record(record))
    except BaseException:
        bench.delete_run(record.run_id)
        raise


class _StoredContent:
    """The content fingerprints of the stored runs that share a bundle's settings (local
    runs by their settings hash, pulled ones by :func:`pulled_hash`), read when first asked."""

    def __init__(self, bench: BenchStore) -> None:
        self.bench = bench
        self._by_hash: dict[str, list[str]] | None = None
        self._prints: dict[str, str] = {}

    def same_run(self, record: RunRecord, fingerprint: str) -> str | None:
        """The stored run holding exactly this content, or None."""
        if self._by_hash is None:
            self._by_hash = {}
            for run in self.bench.runs(limit=MAX_RUNS):
                self._by_hash.setdefault(run.config_hash, []).append(run.id)
        hashes = (record.settings.hash, pulled_hash(record))
        for run_id in (r for h in hashes for r in self._by_hash.get(h, [])):
            if run_id not in self._prints:
                outcomes = self.bench.outcomes(run_id)
                self._prints[run_id] = content_fingerprint(record.settings.hash, outcomes)
            if self._prints[run_id] == fingerprint:
                return run_id
        return None

    def add(self, record: RunRecord, fingerprint: str) -> None:
        """Remember a run just stored."""
        if self._by_hash is not None:
            self._by_hash.setdefault(pulled_hash(record), []).append(record.run_id)
        self._prints[record.run_id] = fingerprint


def _pull_one(
    bench: BenchStore, name: str, content: bytes, stored: _StoredContent, result: PullResult
) -> None:
    """Import one bundle file's bytes, or say in ``result`` why not (each check in turn: the
    file, the bundle's fields, already here, its scores against its answers, the same run
    under another run id)."""
    parsed = parse_bundle(name, content)
    if isinstance(parsed, str):
        result.skipped.append(parsed)
        return
    if parsed.run_id in result.imported or bench.exists(parsed.run_id):
        result.present.append(parsed.run_id)
        return
    problem = trust_problem(parsed, now=datetime.now(UTC))
    if problem is not None:
        result.skipped.append(f"{name}: refused, {scrub(problem)}")
        return
    answers = [a.model_dump() for a in parsed.answers]
    fingerprint = content_fingerprint(parsed.record.settings.hash, answers)
    same = stored.same_run(parsed.record, fingerprint)
    if same is not None:
        result.skipped.append(
            f"{name}: skipped, run {parsed.run_id} is run {same} (already here) under another "
            "run id: the same settings and answers"
        )
        return
    try:
        store_bundle(bench, parsed, name)
    except IntegrityError:  # stored meanwhile by another pull
        result.present.append(parsed.run_id)
        return
    stored.add(parsed.record, fingerprint)
    result.imported.append(parsed.run_id)


def pull(bench: BenchStore, source: str) -> PullResult:
    """Import every bundle under ``source``: JSON only, from regular files only, each
    validated, its scores recomputed from its answers (:func:`trust_problem`), de-duplicated
    by run id and by content, and refused when key-shaped. A file that is not imported is
    skipped with its reason; the others are imported."""
    result = PullResult()
    stored = _StoredContent(bench)
    for name, content in _sources(source):
        if isinstance(content, str):
            result.skipped.append(content)
            continue
        _pull_one(bench, name, content, stored, result)
    return result


__all__ = [
    "MAX_BYTES",
    "MAX_RUNS",
    "PULLED",
    "PullResult",
    "parse_bundle",
    "pull",
    "pulled_hash",
    "store_bundle",
]
