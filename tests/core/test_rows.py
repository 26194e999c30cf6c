"""Rows: parsing, the 48 forms under both conventions, symmetry, matrix, combinatoriality."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core.errors import RowError
from serialkit.core.rows import ALL_FORMS, FORM_TYPES, Row, RowForm, parse_position_label
from serialkit.core.spelling import parse_note_name
from tests.strategies import conventions, row_forms, rows, transpositions

music21_serial = pytest.importorskip("music21.serial")

OP21 = (9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3)  # A F# G G# E F B Bb D C# C Eb
OP26 = (3, 7, 9, 11, 1, 0, 10, 2, 4, 6, 8, 5)  # music21's SchoenbergOp26
HISTORICAL = sorted(music21_serial.historicalDict)


# parsing -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec",
    [
        "A F# G G# E F B Bb D C# C Eb",
        "A Gb G Ab E F B A# D Db C D#",
        "A F♯ G G♯ E F B B♭ D C♯ C E♭",
        "a f# g g# e f b bb d c# c eb",
        "A,F#,G,G#,E,F,B,Bb,D,C#,C,Eb",
        "A Fis G Gis E F H B- D Cis C Es",
        "Bbb Ex Abb G# Fb E# Cb A# Ebb B## Dbb D#",
        "A E𝄪 F𝄪 G# E F B B♭ C𝄪 C# D𝄫 E♭",
        "9 6 7 8 4 5 11 10 2 1 0 3",
        "9 6 7 8 4 5 E T 2 1 0 3",
        "[9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3]",
        "96784 5ET2103".replace(" ", ""),
        "webern-op21",
        "WebernOp21",
        "Webern Op. 21",
    ],
)
def test_spellings_of_webern_op21(spec: str) -> None:
    assert Row.parse(spec).pcs == OP21


@pytest.mark.parametrize(
    ("name", "pc"),
    [("C", 0), ("B#", 0), ("Dbb", 0), ("Cx", 2), ("C##", 2), ("E𝄫", 2), ("Fb", 4), ("E#", 5),
     ("Cb", 11), ("H", 11), ("Hes", 10), ("Es", 3), ("As", 8), ("Ases", 7), ("Fisis", 7),
     ("Ges", 6), ("B♭", 10), ("G♯", 8), ("B-", 10), ("E--", 2), ("D♮", 2), ("ees", 3)],
)
def test_note_names(name: str, pc: int) -> None:
    assert parse_note_name(name) == pc


@pytest.mark.parametrize(
    ("spec", "pcs"),
    [("Fis Es As H C D E F G A B Cis", (6, 3, 8, 11, 0, 2, 4, 5, 7, 9, 10, 1)),  # outside tester, 1900 #16
     ("A Fis G Gis E F H B D Cis C Es", OP21),
     ("A Fis G Gis E F B Bes D Cis C Es", None)],  # -is/-es without H: B is still B flat
)
def test_a_german_spelling_reads_a_bare_b_as_b_flat(spec: str, pcs: tuple[int, ...] | None) -> None:
    """In German, H is B natural and B is B flat; a bare B is read so only when the row is spelt the
    German way (an H, or -is/-es suffixes); elsewhere B is B natural."""
    if pcs is None:
        with pytest.raises(RowError, match="pitch class 10 appears twice"):
            Row.parse(spec)
    else:
        assert Row.parse(spec).pcs == pcs
    assert Row.parse("A F# G G# E F B Bb D C# C Eb").pcs == OP21  # English: B is B natural


def test_row_from_sequence_and_row() -> None:
    row = Row.parse(list(OP21))
    assert Row.parse("A F# G G# E F B Bb D C# C Eb".split()) == row
    assert Row.parse(["9", "6", "7", "8", "4", "5", "11", "10", "2", "1", "0", "3"]) == row
    assert Row.parse(row) is row
    assert Row(OP21) == Row(OP21, name="other name")  # the name is not part of identity
    assert hash(Row(OP21)) == hash(Row(OP21, name="x"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("C C# D D# E F F# G G# A A# E", "pitch class 4 appears twice (positions 4 and 11)"),
        ("0 1 2 3 4 5 6 7 8 9 10", "11 pitch classes given, 12 needed; missing 11 (B)"),
        ("C D E F G A B C# D# F# G#", "11 pitch classes given, 12 needed; missing 10 (A#)"),
        ("C D E F G A B C# D# F# G# Q", "unknown note name 'Q'"),
        ("C D E F G A B C# D# F# G# Xb", "(token 12)"),
        ("0 1 2 3 4 5 6 7 8 9 10 12", "pitch class 12 is out of range 0..11"),
        ("0 1 2 3 4 5 6 7 8 9 10 C#", "'C#' is not a pitch-class number"),
        ("webern-op12x", "unknown catalog name 'webern-op12x'"),
        ("", "empty row"),
        ("Es", "1 pitch class given, 12 needed"),
    ],
)
def test_bad_rows(spec: str, message: str) -> None:
    with pytest.raises(RowError) as info:
        Row.parse(spec)
    assert message in str(info.value)


def test_unknown_catalog_name_suggests_close_names() -> None:
    with pytest.raises(RowError, match="did you mean .*webern-op21"):
        Row.parse("webern-op211")


@pytest.mark.parametrize("bad", [(0, 1, 2), (0,) * 12, tuple(range(13)), (0.0, *range(1, 12)),
                                 (True, *range(1, 12)), (-1, *range(1, 12))])
def test_bad_int_rows(bad: tuple[object, ...]) -> None:
    with pytest.raises(RowError):
        Row(bad)  # type: ignore[arg-type]


# labels ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "label"),
    [("P0", "P0"), ("p11", "P11"), ("T3", "P3"), ("IR5", "RI5"), ("ri 7", "RI7"), (" I10 ", "I10")],
)
def test_parse_labels(text: str, label: str) -> None:
    assert RowForm.parse(text).label == label


@pytest.mark.parametrize("text", ["X1", "P12", "P", "RI-1", "PI3", ""])
def test_bad_labels(text: str) -> None:
    with pytest.raises(RowError):
        RowForm.parse(text)


def test_position_labels() -> None:
    assert parse_position_label("RI5:11") == (RowForm("RI", 5), 11)
    for bad in ("RI5", "RI5:12", "Q1:3"):
        with pytest.raises(RowError):
            parse_position_label(bad)


def test_values_are_frozen_slotted_and_picklable() -> None:
    for value, field in ((Row(OP21, "webern"), "pcs"), (RowForm("RI", 5), "n")):
        assert not hasattr(value, "__dict__")
        assert copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value
        with pytest.raises(AttributeError):
            setattr(value, field, 3)


# forms, with known values ------------------------------------------------------------------
def test_forms_of_webern_op21_relative() -> None:
    row = Row(OP21)
    assert row.form("P0") == OP21
    assert row.form("P3") == tuple((p + 3) % 12 for p in OP21)
    assert Row(row.form("I0")).names() == "A C B A# D C# G G# E F F# D#"
    assert row.form("R0") == tuple(reversed(OP21))
    assert row.form("RI0") == tuple(reversed(row.form("I0")))


def test_forms_of_webern_op21_absolute() -> None:
    row = Row(OP21)
    assert row.form("P9", "absolute") == OP21
    assert row.form("P0", "absolute")[0] == 0
    assert row.form("I4", "absolute")[0] == 4
    assert row.form("R5", "absolute")[-1] == 5
    assert row.form("RI7", "absolute")[-1] == 7
    assert row.convert("P0", "relative", "absolute") == RowForm("P", 9)
    assert row.convert("I0", "relative", "absolute") == RowForm("I", 9)


def test_music21_docstring_values() -> None:
    """Values printed in music21's own documentation of its two conventions."""
    row = Row(OP26)
    assert row.form("R8", "absolute") == (10, 1, 11, 9, 7, 3, 5, 6, 4, 2, 0, 8)
    assert row.form("R8", "relative") == (1, 4, 2, 0, 10, 6, 8, 9, 7, 5, 3, 11)
    assert row.names(flats=True) == "Eb G A B Db C Bb D E Gb Ab F"
    assert Row(row.form("RI9")).names() == "A# G A B C# F D# D E F# G# C"


def test_webern_op21_has_24_distinct_forms_with_aliases() -> None:
    row = Row(OP21)
    distinct = row.distinct_forms()
    assert len(distinct) == 24
    assert sum(1 + len(aliases) for aliases in distinct.values()) == 48
    assert row.is_symmetric()
    assert row.label_of(OP21) == [RowForm("P", 0), RowForm("R", 6)]
    assert row.canonical("R6") == RowForm("P", 0)
    assert row.aliases("P0") == [RowForm("R", 6)]
    assert not Row(OP26).is_symmetric()
    assert len(Row(OP26).distinct_forms("absolute")) == 48


def test_intervals_and_all_interval() -> None:
    lyric = Row.parse("F E C A G D Ab Db Eb Gb Bb B")  # Berg, Lyric Suite
    assert lyric.is_all_interval()
    assert sorted(lyric.intervals()) == list(range(1, 12))
    assert Row(OP21).intervals() == (9, 1, 1, 8, 1, 6, 11, 4, 11, 11, 3)
    assert not Row(OP21).is_all_interval()


def test_matrix_of_webern_op21() -> None:
    row = Row(OP21)
    grid = row.matrix()
    assert tuple(grid[0]) == OP21
    assert tuple(line[0] for line in grid) == row.form("I0")
    p, r, i, ri = row.matrix_labels()
    assert [f.label for f in p[:3]] == ["P0", "P3", "P2"]
    assert r[0] == RowForm("R", 0) and ri[0] == RowForm("RI", 0)
    assert [f.label for f in i[:3]] == ["I0", "I9", "I10"]
    assert row.matrix_labels("absolute")[0][0] == RowForm("P", 9)


def test_combinatoriality_known_rows() -> None:
    chromatic = Row(tuple(range(12)))
    assert chromatic.combinatoriality() == {"P": [6], "I": [11], "R": [0], "RI": [5]}
    assert chromatic.is_all_combinatorial()
    moses = Row.parse("schoenberg-moses-aron")
    assert 3 in moses.combinatoriality()["I"]
    assert moses.combinatorial_types() == ["I", "R"]  # semi-combinatorial (I)
    assert not moses.is_all_combinatorial()


def test_invariant_segments() -> None:
    row = Row(OP26)
    assert row.invariant_segments("R0", 3) == [
        (i, 9 - i, frozenset(OP26[i : i + 3])) for i in range(10)
    ]
    assert len(row.invariant_segments("P0", 4)) == 9
    with pytest.raises(RowError):
        row.invariant_segments("P0", 13)


# agreement with music21 --------------------------------------------------------------------
def _music21_form(m21_row: object, kind: str, n: int, convention: str) -> tuple[int, ...]:
    if convention == "relative":
        result = m21_row.originalCenteredTransformation(kind, n)  # type: ignore[attr-defined]
    else:
        result = m21_row.zeroCenteredTransformation(kind, n)  # type: ignore[attr-defined]
    return tuple(result.pitchClasses())


@pytest.mark.parametrize("name", HISTORICAL)
def test_all_48_forms_agree_with_music21(name: str) -> None:
    m21_row = music21_serial.getHistoricalRowByName(name)
    row = Row(tuple(m21_row.pitchClasses()))
    for convention in ("relative", "absolute"):
        ours = row.forms(convention)  # type: ignore[arg-type]
        for form in ALL_FORMS:
            assert ours[form] == _music21_form(m21_row, form.type, form.n, convention), (
                name, convention, form.label)


@pytest.mark.parametrize("name", HISTORICAL)
def test_combinatoriality_agrees_with_music21(name: str) -> None:
    m21_row = music21_serial.getHistoricalRowByName(name)
    row = Row(tuple(m21_row.pitchClasses()))
    expected = {t: [n for n in range(12) if m21_row.areCombinatorial("P", 0, t, n)]
                for t in FORM_TYPES}
    assert row.combinatoriality() == expected
    rng = random.Random(name)
    for _ in range(24):  # arbitrary pairs, music21's (absolute) labels
        a, b = rng.choice(ALL_FORMS), rng.choice(ALL_FORMS)
        assert row.are_combinatorial(a, b, "absolute") == m21_row.areCombinatorial(
            a.type, a.n, b.type, b.n), (name, a.label, b.label)


@pytest.mark.parametrize("name", HISTORICAL)
def test_matrix_intervals_all_interval_agree_with_music21(name: str) -> None:
    m21_row = music21_serial.getHistoricalRowByName(name)
    pcs = tuple(m21_row.pitchClasses())
    row = Row(pcs)
    theirs = [[n.pitch.pitchClass for n in line.notes] for line in m21_row.matrix()]
    assert row.transpose(-pcs[0]).matrix() == theirs  # music21's matrix starts on C
    assert "".join("0123456789TE"[i] for i in row.intervals()) == m21_row.getIntervalsAsString()
    assert row.is_all_interval() == m21_row.isAllInterval()


# properties --------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(rows, transpositions, transpositions)
def test_transforms_are_involutions_and_transposition_composes(row: Row, a: int, b: int) -> None:
    assert row.invert().invert() == row
    assert row.retrograde().retrograde() == row
    assert row.invert(a).invert(a) == row
    assert row.transpose(a).transpose(b) == row.transpose(a + b)
    assert row.transpose(a).transpose(-a) == row


@settings(max_examples=60, deadline=None)
@given(rows, conventions)
def test_48_labels_and_form_relations(row: Row, convention: str) -> None:
    forms = row.forms(convention)  # type: ignore[arg-type]
    assert list(forms) == list(ALL_FORMS)
    distinct = row.distinct_forms(convention)  # type: ignore[arg-type]
    assert sum(1 + len(aliases) for aliases in distinct.values()) == 48
    for n in range(12):
        p, i = forms[RowForm("P", n)], forms[RowForm("I", n)]
        assert forms[RowForm("R", n)] == p[::-1]
        assert forms[RowForm("RI", n)] == i[::-1]
        assert Row(p).invert().pcs == i  # In inverts Pn about its first pitch class
        assert forms[RowForm("P", (n + 5) % 12)] == Row(p).transpose(5).pcs
        if convention == "absolute":
            assert p[0] == i[0] == n
        else:
            assert p == Row(row.pcs).transpose(n).pcs and i[0] == (row.pcs[0] + n) % 12


@settings(max_examples=60, deadline=None)
@given(rows, row_forms, conventions)
def test_labelling_a_form_returns_it_or_an_alias(row: Row, form: RowForm, convention: str) -> None:
    pcs = row.form(form, convention)  # type: ignore[arg-type]
    labels = row.label_of(pcs, convention)  # type: ignore[arg-type]
    assert form in labels
    assert all(row.form(label, convention) == pcs for label in labels)  # type: ignore[arg-type]
    assert row.canonical(form, convention) == labels[0]  # type: ignore[arg-type]
    other = "absolute" if convention == "relative" else "relative"
    converted = row.convert(form, convention, other)  # type: ignore[arg-type]
    assert row.form(converted, other) == pcs  # type: ignore[arg-type]
    assert converted.type == form.type


@settings(max_examples=40, deadline=None)
@given(rows, conventions)
def test_matrix_rows_are_p_forms_and_columns_i_forms(row: Row, convention: str) -> None:
    grid = row.matrix()
    p, r, i, ri = row.matrix_labels(convention)  # type: ignore[arg-type]
    for k in range(12):
        line = tuple(grid[k])
        column = tuple(g[k] for g in grid)
        assert row.form(p[k], convention) == line  # type: ignore[arg-type]
        assert row.form(r[k], convention) == line[::-1]  # type: ignore[arg-type]
        assert row.form(i[k], convention) == column  # type: ignore[arg-type]
        assert row.form(ri[k], convention) == column[::-1]  # type: ignore[arg-type]
        assert (p[k].type, r[k].type, i[k].type, ri[k].type) == ("P", "R", "I", "RI")


@settings(max_examples=40, deadline=None)
@given(rows, transpositions, st.sampled_from(ALL_FORMS), st.sampled_from(ALL_FORMS))
def test_combinatoriality_properties(row: Row, n: int, a: RowForm, b: RowForm) -> None:
    assert row.transpose(n).combinatoriality() == row.combinatoriality()
    assert row.are_combinatorial(a, b) == row.are_combinatorial(b, a)
    assert row.are_combinatorial(a, b) == (
        set(row.form(a)[:6]) | set(row.form(b)[:6]) == set(range(12)))
    assert 0 in row.combinatoriality()["R"]
    partners = row.combinatorial_partners(a, "absolute")
    assert all(row.are_combinatorial(a, x, "absolute") for x in partners)


@settings(max_examples=40, deadline=None)
@given(rows, row_forms, st.integers(min_value=1, max_value=12))
def test_invariant_segments_are_sound_and_complete(row: Row, other: RowForm, size: int) -> None:
    found = row.invariant_segments(other, size)
    target = row.form(other)
    expected = [
        (i, j, frozenset(row.pcs[i : i + size]))
        for i in range(13 - size)
        for j in range(13 - size)
        if set(row.pcs[i : i + size]) == set(target[j : j + size])
    ]
    assert found == expected


@settings(max_examples=60, deadline=None)
@given(rows, st.booleans())
def test_spelling_round_trips(row: Row, flats: bool) -> None:
    assert Row.parse(row.names(flats)) == row
    assert Row.parse(", ".join(str(p) for p in row.pcs)) == row
    assert Row.parse("".join("0123456789TE"[p] for p in row.pcs)) == row
