"""Whole works: correct pieces of whole-movement size pass the analysis profile, and repair leaves
them alone (issue: correct at every size). The families here are those whose correct pieces pass
at every size tried; the families that still get false findings at some whole-work sizes
(``piano_hands``, ``distributed``, ``concurrent``) are listed in the checking guide (docs/guides/
checking.md, "Known gaps at whole-work size") with the seeds and sizes that fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from serialkit.check.profiles import profile_for
from serialkit.check.report import check_piece
from serialkit.core.suggest import plan_repairs
from tests import synth

PASSING = ("one_voice", "row_per_voice", "chords", "pivots", "invariant_chords", "elided",
           "pivot_voice_change", "repeats", "handed")


@pytest.mark.slow
@pytest.mark.parametrize("family", PASSING)
def test_a_correct_whole_work_passes(family: str) -> None:
    """About 2,000 notes of each family: no violation under the analysis profile."""
    s = synth.whole(family, 1, 2000)
    assert len(s.piece.events) >= 1800
    report = check_piece(s.piece, row=s.row, profile=profile_for("analysis"))
    assert report.verdict.strict, [v.message for v in report.verdict.violations][:3]
    assert not report.unexplained


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family=st.sampled_from(PASSING), seed=st.integers(0, 400), notes=st.integers(150, 4000))
def test_correct_pieces_pass_at_any_size_and_repair_changes_nothing(family: str, seed: int, notes: int) -> None:
    try:
        s = synth.whole(family, seed, notes)
    except ValueError:  # a seed whose row the family cannot write (invariant_chords: no unambiguous chords)
        assume(False)
        raise
    report = check_piece(s.piece, row=s.row, profile=profile_for("analysis"))
    assert report.verdict.strict, (family, seed, notes, [v.message for v in report.verdict.violations][:3])
    plan = plan_repairs(s.piece, s.row, "relative")
    assert not plan.applied, (family, seed, notes, plan.applied[:2])


def test_whole_gives_the_size_asked_for() -> None:
    for family in synth.CLEAN:
        for notes in (2000, 5000):
            got = len(synth.whole(family, 0, notes).piece.events)
            assert 0.85 * notes <= got <= 1.15 * notes, (family, notes, got)


@pytest.mark.slow
@pytest.mark.parametrize("family", (*PASSING, "distributed"))
def test_a_correct_whole_work_passes_through_a_file(family: str, tmp_path: Path) -> None:
    """Written as MusicXML and read back, a correct piece still passes: a voice whose notes
    overlap is written as several voices of its staff, and the analysis reads them as one line."""
    from serialkit.io import read_score
    from serialkit.io.musicxml.write import write_musicxml

    s = synth.whole(family, 0, 1500)
    path = write_musicxml(s.piece, tmp_path / f"{family}.musicxml")
    piece = read_score(path)
    assert len(piece.events) == len(s.piece.events)
    report = check_piece(piece, row=s.row, profile=profile_for("analysis"))
    assert report.verdict.strict, [v.message for v in report.verdict.violations][:3]


def _copies(piece: object, count: int, span: object, step: int = 1) -> object:
    """``count`` copies of ``piece`` one after another, copy k transposed ``step`` * k semitones up
    (within an octave)."""
    events = []
    for k in range(count):
        for e in piece.events:  # type: ignore[attr-defined]
            events.append(e.copy(id=f"{e.id}-c{k}", onset=e.onset + k * span, midi=e.midi + step * k % 12,
                                 tag=None, tied_ids=tuple(f"{t}-c{k}" for t in e.tied_ids)))
    return piece.with_events(events)  # type: ignore[attr-defined]


def _crossing(analysis: object) -> list[str]:
    """Statements holding notes of two different copies."""
    out = []
    for s in analysis.statements:  # type: ignore[attr-defined]
        copies = {i.rsplit("-c", 1)[1] for i in s.event_ids if i}
        if len(copies) > 1:
            out.append(f"{s.id} {s.form} copies {sorted(copies)}")
    return out


@pytest.mark.parametrize("family", ["one_voice", "row_per_voice", "distributed"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_statement_cut_off_does_not_take_its_end_from_later_music(family: str, seed: int) -> None:
    """The music stops two notes short of a statement's end, rests three bars, and goes on with a
    transposed copy of the passage, twice: the cut statement must not reach over the rest for the
    copy's notes (a statement keeps its pace), so no statement holds notes of two copies."""
    from fractions import Fraction

    from serialkit.core.analysis import analyze

    s = synth.FAMILIES[family](seed)
    ordered = sorted(s.piece.events, key=lambda e: (e.onset, e.id))
    cut = s.piece.with_events(ordered[:-2])
    span = max(e.onset + e.duration for e in cut.events) + Fraction(12)
    assert _crossing(analyze(_copies(cut, 3, span), s.row)) == []


def test_webern_copies_read_as_the_excerpt_alone() -> None:
    """Op. 21 bars 1-25 twelve times, each copy a semitone higher: every copy reads as the excerpt
    does alone (its one unexplained note), and no statement holds notes of two copies."""
    from fractions import Fraction

    from serialkit.core.analysis import analyze
    from serialkit.core.catalog import get
    from serialkit.io import read_score

    source = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "webern-op21-i-mm1-25.mei"
    if not source.exists():
        pytest.skip("the shared corpus is not here")
    piece = read_score(source)
    row = get("webern-op21").row
    end = max(e.onset + e.duration for e in piece.events)
    span = Fraction(int(end) + 2 - int(end) % 2)
    alone = analyze(piece, row)
    copies = analyze(_copies(piece, 12, span), row)
    assert _crossing(copies) == []
    assert len(copies.unexplained) <= 12 * len(alone.unexplained)


def _op21() -> object:
    source = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "webern-op21-i-mm1-25.mei"
    if not source.exists():
        pytest.skip("the shared corpus is not here")
    from serialkit.io import read_score

    return read_score(source)


JOINED_GAPS = {3: "the copy's first statements read with a note of the excerpt's last",
               7: "the copy's first statements read with a note of the excerpt's last"}
"""Transposition steps at which the excerpt's statements cut off at its end still reach into the
copy joined to it (a known gap: the second reading's voice-passing costs, learnt from a first
reading that stitched across the join, keep a copy's opening statement from its first note)."""


@pytest.mark.parametrize("step", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=JOINED_GAPS[k]))
                                  if k in JOINED_GAPS else k for k in range(12)])
def test_webern_copies_joined_without_a_rest_read_as_the_excerpt_alone(step: int) -> None:
    """Op. 21 bars 1-25 four times with no rest between (as a user joins excerpts into a whole
    movement), copy k transposed ``step`` * k semitones: no copy leaves more notes unexplained
    than the excerpt alone (its one wrong note). Before the far-link rule (``selection._far_link``)
    a step of 1 left ten correct notes of every copy unexplained, and a step of 8 seven."""
    from serialkit.core.analysis import analyze
    from serialkit.core.catalog import get

    piece = _op21()
    row = get("webern-op21").row
    end = max(e.onset + e.duration for e in piece.events)  # type: ignore[attr-defined]
    alone = analyze(piece, row)  # type: ignore[arg-type]
    joined = analyze(_copies(piece, 4, end, step), row)  # type: ignore[arg-type]
    assert len(joined.unexplained) <= 4 * len(alone.unexplained), sorted(joined.unexplained)


@pytest.mark.slow
@pytest.mark.parametrize(("family", "seed"), [("concurrent", 0), ("piano_hands", 0)])
def test_a_note_of_two_statements_is_not_traded_away_from_its_place(family: str, seed: int) -> None:
    """About 1,500 notes where a note two statements share (an elision) or a note beside its own
    statement used to be traded to a statement it is not next to, or a repeat left for later was
    never placed: concurrent seed 0 (one note of the third stream) and piano_hands seed 0 (a repeat
    pair struck across the hands). Every note is explained and the profile passes."""
    s = synth.whole(family, seed, 1500)
    report = check_piece(s.piece, row=s.row, profile=profile_for("analysis"))
    assert not report.unexplained, report.unexplained[:4]
    assert report.verdict.strict, [v.message for v in report.verdict.violations][:3]
