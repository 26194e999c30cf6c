"""The single-note steps after the statements are chosen (``core/analysis/placing.py``)."""

from __future__ import annotations

from fractions import Fraction

from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.placing import index_owners, place_unexplained_notes
from serialkit.core.analysis.state import Found, new_assignment
from serialkit.core.piece import Event
from serialkit.core.rows import ALL_FORMS, Row

ROW = Row.parse("A F# G G# E F B Bb D C# C Eb")


def test_a_repeat_taken_as_the_next_statements_first_note_goes_back() -> None:
    """``a a | b a``: T ends on ``a`` (repeated) and ``b``; S begins on the later ``a``. A reading
    that gave the repeat of T's ``a`` to S leaves the later ``a`` unexplained; placing moves S's
    first note to it and gives the repeat back to T."""
    t_form = ALL_FORMS[0]
    t = ROW.form(t_form)
    s_form = next(f for f in ALL_FORMS if ROW.form(f)[0] == t[10] and f != t_form)
    s = ROW.form(s_form)
    pcs = [*t[:11], t[10], t[11], *s]  # T:0-10, the repeat of T:10, T:11, S:0-11
    events = [Event(f"n{i}", "v1", Fraction(i, 2), Fraction(1, 2), 60 + pc) for i, pc in enumerate(pcs)]
    ix = EventIndex(events, ["v1"])
    forms = [ROW.form(f) for f in ALL_FORMS]
    a = new_assignment(ix, forms)
    a.found = [
        Found(ALL_FORMS.index(t_form), {p: p for p in range(11)} | {11: 12}),
        Found(ALL_FORMS.index(s_form), {0: 11} | {p: 13 + p for p in range(1, 12)}),
    ]
    a = place_unexplained_notes(index_owners(a))
    assert a.found[1].slots[0] == 13, "S begins on the later note"
    assert (11, 10) in a.found[0].repeats, "the repeat is T's"
    assert set(a.owners) == set(range(len(events))), "every note explained"
