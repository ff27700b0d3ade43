"""Scrubbing text that arrives in pieces: a key split across stream deltas is still replaced
(the engine's recorded events and live views, ``generate``'s terminal)."""

from __future__ import annotations

from collections.abc import Sequence

from sweepbench.settings import scrub


class StreamScrubber:
    """Scrubs text that arrives in pieces. A key may be split across deltas ("sk-ab", "cd…"),
    so the last ``len(longest key) - 1`` characters are held back until the next piece shows
    whether they start a key; :meth:`flush` lets out the rest at the end. What it lets out,
    joined, is the whole text scrubbed."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)
        self._hold = max((len(s) for s in self._secrets), default=1) - 1
        self._pending = ""

    def feed(self, text: str) -> str:
        """The part of everything fed so far that can be shown now, scrubbed."""
        if not self._secrets:
            return text
        clean = scrub(self._pending + text, self._secrets)
        # A key not yet complete lies wholly in the last `hold` characters: a key starting
        # earlier would already be whole (and replaced).
        cut = max(len(clean) - self._hold, 0)
        self._pending = clean[cut:]
        return clean[:cut]

    def flush(self) -> str:
        """What is still held back, scrubbed (the stream has ended)."""
        rest, self._pending = scrub(self._pending, self._secrets), ""
        return rest
