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
from tests import synth, works

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


@pytest.mark.parametrize("step", range(12))
def test_webern_copies_joined_without_a_rest_read_as_the_excerpt_alone(step: int) -> None:
    """Op. 21 bars 1-25 four times with no rest between (as a user joins excerpts into a whole
    movement), copy k transposed ``step`` * k semitones: no copy leaves more notes unexplained
    than the excerpt alone (its one wrong note). Before the far-link rule (``selection._far_link``)
    a step of 1 left ten correct notes of every copy unexplained, and a step of 8 seven; before a
    statement's open end kept its pace (``fits._off_pace``), steps 3 and 7 still left one or two."""
    from serialkit.core.analysis import analyze
    from serialkit.core.catalog import get

    piece = _op21()
    row = get("webern-op21").row
    end = max(e.onset + e.duration for e in piece.events)  # type: ignore[attr-defined]
    alone = analyze(piece, row)  # type: ignore[arg-type]
    joined = analyze(_copies(piece, 4, end, step), row)  # type: ignore[arg-type]
    assert len(joined.unexplained) <= 4 * len(alone.unexplained), sorted(joined.unexplained)


@pytest.mark.parametrize("rest", [8, 200])
def test_a_cut_off_statement_does_not_reach_over_a_long_rest(rest: int) -> None:
    """Op. 21 bars 1-25, ``rest`` quarters of rest, then the bars again three semitones up. The
    excerpt's last statement, cut off at its end, once took the copy's note past the rest (slices
    count onsets, not time: fifty bars of rest are one slice), and the copy's own statement lost
    its first note. Each copy leaves only its own wrong note."""
    from fractions import Fraction

    from serialkit.core.analysis import analyze

    if not works.available():
        pytest.skip("the shared corpus is not here")
    piece, row = works.excerpt("op21")
    alone = analyze(piece, row)
    length = works.SOURCES["op21"][2]
    both = analyze(works.build("op21", [works.Copy(Fraction(0)), works.Copy(length + rest, 3)]), row)
    assert len(both.unexplained) == 2 * len(alone.unexplained), sorted(both.unexplained)
    assert works.stitched(both) == []


@pytest.mark.parametrize("inverted", [False, True])
def test_copies_after_a_general_pause_read_as_the_excerpt_alone(inverted: bool) -> None:
    """Op. 21 bars 1-25 at half speed, sixteen quarters of silence, then the same again (inverted
    when ``inverted``) transposed by each of the twelve steps: the excerpt's statements cut off at
    its ends are fragments at a section's edges as at the piece's (``state.sections``), and no
    statement reaches over the silence, so each pair leaves the excerpt's own wrong note twice.
    Before, a statement cut off at the first copy's end took its last positions from the second
    copy, whose own statement was then read without its opening (3 or 1 unexplained at steps 3
    and 7, or 5 and 9 inverted)."""
    from fractions import Fraction

    from serialkit.core.analysis import analyze

    if not works.available():
        pytest.skip("the shared corpus is not here")
    piece, row = works.excerpt("op21")
    length = works.SOURCES["op21"][2]
    alone = len(analyze(piece, row).unexplained)
    counts = []
    for step in range(12):
        both = works.build("op21", [works.Copy(Fraction(0), 0, inverted, False, Fraction(2)),
                                    works.Copy(2 * length + 16, step, inverted, False, Fraction(2))])
        counts.append(len(analyze(both, row).unexplained))
    assert counts == [2 * alone] * 12, counts


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


@pytest.mark.parametrize("family", works.FAMILIES)
def test_op27_whole_works_of_every_family_read_as_their_copies_alone(family: str) -> None:
    """Op. 27/II bars 1-11 copied 34 times (1,564 notes) in each family of ``tests.works`` (canon on
    a second orchestra, re-orchestrated, mixed transforms, other tempi, joined, inverted, reversed,
    transposed): every copy reads as it does alone and no statement holds notes of two copies."""
    if not works.available():
        pytest.skip("the shared corpus is not here")
    from serialkit.core.analysis import analyze

    piece, copies = works.family("op27", family, 34, 0)
    analysis = analyze(piece, works.excerpt("op27")[1])
    assert works.excess("op27", piece, copies, analysis) == {}
    assert works.stitched(analysis) == []


@pytest.mark.parametrize(("family", "seed"), [("retrograde", 0), ("retrograde", 1), ("inverted", 0), ("inverted", 3),
                                              ("tempo", 0), ("tempo", 1), ("transposed", 1), ("joined", 4)])
def test_op21_whole_works_read_as_their_copies_alone(family: str, seed: int) -> None:
    """Op. 21 bars 1-25 copied 12 times (1,536 notes): the families and seeds that read as their
    copies alone (``bench/bench_works.py`` reports every family; the canon, re-orchestrated and
    mixed ones still leave correct notes unexplained, and retrograde at seed 6). Before
    statements kept their pace at their open ends and fragments were read at a section's edges,
    inverted seed 3, tempo seeds 0 and 1, transposed seed 1 and joined seed 4 did not (seeds 0-5
    of the four families: 43 correct notes unexplained then, 24 now)."""
    if not works.available():
        pytest.skip("the shared corpus is not here")
    from serialkit.core.analysis import analyze

    piece, copies = works.family("op21", family, 12, seed)
    analysis = analyze(piece, works.excerpt("op21")[1])
    assert works.excess("op21", piece, copies, analysis) == {}


@pytest.mark.parametrize(("family", "seed"), [("tempo", 2), ("tempo", 4), ("joined", 0), ("joined", 7),
                                              ("inverted", 2), ("transposed", 4), ("reorchestrated", 10)])
def test_a_statement_the_learnt_passing_costs_refuse_is_read_as_the_first_reading_did(family: str, seed: int) -> None:
    """Op. 21 copied 12 times: the first reading of every copy gives the P statement opening in
    part P5/6/2 the note of its second pitch class in P8/9/1 (an I statement's, struck just before
    P7/8/1's, which is the P statement's), so the habits it teaches make the passes the P statement
    really makes (P5/6/2 to P7/8/1 to P8/9/1) dear; read again with them, the I statement takes its
    note back and nothing reads the P statement. What the new costs leave unread is read with the
    first reading's costs (``pairs.reread_strange_passes``): before, each of these pieces left one
    to four correct notes unexplained."""
    if not works.available():
        pytest.skip("the shared corpus is not here")
    from serialkit.core.analysis import analyze

    piece, copies = works.family("op21", family, 12, seed)
    analysis = analyze(piece, works.excerpt("op21")[1])
    assert works.excess("op21", piece, copies, analysis) == {}


def test_a_statement_whose_first_note_two_others_share_begins_on_its_next() -> None:
    """``handed`` seed 255 at 2,360 notes (drawn by the size property): I3 ends on a pair R6 also
    begins with and R9 begins on its last note. The R6 chain took that pair, elided, as its
    opening, so R9's first note was shared twice and its chain was dropped; a weak I8 chain then
    took every other note of R9's voice and four correct notes stayed unexplained. A chain whose
    first note is taken so is built again from its next (``selection.select``), and the later
    steps give it its first note back: the piece passes."""
    s = synth.whole("handed", 255, 2360)
    report = check_piece(s.piece, row=s.row, profile=profile_for("analysis"))
    assert report.verdict.strict, [v.message for v in report.verdict.violations][:3]
    assert not report.unexplained


@pytest.mark.xfail(strict=True, reason="two interleaved cut-off statements read as one stitched whole statement")
def test_the_excerpt_reversed_in_time_reads_as_the_excerpt_does() -> None:
    """Op. 21 bars 1-25 reversed in time (an outside test): the excerpt's two statements cut off at
    its end now open it, each at position 2, interleaved. A known gap: they are read as one
    "complete" P11 stitched from both (positions 0-3 of one, 4-11 of the other) and an I1 of seven
    positions with three holes, three ROW findings the excerpt read forwards does not have."""
    from fractions import Fraction

    from serialkit.check.profiles import profile_for
    from serialkit.check.report import check_piece

    if not works.available():
        pytest.skip("the shared corpus is not here")
    piece, row = works.excerpt("op21")
    backwards = works.build("op21", [works.Copy(Fraction(0), 0, False, True)])

    def rows(p: object) -> int:
        report = check_piece(p, row=row, profile=profile_for("analysis"), suggest=False)  # type: ignore[arg-type]
        return sum(v.code == "ROW" for v in report.verdict.violations)

    assert rows(backwards) == rows(piece) == 1
