"""A small standard-library MIDI reader (SMF 0/1): exact onsets in quarter notes, one voice per track."""

from __future__ import annotations

import os
import struct
from collections import Counter
from fractions import Fraction
from pathlib import Path

from serialkit.core.errors import PieceError, ScoreReadError
from serialkit.core.piece import Event, Piece, TimeSignature, Voice
from serialkit.io.files.safety import read_bytes

# data bytes that follow each channel-message status (high nibble)
_DATA_BYTES = {0x80: 2, 0x90: 2, 0xA0: 2, 0xB0: 2, 0xC0: 1, 0xD0: 1, 0xE0: 2}


def is_midi(head: bytes) -> bool:
    """A Standard MIDI File."""
    return head[:4] == b"MThd"


class _Reader:
    """A cursor over the bytes of one track."""

    def __init__(self, data: bytes, start: int, end: int, where: str) -> None:
        self.data, self.pos, self.end, self.where = data, start, end, where

    def byte(self) -> int:
        if self.pos >= self.end:
            raise ScoreReadError(f"{self.where}: byte {self.pos}: track ends in the middle of an event")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varlen(self) -> int:
        value = 0
        for _ in range(4):
            b = self.byte()
            value = (value << 7) | (b & 0x7F)
            if b < 0x80:
                return value
        raise ScoreReadError(f"{self.where}: byte {self.pos}: variable-length number is too long")

    def take(self, n: int) -> bytes:
        if self.pos + n > self.end:
            raise ScoreReadError(f"{self.where}: byte {self.pos}: event data runs past the track")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def read_midi(path: str | os.PathLike[str], limit: int | None = None) -> Piece:
    """Read a MIDI file: each track (and channel) is a voice named after the track."""
    path = Path(path)
    where = str(path)
    data = read_bytes(path, limit)
    if len(data) < 14 or data[:4] != b"MThd":
        raise ScoreReadError(f"{where}: not a Standard MIDI File (no MThd header)")
    length, _fmt, ntracks, division = struct.unpack(">IHHH", data[4:14])
    if division & 0x8000:
        raise ScoreReadError(f"{where}: SMPTE time division is not supported (only ticks per quarter)")
    tpq = division or 1
    pos = 8 + length
    notes: list[tuple[int, int, int, int, int]] = []  # track, channel, on, off, key
    names: dict[int, str] = {}
    meters: list[tuple[int, int, int]] = []
    track = 0
    while track < ntracks and pos + 8 <= len(data):
        kind, size = data[pos : pos + 4], struct.unpack(">I", data[pos + 4 : pos + 8])[0]
        start, pos = pos + 8, pos + 8 + size
        if kind != b"MTrk":
            continue
        _track(_Reader(data, start, min(pos, len(data)), where), track, notes, names, meters)
        track += 1
    return _piece(path, notes, names, meters, tpq)


def _track(
    r: _Reader,
    track: int,
    notes: list[tuple[int, int, int, int, int]],
    names: dict[int, str],
    meters: list[tuple[int, int, int]],
) -> None:
    now, status = 0, 0
    pending: dict[tuple[int, int], list[int]] = {}
    while r.pos < r.end:
        now += r.varlen()
        first = r.byte()
        if first == 0xFF:
            kind, size = r.byte(), r.varlen()
            body = r.take(size)
            if kind == 0x03 and track not in names:
                names[track] = body.decode("utf-8", "replace").strip()
            elif kind == 0x58 and size >= 2:
                meters.append((now, body[0], 2 ** body[1]))
            elif kind == 0x2F:
                break
            continue
        if first in (0xF0, 0xF7):
            r.take(r.varlen())
            continue
        if first & 0x80:
            status = first
            args = [r.byte() for _ in range(_DATA_BYTES.get(status & 0xF0, 0))]
        else:  # running status: this byte is the first data byte
            if not status:
                raise ScoreReadError(f"{r.where}: byte {r.pos}: data byte without a status")
            args = [first] + [r.byte() for _ in range(_DATA_BYTES.get(status & 0xF0, 1) - 1)]
        kind, channel = status & 0xF0, status & 0x0F
        if kind == 0x90 and args[1] > 0:
            pending.setdefault((channel, args[0]), []).append(now)
        elif kind in (0x80, 0x90):
            ons = pending.get((channel, args[0]))
            if ons:
                notes.append((track, channel, ons.pop(0), now, args[0]))
    for (channel, key), ons in pending.items():  # notes never released end with the track
        notes.extend((track, channel, on, now, key) for on in ons)


def _piece(
    path: Path,
    notes: list[tuple[int, int, int, int, int]],
    names: dict[int, str],
    meters: list[tuple[int, int, int]],
    tpq: int,
) -> Piece:
    if not notes:
        raise ScoreReadError(f"{path}: the score contains no notes")
    channels = Counter((t, c) for t, c, *_ in {(t, c, 0, 0, 0) for t, c, *_ in notes})
    per_track = Counter(t for t, _c in channels)
    voice_of: dict[tuple[int, int], str] = {}
    taken: set[str] = set()
    for t, c in sorted(channels):
        name = names.get(t) or f"T{t + 1}"
        if per_track[t] > 1:
            name = f"{name}/ch{c + 1}"
        while name in taken:
            name += "'"
        taken.add(name)
        voice_of[(t, c)] = name
    events = []
    counts: Counter[tuple[int, int]] = Counter()
    for t, c, on, off, key in sorted(notes, key=lambda n: (n[2], n[0], n[1], n[4])):
        counts[(t, c)] += 1
        duration = Fraction(off - on, tpq)
        events.append(
            Event(f"T{t + 1}c{c + 1}-n{counts[(t, c)]}", voice_of[(t, c)], Fraction(on, tpq),
                  duration, key, grace=duration == 0)
        )
    try:
        return Piece(
            tuple(events),
            voices=tuple(Voice(v, v) for v in sorted(voice_of.values(), key=list(voice_of.values()).index)),
            time_signatures=_meters(meters, tpq),
            metadata={"source_path": str(path), "format": "midi"},
        )
    except PieceError as exc:
        raise ScoreReadError(f"{path}: {exc}") from None


def _meters(meters: list[tuple[int, int, int]], tpq: int) -> tuple[TimeSignature, ...]:
    """Time signatures by bar index (bars counted from tick 0 at each meter's length)."""
    out: list[TimeSignature] = []
    bar, last_tick = 0, 0
    for tick, num, den in sorted(set(meters)):
        if num <= 0 or den <= 0:
            continue
        if out:
            length = out[-1].bar_length * tpq
            bar += -(-(tick - last_tick) // int(length)) if length else 0
        if out and out[-1].bar == bar:
            out[-1] = TimeSignature(num, den, bar)
        else:
            out.append(TimeSignature(num, den, bar))
        last_tick = tick
    return tuple(out) or (TimeSignature(4, 4),)
