"""The chain search's shortcuts change no analysis: ``select`` sparing chains too short to accept
(``selection.FEW``) and ``rebuild`` reusing a rebuild whose read claims are unchanged
(``Assignment.rebuilt``) give the analysis the search gives without them, on every synthetic
family, with wrong notes planted (where statements are re-chosen most) and in cut windows."""

from __future__ import annotations

import pytest

from serialkit.core.analysis import analyze, selection
from tests.synth import CLEAN, FAMILIES, wrong_notes


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selection, "FEW", 0)  # every chain tidied, trimmed and compared
    monkeypatch.setattr(selection, "REBUILT", -1)  # every rebuild made afresh (none kept)


@pytest.mark.parametrize("family", [*CLEAN, "wrong_notes"])
def test_shortcuts_change_no_analysis(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    synth = wrong_notes(7) if family == "wrong_notes" else FAMILIES[family](5)
    events = sorted(synth.piece.events, key=lambda e: (e.onset, e.voice, e.id))
    window = synth.piece.with_events(events[len(events) // 4: 3 * len(events) // 4])
    fast = [analyze(synth.piece, synth.row), analyze(window, synth.row, cut=(True, True))]
    _plain(monkeypatch)
    plain = [analyze(synth.piece, synth.row), analyze(window, synth.row, cut=(True, True))]
    for a, b in zip(fast, plain, strict=True):
        assert a.tags == b.tags
        assert a.statements == b.statements
        assert a.unexplained == b.unexplained
