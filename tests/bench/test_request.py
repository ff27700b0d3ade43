"""``bench.request``: what a surface gives to start a benchmark run (``BenchRequest``), the
limits as ``total + {role: USD}``, ``prepare`` and the start rule ``start_check``; and the
settings hash, which covers every role's model and kept its value for stored runs."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sweepbench.bench.request import BenchRequest, merge_limits, parse_limit, parse_usd
from sweepbench.bench.resume import PreparedRun
from sweepbench.bench.run_config import Limits, RunConfig
from sweepbench.bench.start import UNPRICED_REFUSAL, prepare, start_check
from sweepbench.errors import UserError
from sweepbench.store import Store
from tests.bench.helpers import toy_benchmark
from tests.bench.plans import build_plan

FREE = "scripted/echo?text=42"
PRICED = "anthropic/claude-haiku-4-5"
FAKE_KEY = "fake-anthropic-key-0123456789"


def request(**values: Any) -> BenchRequest:
    """A request for the sample benchmark's automatically checked set on a free model."""
    base: dict[str, Any] = {"benchmark": "sample", "preset": "auto", "models": {"target": FREE}}
    return BenchRequest.from_values({**base, **values})


# -- the settings hash -------------------------------------------------------------------------

PINNED_CONFIG: dict[str, Any] = dict(
    benchmark="sample", data_version="v1", prompt_version="p1+judge-j1",
    decision_judge=False, scope="core", tasks=("b", "a"), dimensions=("x",), per_task=2,
    max_items=None, max_tokens=8192, rule_scoring=False,
)  # fmt: skip
PINNED_MODELS = {"target": "openai/gpt-4o-mini", "judge": "anthropic/claude-haiku-4-5"}
PINNED_HASH = "7e4caa11f4b4c2897943dff8749561e93c72481226aca5b2d12a5e97f6ab39a0"
"""The hash this config had before roles became data (``model=``/``judge=`` fields): stored
runs with a model under test and a judge must keep resuming."""
PINNED_UNJUDGED_HASH = "afe483362b40e35fee405ec42ba7e36efb846f537fde929f35f25e7033ada299"


def test_the_settings_hash_of_a_fixed_config_is_unchanged() -> None:
    config = RunConfig(models=PINNED_MODELS, **PINNED_CONFIG)
    assert config.hash == PINNED_HASH
    assert (config.model, config.judge) == (PINNED_MODELS["target"], PINNED_MODELS["judge"])
    assert "models" not in config.as_json()  # the stored form is the old one too
    unjudged = RunConfig(
        benchmark="sample", data_version="v1", prompt_version="p1", models={"target": FREE},
        decision_judge=False, scope="core", tasks=("arith",), dimensions=(), per_task=None,
        max_items=10, max_tokens=300,
    )  # fmt: skip
    assert unjudged.hash == PINNED_UNJUDGED_HASH and unjudged.judge is None


def test_every_role_model_is_in_the_hash() -> None:
    base = RunConfig(models=PINNED_MODELS, **PINNED_CONFIG)
    student = RunConfig(models={**PINNED_MODELS, "student": "openai/gpt-4o"}, **PINNED_CONFIG)
    other = RunConfig(models={**PINNED_MODELS, "student": "openai/gpt-4.1"}, **PINNED_CONFIG)
    assert len({base.hash, student.hash, other.hash}) == 3
    assert student.as_json()["models"] == {**PINNED_MODELS, "student": "openai/gpt-4o"}
    judge = RunConfig(models={**PINNED_MODELS, "judge": "openai/gpt-4o"}, **PINNED_CONFIG)
    assert judge.hash != base.hash
    reordered = RunConfig(models=dict(reversed(list(PINNED_MODELS.items()))), **PINNED_CONFIG)
    assert reordered.hash == base.hash  # the order roles are given in does not matter


def test_a_config_needs_a_model_under_test_and_known_roles() -> None:
    with pytest.raises(ValueError, match="model under test"):
        RunConfig(models={"judge": FREE}, **PINNED_CONFIG)
    with pytest.raises(ValueError, match="unknown role 'sweep'"):
        RunConfig(models={"target": FREE, "sweep": FREE}, **PINNED_CONFIG)


# -- limits ------------------------------------------------------------------------------------


def test_limits_are_a_total_and_one_per_role() -> None:
    limits = Limits(total=Decimal(5), roles={"Judge": Decimal(1)})
    assert limits.for_role("judge") == Decimal(1) and limits.for_role("target") is None
    assert limits.any and not Limits().any and Limits(total=Decimal(0)).any
    assert limits.as_json() == {"total": "5", "roles": {"judge": "1"}}
    assert Limits().as_json() == {"total": None, "roles": {}}
    assert limits == Limits(total=Decimal(5), roles={"judge": Decimal(1)})
    assert hash(limits) == hash(Limits(total=Decimal(5), roles={"judge": Decimal(1)}))
    with pytest.raises(TypeError):
        limits.roles["target"] = Decimal(1)  # type: ignore[index]
    with pytest.raises(ValueError, match="use one of target, judge, student"):
        Limits(roles={"generate": Decimal(1)})
    with pytest.raises(ValueError, match="≥ 0"):
        Limits(total=Decimal(-1))


def test_a_role_limit_below_its_low_estimate_refuses_and_an_unused_one_is_noted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    judge = build_plan(toy_benchmark(4, judged=4), model=PRICED, judge=PRICED).role("judge")
    assert judge is not None and (judge.low or 0) > Decimal("0.000001")
    tiny = Limits(roles={"judge": Decimal("0.000001")})
    plan = build_plan(toy_benchmark(4, judged=4), model=PRICED, judge=PRICED, limits=tiny)
    assert not plan.ok
    assert plan.role("judge").limit == Decimal("0.000001")  # type: ignore[union-attr]
    (problem,) = plan.limit_problems
    assert problem.startswith("The limit for the judge ($0.000001) is below its lowest estimate")
    unused = build_plan(toy_benchmark(4), model=FREE, limits=Limits(roles={"student": Decimal(1)}))
    assert unused.ok
    assert any("limit for the simulated student ($1" in n and "not used" in n for n in unused.notes)


# -- money from text ---------------------------------------------------------------------------


def test_limit_text_is_the_total_or_one_role() -> None:
    assert parse_limit("5") == (None, Decimal(5))
    assert parse_limit("$0.50") == (None, Decimal("0.50"))
    assert parse_limit("judge=1") == ("judge", Decimal(1))
    assert parse_limit(" Target = $2 ") == ("target", Decimal(2))
    assert parse_limit("student=0") == ("student", Decimal(0))
    assert parse_limit("3", "--limit-judge", role="judge") == ("judge", Decimal(3))
    assert parse_usd("1.25", "limit") == Decimal("1.25")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("judge=abc", "--limit judge=abc: not a dollar amount"),
        ("ten", "--limit ten: not a dollar amount"),
        ("-1", "--limit -1: a limit is a dollar amount ≥ 0"),
        ("nan", "--limit nan: a limit is a dollar amount ≥ 0"),
        ("judge=", "--limit judge=: not a dollar amount"),
        ("boss=1", "--limit boss=1: unknown role 'boss': use one of target, judge, student"),
        ("sweep=1", "--limit sweep=1: unknown role 'sweep': use one of target, judge, student"),
    ],
)
def test_limit_text_that_is_not_a_limit_names_the_flag(text: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_limit(text)
    assert str(caught.value) == message


def test_an_alias_flag_names_itself() -> None:
    with pytest.raises(UserError, match=r"^--limit-judge abc: not a dollar amount$"):
        parse_limit("abc", "--limit-judge", role="judge")


def test_merging_limits_refuses_two_amounts_for_one_limit() -> None:
    limits = merge_limits([parse_limit("5"), parse_limit("judge=1"), parse_limit("target=2")])
    assert limits == Limits(total=Decimal(5), roles={"judge": Decimal(1), "target": Decimal(2)})
    assert merge_limits([parse_limit("judge=1"), parse_limit("judge=1.00")]).for_role("judge")
    with pytest.raises(UserError, match=r"limit for the judge is given twice: \$1\.00 and \$2\.00"):
        merge_limits([parse_limit("judge=1"), parse_limit("judge=2")])
    with pytest.raises(UserError, match="total limit is given twice"):
        merge_limits([parse_limit("1"), parse_limit("2")])


# -- BenchRequest ------------------------------------------------------------------------------


def test_a_request_normalises_what_a_surface_gives() -> None:
    req = BenchRequest.from_values(
        {
            "benchmark": "sample", "preset": "auto-checked", "scope": "original",
            "areas": "maths, writing", "tasks": ["arithmetic"], "skills": "",
            "models": {"Target": f" {FREE} ", "judge": None}, "edu_scoring": " Rule ",
            "limit": "$5", "role_limits": {"judge": "1", "student": 0.5},
        }
    )  # fmt: skip
    assert (req.preset, req.scope, req.edu_scoring) == ("auto", "paper", "rule")
    assert (req.areas, req.tasks, req.skills) == (("maths", "writing"), ("arithmetic",), ())
    assert req.models == {"target": FREE}  # a role given no model is left out
    assert req.limits == Limits(
        total=Decimal(5), roles={"judge": Decimal(1), "student": Decimal("0.5")}
    )
    assert (req.resume, req.retry_failed, req.confirmed, req.concurrency) == (True, False, False, 8)
    assert req.selection.scope == "paper" and req.selection.dimensions == ()
    assert BenchRequest.from_values({"benchmark": "sample", "models": {"target": FREE},
                                     "limit": " "}).limit is None  # fmt: skip
    assert BenchRequest.model_validate_json(req.model_dump_json()) == req  # JSON both ways


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"colour": "red"}, "colour: not a setting of a benchmark run"),
        ({"models": {"judge": FREE}}, "models: the model under test (target) is missing"),
        ({"models": {"target": FREE, "sweep": FREE}}, "models: unknown role 'sweep'"),
        ({"models": {"target": " "}}, "models: no model given for the model under test"),
        ({"role_limits": {"boss": "1"}}, "role_limits: unknown role 'boss'"),
        ({"role_limits": {"judge": "abc"}}, "role_limits: not a dollar amount"),
        ({"limit": "-2"}, "limit: a limit is a dollar amount ≥ 0"),
        ({"concurrency": 0}, "concurrency: must be between 1 and 100, not 0"),
        ({"rpm": 0}, "rpm: must be at least 1, not 0"),
        ({"preset": "huge"}, "preset: unknown preset 'huge'"),
        ({"scope": "world"}, "scope: unknown scope 'world'"),
        ({"edu_scoring": "vibes"}, "edu_scoring: judge or rule, not 'vibes'"),
    ],
)
def test_a_bad_request_says_what_is_wrong(values: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as caught:
        request(**values)
    assert message in str(caught.value)


def test_request_problems_come_all_at_once_named_as_the_surface_names_them() -> None:
    with pytest.raises(UserError) as caught:
        BenchRequest.from_values(
            {"benchmark": "sample", "models": {"target": FREE}, "concurrency": 500, "tpm": -1},
            names={"concurrency": "--concurrency", "tpm": "--tpm"},
        )
    text = str(caught.value)
    assert "--concurrency: must be between 1 and 100, not 500" in text
    assert "--tpm: must be at least 1, not -1" in text


def test_a_request_is_frozen() -> None:
    req = request()
    with pytest.raises(ValueError, match="frozen"):
        req.confirmed = True


# -- prepare -----------------------------------------------------------------------------------


def test_prepare_plans_what_the_request_asks() -> None:
    prepared = prepare(request(max_items=3, role_limits={"target": "2"}), None)
    plan = prepared.plan
    assert plan.ok and prepared.previous is None
    assert plan.config.models == {"target": FREE} and plan.config.judge is None
    assert len(plan.items) == 3 and plan.selection.preset == "auto"
    assert plan.limits.for_role("target") == Decimal(2)
    assert plan.role("target").limit == Decimal(2)  # type: ignore[union-attr]
    judged = prepare(
        request(preset="full", models={"target": FREE, "judge": "scripted/echo?text=x"}), None
    )
    assert judged.plan.config.judge == "scripted/echo?text=x"
    assert judged.plan.config.hash != plan.config.hash


def test_a_student_no_task_needs_is_noted_and_left_out_of_the_settings() -> None:
    plain = prepare(request(), None).plan
    with_student = prepare(request(models={"target": FREE, "student": "scripted/echo"}), None)
    assert with_student.plan.config.hash == plain.config.hash
    assert any(
        "simulated student (scripted/echo) is not used" in n for n in with_student.plan.notes
    )


def test_prepare_takes_a_loaded_benchmark_and_continues_a_stored_run(tmp_path: Path) -> None:
    import asyncio

    from sweepbench.bench.run import BenchRunner

    store = Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
    req = request(benchmark="toy", confirmed=True)
    first = prepare(req, store, benchmark=toy_benchmark(3))
    assert first.previous is None and len(first.plan.items) == 3
    outcome = asyncio.run(BenchRunner(first, store).run())
    again = prepare(req, store, benchmark=toy_benchmark(3))
    assert again.previous is not None and again.previous.id == outcome.run_id
    assert start_check(again, req).nothing_left
    fresh = prepare(req.model_copy(update={"resume": False}), store, benchmark=toy_benchmark(3))
    assert fresh.previous is None and len(fresh.plan.items) == 3


# -- start_check -------------------------------------------------------------------------------


def test_a_free_run_is_ready() -> None:
    req = request()
    decision = start_check(prepare(req, None), req)
    assert decision.ready and decision.outcome == "ready"
    assert not decision.refused and not decision.needs_confirmation and not decision.nothing_left


def test_a_run_with_problems_is_refused_with_every_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    req = request(preset="full", models={"target": PRICED}, limit="0.000001", confirmed=True)
    decision = start_check(prepare(req, None), req)
    assert decision.refused
    assert any("graded by a judge model but none is chosen" in r for r in decision.reasons)
    priced = request(models={"target": PRICED}, limit="0.000001", confirmed=True)
    prepared = prepare(priced, None)
    decision = start_check(prepared, priced)
    assert decision.refused and decision.reasons == prepared.plan.limit_problems
    assert decision.reasons[0].startswith("The total limit ($0.000001) is below")


def test_an_unpriced_model_is_refused_unless_accepted() -> None:
    req = request()
    prepared = prepare(req, None)
    roles = tuple(replace(r, low=None, high=None) for r in prepared.plan.roles)  # no price
    unpriced = replace(prepared, plan=replace(prepared.plan, needs_price_ack=True, roles=roles))
    decision = start_check(unpriced, req)
    assert decision.refused and decision.reasons == (UNPRICED_REFUSAL,)
    accepted = req.model_copy(update={"accept_unpriced": True})
    asks = start_check(unpriced, accepted)
    assert asks.needs_confirmation and asks.spend_up_to is None  # an unknown amount
    confirmed = req.model_copy(update={"accept_unpriced": True, "confirmed": True})
    assert start_check(unpriced, confirmed).ready


def test_a_run_that_spends_money_needs_confirmation_with_the_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    req = request(models={"target": PRICED})
    prepared = prepare(req, None)
    decision = start_check(prepared, req)
    assert decision.needs_confirmation and decision.outcome == "confirm"
    assert decision.spend_up_to == prepared.plan.high and (decision.spend_up_to or 0) > 0
    assert start_check(prepared, req.model_copy(update={"confirmed": True})).ready


def test_nothing_left_to_run_is_ready_without_asking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    req = request(models={"target": PRICED})
    prepared = prepare(req, None)
    done = PreparedRun(replace(prepared.plan, items=()), None)
    decision = start_check(done, req)
    assert decision.ready and decision.nothing_left


def _finished_run(store: Store, req: BenchRequest) -> Any:
    import asyncio

    from sweepbench.bench.run import BenchRunner
    from sweepbench.bench.storage import BenchStore

    prepared = prepare(req, store)
    outcome = asyncio.run(BenchRunner.for_request(prepared, store, req).run())
    run = BenchStore(store).run(outcome.run_id)
    assert run is not None
    return run


def test_a_run_keeps_its_request_and_gives_it_back(tmp_path: Path) -> None:
    """A stored run is asked again with the very settings it was made from, the ones its
    settings hash does not hold (limits, concurrency, rate limits) included."""
    from sweepbench.bench.request import request_from_run

    store = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    req = BenchRequest(
        benchmark="sample", models={"target": "scripted/guess"}, preset="auto-checked",
        temperature=0.5, repeats=2, limit="3", role_limits={"target": "2"}, concurrency=4,
        rpm=600, tasks="arithmetic,multiple_choice", confirmed=True,
    )  # fmt: skip
    run = _finished_run(store, req)
    again = request_from_run(run.settings, run.benchmark)
    assert again == req.model_copy(update={"confirmed": False})
    assert prepare(again, store).previous.id == run.id  # type: ignore[union-attr]


def test_a_run_stored_before_requests_is_rebuilt_with_its_settings_hash(tmp_path: Path) -> None:
    from sweepbench.bench.request import request_from_run

    store = Store.open(f"sqlite:///{tmp_path / 'b.db'}")
    req = BenchRequest(
        benchmark="sample", models={"target": "scripted/guess", "judge": "scripted/guess"},
        preset="quick", effort="high", limit="3", concurrency=3, edu_scoring="rule",
    )  # fmt: skip
    run = _finished_run(store, req)
    legacy = {k: v for k, v in run.settings.items() if k != "request"}
    rebuilt = request_from_run(legacy, run.benchmark)
    assert prepare(rebuilt, store).plan.config.hash == run.config_hash
    assert (rebuilt.limit, rebuilt.concurrency, rebuilt.edu_scoring) == (Decimal(3), 3, "rule")
