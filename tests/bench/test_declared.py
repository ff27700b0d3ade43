"""Benchmarks declared by users: the declaration's checks, field mappings, templates, every kind
of bad row, missing data, and every data format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sweepbench.bench.items import Item, JudgeSpec, LoadProblem, Task
from sweepbench.bench.sources.declared import load_declared, render_template
from sweepbench.errors import DataError, UserError

ROWS = [
    {"qid": "q1", "question": "What is 2 + 2?", "answer": "4", "topic": "sums"},
    {"qid": "q2", "question": "What is 3 * 3?", "answer": "9", "topic": "products"},
    {"qid": "q3", "question": "What is 10 / 4?", "answer": "2.5", "topic": ""},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows as JSON lines."""
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


class PlainDumper(yaml.SafeDumper):
    """Writes every value out in full: declarations refuse YAML anchors and aliases, which
    ``safe_dump`` writes for values shared by several tasks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def declare(
    folder: Path, tasks: list[dict[str, Any]], areas: list[str] | None = None, **top: Any
) -> Path:
    """A YAML declaration with the given areas (default: one per distinct task area)."""
    areas = areas or sorted({t.get("area", "main") for t in tasks})
    declaration = {
        "id": "mine",
        "name": "My benchmark",
        "areas": [{"key": key, "label": key.title()} for key in areas],
        "tasks": tasks,
        **top,
    }
    path = folder / "my.yaml"
    path.write_text(yaml.dump(declaration, Dumper=PlainDumper, sort_keys=False), encoding="utf-8")
    return path


def numeric_task(data: str = "data.jsonl", **extra: Any) -> dict[str, Any]:
    """A numeric task over ROWS-shaped data."""
    task: dict[str, Any] = {
        "id": "sums",
        "area": "main",
        "name": "Sums",
        "data": data,
        "fields": {"id": "qid", "prompt": "question", "reference": "answer", "dimension": "topic"},
        "scorer": "numeric",
    }
    task.update(extra)
    return task


def only_task(path: Path) -> Task:
    """The single task of the declaration at ``path``."""
    (task,) = load_declared(path).tasks
    return task


def where(problem: LoadProblem) -> tuple[str, int | None, str | None]:
    """A problem's file, line and field."""
    return problem.file, problem.line, problem.field


# --------------------------------------------------------------------------- loading


def test_yaml_declaration_loads_items_with_mapped_fields(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = declare(tmp_path, [numeric_task(system="Be brief.", options={"tolerance": 0.01})])
    benchmark = load_declared(path)
    assert (benchmark.id, benchmark.name, benchmark.overall) == ("mine", "My benchmark",
                                                                 "mean_of_areas")  # fmt: skip
    assert benchmark.source == str(path)
    assert [a.key for a in benchmark.areas] == ["main"]
    task = benchmark.task("sums")
    assert (task.grading, task.scorer, task.score_by) == ("auto", "numeric", "pass_rate")
    assert task.options == {"tolerance": 0.01}
    assert task.available and task.problems == () and task.source_file == "data.jsonl"
    first = task.items[0]
    assert first == Item(
        key="data.jsonl#sums::q1",
        sample_id="q1",
        task="sums",
        dimension="sums",
        prompt="What is 2 + 2?",
        reference="4",
        metadata={},
        source_file="data.jsonl",
        row=1,
        system="Be brief.",
    )
    assert [i.dimension for i in task.items] == ["sums", "products", "default"]
    assert [i.row for i in task.items] == [1, 2, 3]


def test_ids_default_to_task_and_row_and_several_id_fields_join(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    task = numeric_task()
    del task["fields"]["id"]
    assert [i.sample_id for i in only_task(declare(tmp_path, [task])).items] == [
        "sums-1", "sums-2", "sums-3"]  # fmt: skip
    task["fields"]["id"] = ["topic", "qid"]
    rows = [dict(r, topic=r["topic"] or "misc") for r in ROWS]
    write_jsonl(tmp_path / "data.jsonl", rows)
    items = only_task(declare(tmp_path, [task])).items
    assert [i.key for i in items] == ["data.jsonl#sums::sums-q1", "data.jsonl#sums::products-q2",
                                      "data.jsonl#sums::misc-q3"]  # fmt: skip


def test_python_declaration_module(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    module = tmp_path / "bench.py"
    module.write_text(
        "AREA = 'main'\n"
        "BENCHMARK = {\n"
        "    'id': 'pyb', 'name': 'From Python', 'overall': 'mean_of_tasks',\n"
        "    'areas': [{'key': AREA, 'label': 'Main'}],\n"
        "    'tasks': [{'id': 't', 'area': AREA, 'data': 'data.jsonl', 'scorer': 'exact',\n"
        "               'fields': {'prompt': 'question', 'reference': 'answer'}}],\n"
        "}\n",
        encoding="utf-8",
    )
    benchmark = load_declared(module)
    assert (benchmark.id, benchmark.overall) == ("pyb", "mean_of_tasks")
    assert [i.reference for i in benchmark.task("t").items] == ["4", "9", "2.5"]
    assert benchmark.task("t").name == "t"


def test_python_declaration_without_benchmark_or_that_fails(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"empty\.py: the module defines no BENCHMARK"):
        load_declared(empty)
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"broken\.py: the module failed to run.*boom"):
        load_declared(broken)


def test_a_folder_means_its_benchmark_yaml_and_a_missing_path_is_a_user_error(
    tmp_path: Path,
) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    declare(tmp_path, [numeric_task()]).rename(tmp_path / "benchmark.yaml")
    assert load_declared(tmp_path).id == "mine"
    with pytest.raises(UserError, match="No benchmark declaration"):
        load_declared(tmp_path / "nope.yaml")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="holds no benchmark declaration"):
        load_declared(tmp_path / "empty")


def test_version_follows_declaration_and_data(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = declare(tmp_path, [numeric_task()])
    first = load_declared(path).version
    assert len(first) == 12 and first == load_declared(path).version
    write_jsonl(data, [*ROWS, {"qid": "q4", "question": "1+1?", "answer": "2"}])
    second = load_declared(path).version
    assert second != first
    declare(tmp_path, [numeric_task(name="Renamed")])
    assert load_declared(path).version not in (first, second)


def test_judge_task_and_option_set_defaults(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "j.jsonl", [{"prompt": "Explain rain.", "notes": {"must": "clouds"}}])
    write_jsonl(tmp_path / "s.jsonl", [{"prompt": "Pick all.", "answer": "A, C"}])
    judge_task = {"id": "j", "area": "a", "data": "j.jsonl", "scorer": "judge",
                  "fields": {"reference": "notes"},
                  "judge": {"rubric": "Mentions clouds.", "positive_label": "good"}}  # fmt: skip
    set_task = {"id": "s", "area": "a", "data": "s.jsonl", "scorer": "option_set",
                "fields": {"reference": "answer"}, "region_specific": True}  # fmt: skip
    benchmark = load_declared(declare(tmp_path, [judge_task, set_task]))
    judged = benchmark.task("j")
    assert judged.grading == "judge" and judged.needs_judge
    assert judged.judge == JudgeSpec("Mentions clouds.", "good", "fail", "j")
    assert judged.items[0].reference == {"must": "clouds"}
    assert judged.items[0].prompt == "Explain rain."  # the default prompt field
    sets = benchmark.task("s")
    assert (sets.score_by, sets.region_specific, sets.items[0].reference) == (
        "mean_score", True, "A, C")  # fmt: skip
    assert benchmark.in_scope("core") == (judged,)


def test_metadata_fields_are_copied_and_choices_become_numbers(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text(
        "prompt,answer,choices,source,extra\nPick one,E,5,quiz,x\nPick again,B,,quiz,y\n",
        encoding="utf-8",
    )
    fields = {"reference": "answer", "metadata": ["choices", "source"]}
    task = {"id": "c", "area": "a", "data": "c.csv", "scorer": "choice", "fields": fields}
    loaded = only_task(declare(tmp_path, [task]))
    assert [i.metadata for i in loaded.items] == [
        {"choices": 5, "source": "quiz"},
        {"choices": "", "source": "quiz"},
    ]
    assert [i.reference for i in loaded.items] == ["E", "B"]


# --------------------------------------------------------------------------- templates


def test_template_substitution_with_and_without_spaces() -> None:
    row = {"Question": "Why?", "Student's Answer": "Because", "n": 3, "empty": None}
    template = "Q: {{Question}} A: {{ Student's Answer }} n={{   n   }} e=[{{ empty }}]"
    assert render_template(template, row) == "Q: Why? A: Because n=3 e=[]"
    assert render_template("no fields", row) == "no fields"


def test_template_missing_field_is_a_problem_for_that_row_only(tmp_path: Path) -> None:
    rows = [{"q": "One", "opt": "x", "a": "1"}, {"q": "Two", "a": "2"}, {"q": "Three", "opt": "z",
                                                                          "a": "3"}]  # fmt: skip
    write_jsonl(tmp_path / "t.jsonl", rows)
    task = {"id": "t", "area": "a", "data": "t.jsonl", "scorer": "exact",
            "fields": {"prompt_template": "{{ q }} ({{opt}})", "reference": "a"}}  # fmt: skip
    loaded = only_task(declare(tmp_path, [task]))
    assert [i.prompt for i in loaded.items] == ["One (x)", "Three (z)"]
    (problem,) = loaded.problems
    assert where(problem) == ("t.jsonl", 2, "opt")
    assert "prompt template" in problem.message


# --------------------------------------------------------------------------- bad rows


def test_every_kind_of_bad_row_is_reported_and_the_rest_loads(tmp_path: Path) -> None:
    lines = [
        json.dumps({"qid": "ok1", "question": "Fine?", "answer": "1,000"}),  # 1: loads
        "{not json",  # 2: unreadable
        json.dumps({"qid": "p", "answer": "1"}),  # 3: no prompt field
        json.dumps({"qid": "r", "question": "No reference?"}),  # 4: no reference field
        json.dumps({"qid": "n", "question": "Number?", "answer": "about five"}),  # 5: not numeric
        json.dumps({"qid": "e", "question": "Empty?", "answer": "  "}),  # 6: empty reference
        json.dumps({"question": "No id?", "answer": "3"}),  # 7: no id field
        json.dumps({"qid": "ok1", "question": "Again?", "answer": "2"}),  # 8: duplicate id
        json.dumps({"qid": "blank", "question": "   ", "answer": "2"}),  # 9: empty prompt
        json.dumps([1, 2]),  # 10: not an object
        json.dumps({"qid": "ok2", "question": "Also fine?", "answer": 7.25}),  # 11: loads
        json.dumps({"qid": "b", "question": "Bool?", "answer": True}),  # 12: not a number
    ]
    (tmp_path / "data.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    declared = numeric_task()
    del declared["fields"]["dimension"]
    task = only_task(declare(tmp_path, [declared]))
    assert [(i.sample_id, i.reference) for i in task.items] == [("ok1", "1,000"), ("ok2", 7.25)]
    found = {p.line or 0: p for p in task.problems}
    assert sorted(found) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12]
    assert all(p.file == "data.jsonl" for p in task.problems)
    assert found[2].field is None and "not valid JSON" in found[2].message
    assert (found[3].field, found[3].message) == ("question", "missing field")
    assert (found[4].field, found[4].message) == ("answer", "missing field")
    assert found[5].field == "answer" and "'about five' is not a number" in found[5].message
    assert (found[6].field, found[6].message) == ("answer", "empty reference")
    assert (found[7].field, found[7].message) == ("qid", "missing field")
    assert found[8].field == "qid" and "duplicate id 'ok1' (first on line 1)" in found[8].message
    assert (found[9].field, found[9].message) == ("question", "empty prompt")
    assert found[10].field is None and "expected a JSON object" in found[10].message
    assert found[12].field == "answer"
    assert str(found[3]) == "data.jsonl:3: question: missing field"


def test_choice_references_must_be_option_letters(tmp_path: Path) -> None:
    rows = [{"prompt": "a", "answer": "B"}, {"prompt": "b", "answer": "E"},
            {"prompt": "c", "answer": "7"}, {"prompt": "d", "answer": "c) the third"}]  # fmt: skip
    write_jsonl(tmp_path / "c.jsonl", rows)
    task = {"id": "c", "area": "a", "data": "c.jsonl", "scorer": "choice",
            "fields": {"reference": "answer"}}  # fmt: skip
    loaded = only_task(declare(tmp_path, [task]))
    assert [i.reference for i in loaded.items] == ["B"]
    assert [(p.line, p.field) for p in loaded.problems] == [(2, "answer"), (3, "answer"),
                                                            (4, "answer")]  # fmt: skip
    assert "from A to D" in loaded.problems[0].message
    task["options"] = {"choices": 5}
    assert [i.reference for i in only_task(declare(tmp_path, [task])).items] == ["B", "E"]


def test_csv_row_with_wrong_cell_count_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text(
        "qid,question,answer,topic\nq1,One?,1,\nq2,Two?,2,,extra\nq3,Three?,3,\n",
        encoding="utf-8",
    )
    task = only_task(declare(tmp_path, [numeric_task("d.csv")]))
    assert [i.sample_id for i in task.items] == ["q1", "q3"]
    assert [i.row for i in task.items] == [2, 4]
    (problem,) = task.problems
    assert where(problem) == ("d.csv", 3, None) and "5 cells" in problem.message


def test_two_tasks_may_read_the_same_file_with_the_same_ids(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    second = numeric_task(id="again", scorer="exact")
    benchmark = load_declared(declare(tmp_path, [numeric_task(), second]))
    sums, again = benchmark.task("sums"), benchmark.task("again")
    assert (sums.problems, again.problems) == ((), ())
    assert [i.key for i in sums.items] == ["data.jsonl#sums::q1", "data.jsonl#sums::q2",
                                           "data.jsonl#sums::q3"]  # fmt: skip
    assert [i.key for i in again.items] == ["data.jsonl#again::q1", "data.jsonl#again::q2",
                                            "data.jsonl#again::q3"]  # fmt: skip
    assert [i.sample_id for i in again.items] == ["q1", "q2", "q3"]


# --------------------------------------------------------------------------- missing data


def test_a_missing_data_file_disables_only_its_task(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    gone = numeric_task("nowhere/gone.jsonl", id="gone", area="other")
    broken = numeric_task("broken.json", id="broken", area="other")
    (tmp_path / "broken.json").write_text("[{", encoding="utf-8")
    benchmark = load_declared(declare(tmp_path, [numeric_task(), gone, broken]))
    assert benchmark.task("sums").available and len(benchmark.task("sums").items) == 3
    missing = benchmark.task("gone")
    assert not missing.available and missing.items == ()
    assert missing.missing is not None and "data file not found" in missing.missing
    assert "gone.jsonl" in missing.missing
    unreadable = benchmark.task("broken")
    assert unreadable.missing is not None and "broken.json:1: not valid JSON" in unreadable.missing
    assert [t.id for t in benchmark.area_of("gone").tasks] == ["gone", "broken"]


# --------------------------------------------------------------------------- formats


def test_every_data_format_gives_the_same_items(tmp_path: Path) -> None:
    import openpyxl

    write_jsonl(tmp_path / "d.jsonl", ROWS)
    (tmp_path / "d.json").write_text(json.dumps({"rows": ROWS}), encoding="utf-8")
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(ROWS), encoding="utf-8")
    header = list(ROWS[0])
    csv_lines = [",".join(header)] + [",".join(str(r[h]) for h in header) for r in ROWS]
    (tmp_path / "d.csv").write_text("\n".join(csv_lines) + "\n", encoding="utf-8")
    (tmp_path / "d.txt").write_text("\n".join(csv_lines) + "\n", encoding="utf-8")
    book = openpyxl.Workbook()
    book.active.title = "Notes"
    book.active.append(["ignore me"])
    sheet = book.create_sheet("Questions")
    sheet.append(header)
    for row in ROWS:
        sheet.append([float(row["answer"]) if h == "answer" else row[h] for h in header])
    book.save(tmp_path / "d.xlsx")
    tasks = [
        numeric_task("d.jsonl", id="jsonl"),
        numeric_task("d.json", id="json"),
        numeric_task("d.yaml", id="yaml"),
        numeric_task("d.csv", id="csv"),
        numeric_task("d.txt", id="txt", format="csv"),
        numeric_task("d.xlsx", id="xlsx", sheet="Questions"),
    ]
    benchmark = load_declared(declare(tmp_path, tasks))
    expected = [("q1", "What is 2 + 2?", 4.0), ("q2", "What is 3 * 3?", 9.0),
                ("q3", "What is 10 / 4?", 2.5)]  # fmt: skip
    for task in benchmark.tasks:
        assert task.problems == () and task.missing is None, task.id
        got = [(i.sample_id, i.prompt, float(i.reference)) for i in task.items]
        assert got == expected, task.id
        assert [i.dimension for i in task.items] == ["sums", "products", "default"], task.id
    assert benchmark.task("xlsx").items[0].key == "d.xlsx#xlsx::q1"
    assert benchmark.task("xlsx").items[0].row == 2  # the header is row 1
    assert benchmark.task("xlsx").items[2].reference == 2.5


def test_ifeval_rows_from_csv_with_json_text(tmp_path: Path) -> None:
    rows = [
        ["p1", "Write without commas.", '["punctuation:no_comma"]', "[{}]"],
        ["p2", "Short and lower.", "change_case:english_lowercase, length_constraints:number_words",
         '[{}, {"relation": "less than", "num_words": 20, "unused": null}]'],
        ["p3", "Unknown.", '["punctuation:no_commas"]', "[{}]"],
        ["p4", "Mismatch.", '["punctuation:no_comma"]', "[{}, {}]"],
        ["p5", "Bad kwargs.", '["length_constraints:number_words"]',
         '[{"relation": "sort of", "num_words": 20}]'],
        ["p6", "Bad JSON.", '["punctuation:no_comma"', "[{}]"],
        ["p7", "No kwargs.", '["punctuation:no_comma"]', ""],
    ]  # fmt: skip
    import csv

    with (tmp_path / "if.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["key", "prompt", "instruction_id_list", "kwargs"])
        writer.writerows(rows)
    task = {"id": "if", "area": "a", "data": "if.csv", "scorer": "ifeval", "fields": {"id": "key"}}
    loaded = only_task(declare(tmp_path, [task]))
    assert [i.sample_id for i in loaded.items] == ["p1", "p2", "p7"]
    assert loaded.items[1].metadata == {
        "instruction_id_list": ["change_case:english_lowercase", "length_constraints:number_words"],
        "kwargs": [{}, {"relation": "less than", "num_words": 20}],
    }
    assert loaded.items[2].metadata["kwargs"] == [{}]
    assert loaded.items[0].reference is None
    found = {p.line or 0: p for p in loaded.problems}
    assert sorted(found) == [4, 5, 6, 7]
    assert found[4].field == "instruction_id_list" and "no_commas" in found[4].message
    assert found[5].field == "kwargs" and "2 argument objects for 1" in found[5].message
    assert found[6].field == "kwargs"
    assert found[7].field == "instruction_id_list" and "not valid JSON" in found[7].message


# --------------------------------------------------------------------------- declaration mistakes


def mistakes(path: Path) -> str:
    """The DataError message for a declaration."""
    with pytest.raises(DataError) as caught:
        load_declared(path)
    return str(caught.value)


def test_a_declaration_with_two_mistakes_reports_both(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    good = numeric_task()
    typo = numeric_task(id="second", scorer="exactt")
    typo["fields"] = {"promt": "question", "reference": "answer"}
    message = mistakes(declare(tmp_path, [good, typo]))
    assert message.startswith("my.yaml: 2 problems in the benchmark declaration:")
    assert "my.yaml: tasks[1].fields.promt: unknown key; known: id, prompt," in message
    assert "my.yaml: tasks[1].scorer: unknown scorer 'exactt'; known: choice," in message


def test_a_single_mistake_is_one_line(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    message = mistakes(declare(tmp_path, [numeric_task(scorer="exactt")]))
    assert message.startswith("my.yaml: tasks[0].scorer: unknown scorer 'exactt'; known: ")
    assert "\n" not in message and "numeric" in message


def test_every_kind_of_declaration_mistake_is_located(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    tasks: list[dict[str, Any]] = [
        numeric_task(area="nowhere"),
        numeric_task(id="sums"),
        {"id": "j", "area": "main", "data": "data.jsonl", "scorer": "judge"},
        numeric_task(id="o", options={"tolerance": -1, "colour": "red"}),
        {"id": "r", "area": "main", "data": "data.jsonl", "scorer": "numeric"},
        numeric_task(id="e", scorer="exact", judge={"rubric": "x"}, split="train"),
        numeric_task(
            id="b", fields={"prompt": "q", "prompt_template": "{{ q }}", "reference": "a"}
        ),
        numeric_task(id="bad id!", score_by="best"),
        numeric_task(id="s", sheet="One"),
    ]
    message = mistakes(declare(tmp_path, tasks, areas=["main", "empty"], extra=1))
    for expected in [
        "my.yaml: extra: unknown key; known: id, name, description, overall, prompt_version, "
        "prompt_versions, areas, tasks",
        "my.yaml: tasks[0].area: unknown area 'nowhere'; declared: main, empty",
        "my.yaml: tasks[1].id: 'sums' is already used by tasks[0]",
        "my.yaml: tasks[2].judge: the 'judge' scorer needs a judge block",
        "my.yaml: tasks[3].options.tolerance: must be a number of 0 or more",
        "my.yaml: tasks[3].options.colour: the 'numeric' scorer has no such option; "
        "known: relative, tolerance",
        "my.yaml: tasks[4].fields.reference: the 'numeric' scorer needs a reference field",
        "my.yaml: tasks[5].judge: only the 'judge' scorer uses a judge",
        "my.yaml: tasks[5].split: only used with format: hf",
        "my.yaml: tasks[6].fields: give either prompt or prompt_template, not both",
        "my.yaml: tasks[7].id: String should match pattern",
        "my.yaml: tasks[7].score_by: Input should be 'pass_rate' or 'mean_score'",
        "my.yaml: tasks[8].sheet: only used with xlsx data",
    ]:
        assert expected in message, expected
    assert "my.yaml: areas[1]: no task belongs to area 'empty'" in message
    assert message.index("extra:") < message.index("tasks[0]") < message.index("tasks[8]")


def test_missing_keys_empty_lists_and_empty_areas(tmp_path: Path) -> None:
    path = tmp_path / "my.yaml"
    path.write_text("id: x\nareas: []\ntasks: []\n", encoding="utf-8")
    message = mistakes(path)
    assert "my.yaml: name: required but missing" in message
    assert "my.yaml: areas: List should have at least 1 item" in message
    assert "my.yaml: tasks: List should have at least 1 item" in message
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    path = declare(tmp_path, [numeric_task()])
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["areas"].append({"key": "lonely", "label": "Lonely"})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert mistakes(path) == "my.yaml: areas[1]: no task belongs to area 'lonely'"


def test_unreadable_declarations(tmp_path: Path) -> None:
    path = tmp_path / "my.yaml"
    path.write_text("id: x\nname: [unclosed\n", encoding="utf-8")
    assert mistakes(path).startswith("my.yaml:3: not valid YAML")
    path.write_text("- just\n- a list\n", encoding="utf-8")
    assert "expected a mapping" in mistakes(path)


def test_option_values_are_checked_per_scorer(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    base = {"area": "main", "data": "data.jsonl", "fields": {"reference": "answer"}}
    tasks = [
        {**base, "id": "c", "scorer": "choice", "options": {"choices": 1, "prefixes": "fr"}},
        {**base, "id": "r", "scorer": "regex", "options": {"pattern": "(unclosed"}},
        {**base, "id": "i", "scorer": "ifeval", "options": {"strict": True}},
        {**base, "id": "n", "scorer": "numeric", "options": {"relative": "yes"}},
    ]
    message = mistakes(declare(tmp_path, tasks))
    assert "tasks[0].options.choices: must be a whole number of options from 2 to 26" in message
    assert "tasks[0].options.prefixes: must be 'en' or 'zh'" in message
    assert "tasks[1].options.pattern: not a valid regular expression" in message
    assert "tasks[2].options.strict: the 'ifeval' scorer has no such option (it reads none)" in (
        message
    )
    assert "tasks[3].options.relative: must be true or false" in message


# --------------------------------------------------------------------------- the user guide


def test_the_example_in_the_user_guide_loads(tmp_path: Path) -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
    text = guide.read_text(encoding="utf-8")
    for name in ("benchmark.yaml", "capitals.jsonl"):
        marker = f"<!-- example: {name} -->\n```"
        start = text.index("\n", text.index(marker) + len(marker)) + 1
        (tmp_path / name).write_text(text[start : text.index("```", start)], encoding="utf-8")
    benchmark = load_declared(tmp_path)
    assert [(t.id, len(t.items), t.problems) for t in benchmark.tasks] == [
        ("capitals", 4, ()),
        ("postcards", 4, ()),
    ]
    first = benchmark.task("capitals").items[0]
    assert first.prompt == "What is the capital city of France?\nAnswer with the city name only."
    assert (first.key, first.reference, first.dimension) == (
        "capitals.jsonl#capitals::FR",
        "Paris",
        "Europe",
    )
    assert first.metadata == {"country": "France"}
    postcard = benchmark.task("postcards").items[3]
    assert postcard.prompt == "Write a three-sentence postcard from Lima, Peru."
    assert postcard.system == "You are a cheerful travel writer."
    assert postcard.key == "capitals.jsonl#postcards::postcards-4"


# --------------------------------------------------------------------------- review fixes


def exact_task(data: str, scorer: str = "exact", **fields: Any) -> dict[str, Any]:
    """A task reading ``q`` as the prompt and ``a`` as the reference."""
    return {"id": "t", "area": "a", "data": data, "scorer": scorer,
            "fields": {"prompt": "q", "reference": "a", **fields}}  # fmt: skip


def test_a_data_file_that_is_not_utf8_disables_only_its_task(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "data.jsonl", ROWS)
    (tmp_path / "latin.csv").write_bytes("q,a\ncafé,x\n".encode("latin-1"))
    benchmark = load_declared(declare(tmp_path, [numeric_task(), exact_task("latin.csv")]))
    assert len(benchmark.task("sums").items) == 3
    latin = benchmark.task("t")
    assert latin.missing == (
        "latin.csv: not UTF-8 text: byte 0xe9 at offset 7 (save the file as UTF-8)"
    )


def test_a_duplicate_column_disables_the_task_naming_the_column(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("q,a,a\nhello,x,y\n", encoding="utf-8")
    task = only_task(declare(tmp_path, [exact_task("d.csv")]))
    assert task.missing == "d.csv: the column 'a' appears twice in the header row"


def test_numeric_references_the_scorer_cannot_read_are_bad_rows(tmp_path: Path) -> None:
    answers: list[Any] = [4, "1,5", "nan", "1e3", "inf", "5.", " 42 ", "1_000", [4], "1,000"]
    write_jsonl(tmp_path / "n.jsonl", [{"q": f"q{i}", "a": a} for i, a in enumerate(answers)])
    task = only_task(declare(tmp_path, [exact_task("n.jsonl", "numeric")]))
    assert [i.reference for i in task.items] == [4, "1e3", "42", "1,000"]
    assert [(p.line, p.field) for p in task.problems] == [
        (2, "a"), (3, "a"), (5, "a"), (6, "a"), (8, "a"), (9, "a")]  # fmt: skip
    assert task.problems[0].message == "the reference '1,5' is not a number"


@pytest.mark.parametrize("scorer", ["choice", "choice_free"])
def test_choice_references_must_be_exactly_the_letters(tmp_path: Path, scorer: str) -> None:
    answers = ["B", "Answer: C", "(B)", " b ", "Both", "All of the above", "[D]", "A, B", "E"]
    write_jsonl(tmp_path / "c.jsonl", [{"q": f"q{i}", "a": a} for i, a in enumerate(answers)])
    task = only_task(declare(tmp_path, [exact_task("c.jsonl", scorer)]))
    assert [(i.row, i.reference) for i in task.items] == [(1, "B"), (3, "B"), (4, "B"), (7, "D")]
    assert [p.line for p in task.problems] == [2, 5, 6, 8, 9]
    assert (
        task.problems[0].message == "the reference 'Answer: C' is not an option letter (such as B)"
    )
    assert task.problems[3].message == "the reference 'A, B' must be one option letter"


def test_multi_letter_references_are_normalised_for_their_scorer(tmp_path: Path) -> None:
    answers = ["A, C", "ac", "(B D)", "Both", "AE", "Answer: A"]
    write_jsonl(tmp_path / "m.jsonl", [{"q": f"q{i}", "a": a} for i, a in enumerate(answers)])
    multi = only_task(declare(tmp_path, [exact_task("m.jsonl", "choice_multi")]))
    assert [i.reference for i in multi.items] == ["AC", "AC", "BD"]
    assert [p.line for p in multi.problems] == [4, 5, 6]
    option_set = only_task(declare(tmp_path, [exact_task("m.jsonl", "option_set")]))
    assert [i.reference for i in option_set.items] == ["A, C", "A, C", "B, D", "A, E"]
    assert [p.line for p in option_set.problems] == [4, 6]


def test_a_choices_list_counts_as_its_length(tmp_path: Path) -> None:
    rows = [{"q": "six", "a": "F", "choices": ["1", "2", "3", "4", "5", "6"]},
            {"q": "two", "a": "C", "choices": ["yes", "no"]},
            {"q": "one", "a": "A", "choices": ["only"]}]  # fmt: skip
    write_jsonl(tmp_path / "c.jsonl", rows)
    task = only_task(declare(tmp_path, [exact_task("c.jsonl", "choice", metadata=["choices"])]))
    assert [(i.reference, i.metadata["choices"]) for i in task.items] == [
        ("F", ["1", "2", "3", "4", "5", "6"])]  # fmt: skip
    assert [(p.line, p.field, p.message) for p in task.problems] == [
        (2, "a", "the reference 'C' names C, not an option from A to B"),
        (3, "choices", "1 options; a question needs 2 to 26"),
    ]


def test_yaml_data_keeps_answers_as_text_and_booleans_are_bad_rows(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text(
        "- {q: Wet, a: no}\n- {q: Norway, a: NO}\n- {q: Time, a: 12:30}\n- {q: Octal, a: 010}\n"
        "- {q: Switch, a: on}\n- {q: Count, a: 42}\n- {q: Half, a: 0.5}\n- {q: Bool, a: true}\n",
        encoding="utf-8",
    )
    task = only_task(declare(tmp_path, [exact_task("d.yaml", "normalised")]))
    assert [i.reference for i in task.items] == ["no", "NO", "12:30", "010", "on", "42", "0.5"]
    (problem,) = task.problems
    assert where(problem) == ("d.yaml", 8, "a")
    assert "write it in quotes" in problem.message


def test_a_json_boolean_reference_is_a_bad_row_for_text_scorers(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "b.jsonl", [{"q": "x", "a": False}, {"q": "y", "a": ["ok", 7]}])
    task = only_task(declare(tmp_path, [exact_task("b.jsonl")]))
    assert [i.reference for i in task.items] == [["ok", "7"]]
    assert [(p.line, p.field) for p in task.problems] == [(1, "a")]
    assert task.problems[0].message.startswith("the reference is the false value")


def test_a_named_dimension_or_metadata_field_must_be_in_the_row(tmp_path: Path) -> None:
    rows = [{"q": "a", "a": "x", "skill": "s", "colour": "red"},
            {"q": "b", "a": "y", "colour": "blue"},
            {"q": "c", "a": "z", "skill": "s"},
            {"q": "d", "a": "w", "skill": None, "colour": None}]  # fmt: skip
    write_jsonl(tmp_path / "d.jsonl", rows)
    task = only_task(declare(tmp_path, [exact_task("d.jsonl", dimension="skill",
                                                   metadata=["colour"])]))  # fmt: skip
    assert [(i.row, i.dimension, i.metadata) for i in task.items] == [
        (1, "s", {"colour": "red"}), (4, "default", {"colour": None})]  # fmt: skip
    assert [(p.line, p.field, p.message) for p in task.problems] == [
        (2, "skill", "missing field"), (3, "colour", "missing field")]  # fmt: skip


def test_template_renders_objects_as_json_and_booleans_in_lower_case() -> None:
    row = {"a": {"b": "deep"}, "l": ["é", True, None], "flag": False, "n": 2.5}
    template = "D {{ a }} L {{ l }} F {{ flag }} N {{ n }}"
    assert render_template(template, row) == 'D {"b": "deep"} L ["é", true, null] F false N 2.5'


def test_python_declaration_calling_sys_exit_is_a_declaration_error(tmp_path: Path) -> None:
    module = tmp_path / "exits.py"
    module.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"exits\.py: the module called sys\.exit\(3\)"):
        load_declared(module)
    interrupted = tmp_path / "interrupted.py"
    interrupted.write_text("raise KeyboardInterrupt\n", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt):
        load_declared(interrupted)


def test_tsv_quotes_are_ordinary_characters(tmp_path: Path) -> None:
    (tmp_path / "d.tsv").write_text('q\ta\n"He said "hi"\tx\n', encoding="utf-8")
    (item,) = only_task(declare(tmp_path, [exact_task("d.tsv")])).items
    assert (item.prompt, item.reference, item.row) == ('"He said "hi"', "x", 2)
