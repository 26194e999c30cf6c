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


def test_no_scaffolding_for_absent_project_modules() -> None:
    # the project's own modules are always present: no ImportError fallbacks around them in the
    # package, and no test skips when one of them is missing
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = [
        str(p.relative_to(root))
        for p in (root / "serialkit").rglob("*.py")
        if "except ImportError" in p.read_text(encoding="utf-8") and p.name != "registry.py"
    ]
    offenders += [
        str(p.relative_to(root))
        for p in (root / "tests").rglob("*.py")
        if "importorskip(" + '"serialkit' in p.read_text(encoding="utf-8")
    ]
    assert offenders == []
    assert not (root / "serialkit" / "harness" / "fallback.py").exists()
    assert not (root / "serialkit" / "checking.py").exists()


def test_the_checking_service_lives_in_serialkit_check() -> None:
    from serialkit.plugins import BUILTIN_MODULES, registry

    assert "serialkit.plugins.builtins" in BUILTIN_MODULES
    assert registry("predicates").get("ROW").plugin == "serialkit.plugins.builtins"
