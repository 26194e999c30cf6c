"""A reference gate written naively from the rule text (README, "The gate"), for property tests.

No shared code with ``serialkit.check``: pairwise overlaps with exact fractions, a position walk per
statement, a per-voice grouping of claims into statements, counts of positions per statement.
It judges the claims; the gate also judges the inferred reading, which for the candidates the
tests build agrees with the claims wherever the claims are right.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from serialkit.core.piece import Event, Piece


def _section(piece: Piece, e: Event) -> str | None:
    if e.section is not None:
        return e.section
    for s in piece.sections:
        if s.start <= e.onset < s.end:
            return s.id
    return None


def _pcs(piece: Piece, form: Any) -> tuple[int, ...]:
    assert piece.row is not None
    return tuple(piece.row.form(form, piece.convention))


def _statements(piece: Piece) -> list[list[Event]]:
    """Per voice, in time order: a statement runs while the claimed form stays the same; a new one
    starts when the form changes, when position 0 follows a later position, or when any position
    below 10 follows position 11."""
    out: list[list[Event]] = []
    for voice in piece.voice_ids:
        notes = sorted((e for e in piece.events if e.voice == voice and e.tag is not None),
                       key=lambda e: e.onset)
        current: list[Event] = []
        for e in notes:
            assert e.tag is not None
            if current:
                last = current[-1].tag
                assert last is not None
                fresh = (last.form != e.tag.form or (e.tag.position == 0 and last.position > 0)
                         or (last.position == 11 and e.tag.position < 10))
                if fresh:
                    out.append(current)
                    current = []
            current.append(e)
        if current:
            out.append(current)
    return out


def reference_gate(piece: Piece, tolerance: Fraction = Fraction(0),
                   max_crossing: Fraction = Fraction(1, 10), length: Fraction | None = None,
                   grid: Fraction | None = None, min_duration: Fraction | None = None,
                   max_duration: Fraction | None = None) -> tuple[bool, bool, set[str]]:
    """(strict, relaxed, failed codes) of a candidate whose notes carry claimed tags; ``length``,
    ``grid``, ``min_duration``, ``max_duration``: the task's time limits (SPAN, GRID, DUR; every
    voice is monophonic: MONO)."""
    failed: set[str] = set()
    events = list(piece.events)
    # SPAN: inside the piece (0..length, else the last section's end) and inside the note's section
    end = length if length is not None else max((s.end for s in piece.sections), default=None)
    for e in events:
        if e.onset < 0 or (end is not None and e.onset + e.duration > end):
            failed.add("SPAN")
        for s in piece.sections:
            if s.id == _section(piece, e) and not (s.start <= e.onset and e.onset + e.duration <= s.end):
                failed.add("SPAN")
    # GRID: onset a whole number of grid steps; DUR: min_duration <= duration <= max_duration
    for e in events:
        if grid is not None and (e.onset / grid).denominator != 1:
            failed.add("GRID")
        if (min_duration is not None and e.duration < min_duration) or (
                max_duration is not None and e.duration > max_duration):
            failed.add("DUR")
    # MONO: no two notes of one voice sound together (touching is fine)
    for i, a in enumerate(events):
        for b in events[i + 1:]:
            if a.voice == b.voice and a.duration > 0 and b.duration > 0 and (
                    min(a.onset + a.duration, b.onset + b.duration) > max(a.onset, b.onset)):
                failed.add("MONO")
    if not events:
        failed.add("UNEXPLAINED")
    claims = any(e.tag is not None for e in events)
    if claims:
        for e in events:
            if e.tag is None:
                failed.add("ROW")
                continue
            want = _pcs(piece, e.tag.form)[e.tag.position]
            if want != e.midi % 12:
                failed.add("ROW")
            if e.claimed_pc is not None and (e.claimed_pc != e.midi % 12 or e.claimed_pc != want):
                failed.add("PC")
        statements = _statements(piece)
        for stmt in statements:  # ORDER: positions only advance, no pitch class twice
            top, heard = -1, set()
            for e in stmt:
                assert e.tag is not None
                if e.tag.position <= top or e.midi % 12 in heard:
                    failed.add("ORDER")
                top = max(top, e.tag.position)
                heard.add(e.midi % 12)
        assert piece.blueprint is not None
        # SCHED: the n-th statement a voice has in a section is the n-th the blueprint schedules there
        for stmt in statements:
            for e in stmt:
                sec = _section(piece, e)
                in_section = [s for s in statements
                              if s[0].voice == e.voice and any(_section(piece, x) == sec for x in s)]
                in_section.sort(key=lambda s: min(x.onset for x in s if _section(piece, x) == sec))
                n = next(k for k, s in enumerate(in_section) if s is stmt)
                forms = piece.blueprint.forms_for(sec, e.voice)
                assert e.tag is not None
                if n >= len(forms) or _pcs(piece, forms[n]) != _pcs(piece, e.tag.form):
                    failed.add("SCHED")
        # EXTRA: never more statements in a voice and section than the blueprint schedules there
        for sec in piece.sections:
            for voice in piece.voice_ids:
                there = [st for st in statements
                         if st[0].voice == voice and any(_section(piece, x) == sec.id for x in st)]
                if len(there) > len(piece.blueprint.forms_for(sec.id, voice)):
                    failed.add("EXTRA")
        # COMPLETE: every scheduled statement there with all twelve positions
        for sec in piece.sections:
            for voice in piece.voice_ids:
                forms = piece.blueprint.forms_for(sec.id, voice)
                mine = sorted((s for s in statements if s[0].voice == voice and _section(piece, s[0]) == sec.id),
                              key=lambda s: s[0].onset)
                for n in range(len(forms)):
                    if n >= len(mine) or {e.tag.position for e in mine[n] if e.tag} != set(range(12)):
                        failed.add("COMPLETE")
    # COLL: every pair of notes in different voices, same pitch class, overlapping beyond the tolerance
    for i, a in enumerate(events):
        for b in events[i + 1:]:
            if a.voice != b.voice and a.midi % 12 == b.midi % 12:
                if min(a.onset + a.duration, b.onset + b.duration) - max(a.onset, b.onset) > tolerance:
                    failed.add("COLL")
    # RANGE
    for e in events:
        v = piece.voice(e.voice)
        if (v.low is not None and e.midi < v.low) or (v.high is not None and e.midi > v.high):
            failed.add("RANGE")
    # CROSS: a note is crossed when, at its onset, a lower voice sounds higher or a higher voice lower
    order = {v: k for k, v in enumerate(piece.voice_ids)}
    sounding = [e for e in events if e.duration > 0]
    crossed = 0
    for e in sounding:
        for o in sounding:
            if o.voice == e.voice or not (o.onset <= e.onset < o.onset + o.duration):
                continue
            if (order[o.voice] > order[e.voice] and o.midi > e.midi) or (
                    order[o.voice] < order[e.voice] and o.midi < e.midi):
                crossed += 1
                break
    if sounding and Fraction(crossed, len(sounding)) > max_crossing:
        failed.add("CROSS")
    # SECTION: every voice the blueprint schedules in a section has notes there
    if piece.blueprint is not None:
        for sec in piece.sections:
            for voice in piece.voice_ids:
                if piece.blueprint.forms_for(sec.id, voice) and not any(
                        e.voice == voice and _section(piece, e) == sec.id for e in events):
                    failed.add("SECTION")
    strict = not failed
    relaxed = not (failed - {"SCHED", "COMPLETE"})
    return strict, relaxed, failed
