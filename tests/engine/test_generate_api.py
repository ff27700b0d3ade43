"""``sweepbench.generate`` (issue 28 §5): one prompt from Python through the engine, as
``sweepbench generate`` makes it — held against the ceilings first, a ``calls`` row, settled,
scrubbed of keys; a ceiling that refuses it spends nothing and sends nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy as sa

import sweepbench
from sweepbench import BudgetExceeded, UserError
from sweepbench.generation import generation_request
from sweepbench.settings import REDACTED
from sweepbench.store import Store
from sweepbench.store.schema import calls, spend_reservations
from tests.helpers import cli, planted_key, store_texts
from tests.servers import OpenAIServer

PRICE = 1000  # $ per million tokens in and out: a call of a few hundred tokens costs cents


@pytest.fixture
def priced(isolated_home: Path) -> None:
    """Give ``scripted/guess`` and ``scripted/echo`` a price, so their calls hold money."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(
        f"[scripted.guess]\nprice_in = {PRICE}\nprice_out = {PRICE}\n"
        f"[scripted.echo]\nprice_in = {PRICE}\nprice_out = {PRICE}\n",
        "utf-8",
    )


def rows(table: sa.Table) -> list[sa.Row[tuple[object, ...]]]:
    with Store.open() as store, store.engine.connect() as conn:
        return list(conn.execute(sa.select(table)))


@pytest.mark.usefixtures("priced")
def test_generate_returns_the_answer_records_one_call_and_settles_its_hold() -> None:
    shown: list[str] = []
    result = sweepbench.generate(
        "scripted/guess", "Which is prime: (A) 4 (B) 7?", max_tokens=40, on_text=shown.append
    )
    assert result.error is None and result.stop_reason == "end"
    assert result.text and "".join(shown) == result.text
    [call] = rows(calls)
    assert call.role == "generate" and call.model == "scripted/guess"
    assert call.text == result.text and call.stop_reason == "end"
    assert call.output_tokens == result.usage.output_tokens
    [hold] = rows(spend_reservations)
    assert hold.call_id == call.id and hold.role == "generate"
    assert str(hold.run_id).startswith("generate-")
    assert hold.state == "settled" and 0 < hold.settled_micro <= hold.reserved_micro
    assert call.cost_usd is not None and call.cost_usd * 1_000_000 == hold.settled_micro


@pytest.mark.usefixtures("priced")
def test_the_api_and_the_command_make_the_same_call(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = sweepbench.generate("scripted/echo", "hello there world", max_tokens=10)
    code = cli(monkeypatch, "generate", "scripted/echo", "hello there world", "--max-tokens", "10")
    assert code == 0
    assert capsys.readouterr().out.strip() == result.text == "hello there world"
    api, command = rows(calls)
    for column in ("role", "model", "request_json", "text", "input_tokens", "output_tokens"):
        assert getattr(api, column) == getattr(command, column), column
    assert api.cost_usd == command.cost_usd and api.cost_usd is not None and api.cost_usd > 0
    holds = rows(spend_reservations)
    assert [h.state for h in holds] == ["settled", "settled"]
    assert len({h.reserved_micro for h in holds}) == 1  # the same worst case held


@pytest.mark.usefixtures("priced")
def test_a_ceiling_below_the_worst_case_refuses_before_the_model_is_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.01")  # the worst case: 250 tokens, $0.25
    shown: list[str] = []
    with pytest.raises(BudgetExceeded, match=r"up to \$0\.25 .*\(SWEEPBENCH_DAILY_USD\)"):
        sweepbench.generate("scripted/echo", "hello " * 20, max_tokens=50, on_text=shown.append)
    assert shown == [] and rows(calls) == []  # the row comes before traffic: none was sent
    assert rows(spend_reservations) == []  # nothing held, nothing spent


def test_a_free_model_holds_nothing_and_is_never_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0")
    result = sweepbench.generate("scripted/echo", "free words")
    assert result.text == "free words"
    assert len(rows(calls)) == 1 and rows(spend_reservations) == []


@pytest.mark.parametrize(
    ("model", "settings", "words"),
    [
        ("nosuch/model", {}, "unknown provider 'nosuch'"),
        ("scripted/nope", {}, "unknown scripted model 'nope'"),
        ("scripted/nope", {"max_tokens": 10}, "unknown scripted model 'nope'"),
        ("just-a-name", {}, "provider/model"),
        ("anthropic/claude-sonnet-4-6", {}, "ANTHROPIC_API_KEY"),
        ("anthropic/claude-haiku-4-5", {"effort": "high"}, "does not accept"),
        ("scripted/echo", {"max_tokens": 0}, "max tokens 0 out of range"),
        ("scripted/echo", {"temperature": 7.0}, "temperature must be"),
    ],
)
def test_what_cannot_be_asked_is_a_user_error_and_no_call(
    model: str, settings: dict[str, object], words: str
) -> None:
    with pytest.raises(UserError, match=words):
        sweepbench.generate(model, "hi", **settings)  # type: ignore[arg-type]
    assert rows(calls) == []


def test_a_blank_prompt_is_a_user_error() -> None:
    with pytest.raises(UserError, match="the prompt is empty"):
        sweepbench.generate("scripted/echo", "  \n")


def test_a_budget_above_the_models_limit_is_lowered_with_a_warning() -> None:
    request, note = generation_request("scripted/echo", "hi", max_tokens=10_000_000)
    limit = request.settings.max_tokens
    assert note is not None and limit is not None and f"lowered to {limit:,}" in note
    with pytest.warns(UserWarning, match="lowered to") as warned:
        result = sweepbench.generate("scripted/echo", "hi", max_tokens=10_000_000)
    assert result.text == "hi"
    ours = [w for w in warned if "lowered to" in str(w.message)]  # not another test's leftovers
    assert [w.filename for w in ours] == [__file__]  # it points at the caller's line


def test_a_key_in_the_prompt_and_the_answer_is_scrubbed_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = planted_key("generate-api")
    split = ["Your key is ", key[:5], key[5:17], key[17:], " — keep it safe."]
    shown: list[str] = []
    with OpenAIServer(api_key=key) as server:
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("SWEEPBENCH_COMPATIBLE_API_KEY", key)
        server.reply(split)
        result = sweepbench.generate("compatible/m", f"my key is {key}", on_text=shown.append)
        assert server.requests[-1].body is not None  # the call reached the server
    assert result.error is None
    assert result.text == "".join(shown) == f"Your key is {REDACTED} — keep it safe."
    [call] = rows(calls)
    assert call.text == result.text and REDACTED in str(call.request_json)
    with Store.open() as store:
        texts = store_texts(store)
    assert not [table for table, values in texts.items() if any(key in v for v in values)]


async def test_agenerate_runs_inside_an_event_loop_where_generate_refuses() -> None:
    with pytest.raises(UserError, match="agenerate"):
        sweepbench.generate("scripted/echo", "hi")
    result = await sweepbench.agenerate("scripted/echo", "inside a loop")
    assert result.text == "inside a loop"
    assert len(rows(calls)) == 1


async def test_a_cancelled_agenerate_is_recorded_with_what_it_produced() -> None:
    # the gate holds the answer after its first word until a file appears (it never does
    # here): the call is in flight, mid-answer, when the test cancels it; no race, no sleep
    started = asyncio.Event()
    shown: list[str] = []

    def seen(text: str) -> None:
        shown.append(text)
        started.set()

    model = "scripted/echo?gate=api-cancel&gate_at=1"
    task = asyncio.create_task(sweepbench.agenerate(model, "first then never", on_text=seen))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [call] = rows(calls)
    assert call.stop_reason == "cancelled" and call.finished_at is not None
    assert call.text == "".join(shown) == "first"
