"""The Run a benchmark page's model picker and filter function (issue 29 §4): an option's text
("<name> · $in in / $out out per 1M tokens · <size>") and value (the id); the filters on the
leaderboard's blended 3:1 price, on the size (a local model's read from its own file), the
undisclosed checkbox, and each slider's right-hand end meaning no limit."""

from __future__ import annotations

from decimal import Decimal

from sweepbench.money.prices import Price, blended
from sweepbench.web.bench_picker import (
    PickerModel,
    picker_models,
    picker_note,
    price_text,
    shown_models,
    size_text,
)
from sweepbench.web.leaderboard_data import PRICE_OFF, SIZE_OFF


def _model(name: str, p_in: str | None, p_out: str = "0", size: float | None = None) -> PickerModel:
    price = None if p_in is None else Price(Decimal(p_in), Decimal(p_out))
    return PickerModel(f"x/{name}", name, price, size)


INPUT_CHEAP = _model("input-cheap", "29", "40", 8)  # 31.75 blended
BLEND_CHEAP = _model("blend-cheap", "30.5", "20", 70)  # 27.875 blended
UNPRICED = _model("unpriced", None, size=0.5)
UNDISCLOSED = _model("undisclosed", "0", "0")
HUGE = _model("huge", "1", "2", 1_200)
MODELS = [INPUT_CHEAP, BLEND_CHEAP, UNPRICED, UNDISCLOSED, HUGE]


def _names(max_price: object, max_size: object, undisclosed: object = True) -> list[str]:
    return [m.name for m in shown_models(MODELS, max_price, max_size, undisclosed)]


def test_the_right_hand_end_of_each_slider_is_no_limit() -> None:
    assert _names(PRICE_OFF, SIZE_OFF) == [m.name for m in MODELS]  # the 1,200B one too
    assert _names(None, None) == [m.name for m in MODELS]  # nothing sent: no filter


def test_the_price_filter_is_on_the_blended_3_to_1_price_the_leaderboard_uses() -> None:
    assert BLEND_CHEAP.blended == blended(Decimal("30.5"), Decimal("20")) == Decimal("27.875")
    # $29.90: input-cheap's input price is under it, its blended price is not
    assert _names(29.9, SIZE_OFF) == ["blend-cheap", "undisclosed", "huge"]  # unpriced goes
    assert _names(0, SIZE_OFF) == ["undisclosed"]  # $0: the free models only


def test_the_size_filter_keeps_the_models_within_it_and_the_checkbox_those_that_dont_say() -> None:
    assert _names(PRICE_OFF, 10) == ["input-cheap", "unpriced", "undisclosed"]
    assert _names(PRICE_OFF, 10, False) == ["input-cheap", "unpriced"]
    assert _names(PRICE_OFF, SIZE_OFF, False) == ["input-cheap", "blend-cheap", "unpriced", "huge"]
    assert _names(PRICE_OFF, 1, None) == ["unpriced", "undisclosed"]  # no checkbox state: kept


def test_what_a_request_may_send_instead_of_a_number_is_no_filter() -> None:
    everything = [m.name for m in MODELS]
    for value in ("", "abc", -3, float("nan"), float("inf"), [1], {"a": 1}, True):
        assert _names(value, value) == everything, value


def test_an_option_shows_name_prices_and_size_and_holds_the_id() -> None:
    assert BLEND_CHEAP.option() == {
        "value": "x/blend-cheap", "label": "x/blend-cheap",
        "text": "blend-cheap · $30.50 in / $20.00 out per 1M tokens · 70B",
    }  # fmt: skip
    assert UNPRICED.text == "unpriced · no listed price · 500M"
    assert UNDISCLOSED.text == "undisclosed · $0 in / $0 out per 1M tokens · size not published"
    assert price_text(Price(Decimal("0.075"), Decimal("0.3"))) == (
        "$0.08 in / $0.30 out per 1M tokens"
    )
    assert [size_text(s) for s in (0.135, 7.62, 235, 1_000, None)] == [
        "135M", "7.6B", "235B", "1,000B", "size not published",
    ]  # fmt: skip
    assert picker_note(3, 1_234) == "Showing 3 of 1,234 models."


def test_the_local_model_is_sized_from_its_own_file_so_the_size_filter_keeps_it() -> None:
    """The bug the page had: every size read from the catalogue's ``size_b``, which the local
    model leaves to its GGUF, so any size filter hid everything ("Showing 0 of 23")."""
    models = {m.id: m for m in picker_models()}
    smol = models["local/smollm2-135m"]
    assert smol.size_b is not None and 0.1 < smol.size_b < 0.2
    assert smol.text == "SmolLM2 135M Instruct (bundled) · $0 in / $0 out per 1M tokens · 135M"
    kept = shown_models(models.values(), PRICE_OFF, SIZE_OFF, False)
    assert [m.id for m in kept] == ["local/smollm2-135m"]
    kept = shown_models(models.values(), PRICE_OFF, 1, True)
    assert len(kept) == len(models)  # every other model does not publish its size
