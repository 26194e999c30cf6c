"""Fixtures for the render tests: the duet fixture score, its report and certificate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from tests.conftest import FIXTURES

SVG = "{http://www.w3.org/2000/svg}"
DUET = FIXTURES / "render" / "duet.musicxml"
REPORT = FIXTURES / "render" / "duet.check.json"
CERTIFICATE = FIXTURES / "render" / "duet.certificate.json"


@pytest.fixture(scope="session")
def duet() -> Path:
    """The fixture score (two parts, a row statement each, a chord, a collision, a wrong note)."""
    return DUET


@pytest.fixture(scope="session")
def duet_report() -> dict[str, Any]:
    """The check report of the fixture score."""
    data: dict[str, Any] = json.loads(REPORT.read_text())
    return data


@pytest.fixture(scope="session")
def duet_certificate() -> dict[str, Any]:
    """The trace certificate of the fixture score."""
    data: dict[str, Any] = json.loads(CERTIFICATE.read_text())
    return data


def parse_svg(path_or_text: Path | str) -> Any:
    """Parse an SVG file or string."""
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    return etree.fromstring(text.encode(), etree.XMLParser(huge_tree=True))


def notes_by_id(root: Any) -> dict[str, Any]:
    """Every ``g.note`` element by id."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if g.get("class", "").split()[:1] == ["note"]:
            out[g.get("id")] = g
    return out


def labels(root: Any) -> list[Any]:
    """Every printed label element."""
    return [el for el in root.iter(f"{SVG}text") if "sk-label" in el.get("class", "").split()]


def text_of(el: Any) -> str:
    """The text content of an element."""
    return "".join(el.itertext()).strip()
