"""The row catalog: contents, provenance, lookup, search and identify."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core import catalog
from serialkit.core.errors import RowError
from serialkit.core.rows import Row
from tests.strategies import conventions, row_forms, rows

ROOT = Path(__file__).resolve().parents[2]
ALL_ENTRIES = catalog.entries()


def test_counts_and_collections() -> None:
    assert len(catalog.entries("music21")) == 71
    assert len(catalog.entries("repertoire")) == 1592
    assert len(ALL_ENTRIES) == 1663
    assert [e["key"] for e in catalog.excluded()] == ["Florey,_Hans_-_Im_Mondlicht"]
    assert "appears twice" in catalog.excluded()[0]["reason"]
    flagged = [e for e in ALL_ENTRIES if "num-pitches-field-missing" in e.flags]
    assert len(flagged) == 15
    credits = catalog.collections()
    assert "Gotham" in credits["repertoire"]["credit"] and "3469013" in credits["repertoire"]["credit"]
    assert "music21" in credits["music21"]["credit"]


def test_names_and_aliases_are_unique() -> None:
    keys = [catalog.normalize_name(n) for e in ALL_ENTRIES
            for n in {catalog.normalize_name(a) for a in (e.name, *e.aliases)}]
    assert len(keys) == len(set(keys))
    for entry in ALL_ENTRIES:
        for name in (entry.name, *entry.aliases):
            assert catalog.get(name) is entry
    # two source keys differ only in case: both rows are kept, under distinct names
    hauer = catalog.search("hauer zwolftonspiel oechester")
    assert sorted(e.name for e in hauer) == [
        "hauer-zwolftonspiel-fur-oechester-28-9-1954",
        "hauer-zwolftonspiel-fur-oechester-28-9-1954-progressive-chord-row",
    ]


def test_webern_op21_is_the_row_as_first_stated() -> None:
    entry = catalog.get("webern-op21")
    assert entry.row == Row.parse("A F# G G# E F B Bb D C# C Eb")
    assert entry.row.name == "webern-op21"
    assert entry.source_pcs is not None and entry.note and "Horn 2" in entry.note
    assert entry.row.label_of(entry.source_pcs) == [
        entry.row.canonical("I8"), *entry.row.aliases("I8")]


@pytest.mark.parametrize("name", ["webern-op21", "WebernOp21", "WEBERN op.21", "webern_op_21",
                                  "Webern Op 21"])
def test_get_ignores_case_and_punctuation(name: str) -> None:
    assert catalog.get(name).name == "webern-op21"


def test_get_by_repertoire_key_and_accents() -> None:
    entry = catalog.get("Webern,_Anton_-_Symphony,_Op.21")
    assert entry.collection == "repertoire" and entry.year == "1927-28"
    assert catalog.get('Webern,_Anton_-_3_Lieder,_"Erlösung",_Op.18,_No.2') is catalog.get(
        "webern anton 3 lieder erlosung op18 no2")


def test_unknown_name_suggests() -> None:
    with pytest.raises(RowError) as info:
        catalog.get("schonberg-op33a")
    assert "unknown catalog name 'schonberg-op33a'" in str(info.value)
    assert "schoenberg-op33-a" in str(info.value)
    with pytest.raises(RowError, match="unknown catalog name ''"):
        catalog.get("")


def test_music21_entries_match_music21() -> None:
    serial = pytest.importorskip("music21.serial")
    for entry in catalog.entries("music21"):
        key = entry.key
        theirs = tuple(serial.getHistoricalRowByName(key).pitchClasses())
        if entry.source_pcs is None:
            assert entry.row.pcs == theirs, key
        else:
            assert entry.source_pcs == theirs and entry.row.label_of(theirs), key


def test_search() -> None:
    names = [e.name for e in catalog.search("schoenberg op 33")]
    assert "schoenberg-op33-a" in names and "schoenberg-op33-b" in names
    assert all("berg" in e.name for e in catalog.search("berg lulu"))
    assert {e.collection for e in catalog.search("lulu", "repertoire")} == {"repertoire"}
    assert catalog.search("no such composer zzz") == []


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(ALL_ENTRIES), row_forms, conventions)
def test_identify_finds_a_catalog_row_under_any_form(entry: catalog.CatalogEntry, form: object,
                                                     convention: str) -> None:
    pcs = entry.row.form(form, convention)  # type: ignore[arg-type]
    matches = catalog.identify(pcs, convention)  # type: ignore[arg-type]
    mine = [m for m in matches if m.entry is entry]
    assert len(mine) == 1 and form in mine[0].forms
    for match in matches:  # sound: every reported label reproduces the sequence
        assert all(match.entry.row.form(f, convention) == pcs for f in match.forms)  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(rows)
def test_identify_is_complete_on_random_rows(row: Row) -> None:
    found = {m.entry.name for m in catalog.identify(row)}
    key = catalog.interval_key(row.pcs)
    expected = {e.name for e in ALL_ENTRIES
                if catalog.interval_key(e.row.pcs) == key and e.row.label_of(row.pcs)}
    assert found == expected


def test_identify_uses_an_index_not_a_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """identify compares a query with the entries of its interval key only, never the whole
    catalogue (counted, not timed: no wall-clock assertions on a shared machine)."""
    rng = random.Random(7)
    queries = [Row(tuple(rng.sample(range(12), 12))) for _ in range(300)]
    queries += [rng.choice(ALL_ENTRIES).row.form(rng.choice(["P3", "RI7", "I0"])) for _ in range(300)]
    compared: list[int] = []
    label_of = Row.label_of

    def counted(self: Row, *args: object, **kwargs: object) -> object:
        compared.append(1)
        return label_of(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Row, "label_of", counted)
    for q in queries:
        catalog.identify(q)
    keys = Counter(catalog.interval_key(e.row.pcs) for e in ALL_ENTRIES)
    bucket = sum(keys[catalog.interval_key(getattr(q, "pcs", q))] for q in queries)
    assert 300 <= len(compared) <= bucket  # every catalogued query is compared, and only with its bucket
    assert len(compared) < len(queries) * len(ALL_ENTRIES) // 100  # a scan would compare them all


def test_core_catalog_is_pure_and_lazy() -> None:
    code = (
        "import sys; from serialkit.core import catalog; "
        "assert catalog._catalog.cache_info().currsize == 0; "
        "catalog.get('webern-op21'); "
        "bad = [m for m in ('music21', 'lxml', 'verovio', 'openai', 'click') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.corpus
def test_data_file_is_rebuilt_exactly_from_the_corpus(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "catalog.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_catalog.py"), str(corpus),
                    "--out", str(out)], check=True, capture_output=True)
    assert out.read_text(encoding="utf-8") == (
        ROOT / "serialkit" / "data" / "catalog.json").read_text(encoding="utf-8")


@pytest.mark.corpus
def test_repertoire_rows_are_p0_plus_original(corpus: Path) -> None:
    source = json.loads((corpus / "rows-in-the-repertoire.json").read_text(encoding="utf-8"))
    for entry in catalog.entries("repertoire"):
        item = source[entry.key]
        assert entry.row.pcs == tuple((p + item["Original"]) % 12 for p in item["P0"]), entry.key
        assert entry.composer == item["Composer"]
    assert len(source) == 1592 + len(catalog.excluded())
