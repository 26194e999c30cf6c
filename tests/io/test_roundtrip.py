"""Round trips: pieces written as MusicXML / MEI / MIDI and read back keep every event."""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from serialkit.core.piece import Event, Piece, Voice
from serialkit.io import from_music21, read_score, to_music21, write_mei, write_midi, write_musicxml
from serialkit.io.midi.write import track_names
from serialkit.io.musicxml.validate import musicxml_errors
from tests.strategies import notated_pieces

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _events(piece: Piece, voice_map: dict[str, str] | None = None) -> list[tuple]:
    vm = voice_map or {}
    return sorted(
        (e.id, vm.get(e.voice, e.voice), e.onset, e.duration, e.midi, e.grace) for e in piece.events
    )


def _voice_map(written: Piece, read: Piece) -> dict[str, str]:
    """Plain voice ids become parts named after them; ``part/staff/voice`` keys stay as they are."""
    if all(v.count("/") == 2 for v in written.voice_ids):
        return {}
    by_name = {v.name: v.id for v in read.voices}
    return {v: by_name[v] for v in written.voice_ids if v in by_name}


@SETTINGS
@given(piece=notated_pieces())
def test_musicxml_round_trip(piece: Piece, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = tmp_path_factory.mktemp("rt") / "piece.musicxml"
    write_musicxml(piece, out)
    back = read_score(out)
    assert _events(piece, _voice_map(piece, back)) == _events(back)
    assert back.time_signatures[0].numerator == piece.time_signatures[0].numerator
    assert back.pickup == piece.pickup


@SETTINGS
@given(piece=notated_pieces(max_voices=2, max_groups=5))
def test_mei_round_trip(piece: Piece, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = tmp_path_factory.mktemp("rt") / "piece.mei"
    write_mei(piece, out)
    back = read_score(out)
    order = {v: i for i, v in enumerate(piece.voice_ids)}
    back_order = {v: i for i, v in enumerate(back.voice_ids)}
    mine = sorted((e.id, order[e.voice], e.onset, e.duration, e.midi, e.grace) for e in piece.events)
    theirs = sorted((e.id, back_order[e.voice], e.onset, e.duration, e.midi, e.grace) for e in back.events)
    assert mine == theirs


def test_written_musicxml_validates_and_mxl_matches(fixtures: Path, tmp_path: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.mei")
    plain = write_musicxml(piece, tmp_path / "a.musicxml")
    packed = write_musicxml(piece, tmp_path / "a.mxl")
    assert musicxml_errors(plain) == []
    assert musicxml_errors(packed) == []
    a, b = read_score(plain), read_score(packed)
    assert _events(a) == _events(b)
    # staves are renumbered 1..n within each part; voices keep their order
    vmap = dict(zip(piece.voice_ids, a.voice_ids, strict=True))
    assert _events(piece, vmap) == _events(a)
    assert [v.split("/")[0] for v in a.voice_ids] == [v.split("/")[0] for v in piece.voice_ids]


def test_tuplets_ties_and_chords_are_notated(tmp_path: Path) -> None:
    events = [
        Event("a", "v1", Fraction(0), Fraction(1, 3), 60),
        Event("b", "v1", Fraction(1, 3), Fraction(1, 3), 62),
        Event("c", "v1", Fraction(2, 3), Fraction(1, 3), 64),
        Event("g", "v1", Fraction(1), Fraction(0), 70, grace=True),
        Event("d", "v1", Fraction(1), Fraction(5), 65),  # crosses the barline, tied
        Event("e", "v1", Fraction(1), Fraction(5), 69),  # chord with d
    ]
    piece = Piece(tuple(events), voices=(Voice("v1"),))
    out = write_musicxml(piece, tmp_path / "t.musicxml")
    text = out.read_text()
    assert text.count("<actual-notes>3</actual-notes>") == 3
    assert text.count('<tuplet type="start" bracket="yes"/>') == 1  # one bracket over the three
    assert text.count('<tuplet type="stop"/>') == 1
    assert text.count('<tie type="start"/>') == 2 and text.count('<tie type="stop"/>') == 2
    assert text.count("<chord/>") == 2 and text.count("<grace") == 1
    assert [b for b in ("begin", "continue", "end") if f'<beam number="1">{b}</beam>' in text] == [
        "begin", "continue", "end",
    ]  # the three triplet eighths share one beam
    back = read_score(out)
    assert back.event("d").tied_ids == ("d", next(i for i in back.event("d").tied_ids if i != "d"))
    assert back.event("d").duration == 5


def _parse_midi(data: bytes) -> tuple[int, list[tuple[int, int, int, int]]]:
    """(ticks per quarter, [(track, on tick, off tick, pitch)]) from a Standard MIDI File."""
    assert data[:4] == b"MThd"
    ntracks, tpq = struct.unpack(">HH", data[10:14])
    pos, notes = 14, []
    for track in range(ntracks):
        assert data[pos : pos + 4] == b"MTrk"
        (length,) = struct.unpack(">I", data[pos + 4 : pos + 8])
        body, pos, i, now, status = data[pos + 8 : pos + 8 + length], pos + 8 + length, 0, 0, 0
        pending: dict[int, list[int]] = {}
        while i < len(body):
            delta = 0
            while True:
                byte = body[i]
                i += 1
                delta = (delta << 7) | (byte & 0x7F)
                if byte < 0x80:
                    break
            now += delta
            if body[i] == 0xFF:
                meta_len = body[i + 2]
                i += 3 + meta_len
                continue
            status, key, vel = body[i], body[i + 1], body[i + 2]
            i += 3
            if status & 0xF0 == 0x90 and vel:
                pending.setdefault(key, []).append(now)
            else:
                notes.append((track, pending[key].pop(0), now, key))
    return tpq, notes


def test_midi_file_holds_every_note(fixtures: Path, tmp_path: Path) -> None:
    piece = read_score(fixtures / "scores" / "features.musicxml")
    out = write_midi(piece, tmp_path / "f.mid")
    tpq, notes = _parse_midi(out.read_bytes())
    assert len(notes) == len(piece.events)
    want = sorted(
        (round(e.onset * tpq), round(e.end * tpq), e.midi) for e in piece.events if not e.grace
    )
    got = sorted((on, off, key) for track, on, off, key in notes if (on, off, key) in set(want))
    assert got == want
    grace = [e for e in piece.events if e.grace]
    assert all(any(k == e.midi and off <= e.onset * tpq for _, _, off, k in notes) for e in grace)
    assert len({track for track, *_ in notes}) == len(piece.voices)


def test_music21_bridge(fixtures: Path) -> None:
    pytest.importorskip("music21")
    piece = read_score(fixtures / "scores" / "features.musicxml")
    stream = to_music21(piece)
    assert sum(len(n.pitches) for n in stream.recurse().notes) == sum(
        max(1, len(e.tied_ids)) for e in piece.events
    )
    back = from_music21(stream)
    assert sorted((e.onset, e.duration, e.midi, e.grace) for e in back.events) == sorted(
        (e.onset, e.duration, e.midi, e.grace) for e in piece.events
    )


@SETTINGS
@given(piece=notated_pieces(max_voices=3, max_groups=6))
def test_midi_round_trip(piece: Piece, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Without grace notes (which MIDI can only play, not mark) MIDI keeps every note exactly."""
    piece = piece.with_events(e for e in piece.events if not e.grace)
    if not piece.events:
        return
    out = tmp_path_factory.mktemp("rt") / "piece.mid"
    write_midi(piece, out)
    back = read_score(out)
    assert back.metadata["format"] == "midi"
    names = track_names(piece)  # a voice comes back under its track name: its part name, else its id
    assert set(names.values()) == set(back.voice_ids)
    mine = sorted((names[e.voice], e.onset, e.duration, e.midi) for e in piece.events)
    theirs = sorted((e.voice, e.onset, e.duration, e.midi) for e in back.events)
    assert mine == theirs
    assert [(t.numerator, t.denominator) for t in back.time_signatures][:1] == [
        (t.numerator, t.denominator) for t in piece.time_signatures
    ][:1]


def test_midi_tracks_are_named_after_the_parts(fixtures: Path, tmp_path: Path) -> None:
    """Track names are the part (instrument) names, not voice ids like P1/1/1 (outside tester, 1900)."""
    piece = read_score(fixtures / "render" / "duet.musicxml")
    assert [v.name for v in piece.voices] == ["Flute", "Cello"]
    back = read_score(write_midi(piece, tmp_path / "duet.mid"))
    assert back.voice_ids == ("Flute", "Cello")
    assert sorted((e.onset, e.midi) for e in back.events if e.voice == "Cello") == sorted(
        (e.onset, e.midi) for e in piece.events if e.voice == "P2/1/1" and not e.grace)
    twins = piece.copy(voices=tuple(Voice(v.id, "Piano") for v in piece.voices))
    assert track_names(twins) == {"P1/1/1": "Piano 1", "P2/1/1": "Piano 2"}


def test_midi_reader_refuses_damaged_files(fixtures: Path, tmp_path: Path) -> None:
    from serialkit.core.errors import ScoreReadError

    piece = read_score(fixtures / "scores" / "features.musicxml")
    data = write_midi(piece, tmp_path / "f.mid").read_bytes()
    bad = tmp_path / "cut.mid"
    bad.write_bytes(data[: len(data) - 30])
    with pytest.raises(ScoreReadError, match=r"cut\.mid: byte \d+"):
        read_score(bad)
