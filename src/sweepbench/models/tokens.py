"""The one place prompt tokens are counted before a call: a *typical* figure for estimates and
an *upper bound* for holding money.

Typical: about four characters a token plus 200 for the message framing (the spec's rule,
provider-independent). Upper bound: every tokenizer our providers use is byte-level (BPE with
byte fallback), so a token covers at least one UTF-8 byte; a prompt can therefore never be more
tokens than its UTF-8 bytes, plus the chat template's framing. A reservation at this bound can be
exceeded by no prompt, whatever its language or spacing (2,000 one-letter words, CJK text).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class HasContent(Protocol):
    """A chat message, as far as counting goes."""

    @property
    def content(self) -> str:
        """Its text."""
        ...


FRAMING_TOKENS = 200
"""Typical tokens a chat template adds around the messages."""
FRAMING_BOUND_PER_MESSAGE = 16
"""At most this many template tokens per message (role markers, separators)."""
FRAMING_BOUND = 64
"""At most this many template tokens per request (begin/end markers, a default system line)."""


def tokens_in(chars: int) -> int:
    """Typical tokens in ``chars`` characters of text: four characters a token."""
    return chars // 4


def typical_prompt_tokens(contents: Iterable[str]) -> int:
    """A typical token count for a prompt made of these message contents."""
    return tokens_in(sum(len(text) for text in contents)) + FRAMING_TOKENS


def prompt_token_bound(contents: Iterable[str]) -> int:
    """The most tokens a prompt of these message contents can be."""
    messages = 0
    utf8_bytes = 0
    for text in contents:
        messages += 1
        # ASCII text is one byte a character: its length, without encoding it
        utf8_bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
    return utf8_bytes + FRAMING_BOUND_PER_MESSAGE * messages + FRAMING_BOUND


def messages_token_bound(messages: Iterable[HasContent]) -> int:
    """:func:`prompt_token_bound` of these messages' contents (the engine's, once per call:
    without a generator between them)."""
    count = 0
    utf8_bytes = 0
    for message in messages:
        count += 1
        text = message.content
        utf8_bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
    return utf8_bytes + FRAMING_BOUND_PER_MESSAGE * count + FRAMING_BOUND
