"""The best-value (Pareto) frontier (spec §17.2): a model is best value when no other model
costs the same or less and scores the same or more, with one of the two strictly better.
Models with the same price and score do not beat each other: tied models are all on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Point:
    """A placed model: its key, price and score."""

    key: str
    price: Decimal
    score: float


def dominates(a: Point, b: Point) -> bool:
    """True when ``a`` costs the same or less and scores the same or more than ``b``, and is
    strictly better in one of the two."""
    return a.price <= b.price and a.score >= b.score and (a.price < b.price or a.score > b.score)


def frontier(points: Sequence[Point]) -> list[Point]:
    """The points no other point dominates, in price order (then score, best first)."""
    ordered = sorted(points, key=lambda p: (p.price, -p.score, p.key))
    best: list[Point] = []
    top: float | None = None  # the best score among strictly cheaper points
    i = 0
    while i < len(ordered):
        same = [p for p in ordered[i:] if p.price == ordered[i].price]
        high = max(p.score for p in same)
        if top is None or high > top:
            best.extend(p for p in same if p.score == high)
            top = high
        i += len(same)
    return best
