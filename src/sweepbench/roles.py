"""The shared vocabulary of roles: who a model call is made for.

One set of names is used by the store (``calls.role``), the spend ledger (a reservation's role
and the per-role limit scopes), benchmark plans and limits, the CLI (``--limit ROLE=USD``) and the
web app. A benchmark binds each of its roles to a model (the model under test, its judge, a
simulated student); sweeps and single generations are *interactive* calls.
"""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["target", "judge", "student", "sweep", "generate"]
"""``target`` (the model under test), ``judge`` (grades answers), ``student`` (a simulated
student in teaching dialogues), ``sweep`` (a sweep cell), ``generate`` (one generation)."""

ROLES: tuple[Role, ...] = get_args(Role)
BENCH_ROLES: tuple[Role, ...] = ("target", "judge", "student")
"""The roles a benchmark run binds to models; each may have its own spending limit."""
INTERACTIVE_ROLES: frozenset[Role] = frozenset({"sweep", "generate"})
"""Calls a person is waiting for; only these count against the host's rolling call window."""

LABELS: dict[Role, str] = {
    "target": "model under test",
    "judge": "judge",
    "student": "simulated student",
    "sweep": "sweep",
    "generate": "generation",
}
"""How each role is named to a person."""


def parse_role(text: str, *, allowed: tuple[Role, ...] = ROLES) -> Role:
    """A role from its name (case and surrounding space ignored); ValueError naming the
    allowed roles otherwise."""
    name = text.strip().lower()
    for role in allowed:
        if role == name:
            return role
    raise ValueError(f"unknown role {text!r}: use one of {', '.join(allowed)}")


def label(role: str) -> str:
    """A role's name for a person (the role itself when unknown)."""
    for known, text in LABELS.items():
        if known == role:
            return text
    return role


def role_word(role: str) -> str:
    """A role's name for a person, capitalised ("Model under test", "Judge")."""
    word = label(role)
    return word[:1].upper() + word[1:]
