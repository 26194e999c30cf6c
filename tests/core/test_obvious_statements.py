"""The first reading's obvious statements: twelve successive notes of one voice spelling one form,
repeated notes and two-note tremolos allowed, and the repeats after the last position (the tail)
given once no other statement begins on them."""

from __future__ import annotations

from fractions import Fraction

import pytest

from serialkit.core.analysis import analyze
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.pipeline import first_reading
from serialkit.core.analysis.state import new_assignment
from serialkit.core.analysis.statements import (
    give_obvious_statements_their_tails,
    take_obvious_statements,
)
from serialkit.core.events import Event
from serialkit.core.piece import Piece
from serialkit.core.rows import Row
from tests.synth import FAMILIES

ROW = Row.parse("C C# D D# E F F# G G# A A# B")


def _one_voice(pcs: list[int]) -> Piece:
    events = [Event(id=f"n{i}", voice="v1", onset=Fraction(i, 2), duration=Fraction(1, 2), midi=60 + pc)
              for i, pc in enumerate(pcs)]
    return Piece(events=tuple(events))


def _reading(piece: Piece, steps: int) -> tuple[list[dict[int, str]], list[list[str]]]:
    forms = [ROW.form(f) for f in ROW.distinct_forms()]
    ix = EventIndex(piece.events, piece.voice_ids)
    a = new_assignment(ix, forms)
    a = take_obvious_statements(a)
    if steps > 1:
        a = give_obvious_statements_their_tails(a)
    ids = [e.id for e in ix.events]
    return ([{p: ids[e] for p, e in f.slots.items()} for f in a.found if f.slots],
            [[ids[e] for e, _ in f.repeats] for f in a.found if f.slots])


def test_a_statement_with_a_repeat_and_a_tremolo_is_obvious() -> None:
    # P0 with position 3 struck twice and a tremolo 6 7 6 7 (then on)
    pcs = [0, 1, 2, 3, 3, 4, 5, 6, 7, 6, 7, 8, 9, 10, 11]
    slots, repeats = _reading(_one_voice(pcs), 1)
    assert slots == [{p: f"n{i}" for p, i in zip(range(12), [0, 1, 2, 3, 5, 6, 7, 8, 11, 12, 13, 14], strict=True)}]
    assert repeats == [["n4", "n9", "n10"]]


def test_the_repeats_after_the_last_position_wait_then_go_to_the_statement() -> None:
    pcs = list(range(12)) + [11, 11]  # position 11 struck three times, nothing after
    slots, repeats = _reading(_one_voice(pcs), 1)
    assert repeats == [[]] and slots[0][11] == "n11"  # the tail waits for the statements taken best-first
    slots, repeats = _reading(_one_voice(pcs), 2)
    assert repeats == [["n12", "n13"]]


def test_a_statement_beginning_on_the_repeated_note_keeps_its_opening() -> None:
    # P0 ends on B, struck again; then P11 (B C C# ...) begins on the second B
    p11 = [(11 + pc) % 12 for pc in range(12)]
    pcs = list(range(12)) + p11
    piece = _one_voice(pcs)
    forms = [ROW.form(f) for f in ROW.distinct_forms()]
    labels = analyze(piece, ROW).labels()
    assert labels["n11"] == "P0:11" and labels["n12"] == "P11:0" and labels["n13"] == "P11:1"
    assert len(first_reading(EventIndex(piece.events, piece.voice_ids), forms).found) == 2


@pytest.mark.parametrize("seed", range(4))
def test_repeated_note_statements_are_taken_as_obvious(seed: int) -> None:
    """In the repeated-note texture (two voices, a row each) nearly every statement is read by the
    obvious pass, not searched for best-first: exactly its notes at its positions."""
    s = FAMILIES["repeats"](seed)
    forms = [s.row.form(f) for f in s.row.distinct_forms()]
    ix = EventIndex(s.piece.events, s.piece.voice_ids)
    a = take_obvious_statements(new_assignment(ix, forms))
    ids = [e.id for e in ix.events]
    found = [f for f in a.found if f.slots]
    held = [(ids[e], forms[f.form], p) for f in found for e, p in [*((e, p) for p, e in f.slots.items()), *f.repeats]]
    right = [1 for eid, pcs, p in held if any(s.row.form(g) == pcs and q == p for g, q in s.truth[eid])]
    assert len(found) == len(s.statements)
    # every note an obvious statement holds has its written label (a repeated note where one
    # statement ends and the next begins may go either way)
    assert len(right) >= len(held) - 3
