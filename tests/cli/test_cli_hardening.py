"""Bad command-line and environment input (issue 12, items 6–7): every one is one sentence
saying what and where, with exit status 2 — never a traceback — or, for an unreadable spending
ceiling, the documented fallback with a warning."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from sweepbench.axes.cells import MAX_BUDGET
from sweepbench.cli.validate import bind_error, check_arguments, check_port
from sweepbench.errors import UserError
from sweepbench.money.ceilings import MAX_USD, Ceilings, parse_usd_amount
from sweepbench.settings import home, utf8_problem
from sweepbench.sweeps.plan import build_plan
from tests.helpers import run_cli

NOT_UTF8 = os.fsdecode(b"hi \xff")
"""What Python makes of an argument holding the byte 0xff: a lone surrogate."""
MAIN = "import sys; from sweepbench.cli import main; sys.argv[0] = 'sweepbench'; main()"


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """``sweepbench ARGS`` in-process: exit code, stdout, stderr with rich's wrapping undone."""
    code, out, err = run_cli(monkeypatch, capsys, *args)
    return code, out, " ".join(err.split())


def says(err: str, words: str) -> bool:
    """``words`` is in ``err``, however rich wrapped it (long paths break mid-word)."""
    return "".join(words.split()) in "".join(err.split())


def refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``sweepbench ARGS`` must exit 2 with a message and no traceback; the message."""
    code, _, err = run(monkeypatch, capsys, *args)
    assert code == 2, err
    assert "Traceback" not in err and err.strip()
    return err


# -- item 6: money -------------------------------------------------------------------------------

ESTIMATE = ("bench", "estimate", "sample", "--preset", "auto", "-m", "scripted/echo")


@pytest.mark.parametrize(
    ("limit", "words"),
    [
        ("1e999", "--limit 1e999: a limit is at most $1,000,000,000"),
        ("1e30", "--limit 1e30: a limit is at most $1,000,000,000"),
        ("1000000000.01", "a limit is at most $1,000,000,000"),
        ("judge=1e999", "--limit judge=1e999: a limit is at most $1,000,000,000"),
        ("nan", "--limit nan: a limit is a dollar amount ≥ 0"),
        ("inf", "--limit inf: a limit is a dollar amount ≥ 0"),
        ("-Infinity", "--limit -Infinity: a limit is a dollar amount ≥ 0"),
        ("-1", "--limit -1: a limit is a dollar amount ≥ 0"),
        ("judge=abc", "--limit judge=abc: not a dollar amount"),
        ("", "--limit : not a dollar amount"),
    ],
)
def test_a_limit_out_of_range_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], limit: str, words: str
) -> None:
    assert words in refused(monkeypatch, capsys, *ESTIMATE, "--limit", limit)


def test_the_largest_limit_is_accepted_and_shown(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(monkeypatch, capsys, *ESTIMATE, "--limit", "1e9")
    assert code == 0, err
    assert "$1,000,000,000.00" in err


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("5", Decimal(5)),
        (" $0.50 ", Decimal("0.50")),
        ("$ 2", Decimal(2)),
        ("-0", Decimal(0)),
        (3, Decimal(3)),
        (0.1, Decimal("0.1")),
        (MAX_USD, MAX_USD),
        ("1e-30", Decimal("1e-30")),
    ],
)
def test_the_one_money_parser_accepts(value: object, expected: Decimal) -> None:
    assert parse_usd_amount(value) == expected


@pytest.mark.parametrize(
    "value",
    ["1e400", "1e999", "1000000001", "inf", "nan", "sNaN", "-1", "abc", "", True, None, [1]],
)
def test_the_one_money_parser_refuses(value: object) -> None:
    with pytest.raises(ValueError) as caught:
        parse_usd_amount(value)
    assert str(caught.value) in (
        "not a dollar amount",
        "a limit is a dollar amount ≥ 0",
        "a limit is at most $1,000,000,000",
    )


@pytest.mark.parametrize("bad", ["1e400", "1e30", "Infinity", "nan", "1000000000.5"])
@pytest.mark.parametrize(
    ("name", "field", "default"),
    [
        ("SWEEPBENCH_DAILY_USD", "daily_usd", Decimal(10)),
        ("SWEEPBENCH_TOTAL_USD", "total_usd", None),
    ],
)
def test_an_unusable_ceiling_falls_back_with_the_documented_warning(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    bad: str,
    name: str,
    field: str,
    default: Decimal | None,
) -> None:
    with caplog.at_level(logging.WARNING, logger="sweepbench.money.ceilings"):
        ceilings = Ceilings.from_env({name: bad})
    assert getattr(ceilings, field) == default and name not in ceilings.overridden
    assert f"{name}={bad!r}" in caplog.text and "using the default" in caplog.text
    monkeypatch.setenv(name, bad)
    code, out, err = run(monkeypatch, capsys, "spend")
    assert code == 0, err
    assert "$10.00" in out + err  # today's default ceiling, shown
    with pytest.raises(ValueError):
        Ceilings(daily_usd=Decimal("1e400"))


# -- item 6: text that is not UTF-8 --------------------------------------------------------------


def test_a_generate_prompt_that_is_not_utf8_names_the_argument_and_byte(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refused(monkeypatch, capsys, "generate", "scripted/echo", NOT_UTF8)
    assert 'command-line argument 3, "hi \\xff", is not valid UTF-8 text' in err
    assert "byte 0xff at byte offset 3" in err


def test_a_sweep_prompt_or_option_that_is_not_utf8_names_where(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = ("sweep", "--axis", "max_tokens", "--values", "5,6", "--model", "scripted/echo")
    err = refused(monkeypatch, capsys, *sweep, NOT_UTF8)
    assert "command-line argument 8" in err and "byte 0xff at byte offset 3" in err
    err = refused(monkeypatch, capsys, *sweep, "hi", "--effort", NOT_UTF8)
    assert "argument 10, after --effort" in err
    err = refused(monkeypatch, capsys, *sweep, "hi", f"--effort={NOT_UTF8}")
    assert "the value of --effort (command-line argument 9)" in err
    assert "byte 0xff at byte offset 3" in err  # the offset is in the value


def test_the_plan_refuses_a_prompt_that_is_not_utf8() -> None:
    # the web page and the Python API build the plan without the command line's check
    plan = build_plan(NOT_UTF8, "max_tokens", ["5", "6"], model="scripted/echo")
    assert [r.message for r in plan.blocking(spending=False)] == [
        "The prompt is not valid UTF-8 text (byte 0xff at byte offset 3)."
    ]
    lone = build_plan("é\ud800", "max_tokens", ["5"], model="scripted/echo")
    assert "a lone surrogate U+D800 at byte offset 2" in lone.refusals[0].message


def test_utf8_problem_and_check_arguments() -> None:
    assert utf8_problem("plain ascii") is None and utf8_problem("été ✓") is None
    assert utf8_problem(os.fsdecode(b"\xc3\xa9\x80")) == "byte 0x80 at byte offset 2"
    check_arguments(["sweep", "été", "--values", "1,2"])
    with pytest.raises(UserError, match=r"^command-line argument 1, "):
        check_arguments([NOT_UTF8])


def test_a_config_file_that_is_not_utf8_names_the_file_and_offset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(b'[keys]\nopenrouter = "\xff"\n')
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(config))
    err = refused(monkeypatch, capsys, "keys")
    assert says(err, f"{config} (SWEEPBENCH_CONFIG) is not UTF-8 text: byte 0xff at byte offset 21")


def test_a_models_file_that_is_not_utf8_names_the_file_and_offset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], isolated_home: Path
) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "models.toml").write_bytes(b"# caf\xe9\n")
    err = refused(monkeypatch, capsys, "models")
    assert "models.toml is not UTF-8 text: byte 0xe9 at byte offset 5" in err


# -- item 6: the home folder and the config file -------------------------------------------------


@pytest.mark.parametrize("where", ["/dev/null", "a file", "below a file"])
def test_a_home_that_cannot_be_a_folder_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    where: str,
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    path = {"/dev/null": "/dev/null", "a file": str(a_file), "below a file": f"{a_file}/home"}
    monkeypatch.setenv("SWEEPBENCH_HOME", path[where])
    err = refused(monkeypatch, capsys, "spend")
    assert says(err, f"SWEEPBENCH_HOME={path[where]}")
    assert "not a folder" in err or "cannot be created (Not a directory)" in err
    with pytest.raises(UserError, match=r"^SWEEPBENCH_HOME="):
        home()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_home_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("SWEEPBENCH_HOME", str(locked / "home"))
    err = refused(monkeypatch, capsys, "spend")
    assert says(err, f"SWEEPBENCH_HOME={locked / 'home'}: the folder cannot be created")


def test_a_home_that_is_not_utf8_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_HOME", os.fsdecode(bytes(tmp_path) + b"/\xff"))
    err = refused(monkeypatch, capsys, "spend")
    assert "SWEEPBENCH_HOME is not valid UTF-8 text (byte 0xff at byte offset" in err


def test_a_config_that_is_not_toml_is_one_sentence_with_line_and_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "passwd"
    config.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(config))
    code, _, err = run(monkeypatch, capsys, "keys")  # the scrubber reads the config too
    assert code == 2 and "Traceback" not in err
    sentence = (
        f"error: {config} (SWEEPBENCH_CONFIG) is not valid TOML: Expected '=' after a key in a "
        "key/value pair (at line 1, column 5)"
    )
    assert "".join(err.split()) == "".join(sentence.split())  # that one sentence, nothing else


def test_a_config_that_is_a_folder_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(tmp_path))
    err = refused(monkeypatch, capsys, "keys")
    assert says(err, f"{tmp_path} (SWEEPBENCH_CONFIG) is a folder, not a TOML file")


# -- item 7: ports -------------------------------------------------------------------------------


@pytest.mark.parametrize("port", [1, 8050, 65535])
def test_check_port_accepts_every_tcp_port(port: int) -> None:
    assert check_port(port) == port


@pytest.mark.parametrize("port", [-1, 0, 65536, 99999, 2**70, True])
def test_check_port_refuses_what_is_no_port(port: int) -> None:
    with pytest.raises(UserError, match=r"^--port .+: a port is a whole number from 1 to 65535$"):
        check_port(port)


def test_bind_error_names_the_address() -> None:
    taken = OSError(98, "Address already in use")
    assert str(bind_error(taken, "::1", 8050)) == (
        "cannot listen on [::1]:8050: Address already in use; pick another --host or --port"
    )


# -- item 7: sweep values ------------------------------------------------------------------------

SWEEP = ("sweep", "hi", "--axis", "max_tokens", "--model", "scripted/echo", "--estimate-only")


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ("-1,0", "max tokens -1, 0 out of range: a budget is 1 to 10,000,000 tokens"),
        ("10,1e30", "max tokens 1e30 out of range"),
        ("10,-5k", "max tokens -5k out of range"),
    ],
)
def test_budgets_out_of_range_are_refused_by_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], values: str, words: str
) -> None:
    assert f"refused: {words}" in refused(monkeypatch, capsys, *SWEEP, "--values", values)


def test_budgets_that_clamp_to_the_same_cell_are_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # scripted/echo takes at most 100,000 output tokens: 200,000 is lowered onto 100,000
    err = refused(monkeypatch, capsys, *SWEEP, "--values", "100000,200000")
    assert "max tokens 100,000 and 200,000 would run with the same settings" in err
    plan = build_plan("hi", "max_tokens", ["100k", "100000"], model="scripted/echo")
    assert plan.refusals == () and [c.max_tokens for c in plan.cells] == [100_000]


def test_held_budget_and_cell_cap_out_of_range_are_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    vary = ("sweep", "hi", "--axis", "prompt_version", "--values", "v1,v2", "--estimate-only")
    err = refused(monkeypatch, capsys, *vary, "--model", "scripted/echo", "--max-tokens", "-5")
    assert "max tokens -5 out of range" in err
    err = refused(monkeypatch, capsys, *SWEEP, "--values", "5,6", "--max-cells", "0")
    assert "max cells 0 out of range" in err
    # varying max tokens, the held budget is not used: nothing to refuse
    assert (
        build_plan("hi", "max_tokens", ["5"], max_tokens="0", model="scripted/echo").refusals == ()
    )


def test_a_budget_at_the_top_of_the_range_is_lowered_with_a_note() -> None:
    plan = build_plan("hi", "max_tokens", [str(MAX_BUDGET)], model="scripted/echo")
    assert plan.refusals == () and plan.cells[0].max_tokens == 100_000
    assert any("lowered to 100,000" in note for note in plan.notes)


# -- item 7: bench list --------------------------------------------------------------------------


def _declared(folder: Path, *, name: str = "ELBench", rows: int = 3000) -> Path:
    """A declared benchmark of ``rows`` questions (and one broken row) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": str(i), "q": f"{i} + 1?", "a": str(i + 1)}) for i in range(rows)]
    lines.append('{"id": "bad", "q": "[/b] no answer", "a": null}')
    (folder / "q.jsonl").write_text("\n".join(lines) + "\n")
    declaration = folder / "benchmark.yaml"
    declaration.write_text(
        f"id: big\nname: {json.dumps(name)}\nareas:\n  - key: m\n    label: '[bold]Maths'\n"
        "tasks:\n  - id: add\n    area: m\n    name: Add\n    data: q.jsonl\n"
        "    fields:\n      id: id\n      prompt: q\n      reference: a\n    scorer: exact\n"
    )
    return declaration


def test_bench_list_keeps_the_listing_and_the_hint_on_their_own_lines(
    tmp_path: Path, isolated_home: Path
) -> None:
    declaration = _declared(tmp_path / "decl")
    done = subprocess.run(  # stdout and stderr into one pipe, as a terminal shows them
        [sys.executable, "-c", MAIN, "bench", "list", str(declaration)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        env={**os.environ, "SWEEPBENCH_HOME": str(isolated_home), "COLUMNS": "100"},
        check=False,
    )
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert "  --preset full: Complete benchmark · all 3,000 questions" in lines
    hint = next(line for line in lines if "its data is not shipped" in line)
    assert hint.startswith("ELBench: ")
    skipped = next(line for line in lines if "empty reference" in line)
    assert skipped.startswith("skipped q.jsonl:3001")  # a style, not "[yellow]" in the text


def test_bench_list_shows_names_from_a_declaration_as_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    declaration = _declared(tmp_path / "decl", name="[/x] Big", rows=3)
    code, out, err = run(monkeypatch, capsys, "bench", "list", str(declaration))
    assert code == 0, err
    assert "[/x] Big (big)" in out and "[bold]Maths" in out


# -- more nasty input on the same commands -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("generate", "scripted/echo", "hi", "--temperature", "nan"), "temperature must be"),
        (("generate", "scripted/echo", "hi", "--temperature", "-1"), "from 0 to 2, got -1.0"),
        (("generate", "scripted/echo", "hi", "--temperature", "1e308"), "from 0 to 2"),
        (("generate", "scripted/echo", "   "), "the PROMPT argument is empty"),
        (("generate", "", "hi"), "model ids look like provider/model"),
        (("sweep", "hi", "--axis", "", "--values", "5"), "unknown axis ''"),
        (("sweeps", "show", "%"), "no sweep '%'"),
        (("sweeps", "show", "  "), "give a sweep id"),
        (("bench", "run", "sample", "-m", "scripted/echo", "--concurrency", "0"), "between 1"),
        (("bench", "estimate", "sample", "-m", "  "), "no model given"),
    ],
)
def test_more_bad_input_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    words: str,
) -> None:
    assert words in refused(monkeypatch, capsys, *args)


def test_sweeps_list_limit_out_of_range_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for limit in ("0", "-1", "99999999999999999999999"):
        assert "--limit" in refused(monkeypatch, capsys, "sweeps", "list", "--limit", limit)


def test_sweeps_export_to_a_path_that_cannot_be_written_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(
        monkeypatch, capsys, "sweep", "hi", "--axis", "max_tokens", "--values", "5,6",
        "--model", "scripted/echo", "--json",
    )  # fmt: skip
    assert code == 0, err
    sweep_id = json.loads(out)["id"]
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = {
        ("--json", str(tmp_path)): f"--json {tmp_path}: cannot write the file (Is a directory)",
        ("--html", str(tmp_path / "no" / "x.html")): "cannot write the file (No such file",
        ("--artifacts", str(a_file)): f"--artifacts {a_file}: cannot write {a_file}",
    }
    for (flag, path), words in cases.items():
        assert says(refused(monkeypatch, capsys, "sweeps", "export", sweep_id, flag, path), words)


@pytest.mark.parametrize("port", ["-1", "0", "99999"])
def test_serve_refuses_a_port_that_is_not_one_before_opening_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], port: str
) -> None:
    err = refused(monkeypatch, capsys, "serve", "--port", port)
    assert says(err, f"--port {port}: a port is a whole number from 1 to 65535")


def test_serve_on_a_taken_port_or_an_unknown_host_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        err = refused(monkeypatch, capsys, "serve", "--port", port)
    assert says(err, f"cannot listen on 127.0.0.1:{port}") and says(err, "--host or --port")
    err = refused(monkeypatch, capsys, "serve", "--host", "no-such-host.invalid")
    assert says(err, "cannot listen on no-such-host.invalid:8050")
