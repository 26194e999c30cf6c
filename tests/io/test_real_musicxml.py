"""Real MusicXML (the scores music21 ships): every notehead's onset and sounding pitch agrees."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from serialkit.io import read_score
from serialkit.io.musicxml.read import load_tree, scan_tree

WORKS = ["schoenberg/opus19/movement2.mxl", "schoenberg/opus19/movement6.mxl", "bach/bwv66.6"]


@pytest.mark.parametrize("work", WORKS)
def test_noteheads_agree_with_music21(work: str) -> None:
    music21 = pytest.importorskip("music21")
    path = Path(str(music21.corpus.getWork(work)))
    score = music21.converter.parse(str(path)).toSoundingPitch()
    theirs: Counter[tuple[Fraction, int, bool]] = Counter()
    for n in score.recurse().notes:
        onset = Fraction(n.getOffsetInHierarchy(score)).limit_denominator(100_000)
        for p in n.pitches:
            theirs[(onset, p.midi, n.duration.isGrace)] += 1
    tree, where, _ = load_tree(path)
    ours = Counter((raw.onset, raw.midi, raw.grace) for _, raw in scan_tree(tree, where).elements)
    assert ours == theirs
    piece = read_score(path)
    assert sum(max(1, len(e.tied_ids)) for e in piece.events) == sum(theirs.values())
    assert len(piece.measures) == len(score.parts[0].getElementsByClass("Measure"))
