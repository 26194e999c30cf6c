"""No import cycle inside serialkit/core, counting imports inside functions too (a cycle hidden
behind a function-level import is still a cycle); only ``if TYPE_CHECKING:`` imports are exempt."""

from __future__ import annotations

import ast
from pathlib import Path

import serialkit.core

CORE = Path(serialkit.core.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["serialkit", "core", *path.relative_to(CORE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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


def graph() -> dict[str, set[str]]:
    """Module → the core modules it imports (anywhere in its body)."""
    files = {_module_name(p): p for p in CORE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = _imports(ast.parse(path.read_text()), package, set(files))
        edges[name] = {m for m in found if m in files and m != name}
    return edges


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


def test_serialkit_core_has_no_import_cycle() -> None:
    found = cycles(graph())
    assert not found, f"import cycles in serialkit/core: {found}"


def test_the_analysis_package_has_no_import_cycle() -> None:
    edges = {m: d for m, d in graph().items() if m.startswith("serialkit.core.analysis")}
    assert not cycles(edges), cycles(edges)
    assert not [c for c in cycles(graph()) if any(m.startswith("serialkit.core.analysis") for m in c)]


def test_the_probe_finds_a_cycle_hidden_in_a_function() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    tree = ast.parse("def f():\n    from serialkit.core.x import y\n")
    assert "serialkit.core.x" in _imports(tree, "serialkit.core")
    assert "serialkit.core.x.y" in _imports(tree, "serialkit.core", {"serialkit.core.x.y"})
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import serialkit.core.x\n")
    assert "serialkit.core.x" not in _imports(tree, "serialkit.core")
    tree = ast.parse("from .chains import build_chain\n")
    assert "serialkit.core.analysis.chains" in _imports(tree, "serialkit.core.analysis")


def test_the_graph_sees_the_pipeline() -> None:
    edges = graph()
    assert "serialkit.core.rows" in edges["serialkit.core.catalog"]
    assert "serialkit.core.piece_json" in edges["serialkit.core.piece"]
    assert "serialkit.core.analysis.statements" in edges["serialkit.core.analysis.pipeline"]
    assert "serialkit.core.analysis.pipeline" in edges["serialkit.core.analysis"]
