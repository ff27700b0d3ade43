"""Scoring versions: which reading rules the rule scorers apply.

``replicated`` (the default of every run) reads answers as the original ELBench code does, so
scores are comparable with the published ones, misreadings included. ``corrected`` fixes the
misreadings that can be justified (letters next to Chinese characters, prose read as a letter,
the omni ``FINAL ANSWER`` prefix, the math extraction, number words, units and brackets). The
version is part of a run's settings hash, so runs scored differently never share a hash nor a
ranking.

Scorers read the rules in force with :func:`active_rules`; :func:`using_rules` sets them for the
duration of one scoring call (a context variable, so threads and tasks do not interfere). Outside
any :func:`using_rules` block the corrected rules apply (the scorers' plain behaviour).
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Final, Literal, get_args

from sweepbench.errors import UserError

ScoringVersion = Literal["replicated", "corrected"]
"""The scoring versions a run may use."""
SCORING_VERSIONS: Final[tuple[ScoringVersion, ...]] = get_args(ScoringVersion)
DEFAULT_SCORING_VERSION: Final[ScoringVersion] = "replicated"
"""The version a run uses unless told otherwise (ELBench's own rules, for comparability)."""


@dataclass(frozen=True)
class ScoringRules:
    """The reading rules of one scoring version (True = ELBench's way)."""

    version: ScoringVersion
    unicode_letter_bounds: bool
    """SATAs: the reply is upper-cased and letters need Unicode word boundaries (a letter
    touching a Chinese character is lost; every ``a``, the article too, counts). Otherwise
    capitals count next to Chinese text, and lower-case letters only in a list, in brackets
    or alone (the article "a" does not)."""
    loose_prose_letter: bool
    """Choice, loose form: any letter case and any word after a space (``ANSWER: I think…``
    reads I, ``ANSWER: B or C`` reads B)."""
    ascii_letters_only: bool
    """Choice: full-width letters (``Ｄ``) and a prefix without its space (``FinalAnswer``)
    are not read."""
    omni_final_answer_prefix: bool
    """omni: ``FINAL ANSWER`` is read as a prefix (ELBench's format check accepts it, its scorer
    does not, so False there)."""
    any_case_letter_runs: bool
    """omni: letters of either case may run together (``bad`` reads B, A, D), so a bare ``a``
    is A. Otherwise lower-case letters must stand alone or be separated (``a``, ``a,c``)."""
    elbench_math: bool
    """MATH/AIME are read by ELBench's own rules, step by step (:mod:`.elbench_math`: no
    ``\\fbox``, case-exact markers, ``word2number``'s number words, ``and`` deleted, prose
    parsed as a product, PRM800K's unit words for AIME…); otherwise by :mod:`.mathanswer`'s."""


REPLICATED: Final = ScoringRules(
    version="replicated",
    unicode_letter_bounds=True,
    loose_prose_letter=True,
    ascii_letters_only=True,
    omni_final_answer_prefix=False,
    any_case_letter_runs=True,
    elbench_math=True,
)
CORRECTED: Final = ScoringRules(
    version="corrected",
    unicode_letter_bounds=False,
    loose_prose_letter=False,
    ascii_letters_only=False,
    omni_final_answer_prefix=True,
    any_case_letter_runs=False,
    elbench_math=False,
)
_BY_VERSION: Final[dict[str, ScoringRules]] = {r.version: r for r in (REPLICATED, CORRECTED)}
_ACTIVE: ContextVar[ScoringRules] = ContextVar("sweepbench_scoring_rules", default=CORRECTED)


def rules_for(version: str) -> ScoringRules:
    """The rules of ``version`` (UserError naming the known versions otherwise)."""
    rules = _BY_VERSION.get(version.strip().lower())
    if rules is None:
        known = ", ".join(SCORING_VERSIONS)
        raise UserError(f"unknown scoring version {version!r}; choose {known}")
    return rules


def active_rules() -> ScoringRules:
    """The rules in force for the current scoring call."""
    return _ACTIVE.get()


class using_rules:
    """Score by ``version`` inside the block (a class, not a generator: it is entered once
    per scored answer, and ``contextlib``'s machinery cost more calls than the scoring)."""

    __slots__ = ("_token", "rules")

    def __init__(self, version: str | ScoringRules) -> None:
        self.rules = version if isinstance(version, ScoringRules) else rules_for(version)
        self._token: Token[ScoringRules] | None = None

    def __enter__(self) -> ScoringRules:
        self._token = _ACTIVE.set(self.rules)
        return self.rules

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
