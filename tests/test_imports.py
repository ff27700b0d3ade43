"""What importing sweepbench costs and drags in, and the import graph the cost depends on.

Fresh interpreters (subprocesses) tell what an import loads; an ``ast`` walk over the package
finds import cycles. ``python tests/test_imports.py`` prints every cycle in the package, by
the kind of import that closes it (module level, inside a function, type checking only).
"""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import itertools
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import pytest

import sweepbench

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "sweepbench"

Kind = Literal["top", "deferred", "typing"]
"""Where an import statement sits: module level, inside a function, or ``if TYPE_CHECKING``."""

Graph = dict[str, dict[str, dict[Kind, int]]]
"""module → imported module → kind → first line of such an import."""


# -- what an import loads ------------------------------------------------------------------------


def loaded_after(code: str, candidates: Iterable[str]) -> list[str]:
    """Which of ``candidates`` (top-level package names) a fresh interpreter has in
    sys.modules after running ``code``."""
    names = sorted(candidates)
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {names!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    result: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_errors_import_loads_no_heavy_library() -> None:
    heavy = ["sqlalchemy", "anthropic", "openai", "numpy", "dash", "pydantic"]
    assert loaded_after("import sweepbench.errors", heavy) == []


def test_root_import_loads_no_heavy_library() -> None:
    heavy = ["dash", "numpy", "llama_cpp", "anthropic", "openai", "sqlalchemy", "pydantic"]
    assert loaded_after("import sweepbench", heavy) == []


def test_help_loads_no_layer_below_the_cli() -> None:
    code = (
        "import sys\nsys.argv = ['sweepbench', '--help']\nfrom sweepbench.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    heavy = ["sqlalchemy", "pydantic", "numpy", "dash", "anthropic", "openai", "llama_cpp"]
    assert loaded_after(code, heavy) == []
    layers = ["sweepbench.store", "sweepbench.bench", "sweepbench.sweeps", "sweepbench.web"]
    assert loaded_after(code, layers) == []


def test_bench_run_help_loads_no_pydantic() -> None:
    """``bench run --help`` (issue 30 §4): Typer builds a pydantic adapter for a group's
    unset ``--help`` flag unless it reads False (``cli.app.HelpWithoutPydantic``), and
    ``bench``'s other commands (the scorers, the sweeps, the listing) load only to run."""
    code = (
        "import sys\nsys.argv = ['sweepbench', 'bench', 'run', '--help']\n"
        "from sweepbench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    heavy = ["sqlalchemy", "pydantic", "numpy", "dash", "anthropic", "openai", "llama_cpp"]
    assert loaded_after(code, heavy) == []
    modules = ["sweepbench.bench.scoring", "sweepbench.cli.bench_sweep", "sweepbench.store"]
    assert loaded_after(code, [*modules, "sweepbench.cli.bench_run"]) == [
        "sweepbench.cli.bench_run"
    ]


def test_text_kind_does_not_load_the_sculpture_libraries() -> None:
    code = "from sweepbench.artifacts import get_kind\nget_kind('text')"
    assert loaded_after(code, ["numpy", "pydantic", "pygltflib"]) == []


# -- the root package ----------------------------------------------------------------------------


def test_every_public_name_resolves() -> None:
    for name in sweepbench.__all__:
        assert getattr(sweepbench, name) is not None, name
    assert set(sweepbench.__all__) <= set(dir(sweepbench))
    namespace: dict[str, object] = {}
    exec("from sweepbench import *", namespace)
    assert set(sweepbench.__all__) <= set(namespace)


def test_public_names_come_from_their_modules() -> None:
    from sweepbench import generate, sweep
    from sweepbench.generation import generate as engine_generate
    from sweepbench.sweeps import sweep as sweeps_sweep

    assert sweep is sweeps_sweep
    assert generate is engine_generate


def test_unrecorded_adapter_calls_are_not_public_names() -> None:
    """Only calls through the engine (ledger, limits, a ``calls`` row) are in the root
    namespace: reaching an adapter directly is ``sweepbench.models.resolve``."""
    assert not {"resolve", "collect"} & {*sweepbench.__all__, *dir(sweepbench)}
    with pytest.raises(AttributeError):
        _ = sweepbench.resolve  # type: ignore[attr-defined]


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = sweepbench.no_such_name  # type: ignore[attr-defined]


def _type_checking_names(tree: ast.Module) -> set[str]:
    """The names bound under the root package's ``if TYPE_CHECKING:``."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom | ast.Import):
                    names.update(a.asname or a.name.split(".")[0] for a in stmt.names)
                elif isinstance(stmt, ast.FunctionDef):
                    names.add(stmt.name)
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    names.add(stmt.target.id)
    return names


def test_exports_all_and_type_checking_imports_agree() -> None:
    exports: dict[str, str] = sweepbench._EXPORTS  # type: ignore[attr-defined]
    assert sorted(sweepbench.__all__) == sorted(exports)
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assert set(exports) <= _type_checking_names(tree)
    for name, module in exports.items():
        assert getattr(importlib.import_module(module), name) is getattr(sweepbench, name)


def test_spelled_out_estimate_matches_the_function() -> None:
    from sweepbench.sweeps import estimate

    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    [stub] = [
        stmt
        for node in tree.body
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for stmt in node.body
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "estimate"
    ]
    args = stub.args
    declared = [(a.arg, ast.unparse(a.annotation) if a.annotation else None) for a in args.args]
    if args.kwarg is not None:
        annotation = args.kwarg.annotation
        declared.append((f"**{args.kwarg.arg}", ast.unparse(annotation) if annotation else None))
    signature = inspect.signature(estimate)
    actual = [
        ("**" + p.name if p.kind is p.VAR_KEYWORD else p.name, str(p.annotation))
        for p in signature.parameters.values()
    ]
    assert declared == actual
    assert stub.returns is not None
    assert ast.unparse(stub.returns) == str(signature.return_annotation)


def test_version_is_the_installed_distributions() -> None:
    assert sweepbench.__version__ == importlib.metadata.version("sweepbench")


# -- the artifact kinds --------------------------------------------------------------------------


def test_registry_maps_names_to_kinds() -> None:
    from sweepbench.artifacts import artifact_kind, get_kind, kinds
    from sweepbench.artifacts.base import ArtifactKind

    assert artifact_kind is get_kind
    assert list(kinds())[:3] == ["text", "excalidraw", "sculpture"]
    for name, kind in kinds().items():
        assert isinstance(kind, ArtifactKind)
        assert kind.name == name
        assert get_kind(name) is kind
    assert "text" in kinds()
    assert "nope" not in kinds()
    with pytest.raises(KeyError):
        kinds()["nope"]


def test_unknown_kind_is_a_user_error_listing_the_known() -> None:
    from sweepbench.artifacts import get_kind
    from sweepbench.errors import UserError

    with pytest.raises(UserError, match="unknown kind 'nope'; kinds: excalidraw, sculpture, text"):
        get_kind("nope")


def test_registered_kind_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from sweepbench.artifacts import ArtifactKind, get_kind, kinds, register, registry

    monkeypatch.setattr(registry, "_KINDS", dict(registry._KINDS))
    poem = register(ArtifactKind(name="poem", label="Poem", prompts={"v1": None}))
    assert get_kind("poem") is poem
    assert list(kinds())[-1] == "poem"


# -- the CLI's lazy commands ---------------------------------------------------------------------


def test_lazy_commands_list_what_their_modules_register() -> None:
    import typer
    from typer.main import get_command

    from sweepbench.cli.app import LAZY_COMMANDS, LazyGroup, app

    group = get_command(app)
    assert isinstance(group, LazyGroup)
    ctx = typer.Context(group, info_name="sweepbench")
    eager = list(group.commands)
    assert not set(eager) & set(LAZY_COMMANDS)
    listed = {name: group.get_command(ctx, name) for name in LAZY_COMMANDS}
    for module in dict.fromkeys(module for module, _ in LAZY_COMMANDS.values()):
        group.load(module)
    assert set(group.commands) - set(eager) == set(LAZY_COMMANDS)
    for name, stand_in in listed.items():
        real = group.get_command(ctx, name)
        assert stand_in is not None and real is not None and real is not stand_in
        assert stand_in.help == (real.help or "").split("\n\n")[0], name
    assert group.list_commands(ctx) == [*eager, *LAZY_COMMANDS]


def test_bench_commands_list_what_their_modules_register() -> None:
    import typer
    from typer.main import get_command

    from sweepbench.cli.app import app
    from sweepbench.cli.bench import BENCH_COMMANDS, BenchGroup

    top = get_command(app)
    top_ctx = typer.Context(top, info_name="sweepbench")
    top.load("bench")  # type: ignore[attr-defined]
    group = top.get_command(top_ctx, "bench")
    assert isinstance(group, BenchGroup)
    ctx = typer.Context(group, info_name="bench", parent=top_ctx)
    listed = {name: group.get_command(ctx, name) for name in BENCH_COMMANDS}
    for module in dict.fromkeys(module for module, _ in BENCH_COMMANDS.values()):
        group.load(module)
    assert set(group.commands) == set(BENCH_COMMANDS)
    for name, stand_in in listed.items():
        real = group.get_command(ctx, name)
        assert stand_in is not None and real is not None and real is not stand_in
        assert stand_in.help == (real.help or "").split("\n\n")[0], name
    assert group.list_commands(ctx) == list(BENCH_COMMANDS)


def test_lazy_command_runs() -> None:
    from typer.testing import CliRunner

    from sweepbench.cli.app import app

    result = CliRunner().invoke(app, ["sweeps", "--help"])
    assert result.exit_code == 0, result.output
    assert "Stored sweeps" in result.output
    typo = CliRunner().invoke(app, ["sweepz"])
    assert typo.exit_code != 0
    assert "sweeps" in typo.output


# -- import cycles -------------------------------------------------------------------------------


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def modules(root: Path = PACKAGE, name: str = "sweepbench") -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their ``__init__.py``)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_graph(found: dict[str, Path] | None = None) -> Graph:
    """Who imports whom inside the package. ``from a import b`` counts as importing ``a.b``
    when that is a module, else ``a``; relative imports are resolved."""
    found = modules() if found is None else found
    graph: Graph = {name: {} for name in found}

    def add(source: str, target: str, kind: Kind, line: int) -> None:
        if target in found and target != source:
            graph[source].setdefault(target, {}).setdefault(kind, line)

    for name, path in found.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def visit(node: ast.AST, kind: Kind, source: str = name, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.body:
                        visit(ast.Module(body=[stmt], type_ignores=[]), "typing")
                    for stmt in child.orelse:
                        visit(ast.Module(body=[stmt], type_ignores=[]), kind)
                    continue
                inner: Kind = kind
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    inner = "deferred" if kind == "top" else kind
                if isinstance(child, ast.Import):
                    for alias in child.names:
                        add(source, alias.name, kind, child.lineno)
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        parts = package.split(".")
                        parts = parts[: len(parts) - child.level + 1]
                        base = ".".join([*parts, *([child.module] if child.module else [])])
                    for alias in child.names:
                        full = f"{base}.{alias.name}"
                        add(source, full if full in found else base, kind, child.lineno)
                else:
                    visit(child, inner)

        visit(ast.parse(path.read_text(encoding="utf-8")), "top")
    return graph


def cycles(graph: Graph, kinds: set[Kind], within: str = "", limit: int = 200) -> list[list[str]]:
    """Elementary cycles among modules under ``within`` through imports of ``kinds``, shortest
    first (at most ``limit``): each as [a, b, ..., a]."""
    edges = {
        source: sorted(
            target
            for target, seen in targets.items()
            if target.startswith(within) and set(seen) & kinds
        )
        for source, targets in graph.items()
        if source.startswith(within)
    }
    order = sorted(edges)
    rank = {name: i for i, name in enumerate(order)}
    found: list[list[str]] = []
    for start in order:  # each cycle once: from its lowest-ranked module
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack and len(found) < limit:
            node, path = stack.pop()
            for target in edges.get(node, []):
                if target == start:
                    found.append([*path, start])
                elif rank.get(target, -1) > rank[start] and target not in path:
                    stack.append((target, [*path, target]))
    return sorted(found, key=lambda cycle: (len(cycle), cycle))


def test_no_import_cycles_among_artifact_modules() -> None:
    # Imports inside functions count: the old kind lookup closed its cycle with one.
    graph = import_graph()
    assert graph["sweepbench.artifacts.registry"], "the checker found no imports at all"
    assert cycles(graph, {"top", "deferred"}, within="sweepbench.artifacts") == []


def package_graph(graph: Graph, root: str = "sweepbench") -> Graph:
    """The module graph folded into the root's subpackages (and top-level modules): an
    import from ``root.a.x`` of ``root.b.y`` is an arrow from ``root.a`` to ``root.b``."""

    def top(name: str) -> str:
        return ".".join(name.split(".")[:2])

    folded: Graph = {}
    for source, targets in graph.items():
        if source == root:
            continue  # the root's lazy exports name every layer (PEP 562, nothing loaded)
        for target, seen in targets.items():
            a, b = top(source), top(target)
            if a != b and b != root:
                for kind, line in seen.items():
                    folded.setdefault(a, {}).setdefault(b, {}).setdefault(kind, line)
        folded.setdefault(top(source), {})
    return folded


def test_the_packages_import_one_way() -> None:
    """No import cycle between sweepbench's packages (issue 28 §2), whatever kind of import
    closes it — inside a function or for type checking only included: the layers point one
    way (stats and axes below the runs; bench below sweeps and the leaderboard; the
    surfaces on top)."""
    packages = package_graph(import_graph())
    assert "sweepbench.stats" in packages and packages["sweepbench.bench"]
    found = cycles(packages, {"top", "deferred", "typing"})
    assert found == [], "\n".join(describe(packages, cycle) for cycle in found)


def test_package_graph_folds_modules_into_packages(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for sub in ("low", "high"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "low" / "x.py").write_text("def f():\n    from pkg.high.y import z\n")
    (package / "high" / "y.py").write_text("from pkg.low import x\n")
    packages = package_graph(import_graph(modules(package, "pkg")), "pkg")
    assert cycles(packages, {"top", "deferred"}) == [["pkg.high", "pkg.low", "pkg.high"]]


def test_cycle_checker_sees_a_deferred_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from pkg.a import x\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
    )
    graph = import_graph(modules(package, "pkg"))
    assert cycles(graph, {"top"}) == []
    assert cycles(graph, {"top", "deferred"}) == [["pkg.a", "pkg.b", "pkg.a"]]
    assert graph["pkg.c"] == {"pkg.a": {"typing": 3}}


def describe(graph: Graph, cycle: list[str]) -> str:
    """``a -[top:3]-> b -[deferred:40]-> a``: each import's kind and line."""
    steps = [cycle[0]]
    for source, target in itertools.pairwise(cycle):
        how = ",".join(f"{kind}:{line}" for kind, line in graph[source][target].items())
        steps.append(f"-[{how}]-> {target}")
    return " ".join(steps)


def main() -> None:
    """Print every import cycle in the package, by the kinds of import that close it."""
    graph = import_graph()
    shown: set[tuple[str, ...]] = set()
    levels: list[tuple[str, set[Kind]]] = [
        ("module-level imports only (these break at import time)", {"top"}),
        ("adding imports inside functions", {"top", "deferred"}),
        ("adding TYPE_CHECKING imports", {"top", "deferred", "typing"}),
    ]
    for title, kinds in levels:
        new = [c for c in cycles(graph, kinds) if tuple(c) not in shown]
        print(f"== {title}: {len(new)} more")
        for cycle in new:
            shown.add(tuple(cycle))
            print("  " + describe(graph, cycle))


if __name__ == "__main__":
    main()


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["bench", "--help"],
        ["bench", "run", "--help"],
        ["bench", "run", "sample", "--no-such-option"],
        ["bench", "sweep", "--help"],
        ["bench", "show", "--help"],
    ],
    ids=" ".join,
)
def test_help_and_argument_errors_load_no_store_or_sdk(args: list[str]) -> None:
    """A benchmark command's --help, --version and a mistyped option are answered without the
    store, SQLAlchemy, numpy or an SDK (issue 19): only the command modules are imported."""
    code = (
        f"import sys\nsys.argv = ['sweepbench', *{args!r}]\nfrom sweepbench.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    heavy = ["sqlalchemy", "numpy", "dash", "anthropic", "openai", "llama_cpp", "ray"]
    assert loaded_after(code, heavy) == []
    layers = ["sweepbench.store", "sweepbench.engine.executor", "sweepbench.bench.run"]
    assert loaded_after(code, layers) == []
