"""Checks of command-line input that more than one command needs, each a UserError with one
sentence (what and where) that :func:`sweepbench.cli.app.main` shows with exit status 2.

Light on purpose: ``sweepbench --help`` imports this module, so it loads nothing below the
settings layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from sweepbench.errors import UserError
from sweepbench.settings import utf8_problem

MIN_PORT = 1
MAX_PORT = 65535


def check_prompt(prompt: str, name: str = "PROMPT") -> str:
    """``prompt`` when it holds text to send; an empty or blank one is a UserError, the same
    sentence for ``generate`` and ``sweep``."""
    if not prompt.strip():
        raise UserError(f"the {name} argument is empty: give the text to send")
    return prompt


def read_budget(raw: str) -> int:
    """An output budget (``--max-tokens``) as ``generate`` and ``sweep`` read it, by the sweep
    plan's one rule and in its words: "64000", "64,000" and "64k" are 64,000; a value that is
    no number, or one outside 1 to ``MAX_BUDGET`` tokens, is a UserError naming the value.
    (Lowering a budget to a model's own limit, with a note, is
    :func:`sweepbench.axes.cells.clamp_budget`.)"""
    from sweepbench.axes.cells import read_budget as read  # the one parser (the web's too)

    return read(raw)


def check_port(port: int, flag: str = "--port") -> int:
    """``port`` when it is a TCP port to listen on, 1–65535; a UserError naming ``flag`` and
    the value otherwise. 0 ("any free port" to the operating system) is refused too: whoever
    opens the address needs to know it beforehand, and a typo should not pick a random port."""
    if isinstance(port, bool) or not isinstance(port, int) or not MIN_PORT <= port <= MAX_PORT:
        raise UserError(f"{flag} {port}: a port is a whole number from {MIN_PORT} to {MAX_PORT}")
    return port


def bind_error(exc: OSError, host: str, port: int) -> UserError:
    """The sentence for a server that cannot listen on ``host:port`` (the port is taken, the
    host is no address of this machine or cannot be resolved, no permission): raise it from
    the ``OSError`` of the bind."""
    shown = f"[{host}]" if ":" in host else host
    reason = exc.strerror or str(exc) or type(exc).__name__
    return UserError(f"cannot listen on {shown}:{port}: {reason}; pick another --host or --port")


def shown_argument(argument: str) -> str:
    """An argument as it can be printed: bytes that are not UTF-8 as ``\\xff`` escapes."""
    return argument.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def check_arguments(arguments: Sequence[str]) -> None:
    """A UserError for the first command-line argument that is not valid UTF-8 text (the
    operating system hands undecodable bytes to Python as lone surrogates, which no prompt,
    model id, path in the store or message can hold), naming the argument, its position
    (from 1, after the program name), the option it follows and the byte's offset in it.
    For ``--option=VALUE`` the option is named and the offset is in the value."""
    previous = ""
    for number, argument in enumerate(arguments, start=1):
        if utf8_problem(argument) is not None:
            flag, sep, value = argument.partition("=")
            if sep and flag.startswith("--") and utf8_problem(flag) is None:
                where = f"the value of {flag} (command-line argument {number})"
            else:
                value = argument
                after = f", after {previous}" if previous.startswith("-") else ""
                where = f"command-line argument {number}{after}"
            shown = shown_argument(value)
            if len(shown) > 60:
                shown = shown[:59] + "…"
            raise UserError(f'{where}, "{shown}", is not valid UTF-8 text: {utf8_problem(value)}')
        previous = argument
