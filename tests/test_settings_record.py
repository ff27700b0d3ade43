"""One settings record (issue 28 §4): every ``SWEEPBENCH_*`` variable is declared once in
:mod:`sweepbench.variables` and read through it; a value that cannot be read is one warning
naming the variable and the value, and the default (a place that cannot be used: a UserError);
both settings files are parsed once per version of the file."""

from __future__ import annotations

import ast
import logging
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest

import sweepbench
from sweepbench import settings, variables
from sweepbench.errors import UserError
from sweepbench.models.catalog import known_models
from sweepbench.variables import VARIABLES

PACKAGE = Path(sweepbench.__file__).parent
NAME = re.compile(r"SWEEPBENCH_[A-Z0-9_]*[A-Z0-9]")


def test_every_variable_named_in_the_source_is_declared() -> None:
    undeclared = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in NAME.findall(path.read_text(encoding="utf-8"))
        if name not in VARIABLES
    }
    assert undeclared == set(), "declare it in sweepbench/variables.py"
    assert len(VARIABLES) == 22


def test_every_declaration_is_complete() -> None:
    for name, variable in VARIABLES.items():
        assert variable.name == name and name.startswith("SWEEPBENCH_")
        assert variable.meaning.endswith(".") and "\n" not in variable.meaning, name
        assert variable.shown_default and variable.expects, name
    secrets = {name for name, variable in VARIABLES.items() if variable.secret}
    assert secrets == {"SWEEPBENCH_TOKEN", "SWEEPBENCH_COMPATIBLE_API_KEY"}


READERS_OF_OTHER_VARIABLES = {
    "settings.py",  # the providers' key variables, an endpoint's api_key_env, the scrubber
    "bench/sources/hf.py",  # HF_HOME, HF_DATASETS_CACHE, the Hub's offline switches
    "bench/ray_driver.py",  # RAY_USAGE_STATS_ENABLED for the cluster it starts
    "bench/scoring/mathanswer.py",  # the environment of its checking subprocess
    "bench/scoring/math_symbolic.py",  # (the same, where that subprocess is started)
}
"""Modules that touch ``os.environ`` for something other than a ``SWEEPBENCH_*`` variable."""


def _environment_users(root: Path = PACKAGE) -> set[str]:
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in {"environ", "getenv", "environb"}
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ) or (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and {a.name for a in node.names} & {"environ", "getenv", "environb"}
            ):
                found.add(path.relative_to(root).as_posix())
    return found


def test_only_the_record_reads_sweepbench_variables() -> None:
    users = _environment_users()
    assert "variables.py" in users
    assert users - {"variables.py"} <= READERS_OF_OTHER_VARIABLES
    for name in users & READERS_OF_OTHER_VARIABLES - {"settings.py"}:
        text = (PACKAGE / name).read_text(encoding="utf-8")
        assert not re.search(r"environ[^\n]*SWEEPBENCH_", text), name


def test_the_environment_is_read_when_asked_not_at_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWEEPBENCH_DB", "sqlite:///first.db")
    assert settings.database_url() == "sqlite:///first.db"
    monkeypatch.setenv("SWEEPBENCH_DB", "sqlite:///second.db")  # e.g. set for a Ray worker
    assert settings.database_url() == "sqlite:///second.db"
    assert variables.CALLS_PER_HOUR.value({"SWEEPBENCH_CALLS_PER_HOUR": " 7 "}) == 7


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("abc", "SWEEPBENCH_OPENROUTER_TTL='abc' is not a number ≥ 0"),
        ("nan", "SWEEPBENCH_OPENROUTER_TTL='nan' is not a number ≥ 0"),
        ("-5", "SWEEPBENCH_OPENROUTER_TTL='-5' is not a number ≥ 0"),
    ],
)
def test_a_bad_ttl_is_one_warning_and_the_default(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str, said: str
) -> None:
    from sweepbench.models.openrouter import DEFAULT_TTL_S, ttl_s

    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_TTL", value)
    with caplog.at_level(logging.WARNING):
        assert ttl_s() == DEFAULT_TTL_S == 86400
    assert f"{said}; using the default (86400 (a day))" in caplog.text
    monkeypatch.setenv("SWEEPBENCH_OPENROUTER_TTL", " 90 ")
    assert ttl_s() == 90


@pytest.mark.parametrize("name", [n for n, v in VARIABLES.items() if not v.place])
def test_no_variable_turns_a_bad_value_into_a_traceback(
    name: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    variable = VARIABLES[name]
    for bad in ("not a value!", "1" * 5000, "1e999", "-1", "9" * 400 + ".5"):
        monkeypatch.setenv(name, bad)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            reading = variable.reading()
        if reading.problem is None:  # texts: taken as they are
            assert reading.value is not None
            continue
        assert reading.value == variable.default and not reading.applied
        assert caplog.text.count(name) == 1 and "using the default" in caplog.text


@pytest.mark.parametrize("name", ["SWEEPBENCH_HOME", "SWEEPBENCH_CONFIG"])
def test_a_place_that_is_not_utf8_is_a_user_error_naming_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, os.fsdecode(b"/tmp/\xff"))
    with pytest.raises(UserError, match=f"^{name} is not valid UTF-8 text"):
        VARIABLES[name].value()


def test_flags_and_choices_read_their_words(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    free = variables.COMPATIBLE_FREE
    assert [free.value({free.name: w}) for w in ("1", "TRUE", "yes", "on")] == [True] * 4
    assert [free.value({free.name: w}) for w in ("0", "false", "No", "off", "")] == [False] * 5
    assert variables.ENV.value({"SWEEPBENCH_ENV": " Production "}) == "production"
    with caplog.at_level(logging.WARNING):
        assert variables.ENV.value({"SWEEPBENCH_ENV": "prod"}) == "development"
    assert "SWEEPBENCH_ENV='prod' is not production or development" in caplog.text
    hosts = {"SWEEPBENCH_ALLOWED_HOSTS": "a.example, b.example  c"}
    assert variables.ALLOWED_HOSTS.value(hosts) == ("a.example", "b.example", "c")
    assert variables.TOTAL_USD.value({"SWEEPBENCH_TOTAL_USD": "Off"}) is None
    assert variables.DAILY_USD.value({"SWEEPBENCH_DAILY_USD": "$2.50"}) == Decimal("2.50")


def test_a_secret_is_never_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    secret = variables.Variable("SWEEPBENCH_X", "x.", int, 0, "0", "a number", secret=True)
    with caplog.at_level(logging.WARNING):
        reading = secret.reading({"SWEEPBENCH_X": "hunter2-secret"})
    assert reading.problem is not None and "hunter2" not in reading.problem
    assert "hunter2" not in caplog.text


# -- the settings files, parsed once ------------------------------------------------------------


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    parsed: list[Path] = []
    real = settings.read_toml

    def counting(path: Path, *args: object, **kwargs: object) -> object:
        parsed.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings, "read_toml", counting)
    return parsed


MODEL = '[openai.my-model]\nlabel = "Mine"\nprice_in = 1\nprice_out = 2\n'


def test_models_toml_is_parsed_once_and_again_when_it_changes(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    path = isolated_home / "models.toml"
    path.write_text(MODEL, "utf-8")
    parsed = _count_parses(monkeypatch)
    for _ in range(5):
        assert known_models()["openai/my-model"].label == "Mine"
    assert parsed == [path]
    path.write_text(MODEL.replace("Mine", "Mine, renamed"), "utf-8")  # another size
    assert known_models()["openai/my-model"].label == "Mine, renamed"
    assert known_models()["openai/my-model"].label == "Mine, renamed"
    assert parsed == [path, path]
    path.unlink()
    assert "openai/my-model" not in known_models()


def test_a_misspelt_setting_in_models_toml_is_refused_each_time(
    isolated_home: Path,
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "models.toml").write_text(MODEL.replace("price_in", "price_input"), "utf-8")
    for _ in range(2):  # a refusal is not cached as an empty catalogue
        with pytest.raises(UserError, match=r"line 3: .*'price_input' \(did you mean 'price_in'"):
            known_models()


def test_config_toml_is_parsed_once_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[leaderboard]\nshared = "one"\n', "utf-8")
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(path))
    parsed = _count_parses(monkeypatch)
    for _ in range(3):
        assert settings.shared_place() == str(tmp_path / "one")
        settings.load_config()
    assert parsed == [path]
    path.write_text('[leaderboard]\nshared = "two2"\n', "utf-8")
    assert settings.shared_place() == str(tmp_path / "two2")
    assert parsed == [path, path]


def test_the_readme_lists_every_variable() -> None:
    readme = (PACKAGE.parent.parent / "README.md").read_text("utf-8")
    section = readme[readme.index("### Configuration") :]
    assert [name for name in VARIABLES if f"`{name}`" not in section] == []
