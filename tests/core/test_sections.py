"""Sections: a silence of every voice, long against the piece's pace, ends one (``state.sections``),
and a statement cut off there is a fragment at an edge, as at the piece's ends."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.core.analysis import analyze
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.state import BREAK, Sections, sections
from serialkit.core.catalog import get
from serialkit.core.events import Event
from serialkit.core.piece import Piece

ROW = get("webern-op21").row


def _notes(form: str, positions: range, at: int) -> list[Event]:
    pcs = ROW.form(form)
    return [Event(f"{form}-{p}-{at}", "a", Fraction(at + k), Fraction(1), 60 + pcs[p])
            for k, p in enumerate(positions)]


def _piece(cut: int, silence: int) -> Piece:
    """P0 and I5 whole, ``silence`` quarters of rest, the last ``cut`` positions of I3 (a statement
    cut off by the start of the section), then P2 and I8 whole: one voice, a note a quarter."""
    events = _notes("P0", range(12), 0) + _notes("I5", range(12), 12)
    start = 24 + silence
    events += _notes("I3", range(12 - cut, 12), start)
    events += _notes("P2", range(12), start + cut) + _notes("I8", range(12), start + cut + 12)
    return Piece(tuple(events))


@pytest.mark.parametrize("cut", [4, 5])
def test_a_statement_cut_off_by_a_general_pause_is_a_fragment_at_an_edge(cut: int) -> None:
    """After sixteen quarters of silence (a note a quarter: sixteen times the pace) the section's
    first notes, the end of a statement, read as a fragment; before, a fragment of fewer than
    six positions inside a piece was never read and its notes were unexplained."""
    analysis = analyze(_piece(cut, 16), ROW)
    assert not analysis.unexplained
    tags = [analysis.tags[f"I3-{p}-{40}"] for p in range(12 - cut, 12)]
    assert {t.form.label for t in tags} == {"I3"}
    assert [t.position for t in tags] == list(range(12 - cut, 12))


@pytest.mark.parametrize("silence", [0, 4])
def test_a_short_rest_is_no_section_break(silence: int) -> None:
    """A rest of four quarters (four times the pace) is a rest inside the music: the five notes
    after it are no fragment at an edge, and stay unexplained (a fragment inside a piece needs
    six positions)."""
    analysis = analyze(_piece(5, silence), ROW)
    assert len(analysis.unexplained) == 5


def test_webern_op21_bars_1_to_25_are_one_section() -> None:
    """The excerpt's four silences of one quarter are its pace, no section breaks."""
    source = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "webern-op21-i-mm1-25.mei"
    if not source.exists():
        pytest.skip("the shared corpus is not here")
    from serialkit.io import read_score

    ix = EventIndex(read_score(source).events)
    before, after = sections(ix)
    assert before == list(range(len(before)))
    assert after == list(range(len(after) - 1, -1, -1))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 6)), min_size=1, max_size=40))
def test_sections_split_the_slices_at_long_silences(notes: list[tuple[int, int]]) -> None:
    """Every slice is in one section (``before`` counts up from 0 and ``after`` down to 0 within
    it), and a section begins exactly where nothing has sounded for at least BREAK times the
    median distance between successive onsets."""
    events = [Event(f"e{k}", "a", Fraction(on), Fraction(d), 60 + k % 12) for k, (on, d) in enumerate(notes)]
    ix = EventIndex(events)
    before, after = sections(ix)
    onsets = ix.slice_onsets
    assert len(before) == len(after) == len(onsets)
    gaps = sorted(b - a for a, b in zip(onsets, onsets[1:], strict=False))
    least = BREAK * gaps[len(gaps) // 2] if gaps else 0
    for s in range(len(onsets)):
        ended = max((e.onset + e.duration for e in events if e.onset < onsets[s]), default=None)
        starts = s == 0 or least > 0 and ended is not None and onsets[s] - ended >= least
        assert (before[s] == 0) == starts, (s, onsets, before)
        if s + 1 < len(onsets):
            assert (after[s] == 0) == (before[s + 1] == 0)
            assert before[s + 1] == 0 or before[s + 1] == before[s] + 1
    assert after[-1] == 0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 6)), min_size=1, max_size=40),
       st.integers(0, 40), st.integers(0, 40))
def test_sections_read_from_the_notes_are_the_analysis_sections(notes: list[tuple[int, int]], x: int, y: int) -> None:
    """``Sections`` (the findings' and the suggestions' reading, from the notes) splits the piece
    where ``sections`` (the analysis's, from its slices) does: ``span(a, b)`` is the first onset
    of the section sounding at ``a`` and the last onset of the one sounding at ``b``."""
    events = [Event(f"e{k}", "a", Fraction(on), Fraction(d), 60 + k % 12) for k, (on, d) in enumerate(notes)]
    ix = EventIndex(events)
    before, after = sections(ix)
    onsets = list(ix.slice_onsets)
    s = Sections(events)
    assert s.onsets == onsets
    a, b = sorted((Fraction(min(x, y)), Fraction(max(x, y))))
    i = max((k for k, t in enumerate(onsets) if t <= a), default=0)
    j = max((k for k, t in enumerate(onsets) if t <= b), default=0)
    assert s.span(a, b) == (onsets[i - before[i]], onsets[j + after[j]])


def test_a_statement_cut_off_at_a_section_break_is_no_missing_note() -> None:
    """Op. 21 bars 1-25, then after a rest the bars again three semitones up: two statements are
    cut off at the excerpt's end while their voices go on after the rest. After a rest inside the
    music (two quarters) that is a note missing (ROW); after a section break (eight quarters, two
    hundred) it is the edge of a section, as at the piece's end: only each copy's own odd note
    is reported (and the cut statements are observations, COMPLETE)."""
    from tests import works

    if not works.available():
        pytest.skip("the shared corpus is not here")
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import check_piece

    piece, row = works.excerpt("op21")
    length = works.SOURCES["op21"][2]

    def rows(rest: int) -> list[str]:
        both = works.build("op21", [works.Copy(Fraction(0)), works.Copy(length + rest, 3)])
        report = check_piece(both, row=row, profile=profile_for("analysis"), suggest=False)
        return [v.message for v in report.verdict.violations if v.code == "ROW"]

    assert sum("goes on with" in m for m in rows(2)) == 2
    for rest in (8, 200):
        found = rows(rest)
        assert len(found) == 2 and all("unexplained" in m for m in found), found
