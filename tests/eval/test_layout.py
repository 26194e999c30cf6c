"""The eval package's layout: one concept per module, none over 400 lines, its modules importing
one another without a cycle (imports inside functions counted), and no private name taken from
another module."""

from __future__ import annotations

import ast
from pathlib import Path

import serialkit.eval

EVAL = Path(serialkit.eval.__file__).parent
MAX_LINES = 400


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(EVAL.glob("*.py")):
        name = "serialkit.eval" if path.stem == "__init__" else f"serialkit.eval.{path.stem}"
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def _imports(tree: ast.Module) -> list[tuple[str, str]]:
    """(module, name) of every ``from … import`` anywhere in the tree, inside functions too."""
    return [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module for alias in node.names]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*path[path.index(dep):], dep]
            if dep not in state and (found := visit(dep)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_eval_module_is_over_the_limit() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in EVAL.glob("*.py")}
    assert sizes and not {k: v for k, v in sizes.items() if v > MAX_LINES}


def test_eval_modules_import_each_other_without_a_cycle() -> None:
    modules = _modules()
    # the package's own __init__ gathers the public names: an edge into it is the package, not a module
    graph = {name: {m for m, _ in _imports(tree) if m in modules and m != "serialkit.eval"}
             for name, tree in modules.items() if name != "serialkit.eval"}
    assert sum(len(deps) for deps in graph.values()) > 10  # the probe sees the imports
    assert _cycle(graph) is None, _cycle(graph)


def test_the_cycle_probe_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_private_name_crosses_into_eval() -> None:
    crossing = [(name, m, n) for name, tree in _modules().items() for m, n in _imports(tree)
                if m.startswith("serialkit") and n.startswith("_") and not n.startswith("__")]
    assert not crossing
