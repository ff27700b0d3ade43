"""The Python API's keyword settings are declared once (a ``TypedDict`` each) and a name that
is not one of them is refused, with the nearest, before anything is planned or spent: a typo
is never silently dropped."""

from __future__ import annotations

import pytest

from sweepbench.errors import UserError
from sweepbench.generation import GenerationSettings, generation_request
from sweepbench.sweeps.plan import SweepSettings, build_plan
from sweepbench.toml_keys import refuse_unknown_settings


def test_a_misspelt_generation_setting_is_refused_with_the_nearest() -> None:
    with pytest.raises(UserError, match=r"no setting 'max_token' \(did you mean 'max_tokens'\?\)"):
        generation_request("scripted/echo", "hi", max_token=5)  # type: ignore[call-arg]


def test_a_misspelt_sweep_setting_is_refused_with_the_nearest() -> None:
    with pytest.raises(UserError, match=r"a sweep has no setting 'modle' \(did you mean 'model'"):
        build_plan("hi", "max_tokens", ["16", "32"], modle="scripted/echo")  # type: ignore[call-arg]


def test_every_declared_setting_is_accepted() -> None:
    refuse_unknown_settings(dict.fromkeys(SweepSettings.__annotations__), SweepSettings, "x")
    refuse_unknown_settings(
        dict.fromkeys(GenerationSettings.__annotations__), GenerationSettings, "x"
    )
    plan = build_plan("hi", "max_tokens", ["16", "32"], model="scripted/echo", repeats=2)
    assert len(plan.cells) == 2 and plan.repeats == 2
