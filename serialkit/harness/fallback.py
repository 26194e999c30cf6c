"""Stand-ins used only while ``core.predicates`` / ``core.analysis`` are absent from the build."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, Piece, Tag
from serialkit.core.rows import Convention, Row


@dataclass(frozen=True)
class Rules:
    """The checker's options (same fields as ``core.predicates.Rules``)."""

    tolerance: Fraction = Fraction(0)
    immediate_repeats: bool = False
    oscillation_window: int = 0
    max_crossing_share: Fraction = Fraction(1, 10)


def _v(code: str, events: list[Event], message: str, piece: Piece) -> dict[str, Any]:
    return {"code": code, "event_ids": [e.id for e in events], "message": message,
            "location": piece.describe(events[0]) if events else None}


def gate(piece: Piece, rules: Rules) -> tuple[bool, bool, list[dict[str, Any]]]:
    """(strict, relaxed, violations) over ROW, ORDER, COLL, PC, RANGE, CROSS, SCHED."""
    out: list[dict[str, Any]] = []
    row = piece.row
    statements: dict[str, list[Event]] = defaultdict(list)
    for e in piece.events:
        if e.claimed_pc is not None and e.claimed_pc != e.pc:
            out.append(_v("PC", [e], f"claims pitch class {e.claimed_pc} but sounds {e.pc}", piece))
        voice = piece.voice(e.voice)
        if (voice.low is not None and e.midi < voice.low) or (voice.high is not None and e.midi > voice.high):
            out.append(_v("RANGE", [e], f"MIDI {e.midi} outside {voice.low}..{voice.high}", piece))
        if e.tag is None or row is None:
            continue
        if row.form(e.tag.form, piece.convention)[e.tag.position] != e.pc:
            out.append(_v("ROW", [e], f"pitch class {e.pc} is not {e.tag.label}", piece))
        statements[e.tag.statement or f"{e.voice}/{e.tag.form.label}"].append(e)
        if piece.blueprint is not None:
            section = e.section or piece.section_of(e.onset)
            if e.tag.form not in piece.blueprint.forms_for(section, e.voice):
                out.append(_v("SCHED", [e], f"{e.tag.form.label} is not scheduled for {e.voice} in {section}", piece))
    for events in statements.values():
        events.sort(key=lambda x: (x.onset, x.tag.position if x.tag else 0))
        seen: set[int] = set()
        last = -1
        for e in events:
            assert e.tag is not None
            repeat = rules.immediate_repeats and e.tag.position == last
            if (e.tag.position < last or e.pc in seen) and not repeat:
                out.append(_v("ORDER", [e], f"{e.tag.label} comes out of order", piece))
            seen.add(e.pc)
            last = max(last, e.tag.position)
    out += _collisions(piece, rules.tolerance)
    out += _crossings(piece, rules.max_crossing_share)
    strict = not out
    relaxed = all(v["code"] == "SCHED" for v in out)
    return strict, relaxed, out


def _collisions(piece: Piece, tolerance: Fraction) -> list[dict[str, Any]]:
    out = []
    by_pc: dict[int, list[Event]] = defaultdict(list)
    for e in piece.events:
        by_pc[e.pc].append(e)
    for events in by_pc.values():
        events.sort(key=lambda x: x.onset)
        active: list[Event] = []
        for e in events:
            active = [a for a in active if a.end > e.onset]
            for a in active:
                if a.voice != e.voice and min(a.end, e.end) - e.onset > tolerance:
                    out.append(_v("COLL", [a, e], f"{a.voice} and {e.voice} both sound pitch class {e.pc}", piece))
            active.append(e)
    return out


def _crossings(piece: Piece, share: Fraction) -> list[dict[str, Any]]:
    order = {v: i for i, v in enumerate(piece.voice_ids)}
    crossing: set[str] = set()
    events = sorted(piece.events, key=lambda x: x.onset)
    for i, a in enumerate(events):
        for b in events[i + 1:]:
            if b.onset >= a.end:
                break
            if a.voice == b.voice:
                continue
            hi, lo = (a, b) if order[a.voice] < order[b.voice] else (b, a)
            if hi.midi < lo.midi:
                crossing.update((a.id, b.id))
    if piece.events and Fraction(len(crossing), len(piece.events)) > share:
        ids = [e for e in piece.events if e.id in crossing]
        return [_v("CROSS", ids, f"{len(ids)} of {len(piece.events)} notes cross another voice", piece)]
    return []


def analyze(piece: Piece, row: Row, convention: Convention) -> tuple[dict[str, Tag | None], tuple[str, ...]]:
    """Tags by reading each voice in runs of twelve notes; a run that is no row form is unexplained."""
    tags: dict[str, Tag | None] = {}
    unexplained: list[str] = []
    for voice, events in piece.by_voice().items():
        for k in range(0, len(events), 12):
            chunk = events[k : k + 12]
            labels = row.label_of([e.pc for e in chunk], convention) if len(chunk) == 12 else []
            for pos, e in enumerate(chunk):
                if labels:
                    tags[e.id] = Tag(labels[0], pos, f"{voice}#{k // 12}")
                else:
                    tags[e.id] = None
                    unexplained.append(e.id)
    return tags, tuple(unexplained)
