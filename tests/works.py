"""Whole works built from the real Webern excerpts (``../shared/corpus``): copies of Op. 21 bars 1–25
or Op. 27/II bars 1–11, each transposed, and by family inverted, reversed in time, at another
tempo, re-orchestrated, joined with no rest, or played in canon by a second orchestra. Every copy
is correct twelve-tone music, so the whole is: a copy may leave unexplained only the notes the
same copy leaves alone (Webern's own odd note in Op. 21). ``excess`` counts the others.

Used by ``bench/bench_works.py`` (every family, hardest first) and the tests that keep what it
found (``tests/check/test_whole_works.py``). The families were written apart from the analysis, to
test it, and are not tuned to it."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SOURCES = {"op21": ("webern-op21-i-mm1-25.mei", "webern-op21", Fraction(100), Fraction(4)),
           "op27": ("webern-op27-ii-mm1-11.mei", "webern-op27", Fraction(23), Fraction(2))}
"""Per excerpt: its file, its row, its length in quarters and its bar."""
FAMILIES = ("canon", "reorchestrated", "mixed", "tempo", "joined", "inverted", "retrograde", "transposed")
"""Hardest first, as the first outside test of whole works found them (Op. 21)."""


def available() -> bool:
    """Are the excerpts here (``../shared/corpus``)?"""
    return all((CORPUS / name).exists() for name, *_ in SOURCES.values())


@cache
def excerpt(which: str) -> tuple[Any, Any]:
    """The excerpt (a Piece) and its row."""
    from serialkit.core.catalog import get
    from serialkit.io import read_score

    name, row, _length, _bar = SOURCES[which]
    return read_score(CORPUS / name), get(row).row


@dataclass(frozen=True)
class Copy:
    """One copy: where it begins, its transposition, and how it is transformed."""

    offset: Fraction
    shift: int = 0
    inverted: bool = False
    reversed: bool = False
    scale: Fraction = Fraction(1)
    voices: Mapping[str, str] = field(default_factory=dict)
    """Voice renamed: a line handed whole to another instrument, or to the second orchestra."""

    def key(self) -> tuple[Any, ...]:
        """What the copy's reading alone depends on (not where it begins)."""
        return (self.shift % 12, self.inverted, self.reversed, self.scale, tuple(sorted(self.voices.items())))


def copy_events(which: str, k: int, c: Copy) -> list[Any]:
    """The events of copy ``k``: ids ``<id>-c<k>``; an inverted copy mirrors each pitch about twice
    the excerpt's median pitch (its register kept); a reversed copy's note sounds where the
    excerpt's mirrored in time would (a grace note at its principal's end)."""
    piece, _row = excerpt(which)
    length = SOURCES[which][2]
    pitches = sorted(e.midi for e in piece.events)
    axis = 2 * pitches[len(pitches) // 2]
    out = []
    for e in piece.events:
        on, end = e.onset, e.onset + e.duration
        if c.reversed:
            on, end = length - end, length - on
            if e.grace:
                on = end
        voice = c.voices.get(e.voice, e.voice)
        out.append(e.copy(id=f"{e.id}-c{k}", onset=c.offset + on * c.scale,
                          duration=e.duration if e.grace else (end - on) * c.scale,
                          midi=(axis - e.midi if c.inverted else e.midi) + c.shift, tag=None, voice=voice,
                          source=e.source if voice == e.voice else None,
                          tied_ids=tuple(f"{x}-c{k}" for x in e.tied_ids)))
    return out


def build(which: str, copies: Sequence[Copy]) -> Any:
    """The copies as one piece, with the second orchestra's voices (``Q`` + the voice's id) when a
    copy uses them."""
    from serialkit.core.events import Voice

    piece, _row = excerpt(which)
    events = [e for k, c in enumerate(copies) for e in copy_events(which, k, c)]
    voices = list(piece.voices)
    if any(v.startswith("Q") for c in copies for v in c.voices.values()):
        voices += [Voice(id="Q" + v.id, name=(v.name or v.id) + " II") for v in piece.voices]
    return piece.copy(events=tuple(events), voices=tuple(voices))


def family(which: str, name: str, count: int, seed: int) -> tuple[Any, list[Copy]]:
    """``count`` copies of the excerpt in family ``name``, drawn with ``seed``: each transposed at
    random; a rest between copies of none, 1-3 quarters or 2-5 bars, but none for ``joined``;
    ``inverted``, ``retrograde``: every copy so; ``tempo``: durations x1/2, 1 or 2; ``reorchestrated``:
    the lines handed to the instruments at random, copy by copy; ``mixed``: all of these at
    random; ``canon``: every other copy on a second orchestra, entering half-way through the copy
    before it."""
    rng = random.Random(seed)
    piece, _row = excerpt(which)
    length, bar = SOURCES[which][2], SOURCES[which][3]
    ids = [v.id for v in piece.voices]
    copies: list[Copy] = []
    at = Fraction(0)
    for k in range(count):
        shift = rng.randrange(12)
        inverted = name == "inverted" or name == "mixed" and rng.random() < 0.5
        reversed_ = name == "retrograde" or name == "mixed" and rng.random() < 0.5
        scale = rng.choice([Fraction(1, 2), Fraction(1), Fraction(2)]) if name in ("mixed", "tempo") else Fraction(1)
        voices: dict[str, str] = {}
        if name in ("mixed", "reorchestrated"):
            perm = ids[:]
            rng.shuffle(perm)
            voices = dict(zip(ids, perm, strict=True))
        if name == "canon" and k % 2:
            voices = {v: "Q" + v for v in ids}
        copies.append(Copy(at, shift, inverted, reversed_, scale, voices))
        if name == "canon":
            at += length * scale / 2
        elif name == "joined":
            at += length * scale
        else:
            at += length * scale + rng.choice([Fraction(0), Fraction(rng.randrange(1, 4)), bar * rng.randrange(2, 6)])
    return build(which, copies), copies


def excess(which: str, piece: Any, copies: Sequence[Copy], analysis: Any) -> dict[int, list[str]]:
    """Per copy, the notes left unexplained that the same copy alone explains (by the excerpt's
    ids)."""
    from serialkit.core.analysis import analyze

    _excerpt, row = excerpt(which)
    left: dict[int, set[str]] = {}
    for eid in analysis.unexplained:
        base, k = eid.rsplit("-c", 1)
        left.setdefault(int(k), set()).add(base)
    alone: dict[tuple[Any, ...], set[str]] = {}
    out = {}
    for k, c in enumerate(copies):
        if k not in left:
            continue
        if c.key() not in alone:
            single = build(which, [Copy(Fraction(0), c.shift, c.inverted, c.reversed, c.scale, c.voices)])
            alone[c.key()] = {u.rsplit("-c", 1)[0] for u in analyze(single.copy(voices=piece.voices), row).unexplained}
        extra = sorted(left[k] - alone[c.key()])
        if extra:
            out[k] = extra
    return out


def stitched(analysis: Any) -> list[str]:
    """Statements holding notes of two copies."""
    return [s.id for s in analysis.statements if len({i.rsplit("-c", 1)[1] for i in s.event_ids if i}) > 1]
