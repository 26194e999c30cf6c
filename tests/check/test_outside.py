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
