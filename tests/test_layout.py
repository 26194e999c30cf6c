"""One home per concept: every error class in ``core.errors``, one module named ``gate``."""

from __future__ import annotations

import ast
from pathlib import Path

import serialkit.core.errors as errors

PACKAGE = Path(__file__).resolve().parents[1] / "serialkit"


def _error_names() -> set[str]:
    return {name for name, obj in vars(errors).items()
            if isinstance(obj, type) and issubclass(obj, errors.SerialkitError)}


def _classes_on(base_names: set[str]) -> list[str]:
    """Classes outside ``core/errors.py`` whose bases name one of ``base_names``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "core" / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & base_names:
                    found.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    return found


def test_every_serialkit_error_is_defined_in_core_errors() -> None:
    names = _error_names()
    assert {"SerialkitError", "EndpointError", "RunDirError", "RenderInputError", "PanelError",
            "RulesError"} <= names
    assert _classes_on(names) == []


def test_the_scan_finds_subclasses_elsewhere() -> None:
    # the CLI group derives from click.Group outside core/errors.py: the scan must see it
    assert "cli/__init__.py:SerialkitGroup" in _classes_on({"Group"})


def test_one_module_is_named_gate() -> None:
    assert sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("gate.py")) == ["check/gate.py"]


def test_no_import_cycle_anywhere_in_serialkit() -> None:
    """Every module of serialkit, function-level and TYPE_CHECKING imports counted: no cycle."""
    from tests.io.test_import_graph import graph
    from tests.test_core_import_graph import cycles

    edges = graph()
    assert len(edges) > 150  # the whole package is probed
    assert cycles(edges) == []


def test_no_module_over_600_lines() -> None:
    root = Path(__file__).resolve().parents[1] / "serialkit"
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}
