"""No import cycle through serialkit/io, counting imports inside functions (only ``if
TYPE_CHECKING:`` imports are exempt), and no module under serialkit/io imports the
``serialkit.io`` package itself: the package's ``__init__`` imports its modules, never the
other way round."""

from __future__ import annotations

import ast
from pathlib import Path

import serialkit
from tests.test_core_import_graph import _imports, cycles

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
    assert "serialkit.io.sniff" in edges["serialkit.plugins.builtins"]  # ``from serialkit.io import sniff``
    tree = ast.parse("def f():\n    from serialkit.io import read_score\n")
    assert "serialkit.io" in _imports(tree, "serialkit.io.musicxml", {"serialkit.io"})
    assert cycles({"serialkit.io": {"serialkit.io.a"}, "serialkit.io.a": {"serialkit.io"}}) != []
