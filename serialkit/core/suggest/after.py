"""What the reading after a change says about it: helpers of ``engine.verify`` and its ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from serialkit.core.analysis.model import Analysis, Statement
from serialkit.core.piece import Event
from serialkit.core.suggest.trouble import _REACH


def _neighbours(after: Analysis, edits: Mapping[str, int]) -> bool:
    """The two notes a swap changes hold neighbouring positions of one statement after it (an
    exchange of notes far apart, or of two statements' notes, is no copying slip: Op. 21's Horn 2
    notes five bars apart were "swapped" to explain Webern's own unexplained D)."""
    tags = [t for t in (after.tags.get(e) for e in edits) if t is not None]
    if len(tags) != 2 or len(edits) != 2:
        return False
    a, b = tags
    return a.statement is not None and a.statement == b.statement and abs(a.position - b.position) == 1


def _rivals(verified: Mapping[str, Sequence[Any]], index: Mapping[str, int]) -> dict[str, float]:
    """Per note, the weight of better corrections of other notes nearby (within ``2 * _REACH``
    notes in time order): one wrong note leaves trouble that a change of several notes around it
    can ease, and only the best of them is the wrong note. A note whose best correction is beaten
    by another note's shares its confidence with it; the best keeps its own."""
    best = {n: max(c.weight for c in cs) for n, cs in verified.items() if cs}
    out: dict[str, float] = {}
    for n, w in best.items():
        mine = {e for c in verified[n] for e in c.edits}
        out[n] = sum(
            v for m, v in best.items()
            if v > w and m not in mine and abs(index[m] - index[n]) <= 2 * _REACH
        )
    return out


def _statement_of(analysis: Analysis, local: Analysis, sid: str | None) -> str | None:
    """The statement of the whole analysis that a statement of a local re-analysis continues."""
    if sid is None:
        return None
    mine = next((s for s in local.statements if s.id == sid), None)
    if mine is None:
        return None
    members = set(mine.members)
    best, most = None, 0
    for s in analysis.statements:
        shared = len(members & set(s.members))
        if shared > most and analysis.row.form(s.form, analysis.convention) == local.row.form(
            mine.form, local.convention
        ):
            best, most = s.id, shared
    return best


def _restruck(note: str, pc: int, voice: Sequence[Event], k: int, events: Mapping[str, Event],
              before: Analysis, after: Analysis, home: Statement | None, held: frozenset[str],
              nearby: Sequence[Event]) -> str | None:
    """The note that ``note`` (``voice[k]``) re-strikes as written — its neighbour in its voice at
    the same pitch — when after the change that neighbour holds a position and the change explains
    nothing of its own: the changed note only repeats a position; or it leaves its place for
    another statement that it does not open (a line's statement ending on a note and the next
    opening with it written again is a boundary, where the second is the one to correct), its
    neighbour taking the place; or another note holding no position sounds
    ``pc`` (the pitch class it is given) between the positions beside it and could hold it
    unchanged. As written the note repeats its neighbour, so the reading the change lets through
    needs no change (a statement handed to another instrument after a re-struck note). ``home``:
    the statement holding the changed note after the change; ``held``: the notes holding positions after; ``nearby``: the notes round it, in time order. None when
    not so."""
    x = voice[k]
    near = (voice[k - 1] if k else None, voice[k + 1] if k + 1 < len(voice) else None)
    y = next((y for y in near if y is not None and y.midi == x.midi and y.id in held), None)
    tag, was = after.tags.get(note), before.tags.get(note)
    if y is None or tag is None or home is None or note not in home.event_ids:
        return None if y is None else y.id
    mine = after.tags.get(y.id)
    opens = note == next(e for e in home.event_ids if e is not None)
    if was is not None and mine is not None and (mine.form, mine.position) == (was.form, was.position) \
            and mine.statement != tag.statement and not opens:
        return y.id  # it leaves its place to its neighbour for another statement (not to open the next)
    at = home.event_ids.index(note)
    lo = next((events[e].onset for e in reversed(home.event_ids[:at]) if e is not None), None)
    hi = next((events[e].onset for e in home.event_ids[at + 1:] if e is not None), None)
    other = any(z.id != note and z.pc == pc and z.id not in held and (lo is None or z.onset >= lo)
                and (hi is None or z.onset <= hi) for z in nearby)
    return y.id if other else None


def _breaks_whole(before: Analysis, after: Analysis, edits: Mapping[str, int]) -> str | None:
    """The id of a whole statement (twelve positions found) holding a changed note as a position
    before the change, whose other notes are no longer one whole statement after it; else None
    (asked of a change whose note then holds a position of a statement still short of notes).
    A wrong note breaks the statement it stands in, and its correction makes statements whole: a
    change that takes a correct note from a whole statement to give a position to a statement that
    stays short (three copies of Op. 21 reversed in time, joined: a harp's A4, position 11 of a whole P6,
    "corrected" to F4 to open a statement stitched across the join, which then read Webern's own
    odd horn note as its position) breaks what was right, and is never confident."""
    held = set(edits)
    whole_after = [frozenset(x for x in s.event_ids if x is not None) for s in after.statements if s.found == 12]
    for s in before.statements:
        if s.found != 12:
            continue
        own = [x for x in s.event_ids if x is not None]
        if held.isdisjoint(own):
            continue
        rest = {x for x in own if x not in held}
        if not any(rest <= w for w in whole_after):
            return s.id
    return None


def _clamp(n: int, cap: int) -> int:
    return max(-cap, min(cap, n))
