"""The command line in the first hour (issue 13, items 12–15, 17): text with brackets shown as
written, file errors as one sentence, one rule per input for ``generate`` and ``sweep``, a
refused sweep that prints only its refusal, ``--version``, ``sweeps list`` at 80 columns, and
a sculpture export that shows the sculpture in 3D when opened from disk."""

from __future__ import annotations

import base64
import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from sweepbench.axes.cells import MAX_BUDGET
from sweepbench.errors import UserError
from tests.helpers import cli, run_cli
from tests.web.browser import TIMEOUT_MS

README = Path(__file__).resolve().parents[2] / "README.md"
RANGE = f"a budget is 1 to {MAX_BUDGET:,} tokens"


run = run_cli


def flat(text: str) -> str:
    """Text with Rich's line wrapping undone (every run of whitespace one space)."""
    return " ".join(text.split())


def one_sentence(err: str) -> str:
    """The single message of a refused command (no traceback, nothing else printed)."""
    assert "Traceback" not in err
    text = flat(err)
    assert re.match(r"^(error|refused): ", text), err
    assert len(re.findall(r"\b(error|refused|note):", text)) == 1, err  # nothing else said
    return text


def stored_sweep(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    prompt: str = "hi",
    *,
    args: tuple[str, ...] = (
        "--axis",
        "max_tokens",
        "--values",
        "50,60",
        "--model",
        "scripted/echo",
    ),
) -> dict[str, Any]:
    """Run a free sweep of ``prompt`` and return its ``--json`` result."""
    code, out, err = run(monkeypatch, capsys, "sweep", prompt, *args, "--json")
    assert code == 0, err
    result: dict[str, Any] = json.loads(out)
    return result


# -- item 12: brackets are text, not Rich markup ---------------------------------------------------


def test_keys_names_the_config_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(monkeypatch, capsys, "keys")
    assert code == 0
    assert "put anthropic = '…' under [keys] in" in flat(out)
    assert "under  in" not in out


def test_models_says_where_a_key_goes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(monkeypatch, capsys, "models")
    assert code == 0
    assert "under [keys] in" in flat(err)


def test_an_error_with_brackets_is_shown_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(monkeypatch, capsys, "generate", "scripted/[bold]x[/bold]", "hi")
    assert code == 2
    assert "'[bold]x[/bold]'" in one_sentence(err)


def test_a_sweep_refusal_with_brackets_is_shown_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("sweep", "hi", "--axis", "model", "--values", "scripted/[red]x,scripted/echo")
    code, _, err = run(monkeypatch, capsys, *args, "--estimate-only")
    assert code == 2
    assert "unknown scripted model '[red]x'" in one_sentence(err)


def test_a_note_with_brackets_is_shown_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = "scripted/echo?text=[b]hi[/b]"
    args = ("sweep", "hi", "--axis", "max_tokens", "--values", "50,1e6", "--model", model)
    code, _, err = run(monkeypatch, capsys, *args, "--estimate-only")
    assert code == 0, err
    assert f"note: max tokens 1,000,000 lowered to 100,000, {model}'s limit" in flat(err)
    code, _, err = run(monkeypatch, capsys, "generate", model, "hi", "--max-tokens", "1e6")
    assert code == 0, err
    assert f"note: max tokens 1,000,000 lowered to 100,000, {model}'s limit" in flat(err)


def test_sweeps_show_and_list_print_a_prompt_with_brackets_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    prompt = "draw [b]this[/b] and [red]that"
    sweep = stored_sweep(monkeypatch, capsys, prompt)
    code, out, _ = run(monkeypatch, capsys, "sweeps", "show", sweep["id"])
    assert code == 0
    assert f"prompt: {prompt}" in out
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(monkeypatch, capsys, "sweeps", "list")
    assert code == 0 and prompt in out


def test_a_benchmark_whose_names_hold_brackets_reports_them_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": "1", "q": "say 42", "answer": "42"}\n')
    (tmp_path / "b.yaml").write_text(
        "id: brackets\nname: 'names [/x]'\nareas:\n  - {key: a, label: 'Area [/y]'}\n"
        "tasks:\n  - id: t\n    area: a\n    name: 'Task [bold]'\n    data: d.jsonl\n"
        "    fields: {id: id, prompt_template: '{{ q }}', reference: answer}\n"
        "    scorer: exact\n"
    )
    args = ("bench", "run", str(tmp_path / "b.yaml"), "--model", "scripted/echo?text=42", "--yes")
    code, out, err = run(monkeypatch, capsys, *args)
    assert code == 0, err
    assert "Area [/y]" in out and "Task [bold]" in out
    assert "Scores on the questions that ran: Area [/y] 100.0" in flat(out)


# -- item 13: a file that cannot be written is one sentence, exit 2 -----------------------------


@pytest.mark.parametrize("flag", ["--html", "--json"])
def test_export_into_a_missing_folder_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    flag: str,
) -> None:
    sweep = stored_sweep(monkeypatch, capsys)
    target = tmp_path / "nonexistent" / "dir" / "x.html"
    code, out, err = run(monkeypatch, capsys, "sweeps", "export", sweep["id"], flag, str(target))
    assert code == 2
    said = "".join(one_sentence(err).split())  # a long path wraps mid-word
    assert "".join(f"{flag} {target}: cannot write the file (No such file".split()) in said
    assert not target.exists() and out == ""


@pytest.mark.parametrize("flag", ["--html", "--json"])
def test_export_onto_a_folder_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    flag: str,
) -> None:
    sweep = stored_sweep(monkeypatch, capsys)
    code, _, err = run(monkeypatch, capsys, "sweeps", "export", sweep["id"], flag, str(tmp_path))
    assert code == 2
    assert "cannot write the file (Is a directory)" in one_sentence(err)


def test_export_artifacts_under_a_file_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sweep = stored_sweep(monkeypatch, capsys)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "cells"
    args = ("sweeps", "export", sweep["id"], "--artifacts", str(target))
    code, _, err = run(monkeypatch, capsys, *args)
    assert code == 2
    assert "".join(f"--artifacts {target}: cannot write".split()) in "".join(
        one_sentence(err).split()
    )


def test_export_with_nowhere_to_write_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = stored_sweep(monkeypatch, capsys)
    code, _, err = run(monkeypatch, capsys, "sweeps", "export", sweep["id"])
    assert code == 2
    assert "say where: --json FILE, --html FILE and/or --artifacts DIR" in one_sentence(err)


# -- item 14: one rule for each input, in generate and sweep alike ------------------------------

SWEEP = ("sweep", "--axis", "max_tokens", "--values", "3,5", "--model", "scripted/echo")


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_the_same_sentence_in_generate_and_sweep(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], prompt: str
) -> None:
    said = []
    for args in (("generate", "scripted/echo", prompt), (*SWEEP[:1], prompt, *SWEEP[1:])):
        code, out, err = run(monkeypatch, capsys, *args)
        assert code == 2 and out == ""
        said.append(one_sentence(err))
    assert said[0] == said[1] == "error: the PROMPT argument is empty: give the text to send"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("0", f"max tokens 0 out of range: {RANGE}"),
        ("-5", f"max tokens -5 out of range: {RANGE}"),
        ("20000000", f"max tokens 20000000 out of range: {RANGE}"),
    ],
)
def test_a_budget_out_of_range_is_the_same_sentence_in_generate_and_sweep(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str, words: str
) -> None:
    generate = ("generate", "scripted/echo", "hi", "--max-tokens", value)
    code, _, err = run(monkeypatch, capsys, *generate)
    assert code == 2 and words in one_sentence(err)
    sweep = ("sweep", "hi", "--axis", "max_tokens", "--values", f"{value},16")
    code, _, err = run(monkeypatch, capsys, *sweep, "--model", "scripted/echo")
    assert code == 2 and words in one_sentence(err)
    held = ("sweep", "hi", "--axis", "prompt_version", "--values", "v1,v2", "--max-tokens", value)
    code, _, err = run(monkeypatch, capsys, *held, "--model", "scripted/echo", "--estimate-only")
    assert code == 2 and words in one_sentence(err)


def test_an_unreadable_budget_is_refused_by_generate_and_sweep(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    words = "cannot read max tokens 'lots' as a number"
    code, _, err = run(
        monkeypatch, capsys, "generate", "scripted/echo", "hi", "--max-tokens", "lots"
    )
    assert code == 2 and words in one_sentence(err)
    held = ("sweep", "hi", "--axis", "prompt_version", "--values", "v1,v2", "--max-tokens", "lots")
    code, _, err = run(monkeypatch, capsys, *held, "--model", "scripted/echo", "--estimate-only")
    assert code == 2 and words in one_sentence(err)


def test_generate_reads_a_budget_as_sweep_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("generate", "scripted/lorem?words=3000", "hi", "--json", "--max-tokens")
    code, out, err = run(monkeypatch, capsys, *args, "2k")
    assert code == 0, err
    assert json.loads(out)["usage"]["output_tokens"] == 2000
    # above the model's own limit: lowered to it with a note, as a sweep cell is
    code, out, err = run(
        monkeypatch, capsys, "generate", "scripted/echo", "hi", "--max-tokens", "1e6"
    )
    assert code == 0, err
    assert "note: max tokens 1,000,000 lowered to 100,000, scripted/echo's limit" in flat(err)
    from sweepbench.cli.validate import read_budget

    assert read_budget(" 64,000 ") == 64_000 == read_budget("64k")
    with pytest.raises(UserError, match="out of range"):
        read_budget("0")


def test_an_unknown_axis_says_only_its_own_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("sweep", "hi", "--axis", "colour", "--values", "a,b", "--model", "scripted/echo")
    code, out, err = run(monkeypatch, capsys, *args)
    assert code == 2 and out == ""
    assert one_sentence(err) == (
        "refused: unknown axis 'colour'; axes: model, effort, max_tokens, prompt_version"
    )
    assert "Select at least one variant" not in err


def test_a_refused_plan_prints_only_the_refusal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("sweep", "hi", "--axis", "max_tokens", "--values", "100,200")
    code, out, err = run(monkeypatch, capsys, *args, "--model", "anthropic/claude-haiku-4-5")
    assert code == 2 and out == ""
    assert "refused: No key for anthropic/claude-haiku-4-5" in one_sentence(err)
    assert "variants varying" not in err  # no estimate of a plan that cannot run


def test_a_sweep_the_ceiling_refuses_prints_no_table_of_queued_cells(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-anthropic-key-0123456789")
    monkeypatch.setenv("SWEEPBENCH_ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached
    monkeypatch.setenv("SWEEPBENCH_DAILY_USD", "0.0001")
    args = ("sweep", "hi", "--axis", "max_tokens", "--values", "100,200", "--yes")
    code, out, err = run(monkeypatch, capsys, *args, "--model", "anthropic/claude-haiku-4-5")
    assert code == 2 and out == ""
    text = one_sentence(err)
    assert text.startswith("refused: This sweep could cost up to")
    assert "queued" not in err and "┏" not in err and "variants varying" not in err


# -- item 15: --version, sweeps list at 80 columns, a 3D sculpture export ------------------------


def test_version_prints_the_installed_version(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(monkeypatch, capsys, "--version")
    assert code == 0 and err == ""
    assert out == f"sweepbench {metadata.version('sweepbench')}\n"
    code, out, _ = run(monkeypatch, capsys, "--help")
    assert code == 0 and "--version" in out


def test_version_loads_no_layer_below_the_cli() -> None:
    from tests.test_imports import loaded_after

    code = (
        "import sys\nsys.argv = ['sweepbench', '--version']\nfrom sweepbench.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    layers = ["sweepbench.store", "sweepbench.bench", "sweepbench.sweeps", "sweepbench.web"]
    assert loaded_after(code, [*layers, "sqlalchemy", "pydantic", "numpy", "dash"]) == []


SCULPTURE = ("--kind", "sculpture", "--axis", "max_tokens", "--values", "2000,4000", "--model",
             "scripted/sculpt?tps=0")  # fmt: skip


def test_sweeps_list_is_readable_at_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stored_sweep(monkeypatch, capsys, "a brazier on three legs", args=SCULPTURE)
    long = "Explain why the sky is blue at noon and red at sunset, for a curious child of ten"
    text = stored_sweep(monkeypatch, capsys, long)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(monkeypatch, capsys, "sweeps", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in "".join(lines[:4])  # no header cut short
    for word in ("id", "date", "prompt", "cost", "status"):
        assert word in out
    assert text["id"][:8] in out
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", out)  # the whole date
    assert "sculpture · max tokens · 2 cells" in out and "text · max tokens · 2 cells" in out
    assert "a brazier on three legs" in out
    assert "Explain why the sky is blue" in out and "…" in out  # a long prompt is cut, marked
    assert out.count(" done") == 2


def sculpture_page(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> tuple[Path, dict[str, Any]]:
    sweep = stored_sweep(monkeypatch, capsys, "a brazier", args=SCULPTURE)
    page = tmp_path / "sweep.html"
    code, _, err = run(monkeypatch, capsys, "sweeps", "export", sweep["id"], "--html", str(page))
    assert code == 0, err
    return page, sweep


def test_a_sculpture_export_carries_the_viewer_and_the_glb(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page, _ = sculpture_page(monkeypatch, capsys, tmp_path)
    html = page.read_text("utf-8")
    assert html.count("<model-viewer ") == 2
    sources = re.findall(r'<model-viewer src="data:model/gltf-binary;base64,([^"]+)"', html)
    assert len(sources) == 2 and all(base64.b64decode(s)[:4] == b"glTF" for s in sources)
    assert html.count("<script>") == 1 and 'customElements.define("model-viewer"' in html
    assert "<script src" not in html and not re.search(r"(src|href)=\"https?:", html)
    script = html[html.index("<script>") + 8 : html.rindex("</script>")]
    assert "</script" not in script.lower()


def test_a_text_export_carries_no_viewer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sweep = stored_sweep(monkeypatch, capsys)
    page = tmp_path / "text.html"
    assert cli(monkeypatch, "sweeps", "export", sweep["id"], "--html", str(page)) == 0
    html = page.read_text("utf-8")
    assert "<script" not in html and "<model-viewer" not in html


def test_a_sculpture_export_shows_in_3d_from_disk(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium_path = Path("/usr/bin/chromium")
    if not chromium_path.exists():
        pytest.skip(f"no Chromium at {chromium_path}")
    page_file, _ = sculpture_page(monkeypatch, capsys, tmp_path)
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium_path), args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(page_file.as_uri())
            page.wait_for_function(
                "[...document.querySelectorAll('model-viewer')].every(v => v.loaded)",
                timeout=TIMEOUT_MS,  # a wait for a state, scaled for a loaded machine
            )
            shown = page.evaluate(
                "[...document.querySelectorAll('model-viewer')].map(v => v.getBoundingClientRect()"
                ".height)"
            )
        finally:
            browser.close()
    assert len(shown) == 2 and all(height > 200 for height in shown)
    assert errors == []
    assert all(url.startswith(("file:", "data:", "blob:")) for url in requests), requests


# -- item 17: what the README says an install takes --------------------------------------------


def test_the_readme_does_not_promise_installs_in_seconds() -> None:
    text = " ".join(README.read_text("utf-8").split())
    assert "later installs take seconds" not in text
    assert "later installs skip the compile, but they still take about a minute and a half" in text
