"""What the pages offer. Which models, computed when the page is viewed (spec sweeps.md §14):
the catalogue, configured local files and endpoints, each marked usable now or not (and why).
Which benchmarks (:class:`BenchmarkOffer`): the one rule of what a visitor may run, used by
every page that loads a benchmark from what a visitor typed."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sweepbench.errors import UserError
from sweepbench.models.catalog import ModelInfo
from sweepbench.models.providers import default_models, free, keyed, provider
from sweepbench.models.registry import listed_models, provider_status
from sweepbench.settings import scrub, utf8_problem

if TYPE_CHECKING:
    from sweepbench.bench.items import Benchmark
    from sweepbench.bench.request import BenchRequest


@dataclass(frozen=True)
class Offer:
    """A model as the pickers show it."""

    id: str
    label: str
    provider: str
    available: bool

    def option(self) -> dict[str, str]:
        """A Mantine select option; unusable models stay listed, marked "(no key)"."""
        mark = "" if self.available else " (no key)"
        return {"value": self.id, "label": f"{self.label}{mark}"}


def offered_models() -> list[Offer]:
    """Every model the pickers list, usable ones first (catalogue order within each group).
    A catalogue too long to list (OpenRouter's) is left to typed ids unless a key is set."""
    status: dict[str, bool] = {}
    offers: list[Offer] = []
    for info in listed_models():
        if info.provider not in status:
            status[info.provider] = provider_status(info.provider).available
        if not status[info.provider] and not provider(info.provider).listed_without_key:
            continue
        offers.append(_offer(info, status[info.provider]))
    unique = list({o.id: o for o in offers}.values())
    return [o for o in unique if o.available] + [o for o in unique if not o.available]


def _offer(info: ModelInfo, available: bool) -> Offer:
    label = info.label or info.id
    if info.label and info.label != info.id:
        label = f"{info.label} · {info.id}"
    return Offer(info.id, label, info.provider, available)


def has_provider_key() -> bool:
    """Any paid provider usable (decides the keyless notice and the spending warning)."""
    return any(provider_status(p.name).available for p in keyed())


def situation(offers: list[Offer]) -> str:
    """One line under the pickers saying what can run here (spec §14). The providers with a
    default model (Claude, then OpenAI) are named first; other keyed ones only without them."""
    usable = {o.provider for o in offers if o.available}
    counts = {p: sum(1 for o in offers if o.available and o.provider == p) for p in usable}
    gratis = [p.label for p in free() if p.name in usable]
    free_text = f"; {' and '.join(gratis)} models run free" if gratis else ""
    paid = [p for p in keyed() if p.name in usable]
    if not paid:
        return f"No provider keys: paid models are listed but cannot run{free_text}."
    leading = [provider(name) for name, _ in default_models()]
    shown = [p for p in leading if p.name in usable]
    if not shown:
        return f"{' and '.join(p.label for p in paid)} models{free_text}."
    text = f"{shown[0].label} models"
    text += "".join(f", plus {counts[p.name]} {p.label} models" for p in shown[1:])
    missing = [p for p in leading if p.name not in usable]
    if missing:
        text += f" only (no {' or '.join(p.key_owner for p in missing)} key)"
    return f"{text}{free_text}."


# -- benchmarks --------------------------------------------------------------------------------


def shipped_benchmarks() -> tuple[str, ...]:
    """The benchmarks shipped inside sweepbench (the sources that need no data): every server
    offers them."""
    from sweepbench.bench.sources.registry import sources

    return tuple(s.name for s in sources() if not s.needs_data)


def _known() -> list[str]:
    from sweepbench.bench.sources.registry import names

    return names()


def needs_data(name: str) -> bool:
    """Whether ``name`` is a known benchmark whose data the user gives (ELBench)."""
    from sweepbench.bench.sources.registry import find

    found = find(name)
    return found is not None and found.needs_data


DECLARATION_SUFFIXES = (".yaml", ".yml")
"""The declarations the web reads (YAML; JSON is YAML, so a JSON declaration saved under one
of these names reads too). A Python declaration is code: the web never loads one."""
MAX_DECLARATION_BYTES = 1_000_000
"""A declaration larger than this is refused before it is read."""
MAX_DATA_ENTRIES = 10_000
"""An ELBench data folder holding more files and folders than this is refused unread."""
MAX_LISTED = 200
"""At most this many declarations are suggested in the pickers."""
FOLDER_HINT = (
    "the operator adds one with `sweepbench serve --benchmarks-folder DIR` or "
    '`folders = ["DIR"]` under [benchmarks] in config.toml'
)


@dataclass(frozen=True)
class BenchmarkOffer:
    """What a visitor of the web app may run (one rule, for every page): the built-in
    benchmarks, ELBench from a data folder inside one of the operator's benchmark folders,
    and YAML declarations inside one of them — read as data: a typed path is looked up in
    those folders (an absolute one must lead into one), symlinks are resolved and must stay
    inside, a declaration must be a regular file of at most :data:`MAX_DECLARATION_BYTES`
    (its YAML is read under :mod:`~sweepbench.bench.sources.yaml_guard`'s nesting and alias
    rules, its data only from its own folder), an ELBench folder may hold no device, FIFO or
    link leading out. A Python declaration is never loaded, whatever its path. Nothing a
    visitor sends can allow data outside a declaration's folder."""

    folders: tuple[Path, ...] = ()
    """The operator's benchmark folders, resolved."""

    @classmethod
    def for_folders(cls, folders: Iterable[Path | str]) -> BenchmarkOffer:
        """The offer of these folders (UserError naming one that is not a folder)."""
        resolved: list[Path] = []
        for given in folders:
            folder = Path(given).expanduser()
            try:
                real = folder.resolve(strict=True)
            except (OSError, RuntimeError) as exc:
                raise UserError(
                    f"benchmarks folder {folder}: cannot be read ({_reason(exc)})"
                ) from None
            if not real.is_dir():
                raise UserError(f"benchmarks folder {folder}: not a folder")
            if real not in resolved:
                resolved.append(real)
        return cls(tuple(resolved))

    def note(self) -> str:
        """What the declaration field accepts on this server (for the pages)."""
        if not self.folders:
            return (
                "This server offers no benchmark folders, so only the built-in benchmarks run "
                f"here ({FOLDER_HINT})."
            )
        return (
            "A YAML declaration (.yaml) in this server's benchmark folders, by its name there; "
            "Python declarations run only from the command line."
        )

    def declarations(self) -> list[str]:
        """The YAML declarations in the folders, as a visitor types them (their path inside
        their folder), for the pickers; at most :data:`MAX_LISTED`."""
        found: list[str] = []
        for folder in self.folders:
            for path in _yaml_files(folder):
                name = path.relative_to(folder).as_posix()
                if name not in found:
                    found.append(name)
                if len(found) >= MAX_LISTED:
                    return found
        return found

    def checked(self, request: BenchRequest) -> BenchRequest:
        """``request`` as the web may run it: its benchmark and data resolved inside the
        operator's folders (absolute paths), data outside a declaration's folder never
        allowed. UserError saying what was refused and why."""
        name = request.benchmark.strip()
        update: dict[str, object] = {"allow_data_outside": False, "data": None}
        if name.lower() in shipped_benchmarks():
            update["benchmark"] = name.lower()
        elif needs_data(name):
            update["benchmark"] = name.lower()
            update["data"] = self._data_folder(request.data)
        else:
            update["benchmark"] = str(self._declaration(name))
        return request.model_copy(update=update)

    def load(self, request: BenchRequest) -> tuple[BenchRequest, Benchmark]:
        """The checked request (:meth:`checked`) and its benchmark, loaded (UserError or
        DataError when it is refused or cannot be loaded)."""
        from sweepbench.bench.start import load

        allowed = self.checked(request)
        try:
            return allowed, load(allowed)
        except OSError as exc:  # a file that went away or cannot be read since the check
            raise UserError(f"the benchmark cannot be read ({_reason(exc)})") from None

    # -- the rules -----------------------------------------------------------------------------

    def _declaration(self, text: str) -> Path:
        """The declaration a visitor typed: a YAML file inside the folders (its real path)."""
        shown = _shown(text)
        if not text:
            raise UserError("Give the name of a benchmark declaration (.yaml).")
        if Path(text).suffix.lower() == ".py":
            raise UserError(_python_refusal(shown))
        if Path(text).suffix.lower() not in DECLARATION_SUFFIXES:
            raise UserError(
                f"unknown benchmark {shown}: use one of {', '.join(_known())}, "
                "or a YAML declaration (.yaml) in this server's benchmark folders"
            )
        real, _folder = self._inside(text, "the declaration")
        if real.suffix.lower() == ".py":  # a .yaml name that is a link to Python code
            raise UserError(_python_refusal(shown))
        info = _stat(real, shown)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{shown}: not a regular file (a folder, a device or a FIFO)")
        if info.st_size > MAX_DECLARATION_BYTES:
            raise UserError(
                f"{shown}: {info.st_size:,} bytes; a declaration read by the web app is at "
                f"most {MAX_DECLARATION_BYTES:,} bytes"
            )
        return real

    def _data_folder(self, data: Path | None) -> Path:
        """ELBench's data folder as a visitor typed it: a folder inside the folders, every
        file and folder under it a plain one (no device, no FIFO, no link leading out)."""
        text = "" if data is None else str(data).strip()
        if not text:
            raise UserError(
                "ELBench's data is not shipped with sweepbench: give its data folder, inside "
                "this server's benchmark folders"
            )
        real, folder = self._inside(text, "ELBench's data folder")
        if not real.is_dir():
            raise UserError(f"ELBench's data folder {_shown(text)}: not a folder")
        _check_tree(real, folder, _shown(text))
        return real

    def _inside(self, text: str, what: str) -> tuple[Path, Path]:
        """The real path of ``text`` (typed by a visitor) and the operator folder holding it:
        a relative path is looked up in each folder in turn, an absolute one must lead into
        one; symlinks are resolved first. UserError otherwise (never saying what lies outside
        the folders, nor whether it exists)."""
        shown = _shown(text)
        if "\x00" in text or utf8_problem(text) is not None:
            raise UserError(f"{what} {shown}: not a path")
        if not self.folders:
            raise UserError(
                f"{what} {shown}: this server offers no benchmark folders, so only the "
                f"built-in benchmarks ({', '.join(shipped_benchmarks())}) run here; "
                f"{FOLDER_HINT}"
            )
        typed = Path(text)
        candidates = [typed] if typed.is_absolute() else [f / typed for f in self.folders]
        led_out = False
        for candidate in candidates:
            try:
                real = candidate.resolve()
            except (OSError, RuntimeError):  # a symlink loop
                continue
            folder = next((f for f in self.folders if real.is_relative_to(f)), None)
            if folder is None:  # outside every folder (as typed, or through .. or a link)
                led_out = True
                continue
            if real.exists():
                return real, folder
        if led_out:
            raise UserError(
                f"{what} {shown}: refused: it is outside this server's benchmark folders (the "
                "web app reads benchmarks only from the folders its operator configured)"
            )
        raise UserError(f"{what} {shown}: not found in this server's benchmark folders")


def _shown(text: str) -> str:
    """A visitor's path as messages quote it (scrubbed, cut short)."""
    cut = text if len(text) <= 200 else text[:200] + "…"
    return repr(scrub(cut))


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)


def _python_refusal(shown: str) -> str:
    return (
        f"{shown} is a Python declaration: the web app never runs one (it is code, and would "
        "run on the server); run it with `sweepbench bench run` on the command line, or "
        "declare the benchmark in YAML"
    )


def _stat(path: Path, shown: str) -> os.stat_result:
    try:
        return path.stat()
    except OSError as exc:
        raise UserError(f"{shown}: cannot be read ({_reason(exc)})") from None


def _check_tree(root: Path, folder: Path, shown: str) -> None:
    """Every entry under ``root`` is a plain file or folder and, links resolved, inside
    ``folder``; at most :data:`MAX_DATA_ENTRIES` of them (UserError naming the first that is
    not, by its path under ``root``)."""
    count = 0
    for place, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            count += 1
            if count > MAX_DATA_ENTRIES:
                raise UserError(
                    f"{shown}: more than {MAX_DATA_ENTRIES:,} files and folders; give the "
                    "ELBench data folder itself"
                )
            entry = Path(place) / name
            where = f"{shown}: {entry.relative_to(root).as_posix()}"
            try:
                real = entry.resolve(strict=True)
            except (OSError, RuntimeError):
                raise UserError(f"{where}: a link that leads nowhere") from None
            if not real.is_relative_to(folder):
                raise UserError(f"{where}: refused: a link leading outside the benchmark folders")
            mode = _stat(real, where).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise UserError(f"{where}: refused: not a plain file (a device, FIFO or socket)")


def _yaml_files(folder: Path) -> Iterator[Path]:
    """The YAML files under ``folder`` (links leading out and special files left out), the
    walk bounded by :data:`MAX_DATA_ENTRIES` entries."""
    seen = 0
    for place, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if seen > MAX_DATA_ENTRIES:
                return
            path = Path(place) / name
            if path.suffix.lower() not in DECLARATION_SUFFIXES:
                continue
            try:
                real = path.resolve(strict=True)
                if real.is_relative_to(folder) and stat.S_ISREG(real.stat().st_mode):
                    yield path
            except (OSError, RuntimeError):
                continue
