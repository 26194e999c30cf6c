"""A sweep of single wrong notes: every note of a correct exercise, altered every common way.

An adversary for ``serialkit repair`` (issue 15): where ``tests/planted.py`` draws a few errors per
piece, a sweep alters *every* note of a short correct exercise, one copy per note and per kind of
error, so that no position (a statement's first or last note, a note beside a statement
boundary) goes untried. The correct exercises are built in code from a seed: a row (named rows of
the repertoire and random rows), four statements of forms drawn by the seed, written as a
classroom exercise is — one line in a fixed octave window, or a duo of two simultaneous lines in
different registers — in quarters or in a drawn rhythm. ``piece(seed)`` is the exercise,
``exercises(seed)`` its altered copies. Used by ``bench/bench_repair_sweep.py`` and
``tests/repair/test_sweep.py``.

Kinds (``KINDS``): ``up1``/``dn1`` (an accidental added or dropped: a semitone), ``up3``/``dn4`` (a
note a line off: a third), ``step`` (the neighbouring staff position: a whole tone, up or down by
the seed), ``swap`` (the note and the next one of its voice written in each other's place), and
``prev``/``next`` (the note written at its voice's previous or next note's pitch: a copying slip).
An alteration that leaves the pitch class as it was is skipped.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import ALL_FORMS, Row, RowForm

KINDS = ("up1", "dn1", "up3", "dn4", "step", "swap", "prev", "next")

NAMED_ROWS = (
    "C B G Ab Eb Db D Bb F# F E A",  # the outside tester's exercise row (planted.EXERCISE_ROW)
    "A F# G G# E F B Bb D C# C Eb",  # Webern, Symphony Op. 21
    "Eb B Bb D C# C F# E G F A Ab",  # Webern, Variations Op. 27
    "G Bb D F# A C E G# B C# Eb F",  # Berg, Violin Concerto
    "E F G Db Gb Eb Ab D B C A Bb",  # Schoenberg, Suite Op. 25
)

TESTER = 0
"""The seed of the outside tester's exercise: P0 I5 R3 RI7 of the first named row, one flute line
in quarters, every note in the octave from middle C."""


@dataclass
class Exercise:
    """One altered copy of a correct exercise, with the truth."""

    name: str
    kind: str
    piece: Piece
    row: Row
    original: dict[str, int] = field(default_factory=dict)
    """Changed event id → its original (correct) MIDI pitch."""


def piece(seed: int) -> tuple[Piece, Row, str]:
    """The correct exercise of ``seed``: the piece, its row, and a one-line description."""
    if seed == TESTER:
        row = Row.parse(NAMED_ROWS[0])
        forms = [RowForm.parse(f) for f in ("P0", "I5", "R3", "RI7")]
        lines = [(Voice("fl", "Flute", 55, 96), 60, forms, [Fraction(1)] * 48)]
        return _build(row, lines), row, "tester: P0 I5 R3 RI7, flute, quarters"
    rng = random.Random(seed)
    if rng.random() < 0.6:
        row = Row.parse(rng.choice(NAMED_ROWS))
    else:
        pcs = list(range(12))
        rng.shuffle(pcs)
        row = Row.parse(pcs)
    forms = rng.sample(ALL_FORMS, 4)
    rhythm = rng.choice(("quarters", "drawn"))

    def durations(n: int) -> list[Fraction]:
        if rhythm == "quarters":
            return [Fraction(1)] * n
        return [rng.choice((Fraction(1, 2), Fraction(1), Fraction(1), Fraction(3, 2), Fraction(2))) for _ in range(n)]

    if rng.random() < 0.65:
        lo = rng.randrange(55, 68)
        lines = [(Voice("v1", "Flute", lo - 5, lo + 20), lo, forms, durations(48))]
        what = "line"
    else:
        hi_lo, low_lo = rng.randrange(62, 70), rng.randrange(40, 50)
        lines = [(Voice("v1", "Flute", hi_lo - 5, hi_lo + 20), hi_lo, forms[:2], durations(24)),
                 (Voice("v2", "Violoncello", low_lo - 5, low_lo + 20), low_lo, forms[2:], durations(24))]
        what = "duo"
    labels = " ".join(f.label for f in forms)
    return _build(row, lines), row, f"seed {seed}: {labels} of {row.names()}, {what}, {rhythm}"


def _build(row: Row, lines: list[tuple[Voice, int, list[RowForm], list[Fraction]]]) -> Piece:
    """Each line's statements one after another from time 0, every pitch class in the octave
    window from the line's lowest note, each note lasting until the next."""
    events: list[Event] = []
    for voice, lo, forms, lengths in lines:
        onset = Fraction(0)
        pcs = [pc for f in forms for pc in row.form(f)]
        for pc, length in zip(pcs, lengths, strict=True):
            events.append(Event(f"{voice.id}n{len(events)}", voice.id, onset, length, lo + (pc - lo) % 12))
            onset += length
    return Piece(tuple(events), voices=tuple(v for v, *_ in lines))


def exercises(seed: int, kinds: tuple[str, ...] = KINDS) -> Iterator[Exercise]:
    """Every note of ``piece(seed)`` altered each way of ``kinds`` (one copy per note and kind)."""
    base, row, _what = piece(seed)
    rng = random.Random(seed * 7919 + 1)
    by_voice = base.by_voice()
    for voice in by_voice.values():
        line = sorted(voice, key=lambda e: e.onset)
        for i, e in enumerate(line):
            step = rng.choice((2, -2))
            nxt = line[i + 1] if i + 1 < len(line) else None
            prv = line[i - 1] if i else None
            for kind in kinds:
                midis: dict[str, int] = {}
                if kind == "swap":
                    if nxt is not None:
                        midis = {e.id: nxt.midi, nxt.id: e.midi}
                elif kind in ("prev", "next"):
                    other = prv if kind == "prev" else nxt
                    if other is not None:
                        midis = {e.id: other.midi}
                else:
                    shift = {"up1": 1, "dn1": -1, "up3": 3, "dn4": -4, "step": step}[kind]
                    midis = {e.id: e.midi + shift}
                if not midis or any(m % 12 == ev.midi % 12 for ev in (e, nxt, prv) if ev is not None
                                    for eid, m in midis.items() if eid == ev.id):
                    continue
                original = {eid: next(x.midi for x in line if x.id == eid) for eid in midis}
                changed = base.with_events(x.copy(midi=midis[x.id]) if x.id in midis else x for x in base.events)
                yield Exercise(f"{seed}/{e.id}/{kind}", kind, changed, row, original)
