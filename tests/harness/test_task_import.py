"""Task data loads without the generator: ``load_task`` imports no runner, loop or proposer."""

from __future__ import annotations

import json
import subprocess
import sys


def _harness_modules(statement: str) -> list[str]:
    code = (
        "import json, sys\n"
        f"{statement}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('serialkit.harness'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout))


def test_loading_a_task_imports_only_the_task_modules() -> None:
    loaded = _harness_modules("from serialkit.harness import load_task; load_task('duo-berg')")
    assert loaded == ["serialkit.harness", "serialkit.harness.schemas", "serialkit.harness.tasks"]


def test_the_runner_loads_when_first_asked_for() -> None:
    loaded = _harness_modules("from serialkit.harness import run")
    assert "serialkit.harness.runner" in loaded and "serialkit.harness.loop" in loaded


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    import serialkit.harness

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        serialkit.harness.nope  # noqa: B018
