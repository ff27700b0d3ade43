"""Files a user or a colleague hands us (issue 12, items 1–5): YAML alias bombs, deep nesting,
folders as data, data paths outside the declaration's folder, and what YAML and CSV would
otherwise accept silently. Each is a reported problem with its place — a skipped row, a task
kept out, or a declaration error — never a traceback, a hang or gigabytes of memory."""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sweepbench.bench.catalog import load_benchmark
from sweepbench.bench.items import Task
from sweepbench.bench.request import BenchRequest
from sweepbench.bench.sources.declared import load_declared
from sweepbench.bench.start import load
from sweepbench.errors import DataError
from tests.bench.test_declared import ROWS, declare, numeric_task, write_jsonl
from tests.helpers import cli

BILLION_LAUGHS = '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"  {name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)
"""Nine levels of nine aliases (mapping entries indented by two), under a kilobyte: 9⁹ ≈ 387
million "lol" once walked."""


def template_task(data: str, **fields: Any) -> dict[str, Any]:
    """A judged task whose prompt is built from a row's fields by a template."""
    return {
        "id": "t",
        "area": "main",
        "data": data,
        "fields": {"prompt_template": "Say {{ q }}.", **fields},
        "scorer": "judge",
        "judge": {"rubric": "It says it."},
    }


def only_task(path: Path, **options: Any) -> Task:
    """The single task of the declaration at ``path``."""
    (task,) = load_declared(path, **options).tasks
    return task


@pytest.fixture
def bounded() -> Iterator[None]:
    """Holds the test to under 200 MB more than the process's peak so far (a bomb that
    expanded would take gigabytes). How long each refusal takes is measured in
    benchmarks/hostile_inputs.py, never asserted: a loaded machine makes it slower, not
    bigger."""
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    yield
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert grown < 200 * 1024, f"the peak grew by {grown / 1024:.0f} MB"


# --------------------------------------------------------------------------- 1. alias bombs


@pytest.mark.parametrize("use", ["template", "metadata"])
def test_alias_bomb_in_a_data_file_is_refused_at_once(
    tmp_path: Path, use: str, bounded: None
) -> None:
    (tmp_path / "rows.yaml").write_text(
        f"laughs:\n{BILLION_LAUGHS}rows:\n  - {{q: hello, extra: *i}}\n", encoding="utf-8"
    )
    assert len(BILLION_LAUGHS) < 1024
    fields: dict[str, Any] = (
        {"prompt_template": "Say {{ q }}: {{ extra }}"} if use == "template"
        else {"metadata": ["extra"]}
    )  # fmt: skip
    task = only_task(declare(tmp_path, [template_task("rows.yaml", **fields)]))
    assert not task.items and task.missing is not None
    assert task.missing.startswith("rows.yaml:2: an anchor (&a): YAML anchors and aliases")


def test_alias_inside_a_data_row_is_refused_not_circular(tmp_path: Path) -> None:
    (tmp_path / "rows.yaml").write_text("- {q: hi}\n- &me {q: [*me]}\n", encoding="utf-8")
    task = only_task(declare(tmp_path, [template_task("rows.yaml")]))
    assert task.missing is not None and task.missing.startswith("rows.yaml:2: an anchor (&me)")


def test_alias_bomb_in_a_declaration_is_a_declaration_error(tmp_path: Path, bounded: None) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(f"id: x\nname: X\noptions:\n{BILLION_LAUGHS}", encoding="utf-8")
    with pytest.raises(DataError, match=r"^b\.yaml:4: an anchor \(&a\)"):
        load_declared(path)


# --------------------------------------------------------------------------- 2. deep nesting


@pytest.mark.parametrize("body", ["[" * 100_000, "{a: " * 20_000], ids=["lists", "mappings"])
def test_deep_declaration_is_a_declaration_error(tmp_path: Path, body: str, bounded: None) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(f"id: x\nname: X\ndescription: {body}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"^deep\.yaml:3: nested deeper than 100 levels$"):
        load_declared(path)


def test_deep_jsonl_line_is_a_skipped_row(tmp_path: Path, bounded: None) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    lines = [json.dumps(ROWS[0]), '{"qid": "deep", "question": ' + deep + "}",
             json.dumps(ROWS[1])]  # fmt: skip
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = only_task(declare(tmp_path, [numeric_task()]))
    assert [i.sample_id for i in task.items] == ["q1", "q2"]
    (problem,) = task.problems
    assert str(problem) == "data.jsonl:2: nested deeper than 100 levels (at column 128)"


def test_deep_json_text_in_a_field_is_a_skipped_row(tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    rows = [
        {"prompt": "Write two words.", "instruction_id_list": ["length_constraints:number_words"],
         "kwargs": '[{"relation": "at least", "num_words": 2}]'},
        {"prompt": "Write.", "instruction_id_list": ["length_constraints:number_words"],
         "kwargs": deep},
    ]  # fmt: skip
    write_jsonl(tmp_path / "if.jsonl", rows)
    task = only_task(declare(tmp_path, [{"id": "i", "area": "main", "data": "if.jsonl",
                                         "scorer": "ifeval"}]))  # fmt: skip
    assert len(task.items) == 1
    (problem,) = task.problems
    assert (problem.line, problem.field) == (2, "kwargs")
    assert problem.message.startswith("not usable JSON (nested deeper than 100 levels")


def test_deep_json_file_disables_its_task_naming_the_line(tmp_path: Path, bounded: None) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    (tmp_path / "data.json").write_text(
        f'[{json.dumps(ROWS[0])},\n {{"qid": "deep", "question": {deep}}}]', encoding="utf-8"
    )
    task = only_task(declare(tmp_path, [numeric_task("data.json")]))
    assert task.missing == "data.json:2: nested deeper than 100 levels"


def test_deep_yaml_data_row_disables_its_task_naming_the_line(
    tmp_path: Path, bounded: None
) -> None:
    (tmp_path / "rows.yaml").write_text(
        "- {q: fine}\n- {q: " + "[" * 100_000 + "]" * 100_000 + "}\n", encoding="utf-8"
    )
    task = only_task(declare(tmp_path, [template_task("rows.yaml")]))
    assert task.missing == "rows.yaml:2: nested deeper than 100 levels"


def test_nesting_within_the_bound_still_loads(tmp_path: Path) -> None:
    nested: Any = "x"
    for _ in range(90):
        nested = [nested]
    write_jsonl(tmp_path / "data.jsonl", [{"q": "go", "deep": nested}])
    (tmp_path / "rows.yaml").write_text(yaml.safe_dump([{"q": "go", "deep": nested}]))
    for data in ("data.jsonl", "rows.yaml"):
        task = only_task(declare(tmp_path, [template_task(data, metadata=["deep"])]))
        assert len(task.items) == 1 and not task.problems and task.missing is None


# --------------------------------------------------------------------------- 3. folders as data


def test_a_folder_as_data_is_not_read_or_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "lots"
    folder.mkdir()
    for index in range(50):
        (folder / f"f{index}.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    read: list[Path] = []
    original = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    task = only_task(declare(tmp_path, [numeric_task("lots")]))
    assert task.missing == "lots: not a file"
    assert not [p for p in read if folder in p.parents]


def test_the_root_folder_as_data_is_quick_even_when_allowed(tmp_path: Path, bounded: None) -> None:
    task = only_task(declare(tmp_path, [numeric_task("/")]), allow_data_outside=True)
    assert task.missing == "/: not a file"


def test_an_unreadable_data_file_is_a_clear_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    original = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self == data:
            raise PermissionError(13, "Permission denied", str(self))
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    task = only_task(declare(tmp_path, [numeric_task()]))
    assert task.missing == "data.jsonl: cannot read the file (Permission denied)"


def test_a_hugging_face_folder_hashes_only_its_data_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    folder = tmp_path / "hf"
    folder.mkdir()
    write_jsonl(folder / "d.jsonl", [{"q": "Two plus two?", "a": "4"}])
    (folder / "notes.bin").write_bytes(b"\0" * 1000)
    task = {"id": "h", "area": "main", "data": "hf", "format": "hf", "split": "train",
            "fields": {"prompt": "q", "reference": "a"}, "scorer": "numeric"}  # fmt: skip
    path = declare(tmp_path, [task])
    first = load_declared(path)
    assert len(first.tasks[0].items) == 1
    (folder / "notes.bin").write_bytes(b"\1" * 1000)
    assert load_declared(path).version == first.version  # not read: not a data file


# --------------------------------------------------------------------------- 4. outside the folder


def test_absolute_data_path_is_refused_naming_path_folder_and_flag(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    secret = write_jsonl(tmp_path / "secret.jsonl", ROWS)
    task = only_task(declare(folder, [numeric_task(str(secret))]))
    assert not task.items
    assert task.missing == (
        f"{secret}: refused: it leads to {secret}, outside the declaration's folder {folder}; "
        "a declaration reads data only from its own folder unless you pass --allow-data-outside"
    )
    assert len(only_task(declare(folder, [numeric_task(str(secret))]),
                         allow_data_outside=True).items) == 3  # fmt: skip


def test_etc_passwd_as_csv_is_refused(tmp_path: Path) -> None:
    task = only_task(declare(tmp_path, [{**numeric_task("/etc/passwd"), "format": "csv"}]))
    assert task.missing is not None and "outside the declaration's folder" in task.missing


def test_dot_dot_and_symlinks_out_of_the_folder_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    (folder / "sub").mkdir(parents=True)
    outside = write_jsonl(tmp_path / "outside.jsonl", ROWS)
    (folder / "link.jsonl").symlink_to(outside)
    write_jsonl(folder / "sub" / "inside.jsonl", ROWS)
    (folder / "inner.jsonl").symlink_to(folder / "sub" / "inside.jsonl")
    tasks = [numeric_task("../outside.jsonl", id="up"), numeric_task("link.jsonl", id="link"),
             numeric_task("sub/../sub/inside.jsonl", id="fine"),
             numeric_task("inner.jsonl", id="inner")]  # fmt: skip
    benchmark = load_declared(declare(folder, tasks))
    for refused in ("up", "link"):
        missing = benchmark.task(refused).missing
        assert missing is not None and f"it leads to {outside}," in missing
    assert len(benchmark.task("fine").items) == len(benchmark.task("inner").items) == 3


def test_a_hugging_face_path_outside_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    fields = {"prompt": "question", "reference": "answer"}
    task = {"id": "h", "area": "main", "data": "../d.jsonl", "format": "hf", "fields": fields,
            "scorer": "numeric"}  # fmt: skip
    missing = only_task(declare(folder, [task])).missing
    assert missing is not None and "--allow-data-outside" in missing


def test_the_permission_travels_through_the_request(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    secret = write_jsonl(tmp_path / "secret.jsonl", ROWS)
    path = declare(folder, [numeric_task(str(secret))])
    values = {"benchmark": str(path), "models": {"target": "scripted/echo"}}
    assert BenchRequest.from_values(values).allow_data_outside is False
    assert load(BenchRequest.from_values(values)).tasks[0].missing is not None
    allowed = BenchRequest.from_values({**values, "allow_data_outside": True})
    assert len(load(allowed).tasks[0].items) == 3


def test_bench_list_and_estimate_take_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bench"
    folder.mkdir()
    secret = write_jsonl(tmp_path / "secret.jsonl", ROWS)
    path = str(declare(folder, [numeric_task(str(secret))]))

    def state(*flags: str) -> str:
        assert cli(monkeypatch, "bench", "list", path, "--json", *flags) == 0
        listed = json.loads(capsys.readouterr().out)
        return str(listed[0]["tasks"][0]["state"])

    assert "--allow-data-outside" in state()
    assert state("--allow-data-outside") == "ready"
    estimate = ["bench", "estimate", path, "-m", "scripted/echo?text=4", "--json"]
    assert cli(monkeypatch, *estimate) == 2  # its one task is kept out: nothing to run
    capsys.readouterr()
    assert cli(monkeypatch, *estimate, "--allow-data-outside") == 0
    assert json.loads(capsys.readouterr().out)["questions"] == 3


def test_the_sample_benchmark_reads_only_its_own_folder() -> None:
    assert all(task.missing is None for task in load_benchmark("sample").tasks)


# --------------------------------------------------------------------------- 5. silent acceptance


def test_duplicate_key_in_a_declaration_is_a_declaration_error(tmp_path: Path) -> None:
    path = declare(tmp_path, [numeric_task()])
    path.write_text(path.read_text() + "name: Again\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_declared(path)
    line = len(path.read_text().splitlines())
    assert str(caught.value) == (
        f"my.yaml:{line}: the key 'name' appears twice in one mapping (first on line 2); "
        "YAML would keep only the last"
    )


def test_duplicate_key_in_a_yaml_data_row_is_a_skipped_row(tmp_path: Path) -> None:
    (tmp_path / "rows.yaml").write_text(
        "- {q: one}\n- q: two\n  q: three\n- {q: four}\n", encoding="utf-8"
    )
    task = only_task(declare(tmp_path, [template_task("rows.yaml")]))
    assert [i.prompt for i in task.items] == ["Say one.", "Say four."]
    (problem,) = task.problems
    assert str(problem) == (
        "rows.yaml:2: the key 'q' appears twice in one mapping (first on line 2); YAML would "
        "keep only the last (line 3 of the file)"
    )


def test_unbalanced_template_is_a_declaration_error(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", [{"q": "hi"}])
    path = declare(tmp_path, [template_task("data.jsonl", prompt_template="Say {{ q }} {{ nope")])
    with pytest.raises(DataError) as caught:
        load_declared(path)
    assert str(caught.value) == (
        "my.yaml: tasks[0].fields.prompt_template: the {{ on line 1 of the template "
        "('{{ nope') opens no placeholder: write {{ Field }} with a closing }}"
    )


def test_json_braces_in_a_template_are_not_a_mistake(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", [{"q": "hi"}])
    template = 'Answer as {"say": {"text": "..."}} for {{ q }}'
    task = only_task(declare(tmp_path, [template_task("data.jsonl", prompt_template=template)]))
    assert [i.prompt for i in task.items] == ['Answer as {"say": {"text": "..."}} for hi']


def test_nul_in_a_csv_row_is_a_skipped_row(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("q\nfine\nbro\0ken\nalso fine\n", encoding="utf-8")
    task = only_task(declare(tmp_path, [template_task("d.csv")]))
    assert [i.prompt for i in task.items] == ["Say fine.", "Say also fine."]
    (problem,) = task.problems
    assert str(problem) == "d.csv:3: holds a NUL character (the file may be binary or damaged)"


def test_unterminated_csv_quote_is_reported_not_swallowed(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('q\nfine\n"open\nnext row\nlast row\n', encoding="utf-8")
    task = only_task(declare(tmp_path, [template_task("d.csv")]))
    assert [i.prompt for i in task.items] == ["Say fine."]
    (problem,) = task.problems
    assert str(problem) == (
        "d.csv:3: a quoted cell opens here and never closes, taking in lines 3–5 to the end of "
        'the file; close the quote (a " inside a quoted cell is written "")'
    )


def test_text_after_a_closing_csv_quote_stops_the_file_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('q,a\n"swallows,1\n2,x\n3,"y" z\n', encoding="utf-8")
    task = only_task(declare(tmp_path, [template_task("d.csv")]))
    assert task.missing == "d.csv:2: not readable as CSV (',' expected after '\"')"


def test_a_run_made_with_the_permission_reads_back_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `bench show` reloads the run's declaration: with the permission the run was made with,
    # not without it (its task would read as missing and its counts would be wrong)
    from sweepbench.bench.report import load_report
    from sweepbench.store import Store

    folder = tmp_path / "bench"
    folder.mkdir()
    secret = write_jsonl(tmp_path / "secret.jsonl", ROWS)
    path = str(declare(folder, [numeric_task(str(secret))]))
    run = ["bench", "run", path, "-m", "scripted/echo?text=4", "--allow-data-outside", "--json"]
    assert cli(monkeypatch, *run, "--yes") == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert load_report(Store.open(), run_id).summary.tasks[0].expected == 3  # as stored
    report = load_report(Store.open(), run_id, stored=False)  # computed: the data reloaded
    assert report.note is None  # reloaded, not the stored skeleton
    assert report.benchmark.tasks[0].missing is None and len(report.benchmark.tasks[0].items) == 3
