"""More ways in: MuseScore (.mscz/.mscx), Humdrum **kern and ABC, and scores given as bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.core.errors import ScoreReadError
from serialkit.io import read_score, read_score_bytes, score_format, sniff_format, spooled_score
from serialkit.io.musicxml.write import musicxml_bytes
from tests.conftest import require_program

OP21 = [9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3]  # the row of Webern Op. 21 (A F# G G# E F B Bb D C# C Eb)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("features.musicxml", "musicxml"),
        ("features.mxl", "musicxml"),
        ("features.mei", "mei"),
        ("features.mscz", "musescore"),
        ("row-line.krn", "kern"),
        ("row-line.abc", "abc"),
    ],
)
def test_sniff_format_names_the_reader_by_content(fixtures: Path, name: str, fmt: str) -> None:
    path = fixtures / "scores" / name
    assert sniff_format(path.read_bytes()) == fmt
    assert score_format(path) == fmt


def test_sniff_format_knows_json_and_midi(fixtures: Path, tmp_path: Path) -> None:
    from serialkit.io import write_midi

    assert sniff_format((fixtures / "pieces" / "demo-piece.json").read_bytes()) == "json"
    piece = read_score(fixtures / "scores" / "features.musicxml")
    write_midi(piece, tmp_path / "x.mid")
    assert sniff_format((tmp_path / "x.mid").read_bytes()) == "midi"


@pytest.mark.parametrize("data", [b"hello world", b"<html><body/></html>", b"\x00\x01\x02\x03"])
def test_unknown_bytes_are_one_clear_error(data: bytes) -> None:
    with pytest.raises(ScoreReadError, match=r"^-:1: not a MusicXML, MEI, .* file \((binary content|text, not XML|its root element is <html>)\)$"):
        sniff_format(data)
    with pytest.raises(ScoreReadError, match=r"^stdin:1: not a MusicXML, MEI, .* file \("):
        read_score_bytes(data, name="stdin")


def test_empty_input_is_refused() -> None:
    with pytest.raises(ScoreReadError, match=r"^-: empty input$"):
        read_score_bytes(b"  \n")


@pytest.mark.parametrize("name", ["row-line.krn", "row-line.abc"])
def test_kern_and_abc_read_through_music21(fixtures: Path, name: str) -> None:
    piece = read_score(fixtures / "scores" / name)
    assert [e.midi % 12 for e in piece.events] == OP21
    assert piece.metadata["format"] == score_format(fixtures / "scores" / name)
    assert all(e.duration == 1 for e in piece.events)


def test_scores_read_from_bytes_equal_scores_read_from_files(fixtures: Path) -> None:
    for name in ("features.musicxml", "features.mxl", "features.mei", "row-line.krn", "row-line.abc"):
        path = fixtures / "scores" / name
        from_file = read_score(path)
        from_bytes = read_score_bytes(path.read_bytes())
        assert [(e.onset, e.duration, e.midi) for e in from_bytes.events] == [
            (e.onset, e.duration, e.midi) for e in from_file.events
        ], name
        assert from_bytes.metadata["source_path"] == "-"


def test_errors_from_bytes_name_the_stream_not_a_temporary_file(fixtures: Path) -> None:
    data = (fixtures / "scores" / "features.musicxml").read_bytes().replace(b"</score-partwise>", b"")
    with pytest.raises(ScoreReadError) as info:
        read_score_bytes(data, name="-")
    message = str(info.value)
    assert message.startswith("-:") and "stdin" not in message and "/tmp" not in message


def test_spooled_score_is_removed_afterwards(fixtures: Path) -> None:
    data = (fixtures / "scores" / "features.mei").read_bytes()
    with spooled_score(data) as path:
        assert path.suffix == ".mei" and path.read_bytes() == data
    assert not path.exists()


def test_malformed_abc_is_a_read_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.abc"
    bad.write_text("X:1\nK:C\nzzz(((\n")
    with pytest.raises(ScoreReadError, match=r"bad\.abc: music21 could not read it as ABC"):
        read_score(bad)


def test_musescore_files_read_natively(fixtures: Path, tmp_path: Path) -> None:
    reference = read_score(fixtures / "scores" / "features.musicxml")
    mscz = read_score(fixtures / "scores" / "features.mscz")
    assert mscz.metadata["format"] == "musescore"
    # the fixture is MuseScore 3's own save of features.musicxml; the native reader finds every
    # note at its onset and pitch (MuseScore 3.2.3's own export of it drops the bass D3 on beat 4)
    ours = {(e.onset, e.midi) for e in mscz.events}
    assert ours == {(e.onset, e.midi) for e in reference.events}
    assert len(mscz.events) == len(reference.events) == 25
    from_bytes = read_score_bytes((fixtures / "scores" / "features.mscz").read_bytes())
    assert len(from_bytes.events) == len(mscz.events)


def test_musescore_files_read_without_musescore(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from serialkit.io.mscore import program

    monkeypatch.setattr(program, "MUSESCORE_PROGRAMS", ())
    monkeypatch.delenv("SERIALKIT_MUSESCORE", raising=False)
    copy = tmp_path / "copy.mscz"
    copy.write_bytes((fixtures / "scores" / "features.mscz").read_bytes())
    assert len(read_score(copy).events) == 25


def test_a_broken_musescore_file_is_a_read_error(tmp_path: Path) -> None:
    require_program("mscore3")
    bad = tmp_path / "bad.mscx"
    bad.write_text('<?xml version="1.0"?><museScore version="3.02"><Score><Staff id="1">')
    with pytest.raises(ScoreReadError, match=r"bad\.mscx: "):
        read_score(bad)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_sniffing_our_own_output_finds_its_format(data: st.DataObject) -> None:
    from serialkit.io.jsonio import dumps_piece
    from serialkit.io.mei.write import build_mei
    from tests.strategies import notated_pieces

    piece = data.draw(notated_pieces())
    assert sniff_format(musicxml_bytes(piece)) == "musicxml"
    assert sniff_format(dumps_piece(piece).encode()) == "json"
    from lxml import etree

    assert sniff_format(etree.tostring(build_mei(piece), xml_declaration=True, encoding="UTF-8")) == "mei"
