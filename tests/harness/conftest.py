"""Fixtures the OpenAI proposer tests share (``test_openai*.py``). None is autouse: a module that
wants the key says so (``pytestmark = pytest.mark.usefixtures("api_key")``), so the rest of the
harness tests run without one."""

from __future__ import annotations

from typing import Any

import pytest

from serialkit.harness import load_task
from tests.harness.fake_openai import SECRET


@pytest.fixture()
def task() -> Any:
    """The task the fake server answers: ``duo-berg``."""
    return load_task("duo-berg")


@pytest.fixture()
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """``SERIALKIT_API_KEY`` set to ``SECRET`` (and ``OPENAI_API_KEY`` unset) for one test."""
    monkeypatch.setenv("SERIALKIT_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return SECRET
