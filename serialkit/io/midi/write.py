"""A small standard-library MIDI writer (SMF type 1): one track per voice, for listening."""

from __future__ import annotations

import math
import os
import struct
from collections import Counter
from fractions import Fraction
from pathlib import Path

from serialkit.core.piece import Piece
from serialkit.io.files.atomic import atomic_path

GRACE = Fraction(1, 8)
"""How long a grace note sounds (quarter notes), taken from the time before its beat."""


def _varlen(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


def _ticks_per_quarter(piece: Piece) -> int:
    tpq = math.lcm(1, *(v.denominator for e in piece.events for v in (e.onset, e.duration)))
    tpq = math.lcm(tpq, GRACE.denominator)
    while tpq < 96:
        tpq *= 2
    return tpq if tpq <= 0x7FFF else 960


def midi_bytes(piece: Piece, tempo: float = 60.0, velocity: int = 80) -> bytes:
    """The Standard MIDI File for a Piece (tempo in quarter notes per minute)."""
    tpq = _ticks_per_quarter(piece)
    tracks = [_tempo_track(piece, tempo, tpq)]
    names = track_names(piece)
    for index, (voice, events) in enumerate(piece.by_voice().items()):
        channel = index % 15
        channel = channel + 1 if channel >= 9 else channel  # skip the drum channel
        messages: list[tuple[int, int, bytes]] = []
        name = names[voice].encode("utf-8")[:127]
        for e in events:
            onset, length = e.onset, e.duration
            if e.grace:
                onset, length = max(Fraction(0), onset - GRACE), min(GRACE, onset) or GRACE
            on = round(onset * tpq)
            off = max(on + 1, round((onset + length) * tpq))
            messages.append((on, 1, bytes([0x90 | channel, e.midi, velocity])))
            messages.append((off, 0, bytes([0x80 | channel, e.midi, 0])))
        messages.sort(key=lambda m: (m[0], m[1]))
        body = b"\x00\xff\x03" + _varlen(len(name)) + name
        now = 0
        for tick, _, data in messages:
            body += _varlen(tick - now) + data
            now = tick
        tracks.append(body + b"\x00\xff\x2f\x00")
    header = b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), tpq)
    return header + b"".join(b"MTrk" + struct.pack(">I", len(t)) + t for t in tracks)


def track_names(piece: Piece) -> dict[str, str]:
    """Each voice's track name: its part or instrument name (``Violin``), so that the names survive
    a round trip through MIDI; the voice id where it has none; ``Piano 1``, ``Piano 2`` where
    several voices share one name."""
    base = {v.id: v.name or v.id for v in piece.voices}
    shared = Counter(base.values())
    seen: Counter[str] = Counter()
    out = {}
    for voice_id, name in base.items():
        if shared[name] > 1:
            seen[name] += 1
            name = f"{name} {seen[name]}"
        out[voice_id] = name
    return out


def _tempo_track(piece: Piece, tempo: float, tpq: int) -> bytes:
    """Tempo and every time signature, each at the start of its bar."""
    micros = round(60_000_000 / tempo)
    body = b"\x00\xff\x51\x03" + micros.to_bytes(3, "big")
    bars = piece.bar_list()
    now = 0
    for ts in sorted(piece.time_signatures, key=lambda t: t.bar):
        if ts.denominator & (ts.denominator - 1):
            continue  # MIDI can only say powers of two
        onset = bars[ts.bar].onset if ts.bar < len(bars) else None
        if onset is None:
            continue
        tick = round(onset * tpq)
        body += _varlen(tick - now) + b"\xff\x58\x04"
        body += bytes([ts.numerator, ts.denominator.bit_length() - 1, 24, 8])
        now = tick
    return body + b"\x00\xff\x2f\x00"


def write_midi(piece: Piece, out_path: str | os.PathLike[str], tempo: float = 60.0) -> Path:
    """Write a Piece as a MIDI file, atomically."""
    out = Path(out_path)
    data = midi_bytes(piece, tempo)
    with atomic_path(out) as tmp:
        tmp.write_bytes(data)
    return out
