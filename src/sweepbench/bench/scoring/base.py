"""What every scorer returns: :class:`Score`, the judge contract's shape of a graded answer
(:mod:`sweepbench.judging.contract`), which a judge's verdict is too."""

from __future__ import annotations

from sweepbench.judging.contract import Score as Score
