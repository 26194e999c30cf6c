"""Re-reading round unexplained notes (``pairs.reread_unexplained_stretches``): a note repeating
its voice's previous note, which a statement holds, is no sign of a misreading, so it sets off no
search; notes nothing explains do."""

from __future__ import annotations

import pytest

import serialkit.core.analysis.pairs as pairs
from serialkit.core.analysis import analyze
from tests import synth


def _searches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    calls: list[tuple[int, int]] = []
    search = pairs._search_stretch

    def counted(a: object, first: int, last: int, extra: float = pairs.EXTRA,
                banned: frozenset[tuple[int, int]] = frozenset()) -> None:
        calls.append((first, last))
        search(a, first, last, extra, banned)  # type: ignore[arg-type]

    monkeypatch.setattr(pairs, "_search_stretch", counted)
    return calls


def test_repeats_of_held_notes_set_off_no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """pivot_voice_change at 1,500 notes: after the first reading 115 notes are free, every one a
    repeat of its voice's previous note, which a statement holds; the piece reads whole without
    searching any stretch again."""
    calls = _searches(monkeypatch)
    s = synth.whole("pivot_voice_change", 0, 1500)
    analysis = analyze(s.piece, s.row)
    assert analysis.unexplained == ()
    assert calls == []


def test_notes_nothing_explains_still_set_off_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of notes of another row in the middle of a one-voice piece: the stretch round it is
    searched again."""
    calls = _searches(monkeypatch)
    s = synth.whole("one_voice", 0, 300)
    events = sorted(s.piece.events, key=lambda e: e.onset)
    stranger = {e.id: e.copy(midi=e.midi + 1) for e in events[140:146]}  # six notes off the row
    piece = s.piece.with_events(stranger.get(e.id, e) for e in s.piece.events)
    analysis = analyze(piece, s.row)
    assert analysis.unexplained
    assert calls


@pytest.mark.slow
@pytest.mark.parametrize(("family", "seed"), [("repeats", 0), ("concurrent", 1), ("piano_hands", 0)])
def test_the_local_reading_knowing_voice_passing_labels_as_the_fresh_one(family: str, seed: int,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """From ``LOCAL_FROM`` notes on, the reading knowing voice passing is redone only round the
    statements passing at a cost now (and those sounding with them): at 1,500 notes it labels every
    note as reading the whole piece afresh does, and is cheaper where few statements pass."""
    import serialkit.core.analysis.pipeline as pipeline

    s = synth.whole(family, seed, 1500)
    assert len(s.piece.events) >= pipeline.LOCAL_FROM
    local = analyze(s.piece, s.row)
    monkeypatch.setattr(pipeline, "LOCAL_FROM", 10**9)
    fresh = analyze(s.piece, s.row)
    assert local.labels() == fresh.labels()
    assert [st.event_ids for st in local.statements] == [st.event_ids for st in fresh.statements]
