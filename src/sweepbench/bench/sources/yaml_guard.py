"""YAML from files a user or a colleague hands us, read under three rules, for benchmark
declarations and data files alike (one mechanism, :class:`GuardedYaml`):

* **no anchors or aliases** (``&name``, ``*name``): nine levels of nine aliases, under a
  kilobyte of text, stand for a billion values once anything walks them (the "billion
  laughs"), and an alias inside its own anchor is a value that contains itself. Refusing them
  is instant, whatever the file holds;
* **no nesting deeper than** :data:`~sweepbench.nesting.MAX_DEPTH` lists and mappings (the
  parser recurses once per level: 100,000 ``[`` would end in a RecursionError);
* **no key twice in one mapping** (YAML would silently keep the last).

Breaking a rule refuses the file: :class:`YamlRefused`, a ``yaml.MarkedYAMLError`` whose mark
gives the line, raised as soon as the reader reaches the place (so a bomb or a 100,000-deep
value costs nothing to refuse; reading past a deep value would: PyYAML's scanner takes time
quadratic in the depth of one line's brackets). Only a repeated key in a data file is not
fatal: it is noted in :attr:`GuardedYaml.problems` with its place, so that only the row holding
it is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, Event
from yaml.nodes import MappingNode, Node, ScalarNode

from sweepbench.nesting import MAX_DEPTH

__all__ = ["DeclarationLoader", "GuardedYaml", "YamlProblem", "YamlRefused",
           "load_declaration_yaml", "yaml_error_text"]  # fmt: skip

_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlRefused(yaml.MarkedYAMLError):
    """Valid YAML that sweepbench will not read; ``problem`` says why, ``problem_mark`` where."""


@dataclass(frozen=True)
class YamlProblem:
    """A rule broken inside a data file: where (``mark``) and what."""

    mark: yaml.error.Mark
    message: str

    @property
    def line(self) -> int:
        """The 1-based line of the file."""
        return self.mark.line + 1


class GuardedYaml:
    """The three rules, for a ``yaml.SafeLoader`` subclass (list it first among the bases).
    ``lenient_rows`` (data files): a repeated key is noted in :attr:`problems` and the reading
    goes on; otherwise it raises :class:`YamlRefused`, as breaking the other rules does."""

    lenient_rows: ClassVar[bool] = False
    problems: list[YamlProblem]
    _depth: int

    def __init__(self, stream: str) -> None:
        super().__init__(stream)  # type: ignore[call-arg]  # the loader's own __init__
        self.problems = []
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        """A node, refusing aliases and anchors and bounding the nesting."""
        event: Event = self.peek_event()  # type: ignore[attr-defined]
        if isinstance(event, AliasEvent):
            self._refuse(f"an alias (*{event.anchor})", event)
        if getattr(event, "anchor", None) is not None:
            self._refuse(f"an anchor (&{event.anchor})", event)  # type: ignore[attr-defined]
        if not isinstance(event, CollectionStartEvent):
            return super().compose_node(parent, index)  # type: ignore[misc, no-any-return]
        if self._depth >= MAX_DEPTH:
            raise YamlRefused(
                problem=f"nested deeper than {MAX_DEPTH} levels",
                problem_mark=_mark(event.start_mark),
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)  # type: ignore[misc, no-any-return]
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping, after checking that no key is written twice in it."""
        self._check_keys(node)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc, no-any-return]

    def _refuse(self, what: str, event: Event) -> NoReturn:
        raise YamlRefused(
            problem=f"{what}: YAML anchors and aliases are not accepted in benchmark files; "
            "write each value out in full",
            problem_mark=_mark(event.start_mark),
        )

    def _check_keys(self, node: MappingNode) -> None:
        """A problem for every plain key that repeats an earlier one of the same mapping
        (merge keys ``<<`` and complex keys are not compared)."""
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node)  # type: ignore[attr-defined]
            mark = _mark(key_node.start_mark)
            if key not in first:
                first[key] = mark.line + 1
                continue
            message = (
                f"the key {key!r} appears twice in one mapping (first on line {first[key]}); "
                "YAML would keep only the last"
            )
            if not self.lenient_rows:
                raise YamlRefused(problem=message, problem_mark=mark)
            self.problems.append(YamlProblem(mark, message))


def _mark(mark: Any) -> yaml.error.Mark:
    """An event's mark (the pure-Python parser always gives one)."""
    if not isinstance(mark, yaml.error.Mark):
        raise TypeError(f"expected a YAML mark, found {type(mark).__name__}")
    return mark


class DeclarationLoader(GuardedYaml, yaml.SafeLoader):
    """The loader of benchmark declarations: ``yaml.safe_load``'s types, under the rules."""


def load_declaration_yaml(text: str) -> Any:
    """A declaration's YAML text, parsed under the rules (YamlRefused when one is broken)."""
    loader = DeclarationLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_error_text(exc: yaml.YAMLError, shown: str) -> str:
    """A YAML error as one line: ``file:line: what`` (``not valid YAML (…)`` for a syntax
    error; a refusal says which rule)."""
    mark = getattr(exc, "problem_mark", None)
    where = f"{shown}:{mark.line + 1}" if mark is not None else shown
    problem = getattr(exc, "problem", None) or exc
    if isinstance(exc, YamlRefused):
        return f"{where}: {problem}"
    return f"{where}: not valid YAML ({problem})"
