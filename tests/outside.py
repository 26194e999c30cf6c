"""A second generator of correct twelve-tone music, written apart from ``tests/synth.py`` by an
engineer who had not read the analysis: the adversary ``bench/bench_outside.py`` counts against.

Streams state whole row forms (any of the 48) one after another, with rests between statements,
in instruments of their own ranges. Each group of a statement is a single note, a chord of two or
three successive positions, a re-struck note or a two-note tremolo of successive positions; a
group may move to another free instrument (a hand-off), a single note may be held 4–12 beats
while the other streams go on (``sustain``), and a stream finding its instrument busy takes
another. Every note knows its form and position; a statement's notes never go back in time and
no instrument plays two notes at once except a chord.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import Row, RowForm

PARTS = (("flute", 60, 93), ("clarinet", 52, 88), ("violin", 55, 93), ("viola", 48, 81),
         ("cello", 36, 72), ("horn", 41, 72))


@dataclass
class Texture:
    """The knobs of one texture: probabilities per group (``chord``, ``repeat``, ``tremolo``,
    ``handoff``), per single note (``sustain``), per statement end (``rest``)."""

    parts: int = 4
    streams: int = 2
    chord: float = 0.0
    repeat: float = 0.0
    tremolo: float = 0.0
    handoff: float = 0.0
    sustain: float = 0.0
    rest: float = 0.5
    durations: tuple[Fraction, ...] = tuple(Fraction(x) for x in ("1/2", "1/2", "1", "1", "3/2", "2"))


TEXTURES: dict[str, Texture] = {  # hardest first, as the first outside run found them
    "held": Texture(parts=5, streams=5, rest=0.3, sustain=0.03,
                    durations=tuple(Fraction(x) for x in ("1/4", "1/2", "1/2", "1"))),
    "chords_handoff": Texture(parts=4, streams=2, chord=0.2, repeat=0.1, handoff=0.2),
    "handoff": Texture(parts=4, streams=3, handoff=0.1),
    "one_instrument_each": Texture(parts=5, streams=5, rest=0.3,
                                   durations=tuple(Fraction(x) for x in ("1/4", "1/2", "1/2", "1"))),
}


@dataclass
class Outside:
    """A generated piece, its row, and each note's (form, position)."""

    piece: Piece
    row: Row
    truth: dict[str, tuple[RowForm, int]] = field(default_factory=dict)


def generate(texture: Texture, seed: int, notes: int) -> Outside:
    """About ``notes`` notes of ``texture`` (seeded): correct by construction (checked)."""
    rng = random.Random(seed)
    pcs = list(range(12))
    rng.shuffle(pcs)
    row = Row(tuple(pcs))
    forms = [RowForm(t, n) for t in ("P", "I", "R", "RI") for n in range(12)]
    parts = PARTS[:texture.parts]
    busy = [Fraction(0)] * len(parts)
    streams = [{"t": Fraction(rng.choice((0, 0, 1, 2))), "part": s % len(parts), "count": 0,
                "queue": []} for s in range(texture.streams)]
    events: list[Event] = []
    truth: dict[str, tuple[RowForm, int]] = {}
    by_statement: dict[str, list[Event]] = {}

    def new_statement(s: dict) -> None:  # type: ignore[type-arg]
        form = rng.choice(forms)
        groups: list[tuple[str, list[int]]] = []
        k = 0
        while k < 12:
            r = rng.random()
            if r < texture.chord and k < 11:
                n = rng.choice((2, 3)) if k < 10 else 2
                groups.append(("chord", list(range(k, k + n))))
                k += n
            elif r < texture.chord + texture.tremolo and k < 11:
                groups.append(("tremolo", [k, k + 1] * (rng.choice((1, 2, 3)) + 1)))
                k += 2
            else:
                groups.append(("single", [k]))
                if rng.random() < texture.repeat:
                    groups.append(("repeat", [k]))
                k += 1
        s["queue"] = [(form, g) for g in groups]
        s["count"] += 1

    def pitch(pc: int, part: int, previous: int | None = None) -> int:
        _name, low, high = parts[part]
        choices = [m for m in range(low, high + 1) if m % 12 == pc]
        return previous if previous in choices else rng.choice(choices)

    def add(part: int, onset: Fraction, duration: Fraction, midi: int, form: RowForm, pos: int, sid: str) -> None:
        e = Event(f"o{len(events)}", parts[part][0], onset, duration, midi)
        events.append(e)
        truth[e.id] = (form, pos)
        by_statement.setdefault(sid, []).append(e)

    while True:
        i = min(range(len(streams)), key=lambda j: streams[j]["t"])
        if len(events) >= notes:
            live = [j for j in range(len(streams)) if streams[j]["queue"]]
            if not live:
                break
            i = min(live, key=lambda j: streams[j]["t"])
        s = streams[i]
        if not s["queue"]:
            if s["count"] and rng.random() < texture.rest:
                s["t"] += rng.choice((Fraction(1), Fraction(2), Fraction(3)))
            new_statement(s)
            continue
        form, (kind, poss) = s["queue"].pop(0)
        pcs_of = row.form(form)
        t, part = s["t"], s["part"]
        if (kind != "repeat" and rng.random() < texture.handoff) or busy[part] > t:
            free = [p for p in range(len(parts)) if busy[p] <= t and p != part]
            if free:
                part = rng.choice(free)
            elif busy[part] > t:
                part = min(range(len(parts)), key=lambda p: busy[p])
                t = max(t, busy[part])
        s["part"] = part
        sid = f"{i}.{s['count']}"
        if kind == "chord":
            d = rng.choice(texture.durations)
            used: set[int] = set()
            for k in poss:
                m = pitch(pcs_of[k], part)
                while m in used:
                    m = pitch(pcs_of[k], part)
                used.add(m)
                add(part, t, d, m, form, k, sid)
            t += d
        elif kind == "tremolo":
            d = Fraction(1, 4)
            chosen: dict[int, int] = {}
            for k in poss:
                chosen.setdefault(k, pitch(pcs_of[k], part))
                add(part, t, d, chosen[k], form, k, sid)
                t += d
        else:
            d = rng.choice(texture.durations)
            if rng.random() < texture.sustain:
                d = Fraction(rng.choice((4, 6, 8, 12)))
            previous = by_statement[sid][-1].midi if kind == "repeat" else None
            add(part, t, d, pitch(pcs_of[poss[0]], part, previous), form, poss[0], sid)
            t += d
        busy[part] = t
        s["t"] = t
    for notes_of in by_statement.values():  # correct by construction: checked
        assert [e.onset for e in notes_of] == sorted(e.onset for e in notes_of)
    for e in events:
        form, pos = truth[e.id]
        assert row.form(form)[pos] == e.midi % 12
    voices = tuple(Voice(name, low=low, high=high) for name, low, high in parts)
    return Outside(Piece(tuple(events), voices=voices), row, truth)
