"""Reading and writing files in places we do not control (a shared folder, a path on the
command line), so that what is there cannot hurt us.

* :func:`read_regular_file` reads a regular file only, and at most ``max_bytes`` of it: a
  symbolic link is followed only to a regular file inside the folder being read (``within``),
  and a FIFO, a device, a socket or a folder is refused without being read (a FIFO is never
  opened for a blocking read, so it cannot hang the reader). A file that grows past the bound
  while it is read is refused too: nothing reads more than ``max_bytes + 1`` bytes.
* :func:`write_file_atomically` writes a file as a whole or not at all: the bytes go to a new
  temporary file in the same folder, which is then renamed over the name. A rename replaces
  the name itself, never writing through a link that sits there (or appears there meanwhile),
  and the file that was there before stays whole until the new one is complete. An existing
  name that is not a regular file (a link, a FIFO, a device, a folder) is refused.

Both raise :class:`FileRefused`, a ``ValueError`` whose ``reason`` says what was found and
why nothing was read or written (one phrase, without the path: callers name the file).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["FileRefused", "file_kind", "printable", "read_regular_file", "write_file_atomically"]

_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
"""Open for reading without following a link at the last step, without waiting for a FIFO's
writer and without making a terminal ours."""

_KINDS: Final = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(ValueError):
    """A file that is not read or not written: ``reason`` says why (no path in it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words (``a regular file``, ``a named pipe
    (FIFO)``, ``a symbolic link``, …)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def printable(name: str) -> str:
    """A name as it may be shown on a terminal or a page: control characters (an escape
    sequence in a file name someone else chose, a newline) written as ``\\x1b``-style
    escapes; everything else as it is."""
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in name)


# ---------------------------------------------------------------- reading


def read_regular_file(path: Path, *, max_bytes: int, within: Path | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    ``within``: the folder being read; a symbolic link is then followed only when it leads to
    a regular file inside that folder. Without it (a file the user named) a link is followed
    wherever it leads, but what it leads to must still be a regular file. FileRefused for a
    link out of the folder, anything that is not a regular file, a file larger than
    ``max_bytes``, or one that cannot be opened or read (the system's reason)."""
    target = _followed(path, within)
    try:
        found = os.lstat(target)
    except OSError as exc:
        raise FileRefused(f"it cannot be read ({_words(exc)})") from None
    _check_regular(found.st_mode, found.st_size, max_bytes)
    try:
        descriptor = os.open(target, _READ_FLAGS)
    except OSError as exc:
        raise FileRefused(f"it cannot be read ({_words(exc)})") from None
    with open(descriptor, "rb", closefd=True) as handle:
        opened = os.fstat(handle.fileno())  # what was opened, not what the name said before
        _check_regular(opened.st_mode, opened.st_size, max_bytes)
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise FileRefused(f"it cannot be read ({_words(exc)})") from None
    if len(data) > max_bytes:
        raise FileRefused(f"it grew past {max_bytes:,} bytes while it was read")
    return data


def _followed(path: Path, within: Path | None) -> Path:
    """``path``, or where its symbolic link leads (a regular file inside ``within`` when
    given); FileRefused for a link out of the folder or one that leads nowhere."""
    if not path.is_symlink():
        return path
    try:
        target = Path(os.path.realpath(path, strict=True))
    except (OSError, RuntimeError):
        raise FileRefused("a symbolic link that leads nowhere (no file, or a loop)") from None
    if within is not None:
        folder = Path(os.path.realpath(within))
        if not target.is_relative_to(folder) or target == folder:
            raise FileRefused(
                f"a symbolic link to {printable(str(target))}, outside the folder (only files "
                "in it are read)"
            )
    return target


def _check_regular(mode: int, size: int, max_bytes: int) -> None:
    """FileRefused unless a regular file of at most ``max_bytes``."""
    if not stat.S_ISREG(mode):
        raise FileRefused(f"{file_kind(mode)}, not a regular file")
    if size > max_bytes:
        raise FileRefused(f"{size:,} bytes, more than the {max_bytes:,} bytes allowed")


def _words(exc: OSError) -> str:
    """An OSError's reason, without the path (callers name the file)."""
    return exc.strerror or type(exc).__name__


# ---------------------------------------------------------------- writing


def write_file_atomically(
    folder: Path, name: str, data: bytes, *, create_folder: bool = False, mode: int = 0o644
) -> Path:
    """Write ``data`` as ``folder/name`` through a temporary file renamed into place; the
    file's path. An existing regular file of that name is replaced whole (keeping its
    permissions); anything else there is refused. ``create_folder``: make the folder (and its
    parents) when missing; otherwise a missing folder is refused. FileRefused saying why when
    nothing was written (the folder is left as it was)."""
    if "/" in name or name in ("", ".", "..") or (os.sep != "/" and os.sep in name):
        raise FileRefused(f"{name!r} is not a file name")
    _ready_folder(folder, create_folder)
    target = folder / name
    keep = _existing_mode(target)
    descriptor, temporary = _temporary(folder, name)
    try:
        with open(descriptor, "wb", closefd=True) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode if keep is None else keep)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise FileRefused(f"it cannot be written ({_words(exc)})") from None
    return target


def _ready_folder(folder: Path, create: bool) -> None:
    """The folder exists (made when ``create``) and is a folder; FileRefused otherwise."""
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise FileRefused(f"{folder} is not a folder") from None
        except OSError as exc:
            raise FileRefused(f"the folder {folder} cannot be made ({_words(exc)})") from None
    if not folder.exists():
        raise FileRefused(f"the folder {folder} does not exist")
    if not folder.is_dir():
        raise FileRefused(f"{folder} is not a folder")


def _existing_mode(target: Path) -> int | None:
    """The permission bits of the regular file at ``target``; None when nothing is there;
    FileRefused when something other than a regular file is."""
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileRefused(f"it cannot be checked ({_words(exc)})") from None
    if not stat.S_ISREG(found.st_mode):
        raise FileRefused(
            f"the name is taken by {file_kind(found.st_mode)}, not a regular file, so "
            "nothing was written (remove it, or write elsewhere)"
        )
    return stat.S_IMODE(found.st_mode)


def _temporary(folder: Path, name: str) -> tuple[int, str]:
    """A new file in ``folder`` (created exclusively: never an existing name or link)."""
    try:
        return tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    except OSError as exc:
        raise FileRefused(f"it cannot be written ({_words(exc)})") from None
