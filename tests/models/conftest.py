"""What the adapter tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sweepbench.models import openrouter


@pytest.fixture
def fresh_openrouter_memory() -> Iterator[None]:
    """Each test as a fresh process for OpenRouter's listings: no failed fetch remembered, no
    parsed cache file."""
    openrouter._failed.clear()
    openrouter._parsed.clear()
    yield
    openrouter._failed.clear()
    openrouter._parsed.clear()
