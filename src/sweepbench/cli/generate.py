"""What ``sweepbench generate`` prints while it streams: the answer's text, scrubbed of every key
the process knows before it reaches the terminal (the stored call and ``--json`` are scrubbed by
the engine; a streamed delta goes straight to the screen, so it is scrubbed here)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sweepbench.stream_scrub import StreamScrubber


def scrubbed_printer(write: Callable[[str], object], secrets: Sequence[str]) -> StreamPrinter:
    """A printer of streamed text through ``write`` (stdout's), scrubbed of ``secrets``."""
    return StreamPrinter(write, StreamScrubber(secrets))


class StreamPrinter:
    """Writes streamed text as it arrives, less what the scrubber holds back; :meth:`close`
    writes the rest."""

    def __init__(self, write: Callable[[str], object], scrubber: StreamScrubber) -> None:
        self._write = write
        self._scrubber = scrubber

    def print(self, text: str) -> None:
        """Show a delta (what of it may be shown yet)."""
        shown = self._scrubber.feed(text)
        if shown:
            self._write(shown)

    def close(self) -> None:
        """The stream ended (finished, failed or stopped): show what was held back."""
        rest = self._scrubber.flush()
        if rest:
            self._write(rest)


__all__ = ["StreamPrinter", "StreamScrubber", "scrubbed_printer"]
