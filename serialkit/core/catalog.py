"""Named historical rows: music21's 71 and the 1,592 repertoire rows of Gotham & Yust (2021).

The data file ``serialkit/data/catalog.json`` is built by ``scripts/build_catalog.py`` and loaded
lazily on first use. Lookups ignore case, accents and punctuation (``webern-op21`` =
``WebernOp21``); ``identify`` finds a sequence's rows through a transposition- and
inversion-invariant key, not a scan of every row's 48 forms.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from serialkit.core import rows
from serialkit.core.errors import RowError
from serialkit.core.rows import Convention, Row, RowForm, _check_convention

__all__ = [
    "CatalogEntry", "Match", "collections", "entries", "excluded", "get", "identify",
    "interval_key", "normalize_name", "search",
]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One catalogued row with its provenance (P0 = ``row``, relative convention)."""

    name: str
    row: Row
    collection: str
    key: str = ""
    composer: str | None = None
    work: str | None = None
    opus: str | None = None
    year: str | None = None
    reference: str | None = None
    note: str | None = None
    aliases: tuple[str, ...] = ()
    source_pcs: tuple[int, ...] | None = None
    flags: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """A one-line human description: composer, work, opus, year."""
        parts = [p for p in (self.composer, self.work, self.opus) if p]
        text = ", ".join(parts) if parts else self.name
        return f"{text} ({self.year})" if self.year else text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        return {
            "name": self.name,
            "key": self.key,
            "pcs": list(self.row.pcs),
            "names": self.row.names(),
            "collection": self.collection,
            "composer": self.composer,
            "work": self.work,
            "opus": self.opus,
            "year": self.year,
            "reference": self.reference,
            "note": self.note,
            "aliases": list(self.aliases),
            "source_pcs": list(self.source_pcs) if self.source_pcs is not None else None,
            "flags": list(self.flags),
        }


@dataclass(frozen=True, slots=True)
class Match:
    """A catalogued row that a pitch-class sequence is, and the labels it has as that row."""

    entry: CatalogEntry
    forms: tuple[RowForm, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description."""
        return {
            "name": self.entry.name,
            "title": self.entry.title,
            "collection": self.entry.collection,
            "forms": [f.label for f in self.forms],
        }


def normalize_name(text: str) -> str:
    """The lookup key of a name: ASCII letters and digits only, lower case."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", ascii_text.lower())


def interval_key(pcs: Sequence[int]) -> tuple[int, ...]:
    """A key shared by all 48 forms of a row: the least of the interval successions of P, I, R, RI."""
    steps = tuple((b - a) % 12 for a, b in zip(pcs, pcs[1:], strict=False))
    inverse = tuple((-s) % 12 for s in steps)
    return min(steps, inverse, inverse[::-1], steps[::-1])


@dataclass(frozen=True, slots=True)
class _Catalog:
    entries: tuple[CatalogEntry, ...]
    by_key: dict[str, CatalogEntry]
    by_intervals: dict[tuple[int, ...], tuple[CatalogEntry, ...]]
    collections: dict[str, Any]
    excluded: tuple[dict[str, Any], ...]


def _entry(item: dict[str, Any]) -> CatalogEntry:
    source = item.get("source_pcs")
    return CatalogEntry(
        name=str(item["name"]),
        row=Row(tuple(item["pcs"]), name=str(item["name"])),
        collection=str(item["collection"]),
        key=str(item.get("key", "")),
        composer=item.get("composer"),
        work=item.get("work"),
        opus=item.get("opus"),
        year=item.get("year"),
        reference=item.get("reference"),
        note=item.get("note"),
        aliases=tuple(item.get("aliases", ())),
        source_pcs=tuple(source) if source is not None else None,
        flags=tuple(item.get("flags", ())),
    )


@lru_cache(maxsize=1)
def _catalog() -> _Catalog:
    resource = resources.files("serialkit").joinpath("data/catalog.json")
    try:
        data = json.loads(resource.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # pragma: no cover - a broken installation
        raise RowError(f"row catalog {resource} cannot be read: {exc}") from exc
    items = tuple(_entry(item) for item in data["rows"])
    by_key: dict[str, CatalogEntry] = {}
    grouped: dict[tuple[int, ...], list[CatalogEntry]] = {}
    for entry in items:
        for name in (entry.name, *entry.aliases):
            by_key.setdefault(normalize_name(name), entry)
        grouped.setdefault(interval_key(entry.row.pcs), []).append(entry)
    return _Catalog(
        entries=items,
        by_key=by_key,
        by_intervals={key: tuple(group) for key, group in grouped.items()},
        collections=dict(data["collections"]),
        excluded=tuple(data.get("excluded", ())),
    )


def entries(collection: str | None = None) -> tuple[CatalogEntry, ...]:
    """Every catalogued row (optionally of one collection: ``music21`` or ``repertoire``)."""
    items = _catalog().entries
    if collection is None:
        return items
    return tuple(e for e in items if e.collection == collection)


def collections() -> dict[str, Any]:
    """The catalogue's sources with their credits and counts."""
    return dict(_catalog().collections)


def excluded() -> tuple[dict[str, Any], ...]:
    """Source entries left out of the catalogue, each with the reason (not a 12-note row)."""
    return _catalog().excluded


def get(name: str) -> CatalogEntry:
    """The row catalogued under ``name`` or an alias (case, accents and punctuation ignored)."""
    catalog = _catalog()
    key = normalize_name(name)
    entry = catalog.by_key.get(key) if key else None
    if entry is not None:
        return entry
    close = difflib.get_close_matches(key, list(catalog.by_key), n=5, cutoff=0.6)
    names = list(dict.fromkeys(catalog.by_key[k].name for k in close))
    if not names:
        names = [e.name for e in search(name)[:5]]
    hint = f"; did you mean {', '.join(names)}?" if names else ""
    raise RowError(
        f"unknown catalog name {name!r}{hint} (serialkit row search TEXT lists catalogued rows)"
    )


def search(text: str, collection: str | None = None) -> list[CatalogEntry]:
    """Catalogued rows whose name, aliases, composer, work or opus contain every word of ``text``."""
    words = [normalize_name(w) for w in re.split(r"[\s,;]+", text) if normalize_name(w)]
    found = []
    for entry in entries(collection):
        haystack = " ".join(
            normalize_name(part)
            for part in (entry.name, *entry.aliases, entry.composer, entry.work, entry.opus)
            if part
        )
        if all(word in haystack for word in words):
            found.append(entry)
    return found


def identify(pcs: Sequence[int] | Row, convention: Convention = "relative") -> list[Match]:
    """Every catalogued row that ``pcs`` is a form of, with the labels it has as that row."""
    conv = _check_convention(convention)
    seq = Row.parse(pcs).pcs if not isinstance(pcs, Row) else pcs.pcs
    matches = []
    for entry in _catalog().by_intervals.get(interval_key(seq), ()):
        labels = entry.row.label_of(seq, conv)
        if labels:
            matches.append(Match(entry, tuple(labels)))
    return matches


def _named_row(name: str) -> Row:
    return get(name).row


rows.NAMED_ROWS.append(_named_row)  # ``Row.parse("webern-op21")`` looks names up here
