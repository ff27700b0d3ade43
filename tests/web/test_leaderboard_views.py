"""The Leaderboard page's benchmark picker, its price views and its task names in a real
browser (issue 29 §4): your runs of the sample benchmark side by side on its own board (the
choice kept through Refresh and a scope change, and opened by ``?benchmark=``), the measured
view placing the published models at their listed price (marked), the price limit's title on
the chosen measure, and One task only by the tasks' names — with nothing asked of any host but
127.0.0.1."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal

from sweepbench.bench.record import dump_record, load_record
from sweepbench.bench.storage import BenchStore
from sweepbench.leaderboard.board import LISTED_NOTE
from sweepbench.leaderboard.published import PAPER_JUDGE
from sweepbench.leaderboard.sources import ELBENCH
from sweepbench.store import Store
from sweepbench.web.leaderboard_data import board_view, filters_of, sources
from tests.leaderboard.helpers import store_answered_golden_run, store_golden_run
from tests.web.browser import RecordedPage
from tests.web.conftest import Served
from tests.web.test_leaderboard_page import TRACES, _clean, _open, _pick, _traces

SAMPLE = "sweepbench sample"
"""The sample benchmark's name: its choice in the Benchmark picker."""
OTHER_MODEL = "openrouter/openai/gpt-5.4"


def store_sample_runs() -> tuple[str, str]:
    """Two complete runs of the sample benchmark by two models, graded by one judge (the
    golden run made complete, and a copy of it under another model). Their run ids."""
    first = store_answered_golden_run(complete=True)
    with Store.open() as store:
        bench = BenchStore(store)
        row = bench.run(first)
        assert row is not None and row.record is not None and row.benchmark == "sample"
        data = json.loads(row.record)
        model = data["roles"]["target"]["model"]
        second = first[:-4] + "cafe"
        data.update(run_id=second)
        data["roles"]["target"]["model"] = OTHER_MODEL
        data["prices"][OTHER_MODEL] = data["prices"].pop(model)
        record = load_record(json.dumps(data))
        bench.create_run(replace(row, id=second, model=OTHER_MODEL, record=None))
        bench.set_record(second, dump_record(record))
    return first, second


def _has_runs(count: int) -> str:
    return f"({TRACES})() && ({TRACES})()['Your runs'] === {count}"


def test_the_sample_benchmarks_runs_are_on_its_own_board(
    page: RecordedPage, served: Served
) -> None:
    """A user without keys sees their runs of the sample benchmark side by side: the
    Benchmark picker (ELBench first, the default) opens the sample's board on its runs' judge,
    its areas and headline; Refresh and the scope keep the choice, and ``?benchmark=sample``
    opens it."""
    first, second = store_sample_runs()
    elbench_run = store_golden_run()  # an ELBench run, not on the sample's board
    _open(page, served)
    assert page.input_value("#lb-benchmark") == "ELBench (published results and your runs)"
    assert "Your runs" not in _traces(page)

    _pick(page, "#lb-benchmark", SAMPLE)
    page.wait_for_function(_has_runs(2))
    assert "Published" not in _traces(page)
    assert page.input_value("#lb-board") == "openai/gpt-5-mini"  # the runs' judge's board
    value = page.inner_text("#lb-value")
    assert first in value and second in value and OTHER_MODEL in value
    headline = page.inner_text("#lb-headline")
    assert headline.startswith(f"{SAMPLE} scores models on 40 questions in four areas.")
    assert "holds your runs only" in headline
    page.click("#lb-area")
    assert page.get_by_role("option", name="Instruction following", exact=True).is_visible()
    page.keyboard.press("Escape")
    assert not page.get_by_role("button", name="Published results").is_visible()
    page.get_by_role("button", name="Your runs").click()
    runs = page.inner_text("#lb-runs")
    assert first in runs and second in runs and elbench_run not in runs

    page.click("#lb-refresh")  # the choice stays, as the other controls' do
    page.wait_for_selector("#lb-refresh-note >> text=Re-read the store: 2 of your runs")
    assert page.input_value("#lb-benchmark") == SAMPLE
    page.get_by_label("Include the region-specific sets").check(force=True)
    page.wait_for_function(f"({TRACES})() && !('Your runs' in ({TRACES})())")  # core runs
    assert page.input_value("#lb-benchmark") == SAMPLE
    assert "No runs of yours in this scope yet" in page.inner_text("#lb-runs-table")

    _pick(page, "#lb-benchmark", "ELBench (published results and your runs)")
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] > 0")
    assert page.input_value("#lb-board") == f"{PAPER_JUDGE} (the paper's judge)"

    page.goto(f"{served.url}/leaderboard?benchmark=sample")
    page.wait_for_function(_has_runs(2))
    assert page.input_value("#lb-benchmark") == SAMPLE
    _clean(page)


def test_the_measured_view_places_the_published_models_at_their_listed_price(
    page: RecordedPage, served: Served
) -> None:
    """Nothing is measured for a published model: the measured view places it at its listed
    price, marked § in the value table and on the chart, the takeaway saying what § means;
    the price limit's title follows the chosen measure."""
    _open(page, served)
    published = _traces(page)["Published"]
    page.wait_for_selector("#lb-max-price-label >> text=Highest price ($/1M tokens, blended")
    _pick(page, "#lb-measure", "measured cost of a full run (USD)")
    page.wait_for_selector("#lb-value >> text=§")
    page.wait_for_function(f"({TRACES})() && ({TRACES})()['Published'] === {published}")
    assert LISTED_NOTE in page.inner_text("#lb-takeaway")
    assert "Not placed: no price: Doubao-Seed-2.0-Pro" in page.inner_text("#lb-takeaway")
    labels = page.evaluate("() => document.querySelector('#lb-chart .js-plotly-plot').data[0].text")
    assert labels and all(label.endswith(" §") for label in labels)
    assert "Highest price (measured cost of a full run (USD)" in page.inner_text(
        "#lb-max-price-label"
    )
    _pick(page, "#lb-measure", "$/1M output tokens")
    page.wait_for_selector("#lb-max-price-label >> text=Highest price ($/1M output tokens;")
    page.wait_for_function("() => !document.querySelector('#lb-value').innerText.includes('§')")
    _clean(page)


def test_one_task_only_lists_the_tasks_by_name(page: RecordedPage, served: Served) -> None:
    """One task only offers ELBench's tasks by the names the rest of the app uses (MMLU-Pro,
    not mmlu_pro); picking one titles the chart with it."""
    _open(page, served)
    page.click("#lb-task")
    assert page.get_by_role("option", name="MMLU-Pro", exact=True).is_visible()
    assert page.get_by_role("option", name="mmlu_pro", exact=True).count() == 0
    page.get_by_role("option", name="MMLU-Pro", exact=True).click()
    page.wait_for_function(
        "() => { const gd = document.querySelector('#lb-chart .js-plotly-plot');"
        " return gd && gd.layout && gd.layout.title &&"
        " String(gd.layout.title.text).startsWith('MMLU-Pro · board:'); }"
    )
    _clean(page)


def test_the_web_price_limit_is_on_the_chosen_measure() -> None:
    """The page's price limit is the board's: with the output measure a model whose output
    price is above the limit is hidden though its blended price is below it."""
    with Store.open() as store:
        found = sources(store, "core", ELBENCH)
        blended_view = board_view(
            found, judge=PAPER_JUDGE, metric="overall", measure="blended",
            filters=filters_of(30, 1000, True), show_runs=True,
        )  # fmt: skip
    placed = blended_view.board.placed
    dearest = max(placed, key=lambda p: p.price)  # blended below its output price
    assert dearest.row.price is not None
    limit = float(dearest.price)
    assert Decimal(str(limit)) < dearest.row.price.output_per_million

    def shown(measure: str) -> list[str]:
        view = board_view(
            found, judge=PAPER_JUDGE, metric="overall", measure=measure,  # type: ignore[arg-type]
            filters=filters_of(limit, 1000, True), show_runs=True,
        )  # fmt: skip
        assert all(p.price <= Decimal(str(limit)) for p in view.board.placed)
        return [p.row.model for p in view.board.placed]

    assert dearest.row.model in shown("blended")
    assert dearest.row.model not in shown("output")
