"""The Run a benchmark page's judge and simulated student (issue 29 §4), as ELBench-live offers
them: the judge starts as the chosen benchmark's own (``Benchmark.defaults``; ELBench's is the
paper's judge), "Use a decision model as the judge" makes the judge picker offer OpenRouter's
decision models (:func:`~sweepbench.models.openrouter.decision_models`), and "Use a separate
model as the simulated student" reveals a student picker filled with the benchmark's student.

A default the page filled in is replaced when the benchmark or a switch changes; a model the
visitor typed is kept (``bp-role-defaults`` remembers what the page filled in last). The
estimate's board note (a judge other than the paper's puts the run on its own board) is the
library's, :func:`sweepbench.bench.start.board_note`."""

from __future__ import annotations

from typing import Any

import dash_mantine_components as dmc
from dash import Dash, Input, Output, State, dcc, html

from sweepbench.bench.items import Benchmark, RoleDefaults
from sweepbench.web.request_form import text

DECISION_LABEL = (
    "Use a decision model as the judge (cheaper verdict-only models; not the paper's setup)"
)
STUDENT_LABEL = "Use a separate model as the simulated student"
NO_DECISION_MODELS = (
    "OpenRouter's decision models could not be listed just now: type the id of one "
    "(openrouter/vendor/model)."
)
JUDGE_NOTE = "Any provider/model id."
HIDDEN = {"display": "none"}


def chat_models() -> list[str]:
    """The ids the judge and student pickers offer: every listed model once, in order."""
    from sweepbench.models.registry import listed_models

    return list(dict.fromkeys(info.id for info in listed_models()))


def decision_ids() -> list[str]:
    """OpenRouter's decision models (verdict-only judges) as model ids, fetched and cached as
    the chat catalogue is (empty when OpenRouter cannot be reached and nothing is cached)."""
    from sweepbench.models.openrouter import decision_models, model_id

    return [model_id(name) for name in decision_models()]


def decision_default(defaults: RoleDefaults, listed: list[str]) -> str | None:
    """The decision judge offered first: the benchmark's, when OpenRouter lists it (or lists
    nothing), else the first one listed; None when there is neither."""
    preferred = defaults.decision_judge
    if preferred is not None and (preferred in listed or not listed):
        return preferred
    return listed[0] if listed else None


def judge_note(decision: bool, listed: list[str], defaults: RoleDefaults) -> str:
    """What the judge picker says under it."""
    paper = defaults.judge
    if decision:
        return NO_DECISION_MODELS if not listed else "OpenRouter's decision models."
    if paper is not None:
        return f"Default: {paper}, the judge of the published results. {JUDGE_NOTE}"
    return JUDGE_NOTE


def role_controls(benchmark: Benchmark | None, filled: dict[str, Any]) -> list[Any]:
    """The judge, the decision-judge switch, the separate-student switch and the student
    picker (hidden until its switch is on), filled with the benchmark's defaults; a reopened
    run's own settings (``filled``) replace them afterwards."""
    defaults = benchmark.defaults if benchmark is not None else RoleDefaults()
    decision = bool(filled.get("bp-decision"))
    chat = chat_models()
    listed = decision_ids() if decision else chat
    separate = bool(filled.get("bp-separate-student"))
    return [
        dmc.Autocomplete(
            id="bp-judge", label="Judge model", placeholder="provider/model",
            value=defaults.judge or "", data=listed, limit=50,
            description=judge_note(decision, listed, defaults),
        ),
        dmc.Checkbox(id="bp-decision", label=DECISION_LABEL, checked=False),
        dmc.Checkbox(id="bp-separate-student", checked=False, label=STUDENT_LABEL),
        html.Div(
            dmc.Autocomplete(
                id="bp-student", label="Simulated student", placeholder="provider/model",
                value=defaults.student or "", data=chat, limit=50,
                description="Without a separate student, the judge plays the student.",
            ),
            id="bp-student-box", style=None if separate else HIDDEN,
        ),
        dcc.Store(id="bp-role-defaults", data=_filled_in(defaults, listed if decision else None)),
    ]  # fmt: skip


def _filled_in(defaults: RoleDefaults, decisions: list[str] | None) -> dict[str, str]:
    """What the page fills in for the benchmark's defaults: its judge, or with the decision
    switch on (``decisions``: the decision models listed) the decision judge offered first."""
    judge = defaults.judge if decisions is None else decision_default(defaults, decisions)
    return {"judge": judge or "", "student": defaults.student or ""}


def _was_filled(value: Any, before: Any, role: str) -> bool:
    """The control holds nothing, or what the page filled in last: it may be replaced."""
    typed = text(value)
    last = before.get(role, "") if isinstance(before, dict) else ""
    return not typed or typed == text(last)


def register(app: Dash, load: Any) -> None:
    """The callback that keeps the judge and student pickers in step with the benchmark and
    the two switches. ``load(choice, declaration, data)`` is the page's: the benchmark the
    choice names, or None when it does not load."""

    @app.callback(
        Output("bp-judge", "value"),
        Output("bp-judge", "data"),
        Output("bp-judge", "description"),
        Output("bp-student", "value"),
        Output("bp-student-box", "style"),
        Output("bp-role-defaults", "data"),
        Input("bp-benchmark", "value"),
        Input("bp-declaration", "value"),
        Input("bp-data", "value"),
        Input("bp-decision", "checked"),
        Input("bp-separate-student", "checked"),
        State("bp-judge", "value"),
        State("bp-student", "value"),
        State("bp-role-defaults", "data"),
        prevent_initial_call=True,
    )
    def on_roles(
        choice: Any, declaration: Any, data: Any, decision: Any, separate: Any,
        judge: Any, student: Any, before: Any,
    ) -> tuple[Any, ...]:  # fmt: skip
        benchmark = load(choice, declaration, data)
        defaults = benchmark.defaults if benchmark is not None else RoleDefaults()
        on = decision is True
        listed = decision_ids() if on else chat_models()
        filled = _filled_in(defaults, listed if on else None)
        new_judge = filled["judge"] if _was_filled(judge, before, "judge") else text(judge)
        new_student = (
            filled["student"] if _was_filled(student, before, "student") else text(student)
        )
        return (
            new_judge, listed, judge_note(on, listed, defaults), new_student,
            None if separate is True else HIDDEN, filled,
        )  # fmt: skip


__all__ = ["register", "role_controls"]
