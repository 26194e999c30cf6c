"""Windows of a long piece read as cuts (``analyze(cut=(True, True))``): the statements a window's edges cut
off are context, not trouble, so a suggestion's verification costs what the trouble costs."""

from __future__ import annotations

import pytest

from serialkit.check.profiles import profile_for
from serialkit.check.report import check_piece
from serialkit.core.analysis import analyze
from tests import synth
from tests.planted import plant_errors


def _label(tag: object) -> tuple[str, int] | None:
    return None if tag is None else (tag.form.label, tag.position)  # type: ignore[attr-defined]


@pytest.mark.parametrize("family", ["distributed", "one_voice"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_window_cut_mid_statement_keeps_its_edge_notes_out_of_trouble(family: str, seed: int) -> None:
    """A window starting and ending inside statements: read as a cut, the notes its edges cut off
    are not sought as fragments, and the notes inside it read as in the whole piece."""
    s = synth.whole(family, seed, 600)
    order = sorted(s.piece.events, key=lambda e: (e.onset, e.voice, e.midi, e.id))
    window = s.piece.with_events(order[205:395])  # cuts through statements at both ends
    whole = analyze(s.piece, s.row)
    cut = analyze(window, s.row, cut=(True, True))
    plain = analyze(window, s.row)
    inner = [e.id for e in order[245:355]]
    assert [_label(cut.tags.get(e)) for e in inner] == [_label(whole.tags.get(e)) for e in inner]
    assert len(cut.unexplained) > len(plain.unexplained)  # the cut's scraps are left as they are
    assert set(cut.unexplained) <= {e.id for e in order[205:245] + order[355:395]}


@pytest.mark.slow
@pytest.mark.parametrize("family", ["distributed", "one_voice", "row_per_voice"])
def test_a_wrong_note_in_a_whole_work_is_found_and_put_right(family: str) -> None:
    """At 1,500 notes (verification in cut windows) a planted accidental and a planted third are
    reported and the check's top suggestion restores the written note."""
    s = synth.whole(family, 3, 1500)
    for plant in list(plant_errors(s.piece, s.row, f"{family}/3", 2, 3)):
        report = check_piece(plant.piece, s.row, profile=profile_for("analysis"), suggest=True).to_dict()
        tops = {n["event_id"]: n["candidates"][0] for n in report["suggestions"] if n["candidates"]}
        (note, before), = plant.original.items()
        assert note in tops, (plant.kind, note, list(tops))
        assert [(e["event_id"], e["after"]) for e in tops[note]["edits"]] == [(note, before)]
