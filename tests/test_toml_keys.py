"""Unknown sections and settings in config.toml and models.toml are refused with the file, the
line and the nearest known name (issue 28 §4), never ignored. (A variable that cannot be read:
tests/test_settings_record.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from sweepbench.errors import UserError
from sweepbench.models.catalog import MODEL_SETTINGS, MODELS_SCHEMA, known_models
from sweepbench.settings import CONFIG_SCHEMA, load_config, read_toml
from sweepbench.toml_keys import line_of, refuse_unknown_keys
from tests.helpers import run_cli


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, "utf-8")
    monkeypatch.setenv("SWEEPBENCH_CONFIG", str(path))
    return path


def test_a_misspelt_price_in_models_toml_is_refused_not_free(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_home.mkdir(parents=True)
    models = isolated_home / "models.toml"
    models.write_text('[scripted.guess]\nlabel = "Guess"\nprice_input = 1000\n', "utf-8")
    code, _out, err = run_cli(monkeypatch, capsys, "models")
    said = " ".join(err.split())
    assert code == 2 and "Traceback" not in err
    assert f"{models}, line 3: [scripted.guess] has no setting 'price_input'" in said
    assert "(did you mean 'price_in'?)" in said
    models.write_text("[scripted.guess]\nprice_in = 1000\nprice_out = 1000\n", "utf-8")
    assert known_models()["scripted/guess"].price_in == 1000  # the right name is read


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '[endpoint.myvllm]\nbase_url = "http://127.0.0.1:8000/v1"\n',
            "line 1: no section [endpoint] (did you mean 'endpoints'?)",
        ),
        ('[leaderbord]\nshared = "/tmp/x"\n', "line 1: no section [leaderbord] (did you mean"),
        (
            '[endpoints.v]\nbase_url = "http://127.0.0.1:8000/v1"\napi_keyenv = "V_KEY"\n',
            "line 3: [endpoints.v] has no setting 'api_keyenv' (did you mean 'api_key_env'?)",
        ),
        ('[benchmarks]\nfolder = ["."]\n', "line 2: [benchmarks] has no setting 'folder'"),
    ],
)
def test_an_unknown_config_section_or_setting_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, said: str
) -> None:
    path = _config(tmp_path, monkeypatch, text)
    with pytest.raises(UserError) as refused:
        load_config()
    message = str(refused.value)
    assert message.startswith(f"{path} (SWEEPBENCH_CONFIG), line ") and said in message


def test_every_documented_config_section_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(
        tmp_path,
        monkeypatch,
        '[keys]\nopenrouter = "k"\n\n[endpoints.ollama]\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key_env = "OLLAMA_KEY"\nmodels = ["llama3.2"]\nfree = true\n\n'
        '[local_models]\nmine = "/tmp/m.gguf"\n\n[leaderboard]\nshared = "/tmp/s"\n\n'
        '[benchmarks]\nfolders = ["/tmp"]\n',
    )
    config = load_config()
    assert set(config.raw) == set(CONFIG_SCHEMA) and "ollama" in config.endpoints


def test_the_bundled_catalogue_uses_only_known_settings() -> None:
    text = (Path(__file__).parents[1] / "src/sweepbench/models/known_models.toml").read_text()
    read = read_toml(Path(__file__).parents[1] / "src/sweepbench/models/known_models.toml")
    refuse_unknown_keys(read, MODELS_SCHEMA, text, "known_models.toml")  # raises if not
    assert all(set(spec) <= MODEL_SETTINGS for models in read.values() for spec in models.values())


def test_line_of_finds_settings_and_tables_in_quoted_and_dotted_headers() -> None:
    text = (
        '# a comment\n[keys]\nopenrouter = "k"\n\n'
        '[endpoints."my vllm"]\nbase_url = "x"\n"api key" = 1\n[[benchmarks.list]]\n'
    )
    assert line_of(text, ("keys",), "openrouter") == 3
    assert line_of(text, ("endpoints", "my vllm"), "base_url") == 6
    assert line_of(text, ("endpoints", "my vllm"), "api key") == 7
    assert line_of(text, (), "endpoints") == 5
    assert line_of(text, ("benchmarks",), "list") == 8
    assert line_of(text, ("keys",), "missing") is None


def test_model_settings_are_what_the_catalogue_reads() -> None:
    """MODEL_SETTINGS lists exactly the keys ``_info_from_table`` reads (``spec.get("…")``,
    ``dec("…")``), so a setting the reader learns is never refused, nor a dropped one kept."""
    import ast
    import inspect

    from sweepbench.models import catalog

    tree = ast.parse(inspect.getsource(catalog._info_from_table))
    read = {
        call.args[0].value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
        and (
            (isinstance(call.func, ast.Attribute) and call.func.attr == "get")
            or (isinstance(call.func, ast.Name) and call.func.id == "dec")
        )
    }
    assert read == MODEL_SETTINGS
