"""One cell-status rule (issue 28 §5): a cell's state from its samples' states, in the sweeps
layer, and the web's state badge is that rule in the kind's words."""

from __future__ import annotations

import pytest

from sweepbench.sweeps.results import cell_status
from sweepbench.web.cells import cell_state


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (["queued"], "queued"),
        (["queued", "queued", "queued"], "queued"),  # nothing started yet
        (["running"], "running"),
        (["running", "queued"], "running"),
        (["done", "done", "queued"], "running"),  # under way: not waiting to start, not done
        (["failed", "queued"], "running"),  # its last sample may still answer
        (["done", "running", "failed"], "running"),
        (["stopped", "queued"], "stopped"),  # Stop all: the queued one never starts
        (["done", "stopped"], "stopped"),
        (["done", "interrupted"], "interrupted"),  # its worker died before it finished
        (["stopped", "interrupted"], "interrupted"),
        (["done", "failed"], "failed"),
        (["failed"], "failed"),
        (["done", "done"], "done"),
        (["done"], "done"),
    ],
)
def test_a_cells_state_from_its_samples(states: list[str], expected: str) -> None:
    assert cell_status(states) == expected
    assert cell_status(reversed(states)) == expected  # the order of the repeats does not matter


def test_the_web_badge_is_the_same_rule_in_the_kinds_words() -> None:
    def samples(*states: str) -> list[dict[str, str]]:
        return [{"status": state} for state in states]

    assert cell_state(samples("done", "queued"), "excalidraw") == "drawing…"
    assert cell_state(samples("done", "queued"), "text") == "writing…"
    assert cell_state(samples("queued", "queued"), "text") == "queued"
    assert cell_state(samples("done", "interrupted"), "text") == "interrupted"
    for states in (("stopped", "queued"), ("done", "failed"), ("done", "done")):
        assert cell_state(samples(*states), "sculpture") == cell_status(states)
