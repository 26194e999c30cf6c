"""The native MuseScore reader: the same events as the MusicXML of the same score."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from serialkit.core.errors import ScoreReadError
from serialkit.io.mscore.read import read_mscore
from serialkit.io.musicxml.read import read_musicxml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "musescore"


def _events(piece):  # type: ignore[no-untyped-def]
    return sorted(
        (e.onset, e.duration, e.midi, e.grace, len(e.tied_ids), e.source.alter, e.source.transposition)
        for e in piece.events
    )


def test_musescore3_file_matches_its_musicxml_export() -> None:
    # both written by MuseScore 3.2.3 from three-voices.musicxml
    native = read_mscore(FIX / "three-voices-ms3.mscx")
    exported = read_musicxml(FIX / "three-voices-ms3.musicxml")
    assert len(native.events) == 36
    assert _events(native) == _events(exported)
    assert native.metadata["musescore_version"] == "3.01"


def test_musescore4_file_matches_hand_written_musicxml() -> None:
    native = read_mscore(FIX / "clarinet-ms4.mscx")
    exported = read_musicxml(FIX / "clarinet-ms4.musicxml")
    assert _events(native) == _events(exported)
    assert native.metadata["musescore_version"] == "4.20"
    first = native.events[0]
    assert first.midi == 70 and first.source.transposition == -2  # concert Bb4, written C5
    assert any(e.grace for e in native.events)
    assert any(len(e.tied_ids) == 2 for e in native.events)
    assert [e.onset for e in native.events if e.midi == 65] == [4, 7]  # bar 3 repeats bar 2


def test_mscz_zip_reads_like_its_mscx(tmp_path: Path) -> None:
    mscz = tmp_path / "clarinet.mscz"
    with zipfile.ZipFile(mscz, "w") as zf:
        zf.writestr("META-INF/container.xml", "<container/>")
        zf.write(FIX / "clarinet-ms4.mscx", "clarinet.mscx")
    assert _events(read_mscore(mscz)) == _events(read_mscore(FIX / "clarinet-ms4.mscx"))


def test_old_format_and_damage_are_refused_naming_the_file(tmp_path: Path) -> None:
    old = tmp_path / "old.mscx"
    old.write_text('<museScore version="2.06"><Score/></museScore>')
    with pytest.raises(ScoreReadError, match=r"old\.mscx.*2\.06"):
        read_mscore(old)
    bad = tmp_path / "bad.mscx"
    text = (FIX / "clarinet-ms4.mscx").read_text().replace("<pitch>70</pitch>", "<pitch>x</pitch>", 1)
    bad.write_text(text)
    with pytest.raises(ScoreReadError, match=r"bad\.mscx: staff 1, measure 1: pitch 'x'"):
        read_mscore(bad)


LIEDER = os.environ.get("SERIALKIT_LIEDER")


@pytest.mark.skipif(not LIEDER, reason="set SERIALKIT_LIEDER to a checkout of OpenScore/Lieder")
def test_openscore_lieder_files_read() -> None:
    files = sorted(Path(str(LIEDER)).rglob("*.mscx"))[:20]
    assert files
    for f in files:
        assert read_mscore(f).events


def _voices(piece):  # type: ignore[no-untyped-def]
    by_voice: dict[str, list[tuple[object, object, int]]] = {}
    for e in piece.events:
        by_voice.setdefault(e.voice, []).append((e.onset, e.duration, e.midi))
    return sorted(by_voice.values())


def test_each_voice_holds_the_same_notes_in_the_same_order_as_the_export(tmp_path: Path) -> None:
    from serialkit.io import read_score

    mscz = tmp_path / "three-voices.mscz"
    with zipfile.ZipFile(mscz, "w") as zf:
        zf.write(FIX / "three-voices-ms3.mscx", "three-voices.mscx")
    exported = _voices(read_musicxml(FIX / "three-voices-ms3.musicxml"))
    assert len(exported) == 3
    for src in (FIX / "three-voices-ms3.mscx", mscz):
        piece = read_score(src)  # dispatched to the native reader
        assert piece.metadata["format"] == "musescore"
        assert piece.metadata["musescore_version"] == "3.01"
        assert _voices(piece) == exported


def test_not_well_formed_xml_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "cut.mscx"
    lines = (FIX / "clarinet-ms4.mscx").read_text().splitlines()
    bad.write_text("\n".join(lines[: len(lines) // 2]))
    with pytest.raises(ScoreReadError, match=r"cut\.mscx: not well-formed.*line \d+"):
        read_mscore(bad)
