"""How one row of a declared task's data becomes an :class:`~sweepbench.bench.items.Item`,
following the task's field mapping: its id, its prompt (a field, or a ``{{ Field }}`` template),
its reference as the task's scorer reads it, its skill and metadata, and IFEval instructions.
A row that cannot become an item becomes a :class:`~sweepbench.bench.items.LoadProblem` naming
the field at fault.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sweepbench.bench.items import Item, LoadProblem
from sweepbench.bench.sources.declared_schema import (
    NEEDS_REFERENCE,
    PLACEHOLDER,
    FieldsDeclaration,
    TaskDeclaration,
)
from sweepbench.bench.sources.records import Record
from sweepbench.errors import DataError
from sweepbench.nesting import TooDeep, bounded_json_loads

# --------------------------------------------------------------------------- rows into items


class _RowProblem(Exception):
    """A row that cannot become an item: what is wrong, and with which field."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class ItemBuilder:
    """Turns a task's rows into items, following its field mapping."""

    def __init__(self, declaration: TaskDeclaration, shown: str) -> None:
        self.declaration = declaration
        self.fields = declaration.fields
        self.shown = shown

    def build(self, record: Record) -> Item | LoadProblem:
        """The item for one row, or the problem that keeps it out."""
        if record.problem is not None or record.data is None:
            return record.problem or LoadProblem(self.shown, "unreadable row", record.line)
        try:
            return self._item(record.line, record.data)
        except _RowProblem as exc:
            return LoadProblem(self.shown, exc.message, record.line, exc.field)

    def _item(self, line: int, row: Mapping[str, Any]) -> Item:
        sample_id = self._sample_id(line, row)
        metadata = self._metadata(row)
        if self.declaration.scorer == "ifeval":
            metadata.update(_ifeval_metadata(row, self.fields))
        return Item(
            key=item_key(self.shown, self.declaration.id, sample_id),
            sample_id=sample_id,
            task=self.declaration.id,
            dimension=self._dimension(row),
            prompt=self._prompt(row),
            reference=self._reference(row, metadata),
            metadata=metadata,
            source_file=self.shown,
            row=line,
            system=self.declaration.system,
        )

    def _sample_id(self, line: int, row: Mapping[str, Any]) -> str:
        if not self.fields.id:
            return f"{self.declaration.id}-{line}"
        return "-".join(_text(_required(row, name), name, "id") for name in self.fields.id)

    def _prompt(self, row: Mapping[str, Any]) -> str:
        template = self.fields.prompt_template
        if template is not None:
            prompt = render_template(template, row)
            if not prompt.strip():
                raise _RowProblem("the prompt template gives an empty prompt")
            return prompt
        name = self.fields.prompt_field
        return _text(_required(row, name), name, "prompt")

    def _reference(self, row: Mapping[str, Any], metadata: Mapping[str, Any]) -> Any:
        """The reference as the scorer reads it; a value it could never match is a row
        problem. A true/false value (YAML ``yes``, JSON ``true``) is never taken as text."""
        name = self.fields.reference
        if name is None:
            return None
        value = _required(row, name)
        scorer = self.declaration.scorer
        if scorer not in NEEDS_REFERENCE and scorer != "regex":
            return value
        if isinstance(value, bool):
            raise _RowProblem(
                f"the reference is the {'true' if value else 'false'} value, not text or a "
                "number; write it in quotes to mean the text",
                name,
            )
        if scorer not in NEEDS_REFERENCE:  # regex: optional, compared as text
            return None if value is None else str(value)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise _RowProblem("empty reference", name)
        if scorer == "numeric":
            return _numeric_reference(value, name)
        if scorer in ("choice", "choice_free", "choice_multi", "option_set"):
            return letter_reference(value, name, scorer, self._choices(metadata))
        return _text_reference(value, name, scorer)

    def _choices(self, metadata: Mapping[str, Any]) -> int:
        """The number of options: the row's ``choices`` (a count, or the list of option
        texts), else the task's option, else 4."""
        value = metadata.get("choices")
        if isinstance(value, list):
            return len(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        task_value = self.declaration.options.get("choices", 4)
        return task_value if isinstance(task_value, int) else 4

    def _dimension(self, row: Mapping[str, Any]) -> str:
        """The row's skill: its dimension field ("default" when the field is empty)."""
        name = self.fields.dimension
        if name is None:
            return "default"
        value = _required(row, name)
        text = "" if value is None else str(value).strip()
        return text or "default"

    def _metadata(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata fields the mapping names (every one must be in the row); a
        ``choices`` count written as text becomes a number."""
        metadata: dict[str, Any] = {}
        for name in self.fields.metadata:
            value = _required(row, name)
            if name == "choices":
                value = _choices_value(value, name)
            metadata[name] = value
        return metadata


def item_key(data: str, task_id: str, sample_id: str) -> str:
    """The checkpoint key of a declared item: ``<data>#<task id>::<sample id>``. The task is
    part of it, so two tasks may read the same data file (and the same ids) without clashing."""
    return Item.make_key(f"{data}#{task_id}", sample_id)


def render_template(template: str, row: Mapping[str, Any]) -> str:
    """``template`` with every ``{{ Field }}`` replaced by the row's value (an empty value
    gives empty text); a field the row lacks is a row problem naming the field."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in row:
            raise _RowProblem("missing field used by the prompt template", name)
        return template_text(row[name])

    return PLACEHOLDER.sub(value, template)


def template_text(value: Any) -> str:
    """A field value as prompt text: nothing for None, ``true``/``false`` for booleans, JSON
    (non-ASCII kept) for lists and objects, ``str`` for anything else."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _required(row: Mapping[str, Any], name: str) -> Any:
    """A field the mapping names; its absence keeps the row out."""
    if name not in row:
        raise _RowProblem("missing field", name)
    return row[name]


def _text(value: Any, name: str, what: str) -> str:
    """A field's value as non-empty text."""
    if type(value) is str and value and not value[0].isspace() and not value[-1].isspace():
        return value  # the common case, checked cheaply: text with nothing to strip
    if value is None or isinstance(value, dict | list | bool):
        raise _RowProblem(f"the {what} must be text, found {_kind(value)}", name)
    text = str(value).strip() if what == "id" else str(value)
    if not text.strip():
        raise _RowProblem(f"empty {what}", name)
    return text


def _kind(value: Any) -> str:
    """A value's kind in plain words."""
    return "nothing" if value is None else type(value).__name__


def _choices_value(value: Any, name: str) -> Any:
    """A ``choices`` metadata value: a count (text digits become a number), the list of
    option texts, or empty; anything else is a row problem."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, list):
        count = len(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif value is None or (isinstance(value, str) and not value.strip()):
        return value  # empty: the task's number of options applies
    else:
        raise _RowProblem(f"expected a number of options or a list of them, found {value!r}",
                          name)  # fmt: skip
    if not 2 <= count <= 26:
        raise _RowProblem(f"{count} options; a question needs 2 to 26", name)
    return value


def _numeric_reference(value: Any, name: str) -> Any:
    """A number, or numeric text (stripped) that the numeric scorer reads as one."""
    from sweepbench.bench.scoring.text import reference_number

    try:
        reference_number(value)
    except DataError:
        raise _RowProblem(f"the reference {value!r} is not a number", name) from None
    return value.strip() if isinstance(value, str) else value


def _text_reference(value: Any, name: str, scorer: str) -> Any:
    """A text reference (math, aime, exact, normalised), stripped; a number becomes its text
    (``str``); ``exact``/``normalised`` also take a list of accepted texts."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and scorer in ("exact", "normalised"):
        accepted = [_text_reference(v, name, "math") for v in value if v is not None]
        if not accepted or not all(isinstance(v, str) and v for v in accepted):
            raise _RowProblem("a list reference must hold non-empty texts", name)
        return accepted
    raise _RowProblem(f"the reference must be text or a number, found {_kind(value)}", name)


_LETTERS = re.compile(r"[A-Za-z](?:[\s,，、;/]*[A-Za-z])*")
_WRAPPED = re.compile(r"\((.*)\)|\[(.*)\]")


def letter_reference(value: Any, name: str, scorer: str, choices: int) -> str:
    """A choice reference as exactly its option letter(s), upper-cased: ``B``, `` (b) `` and
    ``[B]`` give ``B`` for ``choice``; ``choice_multi`` gives the letters in order (``AC``),
    ``option_set`` the letters separated by commas (``A, C``). Letters must be among the first
    ``choices`` (A–G for ``option_set``); anything else ("Answer: C", "Both") is a row
    problem."""
    text = str(value).strip()
    inner = text
    if wrapped := _WRAPPED.fullmatch(text):
        inner = (wrapped.group(1) or wrapped.group(2) or "").strip()
    letters = re.findall(r"[A-Za-z]", inner) if _LETTERS.fullmatch(inner) else []
    if not letters or not ("".join(letters).isupper() or "".join(letters).islower()):
        raise _RowProblem(f"the reference {text!r} is not an option letter (such as B)", name)
    letters = [letter.upper() for letter in letters]
    if scorer in ("choice", "choice_free") and len(letters) != 1:
        raise _RowProblem(f"the reference {text!r} must be one option letter", name)
    last = "G" if scorer == "option_set" else chr(ord("A") + min(choices, 26) - 1)
    wrong = sorted({letter for letter in letters if not "A" <= letter <= last})
    if wrong:
        raise _RowProblem(f"the reference {text!r} names {', '.join(wrong)}, not an option "
                          f"from A to {last}", name)  # fmt: skip
    if scorer == "option_set":
        return ", ".join(dict.fromkeys(letters))
    return "".join(dict.fromkeys(letters))


# --------------------------------------------------------------------------- IFEval rows


def _ifeval_metadata(row: Mapping[str, Any], fields: FieldsDeclaration) -> dict[str, Any]:
    """The instruction ids and their arguments that the IFEval checker needs, checked the way
    the checker will use them (unknown ids and unusable arguments keep the row out)."""
    from sweepbench.bench.scoring.ifeval import INSTRUCTION_IDS, build_checks

    ids_field, kwargs_field = fields.instruction_ids, fields.kwargs
    ids = _instruction_ids(_required(row, ids_field), ids_field)
    unknown = [i for i in ids if i not in INSTRUCTION_IDS]
    if unknown:
        raise _RowProblem(f"unknown IFEval instruction {', '.join(map(repr, unknown))}", ids_field)
    arguments = _instruction_kwargs(row.get(kwargs_field), len(ids), kwargs_field)
    try:
        build_checks(ids, arguments, str(row.get(fields.prompt_field, "")))
    except DataError as exc:
        raise _RowProblem(str(exc), kwargs_field) from None
    return {"instruction_id_list": ids, "kwargs": arguments}


def _instruction_ids(value: Any, name: str) -> list[str]:
    """A list of instruction ids: a list, JSON text of one, or ids separated by commas."""
    if isinstance(value, str):
        text = value.strip()
        value = _json(text, name) if text.startswith("[") else re.split(r"[,\s]+", text)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _RowProblem("expected a list of IFEval instruction ids", name)
    ids = [v.strip() for v in value if v.strip()]
    if not ids:
        raise _RowProblem("no IFEval instruction ids", name)
    return ids


def _instruction_kwargs(value: Any, count: int, name: str) -> list[dict[str, Any]]:
    """One argument dict per instruction (absent: empty dicts)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return [{} for _ in range(count)]
    if isinstance(value, str):
        value = _json(value, name)
    if isinstance(value, dict) and count == 1:
        value = [value]
    if not isinstance(value, list):
        raise _RowProblem("expected a list of argument objects, one per instruction", name)
    arguments = [_json(v, name) if isinstance(v, str) else v for v in value]
    if not all(isinstance(a, dict) for a in arguments):
        raise _RowProblem("every instruction's arguments must be an object", name)
    if len(arguments) != count:
        raise _RowProblem(f"{len(arguments)} argument objects for {count} instructions", name)
    return [{k: v for k, v in a.items() if v is not None} for a in arguments]


def _json(text: str, name: str) -> Any:
    """Parsed JSON text, or a row problem (also when it is nested too deep)."""
    try:
        return bounded_json_loads(text)
    except json.JSONDecodeError as exc:
        raise _RowProblem(f"not valid JSON ({exc.msg})", name) from None
    except TooDeep as exc:
        raise _RowProblem(f"not usable JSON ({exc})", name) from None
