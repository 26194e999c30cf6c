"""Shared fixtures: paths to the real corpus (tests skip when ../shared is absent) and to fixtures."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("SERIALKIT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"


# CI (``CI`` set, as .ci/run does) draws the same examples on every run, so a red build is
# reproducible and a green one stays green; a developer's run explores new examples each time and
# replays its failures from .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real twelve-tone corpus directory; skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS} (../shared/corpus is absent)")
    return CORPUS


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """The project's own fixtures directory."""
    return FIXTURES


def require_program(name: str) -> str:
    """The path of a program, or skip the test naming what is missing (CI installs them all)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; `make test` should have installed it")
        pytest.skip(f"{name} is not installed")
    return path
