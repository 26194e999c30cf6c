"""What suggesting spends its analyses on: no candidates seeded by a statement's open end cut off
(``trouble._seeding``), no wide pass round a note whose own candidates the budget left untried,
and a reading's measures taken only when asked."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

from serialkit.core.analysis import analyze
from serialkit.core.piece import Event
from serialkit.core.suggest import Readings, suggest
from serialkit.core.suggest.trouble import _Hole, _seeding


def _hole(lo: int, hi: int, want: int, around: set[str], members: set[str]) -> _Hole:
    return _Hole(Fraction(lo), Fraction(hi), want, frozenset({"v"}), frozenset(around), frozenset(members))


def test_an_open_end_one_change_cannot_close_seeds_no_candidates() -> None:
    """Two positions or more missing past a statement's last note, with fewer unexplained notes
    sounding there than positions missing, are a statement cut off (a change fills one of them at
    most and leaves it short): they seed nothing. One position missing at an end, holes between
    two notes, and an end with as many unexplained notes as positions missing still seed."""
    cut = [_hole(10, 14, 5, {"a"}, {"a", "b"}), _hole(10, 14, 8, {"a"}, {"a", "b"})]
    one = [_hole(20, 22, 3, {"c"}, {"c", "d"})]
    between = [_hole(30, 32, 1, {"e", "f"}, {"e", "f"}), _hole(30, 32, 2, {"e", "f"}, {"e", "f"})]
    filled = [_hole(40, 44, 5, {"g"}, {"g", "h"}), _hole(40, 44, 8, {"g"}, {"g", "h"})]
    events = {u: Event(u, "v", Fraction(t), Fraction(1), 60) for u, t in (("u1", 11), ("u2", 41), ("u3", 42))}
    analysis = SimpleNamespace(unexplained=("u1", "u2", "u3"))
    kept = _seeding([*cut, *one, *between, *filled], analysis, events)  # type: ignore[arg-type]
    assert kept == [*one, *between, *filled]


def test_the_wide_pass_looks_round_no_note_the_budget_left_untried() -> None:
    """The wide pass is for trouble no likely correction clears: a note some of whose own
    candidates the budget left unverified is not known to be such trouble, and its wide pass's
    changes are less likely than those left: none is tried round it."""
    from tests.planted import exercise

    piece, row = exercise(3, statements=4)
    ids = [e.id for e in piece.events]
    wrong = {ids[5]: piece.events[5].midi + 1, ids[30]: piece.events[30].midi - 1}
    piece = piece.with_events(e.copy(midi=wrong[e.id]) if e.id in wrong else e for e in piece.events)
    analysis = analyze(piece, row)
    readings = Readings()
    found = {n.event_id: n for n in suggest(piece, analysis, budget=0, wide=20, readings=readings)}
    assert readings.analysed == 0
    assert not any(found[e].complete for e in wrong)
    full = {n.event_id: n for n in suggest(piece, analysis, readings=readings)}
    assert all(full[e].complete and full[e].best is not None for e in wrong)


def test_a_reading_is_measured_when_asked() -> None:
    """A reading's trouble, holes and roughness are measured when first asked, and then once."""
    from tests.planted import exercise

    piece, row = exercise(3, statements=2)
    reading = Readings().read(piece, row, "relative")
    assert "spots" not in vars(reading) and "badness" not in vars(reading)
    assert reading.badness == 0 and "spots" in vars(reading)
    assert reading.holes is reading.holes
