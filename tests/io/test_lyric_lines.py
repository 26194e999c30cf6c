"""Labels carried as lyrics (``--labels lyric``): each voice of a staff on lyric lines of its own
(MusicXML ``<lyric number>``, MEI ``<verse n>``), so that MuseScore 3 does not print voice 1's and
voice 2's labels on top of each other, and the numbers of the score's own lyrics stay theirs.

``fixtures/scores/horn-piano.musicxml``: a horn, and a piano whose first staff holds voices 1 and 2
(voice 1 with a two-note chord, and its own lyrics ``oh la la la``, number 1, in bar 1)."""

from __future__ import annotations

import os
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.cli import cli
from serialkit.io import Annotation, convert_score, read_score
from serialkit.io.annotate import write_annotated_score
from serialkit.io.annotation import lyric_lines
from tests.conftest import require_program

HORN = Path(__file__).resolve().parents[2] / "fixtures" / "scores" / "horn-piano.musicxml"
MEI = "{http://www.music-encoding.org/ns/mei}"

Lines = dict[tuple[str, str], dict[str, set[str]]]


def _musicxml_lines(path: Path) -> tuple[Lines, dict[str, set[str]], list[str]]:
    """Per (part, staff): voice → the numbers of serialkit's lyrics; per (part, staff) the numbers
    of the score's own lyrics; every serialkit lyric's text."""
    root = etree.parse(str(path)).getroot()
    ours: Lines = defaultdict(lambda: defaultdict(set))
    own: dict[str, set[str]] = defaultdict(set)
    texts = []
    for part in root.iter("part"):
        for note in part.iter("note"):
            staff = f"{part.get('id')}/{note.findtext('staff') or '1'}"
            for lyric in note.iterfind("lyric"):
                if lyric.get("name") == "serialkit":
                    ours[staff][note.findtext("voice") or "1"].add(lyric.get("number") or "1")
                    texts.append(lyric.findtext("text") or "")
                else:
                    own[staff].add(lyric.get("number") or "1")
    return ours, own, texts


def _mei_lines(path: Path) -> tuple[Lines, dict[str, set[str]], list[str]]:
    root = etree.parse(str(path)).getroot()
    ours: Lines = defaultdict(lambda: defaultdict(set))
    own: dict[str, set[str]] = defaultdict(set)
    texts = []
    for staff in root.iter(f"{MEI}staff"):
        for layer in staff.iter(f"{MEI}layer"):
            for verse in layer.iter(f"{MEI}verse"):
                if verse.get("type") == "serialkit":
                    ours[staff.get("n") or ""][layer.get("n") or "1"].add(verse.get("n") or "1")
                    texts.append("".join(verse.itertext()).strip())
                else:
                    own[staff.get("n") or ""].add(verse.get("n") or "1")
    return ours, own, texts


def _assert_own_lines(lines: Lines, own: dict[str, set[str]]) -> None:
    two = [staff for staff, voices in lines.items() if len(voices) > 1]
    assert two, "the fixture has a staff with two labelled voices"
    for staff, voices in lines.items():
        seen: set[str] = set()
        for numbers in voices.values():
            assert not numbers & seen, (staff, dict(voices))  # no line shared by two voices
            seen |= numbers
        assert not seen & own.get(staff, set()), (staff, own[staff])  # the score's own lyrics keep theirs


def _labels(path: Path) -> dict[str, Annotation]:
    piece = read_score(path)
    return {e.id: Annotation(f"P{i % 12}:{i % 12}") for i, e in enumerate(piece.events)}


@pytest.mark.parametrize("source_suffix, out_suffix", [
    (".musicxml", ".musicxml"), (".musicxml", ".mei"), (".mei", ".mei"), (".mei", ".musicxml"),
])
def test_each_voice_of_a_staff_has_its_own_lyric_lines(tmp_path: Path, source_suffix: str, out_suffix: str) -> None:
    src = HORN
    if source_suffix == ".mei":
        src = tmp_path / "source.mei"
        convert_score(HORN, src)
    labels = _labels(src)
    out = write_annotated_score(src, labels, tmp_path / f"labelled{out_suffix}", "lyric")
    lines, own, texts = (_mei_lines if out_suffix == ".mei" else _musicxml_lines)(out)
    _assert_own_lines(lines, own)
    assert sorted(texts) == sorted(a.label or "" for a in labels.values())
    if source_suffix == out_suffix == ".musicxml":
        assert own and all(numbers == {"1"} for numbers in own.values())  # the user's lyrics, as they were


def test_cli_annotate_lyric_labels_the_two_voices_apart(tmp_path: Path) -> None:
    out = tmp_path / "l.musicxml"
    result = CliRunner().invoke(cli, ["annotate", str(HORN), "--labels", "lyric", "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines, own, texts = _musicxml_lines(out)
    _assert_own_lines(lines, own)
    assert len(texts) == len(read_score(HORN).events)


_SPOT = st.tuples(st.sampled_from("ab"), st.sampled_from(["1", "2", "3", "5", "10"]), st.integers(0, 3))


@settings(max_examples=200, deadline=None)
@given(st.lists(_SPOT, max_size=30), st.dictionaries(st.sampled_from("ab"), st.sets(st.integers(1, 8))))
def test_lyric_lines_part_voices_and_keep_taken_numbers(spots: list[tuple[str, str, int]],
                                                         taken: dict[str, set[int]]) -> None:
    lines = lyric_lines(spots, taken)
    assert set(spots) <= set(lines)  # (and the lines of lower chord indices, kept for them)
    for (staff, voice, k), number in lines.items():
        assert number >= 1 and number not in taken.get(staff, set())
        for (staff2, voice2, k2), number2 in lines.items():
            if staff2 != staff:
                continue
            if (voice2, k2) != (voice, k):
                assert number2 != number  # one line per voice and chord index on a staff
            if voice2 == voice and k2 > k:
                assert number2 > number  # a chord's k-th note below its first
            if int(voice2) > int(voice):
                assert number2 > number  # voice 1's lines first


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_musescore_keeps_the_voices_labels_on_separate_lines(tmp_path: Path) -> None:
    exe = require_program("mscore3")
    labelled = write_annotated_score(HORN, _labels(HORN), tmp_path / "l.musicxml", "lyric")
    exported = tmp_path / "exported.musicxml"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, "-o", str(exported), str(labelled)], env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and exported.is_file(), proc.stderr[-2000:]
    # MuseScore writes every lyric back with the line it put it on (number = line + 1) and drops
    # our name, so labels are told from the score's own lyrics by their text
    root = etree.parse(str(exported)).getroot()
    per_voice: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    own: dict[tuple[str, str], set[str]] = defaultdict(set)
    texts = []
    for part in root.iter("part"):
        for note in part.iter("note"):
            for lyric in note.iterfind("lyric"):
                text = lyric.findtext("text") or ""
                staff = (part.get("id") or "", note.findtext("staff") or "1")
                if text.startswith("P"):
                    per_voice[(*staff, note.findtext("voice") or "1")].add(lyric.get("number") or "1")
                    texts.append(text)
                else:
                    own[staff].add(lyric.get("number") or "1")
    assert sorted(texts) == sorted(a.label or "" for a in _labels(HORN).values())
    piano = sorted(k for k in per_voice if k[1] == "1" and len([v for v in per_voice if v[:2] == k[:2]]) > 1)
    assert len(piano) == 2
    assert not per_voice[piano[0]] & per_voice[piano[1]]  # voice 1 and voice 2 on lines of their own
    for staff, numbers in own.items():
        assert not numbers & set().union(*(n for k, n in per_voice.items() if k[:2] == staff))
