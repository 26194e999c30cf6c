"""Import hygiene, checked in fresh interpreters: the core is pure and the top level is light."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("music21", "lxml", "verovio", "openai", "pluggy", "numpy", "matplotlib", "cairosvg",
         "jsonschema", "click")


def _loaded_after(statement: str) -> list[str]:
    code = (
        "import json, sys\n"
        f"{statement}\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout))


@pytest.mark.parametrize(
    "module",
    ["serialkit.core", "serialkit.core.rows", "serialkit.core.piece", "serialkit.core.errors",
     "serialkit.core.catalog", "serialkit.core.predicates", "serialkit.core.analysis"],
)
def test_core_imports_no_third_party_library(module: str) -> None:
    pytest.importorskip(module)
    assert _loaded_after(f"import {module}") == []


def test_core_package_imports_only_the_standard_library() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import serialkit.core, serialkit.core.rows, serialkit.core.piece\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "stdlib = set(sys.stdlib_module_names) | {'serialkit'}\n"
        "print(sorted(new - stdlib))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_importing_serialkit_stays_light() -> None:
    assert _loaded_after("import serialkit") == []


def test_sanity_the_probe_sees_imports() -> None:
    # the probe must be able to fail: importing the plugin manager does load pluggy
    assert "pluggy" in _loaded_after("import serialkit.plugins")
