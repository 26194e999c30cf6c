"""Public collections no one on the team wrote: every file reads, or is refused with one line
naming the file (and the place, where there is one).

- The MEI sample encodings (music-encoding/sample-encodings, ``MEI_5.1/Music/Complete_examples``),
  in the directory ``SERIALKIT_MEI_SAMPLES`` names; skipped when it is unset or absent.
- The LilyPond MusicXML test suite that music21 ships; skipped when music21 is not installed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io import read_score


def _mei_samples() -> list[Path]:
    root = os.environ.get("SERIALKIT_MEI_SAMPLES")
    if not root or not Path(root).is_dir():
        return []
    return sorted(Path(root).rglob("*.mei"))


def _lilypond_suite() -> list[Path]:
    spec = importlib.util.find_spec("music21")
    if spec is None or spec.origin is None:
        return []
    suite = Path(spec.origin).parent / "musicxml" / "lilypondTestSuite"
    return sorted(p for p in suite.iterdir() if p.suffix in (".xml", ".mxl")) if suite.is_dir() else []


MEI_SAMPLES = _mei_samples()
LILYPOND = _lilypond_suite()
NAMED_IN_ISSUE = (
    "Ives_TheCage.mei", "Schubert_Erlkoenig.mei", "Schumann_StringQuartet_Op41_No1.mei",
    "Parker-Gillespie_ShawNuff.mei", "Rimsky-Korsakov_StringQuartet_B-LA-F.mei", "McFerrin_Don't_worry.mei",
)


def _reads_or_one_line(path: Path) -> str | None:
    """None when the file reads (with notes); the refusal's message otherwise."""
    try:
        piece = read_score(path)
    except ScoreReadError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert message.startswith(str(path)), message
        return message
    assert piece.events
    return None


@pytest.mark.skipif(not MEI_SAMPLES, reason="SERIALKIT_MEI_SAMPLES is unset or not a directory")
@pytest.mark.parametrize("path", MEI_SAMPLES, ids=[p.name for p in MEI_SAMPLES])
def test_mei_sample_reads(path: Path) -> None:
    assert _reads_or_one_line(path) is None


@pytest.mark.skipif(not MEI_SAMPLES, reason="SERIALKIT_MEI_SAMPLES is unset or not a directory")
def test_mei_samples_once_refused_read_with_their_notes() -> None:
    present = {p.name: p for p in MEI_SAMPLES}
    counts = {name: len(read_score(present[name]).events) for name in NAMED_IN_ISSUE if name in present}
    if not counts:
        pytest.skip("none of the files once refused is in SERIALKIT_MEI_SAMPLES")
    # McFerrin's music is in <parts> (the <score> without ids is the header's incipit)
    assert all(n > 100 for n in counts.values()), counts


def _pitched(path: Path) -> bool:
    if path.suffix == ".mxl":
        return True
    root = etree.parse(str(path)).getroot()
    return any(root.iter("pitch", "unpitched"))


@pytest.mark.skipif(not LILYPOND, reason="music21 (with its LilyPond MusicXML test suite) is not installed")
@pytest.mark.parametrize("path", LILYPOND, ids=[p.name for p in LILYPOND])
def test_lilypond_musicxml_suite_reads(path: Path) -> None:
    refusal = _reads_or_one_line(path)
    if refusal is not None:  # only a file with nothing to read is refused
        assert refusal == f"{path}: the score contains no notes"
        assert not _pitched(path)
