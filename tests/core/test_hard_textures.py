"""The hard textures: an invariant segment sounding twice as successive chords (time order decides),
a pivot that moves to another voice while the first repeats it, statements split between the
hands of a piano part, and an uncatalogued row identified from chords."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core import catalog
from serialkit.core.analysis import analyze, identify
from serialkit.core.analysis.aggregates import find_aggregates, propose
from serialkit.core.errors import RowError
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import ALL_FORMS, Row
from tests.strategies import rows
from tests.synth import FAMILIES, IOIS, Score, _ambiguous, _chord_sizes, score, wrong_notes

HARD = ("invariant_chords", "pivot_voice_change", "piano_hands")


def _same_class(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return catalog.interval_key(a) == catalog.interval_key(b)


@pytest.mark.parametrize("family", HARD)
def test_hard_texture_accuracy_on_unseen_seeds(family: str) -> None:
    total = Score(0, 0, 0, 0, 0, 0)
    for seed in range(20, 26):  # seeds the family was not developed on
        synth = FAMILIES[family](seed)
        result = score(synth, analyze(synth.piece, synth.row))
        for name in ("notes", "correct", "statements", "recalled"):
            setattr(total, name, getattr(total, name) + getattr(result, name))
    assert total.notes > 500
    assert total.accuracy >= 0.99, f"{family}: {total.accuracy:.4f}"
    assert total.recall >= 0.95


def test_an_invariant_chord_struck_twice_goes_to_each_statement_in_time_order() -> None:
    row = Row.parse("0 7 10 1 3 4 2 9 11 8 5 6")
    first, second = row.form("P0"), row.form("R0")  # R0 begins with P0's last trichord
    events = []
    onset = Fraction(0)
    for name, pcs, sizes in (("a", first, (4, 3, 2, 3)), ("b", second, (3, 2, 3, 4))):
        assert not _ambiguous(row.forms(), pcs, list(sizes))  # no other form spells these chords
        start = 0
        for size in sizes:
            for k, pos in enumerate(reversed(range(start, start + size))):
                events.append(Event(f"{name}{pos}", "v1", onset, Fraction(1), 60 + pcs[pos] + 12 * (k % 2)))
            onset += 1
            start += size
    analysis = analyze(Piece(tuple(events)), row)
    for name, label in (("a", "P0"), ("b", "R0")):
        for pos in range(12):
            tag = analysis.tags[f"{name}{pos}"]
            assert tag is not None and row.form(tag.form) == row.form(label) and tag.position == pos, (name, pos, tag)


def test_the_voice_that_ended_a_statement_repeats_its_note_while_another_begins() -> None:
    row = Row.parse("0 7 10 1 3 4 2 9 11 8 5 6")
    first = row.form("P0")
    nxt = next(f for f in ALL_FORMS if row.form(f)[0] == first[11] and row.form(f) != first)
    events = [Event(f"a{p}", "v1", Fraction(p), Fraction(1), 60 + pc) for p, pc in enumerate(first)]
    events.append(Event("rep", "v1", Fraction(12), Fraction(1), 60 + first[11]))
    events += [Event(f"b{p}", "v2", Fraction(12 + p), Fraction(1), 48 + pc) for p, pc in enumerate(row.form(nxt))]
    analysis = analyze(Piece(tuple(events)), row)
    rep, b0 = analysis.tags["rep"], analysis.tags["b0"]
    assert rep is not None and rep.statement == analysis.tags["a11"].statement  # type: ignore[union-attr]
    assert b0 is not None and row.form(b0.form) == row.form(nxt) and b0.position == 0


@pytest.mark.parametrize("family", ["chords", "piano_hands"])
@pytest.mark.parametrize("seed", range(4))
def test_an_uncatalogued_row_is_identified_from_chords(family: str, seed: int) -> None:
    synth = FAMILIES[family](seed)
    assert not catalog.identify(synth.row.pcs)
    found = identify(synth.piece)
    assert found.entry is None and _same_class(found.row.pcs, synth.row.pcs), found.summary()
    analysis = analyze(synth.piece)
    given_row = score(synth, analyze(synth.piece, synth.row))
    forms = synth.row.forms()
    correct = sum(1 for eid, labels in synth.truth.items()
                  if (tag := analysis.tags[eid]) is not None
                  and any(analysis.row.form(tag.form) == forms[f] and tag.position == p for f, p in labels))
    assert correct / len(synth.truth) >= given_row.accuracy - 0.01


@pytest.mark.parametrize("seed", range(4))
def test_chords_that_cannot_decide_the_row_claim_none(seed: int) -> None:
    """Invariant chords leave several rows equally consistent: no row is claimed, or the right one."""
    synth = FAMILIES["invariant_chords"](seed)
    try:
        found = identify(synth.piece)
    except RowError as exc:
        assert "--row" in str(exc)
        return
    assert _same_class(found.row.pcs, synth.row.pcs), found.summary()


def test_wrong_notes_in_the_hard_textures_are_mostly_reported() -> None:
    wrong = reported = 0
    for family in HARD:
        for seed in range(4):
            result = score(s := wrong_notes(seed, base=FAMILIES[family]), analyze(s.piece, s.row))
            wrong += result.wrong
            reported += result.wrong_unexplained
    assert wrong >= 24
    assert reported / wrong >= 0.85, f"{reported}/{wrong}"


@settings(max_examples=40, deadline=None)
@given(row=rows, seed=st.integers(0, 10_000))
def test_rows_read_from_chords_are_never_a_wrong_class(row: Row, seed: int) -> None:
    """Statements as chords in random sizes: the proposal is the row's class or nothing."""
    rng = random.Random(seed)
    events = []
    onset = Fraction(0)
    for s in range(6):
        pcs = row.form(rng.choice(ALL_FORMS))
        pos = 0
        while pos < 12:
            size = min(rng.choice((1, 2, 3, 4)), 12 - pos)
            for p in range(pos, pos + size):
                events.append(Event(f"s{s}p{p}", "v1", onset, Fraction(1), 60 + pcs[p]))
            pos += size
            onset += 1
    assert len(find_aggregates(events)) == 6
    proposal = propose(events, [], catalog.interval_key)
    assert len(proposal.rows) <= 1
    assert all(_same_class(r, row.pcs) for r in proposal.rows)
    assert proposal.fits(row.pcs)  # the true row is always among the most consistent


def _shifted_twins(row: Row) -> bool:
    """Does one form run on as another, shifted (its last 8–11 notes are the other's first)? Such a
    row lets a statement be read one to four positions off, taking a note of the next statement
    (found by this property: seed 30118, R11[1:] == I1[:11]); a known limit of the inference."""
    seqs = set(row.forms().values())
    return any(f[k:] == g[: 12 - k] for f in seqs for g in seqs if f != g for k in range(1, 5))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_an_invariant_segment_struck_twice_is_read_in_time_order(seed: int) -> None:
    """A random row (a shuffle: hypothesis's own row strategy shrinks to the chromatic scale, whose
    chords every transposition spells); ten statements as chords in two voices, each beginning
    with the pitch classes the one before ends with, struck again: every note gets its own
    statement's label."""
    rng = random.Random(seed)
    pcs_ = list(range(12))
    rng.shuffle(pcs_)
    row = Row(tuple(pcs_))
    if _shifted_twins(row):
        return  # a known limit, not this property's subject (see _shifted_twins)
    forms = row.forms()
    form = rng.choice(ALL_FORMS)
    start = rng.choice((1, 2, 3, 4))
    events, truth = [], {}
    onset = Fraction(0)
    for s in range(10):
        pcs = forms[form]
        end = rng.choice((2, 3, 4))
        sizes = _chord_sizes(rng, end, start)
        for _ in range(50):  # no other form may spell the same chords (then nothing can decide)
            if not _ambiguous(forms, pcs, sizes):
                break
            sizes = _chord_sizes(rng, end, start)
        else:
            break
        voice, pos = rng.choice(("v1", "v2")), 0
        for chord in sizes:
            ioi = rng.choice(IOIS)
            for k, p in enumerate(rng.sample(range(pos, pos + chord), chord)):
                events.append(Event(f"s{s}p{p}", voice, onset, ioi, 60 + pcs[p] + 12 * (k % 2)))
                truth[f"s{s}p{p}"] = (pcs, p)
            pos += chord
            onset += ioi
        tail = set(pcs[12 - end:])
        form = rng.choice([f for f in ALL_FORMS if set(forms[f][:end]) == tail and forms[f] != pcs])
        start = end
    if len(truth) < 36:
        return
    analysis = analyze(Piece(tuple(events)), row)
    wrong = [eid for eid, (pcs, p) in truth.items()
             if (tag := analysis.tags[eid]) is None or forms[tag.form] != pcs or tag.position != p]
    assert not wrong, wrong
