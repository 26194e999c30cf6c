"""What suggesting spends its analyses on: no candidates seeded by a statement's open end cut off
(``trouble._seeding``), and a reading's measures taken only when asked."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

from serialkit.core.piece import Event
from serialkit.core.suggest import Readings
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


def test_a_reading_is_measured_when_asked() -> None:
    """A reading's trouble, holes and roughness are measured when first asked, and then once."""
    from tests.planted import exercise

    piece, row = exercise(3, statements=2)
    reading = Readings().read(piece, row, "relative")
    assert "spots" not in vars(reading) and "badness" not in vars(reading)
    assert reading.badness == 0 and "spots" in vars(reading)
    assert reading.holes is reading.holes
