"""Build serialkit/data/catalog.json from the two row collections in ../shared/corpus/.

Usage: python scripts/build_catalog.py [CORPUS_DIR] [--out PATH]

The output is committed: it holds facts (pitch-class sequences and their provenance) with credits.
Rerunning the script on the same inputs reproduces the committed file byte for byte.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

from serialkit.core.catalog import normalize_name
from serialkit.core.errors import RowError
from serialkit.core.rows import Row
from serialkit.io.files.atomic import atomic_write

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT_OUT = ROOT / "serialkit" / "data" / "catalog.json"
MUSIC21_FILE = "music21-historical-rows.json"
REPERTOIRE_FILE = "rows-in-the-repertoire.json"

COLLECTIONS: dict[str, dict[str, Any]] = {
    "music21": {
        "title": "music21.serial.historicalDict",
        "credit": "music21 10.5.1 (Michael Scott Asato Cuthbert and contributors), "
        "music21/serial.py historicalDict, BSD-3-Clause licence",
        "url": "https://github.saobby.my.eu.org/cuthbertLab/music21",
    },
    "repertoire": {
        "title": "Rows in the Repertoire (Serial_Analyser, Repertoire_Anthology)",
        "credit": "Mark Gotham and Jason Yust (2021), Digital Libraries for Musicology (DLfM), "
        "doi:10.1145/3469013.3469018; data from MarkGotham/Serial_Analyser",
        "url": "https://github.saobby.my.eu.org/MarkGotham/Serial_Analyser",
    },
}

# Rows whose catalogue P0 is not music21's stored list: the row as the composer first states it.
# music21 stores its rows "at arbitrary transpositions" (and, for Op. 21, as an inversion).
FIRST_STATED: dict[str, tuple[list[int], str]] = {
    "WebernOp21": (
        [9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3],
        "P0 is the row as Webern first states it in Symphonie Op. 21, I: A F# G G# E F B Bb D "
        "C# C Eb, beginning with the sounding A of Horn 2 in bar 1 (A F# G G# in bars 1-4). "
        "music21 (and the repertoire collection's Original) store F G# G F# Bb A Eb E C C# D "
        "B, the answering canonic voice that enters in bar 2, which is {labels} of this row "
        "(relative convention). The row is symmetric (24 distinct forms): every P form is "
        "also an R form and every I form an RI form.",
    ),
}


# Titles music21 gets wrong, corrected (the source's own value stays in the corpus file).
TITLES: dict[str, str] = {
    "WebernOp21": "Symphony",  # Webern's Symphonie Op. 21, not a "Chamber Symphony" (outside tester, 1900)
}


def slugify(text: str) -> str:
    """A lower-case, hyphenated, ASCII name fragment ("Symphony, Op.21" -> "symphony-op21")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"\b(op|no|nr)\.\s*(?=\d)", r"\1", ascii_text, flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def camel_slug(key: str) -> str:
    """music21's CamelCase key as a hyphenated name ("SchoenbergOp24Mvmt5" -> "schoenberg-op24-mvmt5")."""
    parts = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", key)
    return parts.lower()


def music21_entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Catalogue entries for the 71 music21 rows, in music21's order."""
    entries = []
    for key, item in data["rows"].items():
        pcs = list(item["row"])
        note = None
        source_pcs = None
        if key in FIRST_STATED:
            stated, template = FIRST_STATED[key]
            labels = Row(tuple(stated)).label_of(pcs)
            if not labels:
                raise SystemExit(f"{key}: music21's row is not a form of the first-stated row")
            note = template.format(labels=" = ".join(label.label for label in labels))
            source_pcs, pcs = pcs, stated
        entries.append(
            {
                "name": camel_slug(key),
                "key": key,
                "collection": "music21",
                "pcs": pcs,
                "aliases": [key],
                "composer": item.get("composer"),
                "work": TITLES.get(key, item.get("title")),
                "opus": item.get("opus"),
                "year": None,
                "reference": None,
                "note": note,
                "source_pcs": source_pcs,
                "flags": [],
            }
        )
    return entries


def repertoire_entries(data: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Catalogue entries for the repertoire rows (P0 = the row as first stated), and exclusions."""
    entries: list[dict[str, Any]] = []
    excluded: list[dict[str, Any]] = []
    for key, item in data.items():
        original = int(item["Original"])
        try:
            Row(tuple(item["P0"]))
        except RowError as exc:
            reason = f"not a twelve-tone row: its P0 {item['P0']}: {exc}"
            excluded.append({"key": key, "collection": "repertoire", "reason": reason})
            continue
        row = Row(tuple((p + original) % 12 for p in item["P0"]))
        flags = []
        if item.get("NumPitches") != 12:
            flags.append("num-pitches-field-missing")
        composer = str(item["Composer"])
        surname = composer.split(",")[0]
        entries.append(
            {
                "name": f"{slugify(surname)}-{slugify(str(item['Work']))}".strip("-"),
                "key": key,
                "collection": "repertoire",
                "pcs": list(row.pcs),
                "aliases": [key],
                "composer": composer,
                "work": item["Work"] or None,
                "opus": None,
                "year": item.get("Year") or None,
                "reference": item.get("Source") or None,
                "note": str(item["Note"]) if item.get("Note") not in (None, "") else None,
                "source_pcs": None,
                "flags": flags,
            }
        )
    return entries, excluded


def dedupe_names(entries: list[dict[str, Any]]) -> None:
    """Make every name and alias unique under case/punctuation-insensitive lookup.

    A clashing name takes the entry's note (or a number); a clashing alias is dropped (the
    source key stays in ``key``)."""
    taken: set[str] = set()
    for entry in entries:
        base = entry["name"]
        name, k = base, 2
        if normalize_name(name) in taken and entry["note"]:
            name = base = f"{base}-{slugify(entry['note'])}"
        while normalize_name(name) in taken:
            name, k = f"{base}-{k}", k + 1
        entry["name"] = name
        taken.add(normalize_name(name))
    for entry in entries:
        kept = []
        for alias in entry["aliases"]:
            key = normalize_name(alias)
            if key == normalize_name(entry["name"]) or key not in taken:
                kept.append(alias)
                taken.add(key)
        entry["aliases"] = kept


def build(corpus: Path) -> str:
    """The catalogue file's text."""
    m21 = json.loads((corpus / MUSIC21_FILE).read_text(encoding="utf-8"))
    rep = json.loads((corpus / REPERTOIRE_FILE).read_text(encoding="utf-8"))
    first = music21_entries(m21)
    second, excluded = repertoire_entries(rep)
    entries = first + second
    dedupe_names(entries)
    collections = json.loads(json.dumps(COLLECTIONS))
    collections["music21"]["count"] = len(first)
    collections["repertoire"]["count"] = len(second)
    collections["repertoire"]["excluded"] = len(excluded)
    head = {
        "format": 1,
        "description": "Named twelve-tone rows. pcs is P0 in the relative convention: the row "
        "as first stated where the source says so (repertoire: P0 + Original; music21: as "
        "music21 stores it, except where `note` explains). Built by scripts/build_catalog.py.",
        "collections": collections,
        "excluded": excluded,
    }
    lines = [json.dumps(head, ensure_ascii=False, indent=1)[:-2] + ',\n "rows": [']
    body = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries]
    lines.append(",\n".join(body))
    lines.append("]}\n")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    for name in (MUSIC21_FILE, REPERTOIRE_FILE):
        if not (args.corpus / name).is_file():
            print(f"error: {args.corpus / name} not found", file=sys.stderr)
            return 2
    text = build(args.corpus)
    atomic_write(args.out, text)
    args.out.chmod(0o644)
    data = json.loads(text)
    print(f"wrote {args.out}: {len(data['rows'])} rows, {len(data['excluded'])} excluded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
