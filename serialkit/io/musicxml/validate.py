"""Validation of MusicXML output against the shipped MusicXML 4.0 XSD (built lazily, offline)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.musicxml.read import load_tree

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas" / "musicxml-4.0"


@functools.lru_cache(maxsize=1)
def musicxml_schema() -> etree.XMLSchema:
    """The MusicXML 4.0 XSD as an lxml schema (local imports only, no network)."""
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    doc = etree.parse(str(SCHEMA_DIR / "musicxml.xsd"), parser)
    return etree.XMLSchema(doc)


def musicxml_errors(path: str | os.PathLike[str]) -> list[str]:
    """Schema errors of a MusicXML file or .mxl archive (empty when valid)."""
    tree, where, _ = load_tree(Path(path))
    schema = musicxml_schema()
    if schema.validate(tree):
        return []
    return [f"{where}:{e.line}: {e.message}" for e in schema.error_log]  # type: ignore[attr-defined]


def is_valid_musicxml(path: str | os.PathLike[str]) -> bool:
    """True when the file validates against the MusicXML 4.0 XSD."""
    return not musicxml_errors(path)


def validate_musicxml(path: str | os.PathLike[str]) -> None:
    """Raise ScoreReadError listing the first schema errors when the file is not valid."""
    errors = musicxml_errors(path)
    if errors:
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise ScoreReadError("not valid MusicXML 4.0: " + "; ".join(errors[:5]) + more)
