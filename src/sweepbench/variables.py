"""Every ``SWEEPBENCH_*`` environment variable, declared once (issue 28 §4).

Each :class:`Variable` says its name, what it means, how its text is read, its default, and
whether it is a secret (shown as set / unset only, never its value: ``sweepbench config``).
Nothing is read at import: :meth:`Variable.value` reads the environment when it is called, so
a variable set for a child process (``SWEEPBENCH_DB``, ``SWEEPBENCH_HOME`` for Ray workers) or
by a test is seen at once. No other module reads a ``SWEEPBENCH_*`` variable itself
(``tests/test_settings_record.py`` fails on a name in the source that is not declared here).

One rule for a value that cannot be read: a number, a flag or a choice that is not one is
warned about — the variable, the value and what it must be — and its default is used (the
rule sweeps.md §8.1 set for the spend ceilings, now every variable's). A place (a folder)
that cannot be used is a UserError naming the variable instead: no default is the place
that was meant, and using another would open another store.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, TypeVar

from sweepbench.errors import UserError

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_USD = Decimal(1_000_000_000)
"""The largest amount a limit, a ceiling or a price typed by a person may be ($1,000,000,000):
far above any real budget, and small enough that every sum of such amounts stays exact in
integer micro-dollars (SQLite's 64-bit integers) and in money formatting."""


def parse_usd_amount(value: object) -> Decimal:
    """The one parser of a dollar amount a person typed (a flag, a variable, a form field):
    text (``"5"``, ``" $0.50 "``) or an exact number, finite, from 0 to :data:`MAX_USD`. A
    ``ValueError`` otherwise, whose message is the reason in a few words, for the caller to put
    after the name of the value: "not a dollar amount", "a limit is a dollar amount ≥ 0",
    "a limit is at most $1,000,000,000"."""
    if isinstance(value, bool):
        raise ValueError("not a dollar amount")
    if isinstance(value, str):
        try:
            usd = Decimal(value.strip().removeprefix("$").strip())
        except InvalidOperation:
            raise ValueError("not a dollar amount") from None
    elif isinstance(value, Decimal):
        usd = value
    elif isinstance(value, int | float):
        usd = Decimal(str(value))  # a float as it prints (0.1 → 0.1, not its binary value)
    else:
        raise ValueError("not a dollar amount")
    if not usd.is_finite() or usd < 0:
        raise ValueError("a limit is a dollar amount ≥ 0")
    if usd > MAX_USD:
        raise ValueError(f"a limit is at most ${MAX_USD:,}")
    return abs(usd)  # turns -0 into 0


def utf8_problem(text: str) -> str | None:
    """Why ``text`` cannot be kept as UTF-8, or None when it can: ``"byte 0xff at byte
    offset 3"`` for a byte the operating system could not decode (Python holds it as a lone
    surrogate, e.g. ``os.fsdecode(b"\\xff")``), ``"a lone surrogate U+D800 at byte offset 3"``
    for one that came as text. The offset is where that byte is in the UTF-8 encoding of
    what comes before it, i.e. in the bytes as given."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        offset = len(text[: exc.start].encode("utf-8"))
        code = ord(text[exc.start])
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
            return f"byte 0x{code - 0xDC00:02x} at byte offset {offset}"
        return f"a lone surrogate U+{code:04X} at byte offset {offset}"
    return None


# ------------------------------------------------------------------------------------ readers
# Each takes the variable's text (never blank) and returns its value, or raises ValueError.


def _text(text: str) -> str:
    return text


def _path(text: str) -> str:
    problem = utf8_problem(text)
    if problem is not None:
        raise ValueError(f"is not valid UTF-8 text ({problem}); give it a UTF-8 path")
    return text


def _number(minimum: float, *, whole: bool) -> Callable[[str], float]:
    def read(text: str) -> float:
        try:
            value = float(int(text.strip())) if whole else float(text.strip())
        except OverflowError:  # a whole number beyond any float
            raise ValueError from None
        if not math.isfinite(value) or value < minimum:
            raise ValueError
        return value

    return read


def _whole(minimum: int) -> Callable[[str], int]:
    number = _number(minimum, whole=True)
    return lambda text: int(number(text))


def _optional_whole(minimum: int) -> Callable[[str], int | None]:
    number = _number(minimum, whole=True)
    return lambda text: int(number(text))


_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})


def _flag(text: str) -> bool:
    word = text.strip().lower()
    if word in _YES:
        return True
    if word in _NO:
        return False
    raise ValueError


def _dollars_or_off(text: str) -> Decimal | None:
    if text.strip().lower() in {"off", "none"}:
        return None
    return parse_usd_amount(text)


def _environment(text: str) -> str:
    word = text.strip().lower()
    if word not in {"production", "development"}:
        raise ValueError
    return word


def _names(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


# ----------------------------------------------------------------------------------- the record


@dataclass(frozen=True)
class Reading(Generic[T]):
    """What one variable holds now: its value, the text it was read from (None: unset or
    blank, so the default), and why that text was not used (None: it was)."""

    variable: Variable[T]
    value: T
    text: str | None
    problem: str | None = None

    @property
    def applied(self) -> bool:
        """Whether the environment's value is the one in use (set, and readable)."""
        return self.text is not None and self.problem is None


@dataclass(frozen=True)
class Variable(Generic[T]):
    """One ``SWEEPBENCH_*`` environment variable."""

    name: str
    meaning: str
    """One line: what it sets."""
    read: Callable[[str], T]
    """Its text → its value; a ValueError when the text is not one."""
    default: T
    shown_default: str
    """The default as people read it ("10", "off", "a SQLite file in the home folder")."""
    expects: str = "text"
    """What the text must be, for the message about one that is not ("a whole number ≥ 1")."""
    secret: bool = False
    """A key or token: shown as set / unset only, never its value."""
    place: bool = False
    """A folder: one that cannot be used is a UserError, not a warning and the default."""

    def text(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The variable's text as set (not stripped), or None when it is unset or blank."""
        value = (os.environ if environ is None else environ).get(self.name)
        return value if value is not None and value.strip() else None

    def reading(self, environ: Mapping[str, str] | None = None, *, warn: bool = True) -> Reading[T]:
        """What the variable holds now (the environment, or ``environ``). A value that cannot
        be read is logged as a warning (unless ``warn`` is false) and the default used; a
        place that cannot be used is a UserError."""
        text = self.text(environ)
        if text is None:
            return Reading(self, self.default, None)
        try:
            return Reading(self, self.read(text), text)
        except ValueError as exc:
            reason = str(exc)
            if self.place:
                raise UserError(f"{self.name} {reason or 'is not ' + self.expects}") from None
            shown = "…" if self.secret else repr(text)
            problem = f"{self.name}={shown} is not {self.expects}"
            if warn:
                log.warning("%s; using the default (%s)", problem, self.shown_default)
            return Reading(self, self.default, text, problem)

    def value(self, environ: Mapping[str, str] | None = None) -> T:
        """The value in use now (see :meth:`reading`)."""
        return self.reading(environ).value

    def is_set(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether the variable is set to something not blank."""
        return self.text(environ) is not None


_DOLLARS = f"a dollar amount from 0 to {MAX_USD:,}"

# -- places
HOME: Variable[str | None] = Variable(
    "SWEEPBENCH_HOME", "The folder for the store, caches, config.toml and models.toml.",
    _path, None, "the platform's data folder for sweepbench", "a UTF-8 path", place=True,
)  # fmt: skip
CONFIG: Variable[str | None] = Variable(
    "SWEEPBENCH_CONFIG", "The config file (keys, endpoints, local models, shared leaderboard).",
    _path, None, "config.toml in the home folder", "a UTF-8 path", place=True,
)  # fmt: skip
DB: Variable[str | None] = Variable(
    "SWEEPBENCH_DB", "The store, as a SQLAlchemy URL (PostgreSQL to share it between hosts).",
    _text, None, "a SQLite file in the home folder", "a SQLAlchemy URL",
)  # fmt: skip
SHARED: Variable[str | None] = Variable(
    "SWEEPBENCH_SHARED", "The shared leaderboard: a folder or an fsspec URL.",
    _text, None, "[leaderboard] shared in config.toml, else none", "a folder or an fsspec URL",
)  # fmt: skip
# -- money
DAILY_USD: Variable[Decimal] = Variable(
    "SWEEPBENCH_DAILY_USD", "Dollars this host may spend per UTC day (every paid call).",
    parse_usd_amount, Decimal(10), "10", _DOLLARS,
)  # fmt: skip
TOTAL_USD: Variable[Decimal | None] = Variable(
    "SWEEPBENCH_TOTAL_USD", "Dollars this host may spend over the ledger's life (off: no limit).",
    _dollars_or_off, None, "off", _DOLLARS,
)  # fmt: skip
CALLS_PER_HOUR: Variable[int] = Variable(
    "SWEEPBENCH_CALLS_PER_HOUR", "Paid sweep and generate calls admitted per rolling hour.",
    _whole(0), 40, "40", "a whole number ≥ 0",
)  # fmt: skip
# -- the web app
TOKEN: Variable[str | None] = Variable(
    "SWEEPBENCH_TOKEN", "The web app's access token (needed to spend off loopback).",
    _text, None, "unset", secret=True,
)  # fmt: skip
ENV: Variable[str] = Variable(
    "SWEEPBENCH_ENV", "production: the web app is gated as if it were not on loopback.",
    _environment, "development", "development", "production or development",
)  # fmt: skip
ALLOWED_HOSTS: Variable[tuple[str, ...]] = Variable(
    "SWEEPBENCH_ALLOWED_HOSTS", "More host names the web app answers (commas or spaces).",
    _names, (), "none", "host names",
)  # fmt: skip
MAX_HOSTED_RUNS: Variable[int] = Variable(
    "SWEEPBENCH_MAX_HOSTED_RUNS", "Benchmark runs the web app runs at once on this host.",
    _whole(1), 1, "1", "a whole number ≥ 1",
)  # fmt: skip
# -- providers
COMPATIBLE_BASE_URL: Variable[str | None] = Variable(
    "SWEEPBENCH_COMPATIBLE_BASE_URL", "An OpenAI-compatible server for compatible/<model>.",
    _text, None, "none", "a URL",
)  # fmt: skip
COMPATIBLE_API_KEY: Variable[str | None] = Variable(
    "SWEEPBENCH_COMPATIBLE_API_KEY", "The key sent to that server.",
    _text, None, "unset", secret=True,
)  # fmt: skip
COMPATIBLE_FREE: Variable[bool] = Variable(
    "SWEEPBENCH_COMPATIBLE_FREE", "1: that server costs nothing though it is sent a key.",
    _flag, False, "false", "1 / true / yes / on or 0 / false / no / off",
)  # fmt: skip
OPENAI_BASE_URL: Variable[str | None] = Variable(
    "SWEEPBENCH_OPENAI_BASE_URL", "Send OpenAI's calls elsewhere (a proxy, a test server).",
    _text, None, "OpenAI's API", "a URL",
)  # fmt: skip
ANTHROPIC_BASE_URL: Variable[str | None] = Variable(
    "SWEEPBENCH_ANTHROPIC_BASE_URL", "Send Anthropic's calls elsewhere (a proxy, a test server).",
    _text, None, "Anthropic's API", "a URL",
)  # fmt: skip
OPENROUTER_BASE_URL: Variable[str | None] = Variable(
    "SWEEPBENCH_OPENROUTER_BASE_URL", "Send OpenRouter's calls elsewhere (a proxy, a test server).",
    _text, None, "OpenRouter's API", "a URL",
)  # fmt: skip
OPENROUTER_TTL: Variable[float] = Variable(
    "SWEEPBENCH_OPENROUTER_TTL", "Seconds the OpenRouter catalogue is cached.",
    _number(0, whole=False), 24 * 3600.0, "86400 (a day)", "a number ≥ 0",
)  # fmt: skip
# -- the bundled local model (llama.cpp)
LOCAL_THREADS: Variable[int | None] = Variable(
    "SWEEPBENCH_LOCAL_THREADS", "A fixed thread count for the local model.",
    _optional_whole(1), None, "chosen per call (at most 2)", "a whole number ≥ 1",
)  # fmt: skip
LOCAL_CTX: Variable[int] = Variable(
    "SWEEPBENCH_LOCAL_CTX", "The most context the local model allocates (tokens).",
    _whole(64), 4096, "4096", "a whole number ≥ 64",
)  # fmt: skip
LOCAL_SEED: Variable[int | None] = Variable(
    "SWEEPBENCH_LOCAL_SEED", "A fixed sampling seed for the local model (repeatable answers).",
    _optional_whole(0), None, "a fresh seed per call", "a whole number ≥ 0",
)  # fmt: skip
LOCAL_REPACK: Variable[bool] = Variable(
    "SWEEPBENCH_LOCAL_REPACK", "1: let llama.cpp repack weights for this CPU (AMX, AVX-512).",
    _flag, False, "false", "1 / true / yes / on or 0 / false / no / off",
)  # fmt: skip

VARIABLES: dict[str, Variable[Any]] = {
    v.name: v
    for v in (
        HOME, CONFIG, DB, SHARED, DAILY_USD, TOTAL_USD, CALLS_PER_HOUR, TOKEN, ENV,
        ALLOWED_HOSTS, MAX_HOSTED_RUNS, COMPATIBLE_BASE_URL, COMPATIBLE_API_KEY,
        COMPATIBLE_FREE, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OPENROUTER_BASE_URL,
        OPENROUTER_TTL, LOCAL_THREADS, LOCAL_CTX, LOCAL_SEED, LOCAL_REPACK,
    )
}  # fmt: skip
"""Every variable by name, in the order ``sweepbench config`` lists them."""


def base_url_variable(provider: str) -> Variable[str | None] | None:
    """The variable that sends ``provider``'s calls elsewhere (``SWEEPBENCH_<PROVIDER>_BASE_URL``),
    or None when it has none (only the declared ones count: a configured endpoint has none)."""
    found = VARIABLES.get(f"SWEEPBENCH_{provider.upper()}_BASE_URL")
    return found if found is not None and found.name.endswith("_BASE_URL") else None
