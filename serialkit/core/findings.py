"""Findings about the shape of the statements an analysis reads (a score checked without a task):
notes no statement explains, a row read only in fragments, holes, a statement's edge position
sounded twice where it stops short, scraps of a row form, statements cut short at an end.

Each function takes the inferred reading's columns (for locations) and the analysis, and returns
``Violation`` records; ``check.report.check_piece`` decides which apply under a profile."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias

from serialkit.core.notenames import NoteNames
from serialkit.core.predicates import Columns, Violation
from serialkit.core.rows import pc_name, position_label

if TYPE_CHECKING:
    from serialkit.core.analysis import Analysis
    from serialkit.core.analysis.model import Statement

__all__ = ["borrowed_out_of_time", "cut_short", "edge_repeats", "exchanged", "fragments", "holes", "open_ends", "scraps",
           "stops_short", "unexplained"]


def unexplained(cols: Columns, ids: Iterable[str]) -> list[Violation]:
    """A ROW violation per note no inferred statement explains (``cols``: the inferred reading)."""
    wanted = set(ids)
    if not wanted:
        return []
    names = NoteNames(cols.piece)
    return [
        Violation(
            "ROW",
            (cols.ids[i],),
            f"{names.shown(cols.ids[i])} is unexplained: no statement of the row accounts for it",
            cols.where(i),
        )
        for i in cols.order
        if cols.ids[i] in wanted
    ]


def fragments(cols: Columns, analysis: Analysis) -> list[Violation]:
    """One ROW violation when the row is read only in fragments: under half the explained notes
    lie in complete statements (the bar ``identify`` sets before it names a row). Notes that
    merely belong to some form at some position are not a statement of the row: a hexachord
    played four times, or a line woven from two half statements, is not twelve-tone writing."""
    from serialkit.core.analysis.identify import MIN_COMPLETE

    share = analysis.complete_share
    if not analysis.statements or share >= MIN_COMPLETE:
        return []
    partial = [s for s in analysis.statements if not s.complete]
    ids = {e for s in partial for e in s.members}
    first = next(i for i in cols.order if cols.ids[i] in ids)
    return [Violation(
        "ROW", tuple(cols.ids[i] for i in cols.order if cols.ids[i] in ids),
        f"the row is stated only in fragments: {float(share):.0%} of the explained notes lie in complete "
        f"statements ({len(partial)} of {len(analysis.statements)} statements incomplete; at least "
        f"{float(MIN_COMPLETE):.0%} needed)", cols.where(first))]


def holes(cols: Columns, analysis: Analysis) -> tuple[list[Violation], set[str]]:
    """ROW: a statement that lacks an order position between two it states (a score without a
    task). The note there is missing or wrong — the place an engraving error or a wrong note
    leaves; a statement cut off at either end is not a hole.

    When an unexplained note sounds in the hole (in one of the statement's voices, between its
    neighbours in time) it is most likely the wrong note: one finding names it and the position it
    likely stands for (one error, one finding). Otherwise the finding names the hole's neighbours.
    Returns the findings and the unexplained notes they name (no separate finding for those)."""
    at = {cols.ids[i]: i for i in cols.order}
    loose_ids = set(analysis.unexplained)
    loose = [i for i in cols.order if cols.ids[i] in loose_ids]
    voices = {v: k for k, v in enumerate(cols.piece.voice_ids)}
    taken: set[str] = set()
    names = NoteNames(cols.piece)  # notes as the score writes them; a hole placed after the note before it
    out: list[Violation] = []
    for s in analysis.statements:
        found = s.positions()
        if not found:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        own = {voices[v] for v in s.voices if v in voices}
        for k in range(found[0] + 1, found[-1]):
            if s.event_ids[k] is not None:
                continue
            before = next(e for e in reversed(s.event_ids[:k]) if e is not None)
            after = next(e for e in s.event_ids[k + 1:] if e is not None)
            label = position_label(s.form, k)
            lo, hi = cols.start[at[before]], cols.start[at[after]]
            inside = [i for i in loose if lo <= cols.start[i] <= hi and cols.voice[i] in own
                      and cols.ids[i] not in taken]
            if inside:
                taken.update(cols.ids[i] for i in inside)
                what = " and ".join(names.shown(cols.ids[i]) for i in inside)
                out.append(Violation(
                    "ROW", tuple(cols.ids[i] for i in inside),
                    f"{what} {'is' if len(inside) == 1 else 'are'} unexplained where statement {s.id} "
                    f"({s.form.label}) wants position {k} ({pc_name(pcs[k])}, {label}) between its positions "
                    f"{k - 1} and {k + 1}: likely a wrong note for it", cols.where(inside[0])))
                continue
            out.append(Violation(
                "ROW", (before, after),
                f"statement {s.id} ({s.form.label}) lacks position {k} ({pc_name(pcs[k])}, {label}) between "
                f"its positions {k - 1} and {k + 1}: a note is missing or wrong there", names.after(before)))
    return out, taken


def edge_repeats(cols: Columns, analysis: Analysis) -> tuple[list[Violation], set[str]]:
    """ROW: a statement cut off at an end whose edge note sounds twice (``Analysis.edge_repeats``):
    likely a wrong note read as a repeat. Both notes are named; the suggestion decides which.

    The notes that stand beyond the repeat in its voice, unexplained, with the pitch classes of the
    positions after the missing one (before it, at the statement's start) are the rest of the
    statement, left unread once its line stopped: the finding names them as what it would go on
    with, and they get no finding of their own (one error, one finding). Returns the findings and
    those unexplained notes."""
    at = {cols.ids[i]: i for i in cols.order}
    loose = set(analysis.unexplained)
    lines = cols.piece.by_voice()
    place = {e.id: (v, k) for v, line in lines.items() for k, e in enumerate(line)}
    names = NoteNames(cols.piece)
    taken: set[str] = set()
    out: list[Violation] = []
    for r in analysis.edge_repeats(cols.piece):
        s = r.statement
        pcs = analysis.row.form(s.form, analysis.convention)
        pair = sorted((r.edge, r.repeat), key=lambda e: cols.start[at[e]])
        if r.of is not None:  # the neighbouring statement's edge note sounds twice
            o = r.of
            theirs = analysis.row.form(o.form, analysis.convention)
            starts = r.missing < s.own_positions()[0]  # the statement starts late (else it stops early)
            where = (f"starts at position {r.missing + 1}, right after" if starts
                     else f"stops at position {r.missing - 1}, right before")
            out.append(Violation(
                "ROW", tuple(pair),
                f"statement {s.id} ({s.form.label}) {where} statement {o.id} ({o.form.label}) sounds its "
                f"position {r.position} ({pc_name(theirs[r.position])}) twice: one of the two is likely "
                f"{s.id}'s position {r.missing} ({pc_name(pcs[r.missing])}) written wrong", cols.where(at[pair[-1]])))
            continue
        side = "after" if r.missing > r.position else "before"
        step = 1 if side == "after" else -1
        rest: list[str] = []
        if pair[-1 if step > 0 else 0] in place:
            voice, k = place[pair[-1 if step > 0 else 0]]
            line, want = lines[voice], r.missing + step
            while 0 <= k + step < len(line) and 0 <= want < 12:
                k += step
                u = line[k]
                if u.id not in loose or u.id in taken or u.pc != pcs[want]:
                    break
                rest.append(u.id)
                want += step
        taken.update(rest)
        then = ""
        if rest:
            shown = " and ".join(names.shown(e) for e in rest)
            held = ", ".join(str(r.missing + step * (j + 1)) for j in range(len(rest)))
            then = (f"; the unexplained {shown} {side} it {'is' if len(rest) == 1 else 'are'} its "
                    f"position{'s' if len(rest) > 1 else ''} {held}")
        out.append(Violation(
            "ROW", (*pair, *sorted(rest, key=lambda e: cols.start[at[e]])),
            f"statement {s.id} ({s.form.label}) sounds position {r.position} ({pc_name(pcs[r.position])}) twice "
            f"and stops without position {r.missing} ({pc_name(pcs[r.missing])}) {side} it: one of the two is "
            f"likely a wrong note{then}", cols.where(at[r.repeat])))
    return out, taken


def borrowed_out_of_time(cols: Columns, analysis: Analysis) -> list[Violation]:
    """ROW: a statement that borrows a position from another statement's note sounding out of its
    order (``Analysis.borrowed_out_of_time``): the position's own note never sounds, and the note
    written where it belongs is likely wrong. The borrowed note and the statement's notes
    sounding where the position belongs are named."""
    at = {cols.ids[i]: i for i in cols.order}
    out: list[Violation] = []
    for b in analysis.borrowed_out_of_time(cols.piece):
        s, k = b.statement, b.position
        pc = pc_name(analysis.row.form(s.form, analysis.convention)[k])
        out.append(Violation(
            "ROW", (b.note, *b.inside),
            f"statement {s.id} ({s.form.label}) borrows position {k} ({pc}) from a note sounding out of its "
            f"order: {pc} never sounds in its place — a note there is likely wrong",
            cols.where(at[b.inside[0]] if b.inside else at[b.note])))
    return out


def exchanged(cols: Columns, analysis: Analysis) -> list[Violation]:
    """ROW: two statements, each in one voice but for one note, that take each other's voice's note
    of one pitch class (``Analysis.exchanges``) — the first voice's statement the second voice's B,
    the second's the first voice's B. Read in their own voices one of them would be out of order:
    the analysis crossed the voices to cover a wrong note. Both borrowed notes are named."""
    at = {cols.ids[i]: i for i in cols.order}
    out: list[Violation] = []
    for a, b, x, y in analysis.exchanges(cols.piece):
        notes = sorted((x, y), key=lambda e: cols.start[at[e]])
        out.append(Violation(
            "ROW", tuple(notes),
            f"statements {a.id} ({a.form.label}) and {b.id} ({b.form.label}) each take the other voice's "
            f"{pc_name(cols.midi[at[x]] % 12)}: read in their own voices one of them is out of order — two "
            "notes of a voice are likely written in each other's place", cols.where(at[notes[0]])))
    return out


def scraps(cols: Columns, analysis: Analysis) -> list[Violation]:
    """ROW: an incomplete statement with fewer than ``SCRAP`` notes of its own
    (``Analysis.scraps``): it is not a statement of the row, and its own notes are named (and get
    suggestions)."""
    at = {cols.ids[i]: i for i in cols.order}
    out: list[Violation] = []
    for s, own in analysis.scraps():
        borrowed = sum(1 for e in s.event_ids if e is not None and e in s.elided)
        first = min(own, key=lambda e: cols.start[at[e]])
        out.append(Violation(
            "ROW", tuple(sorted(own, key=lambda e: cols.start[at[e]])),
            f"statement {s.id} ({s.form.label}) has only {len(own)} note{'s' if len(own) > 1 else ''} of its own"
            + (f" and {borrowed} borrowed" if borrowed else "")
            + ": a scrap of a row form, not a statement of the row", cols.where(at[first])))
    return out


OpenEnd: TypeAlias = "tuple[Statement, range, int, str, tuple[str, str] | None]"
"""One end a statement stops short at (``open_ends``)."""


def open_ends(cols: Columns, analysis: Analysis) -> list[OpenEnd]:
    """Every end a statement stops short at: (statement, the positions missing there, the position
    found next to them, its note, and the neighbouring note that shows the piece goes on there with
    that note's statement).

    The neighbour is set when the end is mid-piece: the statement's voice goes on at once with
    another statement (the note before its first note, or after its last, in that note's voice is
    another statement's), the piece has time there for the missing positions (the one rule
    ``core.suggest.trouble.edge_room``, which also decides the suggestions' holes) and not every
    missing pitch class sounds in the statement's voices within two of its steps per missing
    position (there another statement's reading, or an unexplained note, holds it). Else (None)
    the end is an excerpt's edge — the piece's first or last statement, or a voice that enters
    late or stops early. Ends ``edge_repeats`` reports are left out."""
    from serialkit.core.analysis.state import Sections
    from serialkit.core.suggest.trouble import edge_room, edge_step

    events = {e.id: e for e in cols.piece.events}
    if not events:
        return []
    sections = Sections(events.values())
    lines = cols.piece.by_voice()
    place = {e.id: (v, k) for v, line in lines.items() for k, e in enumerate(line)}
    flagged = {(r.statement.id, r.missing) for r in analysis.edge_repeats(cols.piece)}  # ROW names those ends
    out: list[OpenEnd] = []
    for s in analysis.statements:
        found = [k for k in s.positions() if s.event_ids[k] in events]
        if not found or s.complete:
            continue
        first, last = found[0], found[-1]
        a, b = events[s.event_ids[first] or ""], events[s.event_ids[last] or ""]
        room = (edge_room(first, a.onset, last, b.onset, *sections.span(a.onset, b.onset)) if len(found) > 1
                else (False, False))
        mine = set(s.members)
        pcs = analysis.row.form(s.form, analysis.convention)
        for missing, k, edge, step, has_room in ((range(last + 1, 12), last, b, 1, room[1]),
                                                 (range(0, first), first, a, -1, room[0])):
            if not missing or (s.id, k + step) in flagged:
                continue
            beside: tuple[str, str] | None = None
            if has_room and edge.id in place:
                voice, j = place[edge.id]
                line = lines[voice]
                j += step
                while 0 <= j < len(line) and (line[j].id in mine or line[j].onset == edge.onset):
                    j += step
                if 0 <= j < len(line):
                    tag = analysis.tags.get(line[j].id)
                    if tag is not None and tag.statement is not None and tag.statement != s.id:
                        beside = (line[j].id, tag.statement)
            if beside is not None:  # the missing pitch classes all sound there: another reading took them
                reach = 2 * edge_step(first, a.onset, last, b.onset) * len(missing)
                lo, hi = (edge.onset, edge.onset + reach) if step > 0 else (edge.onset - reach, edge.onset)
                there = {e.pc for e in events.values() if lo <= e.onset <= hi and e.voice in s.voices}
                if {pcs[m] for m in missing} <= there:
                    beside = None
            out.append((s, missing, k, edge.id, beside))
    return out


def stops_short(cols: Columns, analysis: Analysis, ends: list[OpenEnd] | None = None) -> list[Violation]:
    """ROW: a statement that stops short of position 11, or starts after position 0, mid-piece —
    its voice goes on at once with another statement and the piece has time there for the
    missing positions (``open_ends``). That is a missing (or wrong) note, like a hole, not an
    excerpt's edge. The statement's edge note and the other statement's note beside it are named.
    ``ends``: ``open_ends`` already read (``cut_short`` of the same check reads the same)."""
    names = NoteNames(cols.piece)
    out: list[Violation] = []
    for s, missing, k, eid, beside in open_ends(cols, analysis) if ends is None else ends:
        if beside is None:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        what = ", ".join(f"{m} ({pc_name(pcs[m])}, {position_label(s.form, m)})" for m in missing)
        plural = len(missing) > 1
        note, other = beside
        if k < missing[0]:
            text = (f"statement {s.id} ({s.form.label}) ends after position {k} though its voice goes on with "
                    f"statement {other}: position{'s' if plural else ''} {what} "
                    f"never sound{'' if plural else 's'} — a note is missing or wrong there")
            pair, where = (eid, note), names.after(eid)
        else:
            text = (f"statement {s.id} ({s.form.label}) starts at position {k} though its voice sounds "
                    f"statement {other} right before: position{'s' if plural else ''} "
                    f"{what} never sound{'' if plural else 's'} — a note is missing or wrong there")
            pair, where = (note, eid), names.after(note)
        out.append(Violation("ROW", pair, text, where))
    return out


def cut_short(cols: Columns, analysis: Analysis, mid_piece: bool = True,
              ends: list[OpenEnd] | None = None) -> list[Violation]:
    """COMPLETE: a statement that stops short of position 11 or starts after position 0 (a score
    without a task). The analysis profile reports it as an observation — an excerpt's edge or a
    composer's fragment cuts statements too — and the generation profile as a violation.
    ``mid_piece`` False: leave out the ends ``stops_short`` reports as ROW (a missing note).
    ``ends``: ``open_ends`` already read."""
    at = {cols.ids[i]: i for i in cols.order}
    out: list[Violation] = []
    for s, missing, k, eid, beside in open_ends(cols, analysis) if ends is None else ends:
        if beside is not None and not mid_piece:
            continue
        pcs = analysis.row.form(s.form, analysis.convention)
        verb = "ends after" if k < missing[0] else "starts at"
        names = ", ".join(f"{m} ({pc_name(pcs[m])})" for m in missing)
        out.append(Violation(
            "COMPLETE", (eid,),
            f"statement {s.id} ({s.form.label}) {verb} position {k}: "
            f"position{'s' if len(missing) > 1 else ''} {names} never sound{'s' if len(missing) == 1 else ''}",
            cols.where(at[eid])))
    return out
