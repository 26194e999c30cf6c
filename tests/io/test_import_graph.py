"""No import cycle through serialkit/io, counting imports inside functions (only ``if
TYPE_CHECKING:`` imports are exempt), and no module under serialkit/io imports the
``serialkit.io`` package itself: the package's ``__init__`` imports its modules, never the
other way round."""

from __future__ import annotations

import ast
from pathlib import Path

import serialkit

ROOT = Path(serialkit.__file__).parent
IO = ROOT / "io"


def _module_name(path: Path) -> str:
    parts = ["serialkit", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def graph() -> dict[str, set[str]]:
    """Module → the serialkit modules it imports (anywhere in its body)."""
    files = _files()
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = _imports(ast.parse(path.read_text(encoding="utf-8")), package, set(files))
        edges[name] = {m for m in found if m in files and m != name}
    return edges


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, package: str, modules: set[str] | None = None) -> set[str]:
    out: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                # ``from serialkit.core import rows`` imports the submodule; any other name comes
                # from the module itself
                sub = f"{base}.{alias.name}"
                out.add(sub if modules is not None and sub in modules else base)
        stack.extend(ast.iter_child_nodes(node))
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _in_io(module: str) -> bool:
    return module == "serialkit.io" or module.startswith("serialkit.io.")


def test_no_module_under_io_imports_the_io_package() -> None:
    edges = graph()
    offenders = sorted(m for m, deps in edges.items() if _in_io(m) and m != "serialkit.io" and "serialkit.io" in deps)
    assert offenders == []


def test_io_has_no_import_cycle() -> None:
    edges = graph()
    io_only = {m: {d for d in deps if _in_io(d)} for m, deps in edges.items() if _in_io(m)}
    assert cycles(io_only) == []


def test_no_cycle_anywhere_passes_through_io() -> None:
    found = [c for c in cycles(graph()) if any(_in_io(m) for m in c)]
    assert found == []


def test_no_private_name_of_io_is_imported_outside_io() -> None:
    offenders = []
    for name, path in _files().items():
        if _in_io(name):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and _in_io(node.module):
                if any(part.startswith("_") for part in node.module.split(".")):
                    offenders.append(f"{name}: {node.module}")
                offenders += [f"{name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert offenders == []


def test_io_modules_stay_under_600_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in IO.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def test_the_probe_sees_io_edges_and_function_level_imports() -> None:
    edges = graph()
    assert "serialkit.io.dispatch" in edges["serialkit.io"]
    assert "serialkit.io.musicxml.read" in edges["serialkit.io.musicxml.annotate"]
    assert "serialkit.io.sniff" in edges["serialkit.io._plugin"]  # ``from serialkit.io import sniff``
    tree = ast.parse("def f():\n    from serialkit.io import read_score\n")
    assert "serialkit.io" in _imports(tree, "serialkit.io.musicxml", {"serialkit.io"})
    assert cycles({"serialkit.io": {"serialkit.io.a"}, "serialkit.io.a": {"serialkit.io"}}) != []
