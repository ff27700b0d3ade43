"""A benchmark run's defaults that surfaces show before anything else is loaded (a command's
``--help`` imports this, not the planner and the store)."""

from __future__ import annotations

DEFAULT_ANSWER_TOKENS = 8192
"""The answer length limit (spec §6.1), capped at the model's listed maximum."""
DEFAULT_CONCURRENCY = 8
"""Requests at once to each provider and model, per worker."""
MAX_REPEATS = 20
"""The most times ``--repeats`` asks each item."""
