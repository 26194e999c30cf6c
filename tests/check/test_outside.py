"""Correct pieces from a generator written apart from the analysis (``tests/outside.py``)."""

from __future__ import annotations

import pytest

from serialkit.core.analysis import analyze
from tests.outside import TEXTURES, generate


@pytest.mark.parametrize("texture", sorted(TEXTURES))
def test_the_outside_generator_writes_correct_statements(texture: str) -> None:
    made = generate(TEXTURES[texture], 3, 400)
    assert len(made.piece.events) >= 400
    for e in made.piece.events:
        form, pos = made.truth[e.id]
        assert made.row.form(form)[pos] == e.pc
    forms = {form for form, _pos in made.truth.values()}
    assert len(forms) > 4  # statements of many forms, not one


@pytest.mark.parametrize("seed", [0, 1])
def test_statements_each_in_one_instrument_read_whole(seed: int) -> None:
    made = generate(TEXTURES["one_instrument_each"], seed, 1500)
    analysis = analyze(made.piece, made.row)
    assert analysis.unexplained == ()
    labels = analysis.labels()
    wrong = [e for e, (form, pos) in made.truth.items() if labels.get(e) != f"{form.label}:{pos}"]
    assert len(wrong) <= len(made.truth) // 100  # labels: an invariant segment may read as another form


@pytest.mark.parametrize("seed", [0, 1])
def test_a_statement_holding_a_note_while_others_move_reads_whole(seed: int) -> None:
    """Notes held 4-12 beats while four other streams move (3 % of the notes) sound through up to
    43 onsets of the other voices, past the 24 a link may reach: the statement's own voice goes on
    from the held note's end (31 and 35 notes were left unexplained before)."""
    made = generate(TEXTURES["held"], seed, 1500)
    analysis = analyze(made.piece, made.row)
    assert analysis.unexplained == ()
    labels = analysis.labels()
    wrong = [e for e, (form, pos) in made.truth.items() if labels.get(e) != f"{form.label}:{pos}"]
    assert len(wrong) <= len(made.truth) // 100


@pytest.mark.parametrize(("texture", "seed"), [("chords_handoff", 1), ("handoff", 4), ("handoff", 9)])
def test_statements_handed_between_instruments_read_whole(texture: str, seed: int) -> None:
    """Statements passed between instruments, with chords and re-struck notes (1,500 notes). Each
    piece left notes unexplained before: chords_handoff seed 1 three (a note struck again in the
    instrument the statement moves to, ``restrike_in_another_voice``; and a stretch where six
    statements sound, read again note by note, ``pairs._reread_each_note``), handoff seeds 4
    and 9 one and two (two statements that took each other's notes of one pitch class,
    ``placing._exchange``)."""
    made = generate(TEXTURES[texture], seed, 1500)
    analysis = analyze(made.piece, made.row)
    assert analysis.unexplained == ()
    labels = analysis.labels()
    wrong = [e for e, (form, pos) in made.truth.items() if labels.get(e) != f"{form.label}:{pos}"]
    assert len(wrong) <= len(made.truth) // 50


@pytest.mark.slow
def test_a_re_struck_note_before_a_hand_off_is_not_corrected() -> None:
    """A statement re-strikes its E in the viola and goes on in the clarinet and violin; the reading
    took another stream's G for the next position and left the hand-off unexplained (4 notes of
    1,506), and the second E → G5 was suggested at 85 % and applied by ``repair``. As written each
    E repeats the other: the hand-off is now read as written (since statements may share a note
    that a repeat or tremolo stands beside), one note of 1,506 is left unexplained, and no
    suggestion reaches the repair threshold."""
    from serialkit.core.suggest import DEFAULT_THRESHOLD, suggest

    made = generate(TEXTURES["chords_handoff"], 9922, 1500)
    analysis = analyze(made.piece, made.row)
    assert len(analysis.unexplained) <= 1
    assert not {"o441", "o443", "o449"} & set(analysis.unexplained)  # the hand-off is read
    found = {n.event_id: n for n in suggest(made.piece, analysis, suspects=False)}
    sure = [(n.event_id, c.midi, round(c.confidence, 2)) for n in found.values() for c in n.candidates
            if c.confidence >= DEFAULT_THRESHOLD]
    assert sure == []


def test_a_note_struck_twice_at_once_gives_its_first_strike_to_its_own_statement() -> None:
    """The flute strikes C# twice (o697, o698: RI4's position 5 and its repeat) and then B (RI4:7),
    while the viola's chord C# B (o681, o682) ends I1. The reading gave I1 the flute's first C# and
    its B and left the viola's chord unexplained, RI4 one position short: a repair then changed a
    correct note at 100 %. The first of two strikes is its statement's note and the second the
    repeat (``placing._trade_restruck``), so the viola's chord ends I1 and the flute keeps RI4."""
    made = generate(TEXTURES["chords_handoff"], 5305, 2117)
    analysis = analyze(made.piece, made.row)
    labels = analysis.labels()
    assert [labels.get(e) for e in ("o681", "o682", "o697", "o702")] == ["I1:10", "I1:11", "RI4:5", "RI4:7"]
    assert labels.get("o698") == "RI4:5"  # the repeat
    assert not {"o681", "o682"} & set(analysis.unexplained)
