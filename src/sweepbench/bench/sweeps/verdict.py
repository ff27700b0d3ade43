"""The verdict sentence of a benchmark sweep (issue 16): a cheaper setting against the best,
from the figures :mod:`sweepbench.stats.significance` computes."""

from __future__ import annotations

from sweepbench.stats.paired import ALPHA, format_p
from sweepbench.stats.significance import fewest_items

__all__ = ["signed_points", "verdict"]


def signed_points(points: float) -> str:
    """``+0.5``, ``−2.1`` (a true minus sign), ``0.0``."""
    text = f"{abs(points):.1f}"
    if text == "0.0":
        return text
    return ("+" if points > 0 else "\u2212") + text


def verdict(
    *,
    diff: float,
    low: float,
    high: float,
    p_adjusted: float,
    cost_share: float | None,
    min_detectable: float,
    alpha: float = ALPHA,
) -> str:
    """One sentence on a cheaper setting against the best: ``diff`` (points, cheaper −
    best) with its 95% range ``low``..``high``, its Holm-adjusted p, its cost as a share of
    the best's (None: unknown, and the sentence says nothing of cost), and the difference
    these items could detect (points; 100 or more: none could be)."""
    cost = "" if cost_share is None else f"costs {100 * cost_share:.0f}% as much and "
    p_text = f"{format_p(p_adjusted)} (Holm)"
    detected = p_adjusted < alpha and (high < 0 or low > 0)
    if not detected:
        could = (
            f"this many items could detect {min_detectable:.1f} points"
            if min_detectable < 100
            else f"too few items for any difference to be detectable (an exact test needs "
            f"at least {fewest_items(alpha)} that differ)"
        )
        return (
            f"{cost}is not detectably worse: {signed_points(diff)} points, 95% range "
            f"{signed_points(low)} to {signed_points(high)}, {p_text}; {could}"
        )
    way = "worse" if diff < 0 else "better"
    return (
        f"{cost}is {way} by {abs(diff):.1f} points (95% range {signed_points(low)} to "
        f"{signed_points(high)}, {p_text})"
    )
