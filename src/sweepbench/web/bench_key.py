"""The key check of a run started from the Run a benchmark page (issue 29 §3): the one ``bench
run`` makes (:func:`sweepbench.bench.start.check_openrouter_key`: OpenRouter's free key
endpoint, nothing spent), for a run that calls an OpenRouter model with a key typed on the
page or set in the environment, in the CLI's words. A rejected key, or credit left below the
run's lowest estimate (both figures said), refuses the run; a check that cannot be made lets it
go on. Called inside the run's :func:`~sweepbench.settings.run_keys`, so a typed key is sent
only to OpenRouter and never said, stored or logged."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc

from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.start import KEY_REJECTED, KEY_UNCHECKED, check_openrouter_key


def key_check(prepared: PreparedRun) -> tuple[list[Any], list[str]]:
    """What the page shows of the key check before ``prepared`` runs, and the reasons it
    refuses the run (none: it may go on). Nothing to show when no model is OpenRouter's or
    no key is given (the plan says so)."""
    plan = prepared.plan
    check = check_openrouter_key(list(plan.config.models.values()), plan.low)
    if check is None:
        return [], []
    if check.said == KEY_REJECTED:  # the refusal says it
        return [], [KEY_REJECTED]
    colour = "orange" if check.said == KEY_UNCHECKED else "green"
    shown = [dmc.Text(check.said, size="sm", c=colour, id="bp-key-check")]
    return shown, [] if check.refusal is None else [check.refusal]


__all__ = ["key_check"]
