"""Row-form inference on real scores: Webern Op. 21/I (bars 1–25) and Op. 27/II (../shared/corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serialkit.core.analysis import Analysis, Statement, analyze
from serialkit.core.piece import Piece
from serialkit.core.rows import Row

OP21_ROW = "A F# G G# E F B Bb D C# C Eb"
OP27_ROW = "Eb B Bb D C# C F# E G F A Ab"
# The published forms of the four canon voices (relative labels, P0 = the row as first stated).
OP21_VOICES = {1: ("P0", "I3"), 2: ("I0", "P9"), 3: ("I8", "P5"), 4: ("P4", "I7")}

pytestmark = pytest.mark.corpus


def _read(path: Path) -> Piece:
    from serialkit.io import read_score

    return read_score(path)


def _first_of(analysis: Analysis, row: Row, label: str) -> Statement:
    """The earliest statement whose form is ``label`` or one of its aliases."""
    target = row.form(label)
    for statement in analysis.statements:
        if row.form(statement.form) == target:
            return statement
    raise AssertionError(f"no statement of {label} found; found {[s.form.label for s in analysis.statements]}")


def _onsets(piece: Piece, statement: Statement) -> list[object]:
    events = {e.id: e for e in piece.events}
    return [events[e].onset for e in statement.event_ids if e is not None]


@pytest.fixture(scope="module")
def op21(corpus: Path) -> tuple[Piece, Analysis]:
    piece = _read(corpus / "webern-op21-i-mm1-25.mei")
    return piece, analyze(piece, Row.parse(OP21_ROW))


@pytest.fixture(scope="module")
def op27(corpus: Path) -> tuple[Piece, Analysis]:
    piece = _read(corpus / "webern-op27-ii-mm1-11.mei")
    return piece, analyze(piece, Row.parse(OP27_ROW))


@pytest.mark.parametrize("voice", sorted(OP21_VOICES))
def test_op21_canon_voice_forms_in_order(op21: tuple[Piece, Analysis], voice: int) -> None:
    piece, analysis = op21
    row = Row.parse(OP21_ROW)
    first_label, second_label = OP21_VOICES[voice]
    first = _first_of(analysis, row, first_label)
    second = _first_of(analysis, row, second_label)
    assert first.found >= 11 and second.found >= 11, (first, second)
    a, b = _onsets(piece, first), _onsets(piece, second)
    assert min(a) < min(b) <= max(a), "the second form takes over as the first ends (they overlap)"
    assert max(a) < max(b)


def test_op21_statements_are_distinct_and_coverage_reported(op21: tuple[Piece, Analysis]) -> None:
    piece, analysis = op21
    row = Row.parse(OP21_ROW)
    chosen = {_first_of(analysis, row, label).id for pair in OP21_VOICES.values() for label in pair}
    assert len(chosen) == 8
    print(f"\nOp. 21/I bars 1-25: coverage {float(analysis.coverage):.1%} "
          f"({len(piece.events) - len(analysis.unexplained)}/{len(piece.events)} notes), "
          f"{len(analysis.statements)} statements: {' '.join(s.form.label for s in analysis.statements)}")
    assert analysis.coverage >= 0.95
    # the row is symmetric (P0 = R6 etc.): every labelled note lists its aliases
    assert row.is_symmetric()
    ambiguous = {a.event_id for a in analysis.ambiguities}
    assert all(eid in ambiguous for eid, tag in analysis.tags.items() if tag is not None)


def test_op21_canon_at_eight_quarter_notes(op21: tuple[Piece, Analysis]) -> None:
    """Voice 2 answers voice 1 by inversion two bars later: same order positions, 8 beats on."""
    piece, analysis = op21
    row = Row.parse(OP21_ROW)
    leader = _onsets(piece, _first_of(analysis, row, "P0"))
    follower = _onsets(piece, _first_of(analysis, row, "I0"))
    matches = sum(1 for x, y in zip(leader, follower, strict=True) if y - x == 8)  # type: ignore[operator]
    assert matches >= 10


def test_op27_mirror_canon(op27: tuple[Piece, Analysis]) -> None:
    piece, analysis = op27
    row = Row.parse(OP27_ROW)
    print(f"\nOp. 27/II: coverage {float(analysis.coverage):.1%}, statements "
          f"{' '.join(s.form.label for s in analysis.statements)}")
    assert analysis.coverage >= 0.95
    complete = [s for s in analysis.statements if s.complete]
    assert len(complete) >= 4
    events = {e.id: e for e in piece.events}
    axes = set()
    pairs = 0
    for x in complete:
        for y in complete:
            if x.id >= y.id:
                continue
            px, py = row.form(x.form), row.form(y.form)
            sums = {(a + b) % 12 for a, b in zip(px, py, strict=True)}
            start_x = min(events[e].onset for e in x.event_ids if e)
            start_y = min(events[e].onset for e in y.event_ids if e)
            if len(sums) == 1 and abs(start_x - start_y) <= 1:
                axes.add(sums.pop())
                pairs += 1
    assert pairs >= 2, "two voices stating inversionally related forms together, twice"
    assert len(axes) == 1, "one mirror axis for the whole canon"
