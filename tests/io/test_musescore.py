"""Notation software: MuseScore 3 re-exports an annotated score with every label and colour."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from serialkit.io import Annotation, read_score, write_annotated_musicxml
from serialkit.io.musicxml.annotate import notehead_annotations
from tests.conftest import require_program

COLOURS = ("#D62728", "#1F77B4", "#2CA02C", "#9467BD")


def _mscore(args: list[str]) -> None:
    exe = require_program("mscore3")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _by_position(path: Path) -> dict[tuple, Annotation]:
    out: dict[tuple, Annotation] = {}
    for raw, ann in notehead_annotations(path):
        key = (raw.part, raw.onset, raw.midi, raw.grace)
        assert key not in out
        out[key] = ann
    return out


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_musescore_keeps_labels_and_colours(fixtures: Path, tmp_path: Path) -> None:
    require_program("mscore3")
    src = fixtures / "scores" / "features.musicxml"
    piece = read_score(src)
    ann = {
        e.id: Annotation(f"P{i % 12}:{i % 12}", COLOURS[i % len(COLOURS)])
        for i, e in enumerate(piece.events)
    }
    annotated = write_annotated_musicxml(src, ann, tmp_path / "annotated.musicxml", label_style="fingering")
    exported = tmp_path / "exported.musicxml"
    _mscore(["-o", str(exported), str(annotated)])
    png = tmp_path / "exported.png"
    _mscore(["-o", str(png), str(annotated)])
    pages = sorted(tmp_path.glob("exported*.png"))
    assert pages and pages[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ours = _by_position(annotated)
    theirs = _by_position(exported)
    assert set(theirs) == set(ours)  # MuseScore drops ids, so match by (part, onset, pitch)
    for key, mine in ours.items():
        assert theirs[key].color == mine.color, key
        assert theirs[key].label == mine.label, key
    labels = sorted(a.label for a in theirs.values() if a.label)
    assert labels == sorted(a.label for a in ann.values() if a.label)
