"""Where a suggestion looks for the notes a wrong note may have been written with: swap partners
in a voice, two unexplained notes of one voice, a hole's bordering note and the wanted pitch
class just outside it, two wrong notes side by side; and ``_trades``, the check that a change does
not take a correct note off its place. Standard library only (``suggest`` uses these)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction

from serialkit.core.analysis.model import Analysis
from serialkit.core.piece import Event
from serialkit.core.suggest.model import _nearest, error_model
from serialkit.core.suggest.trouble import _REACH, _Hole


def _hole_swaps(
    h: _Hole, order: Sequence[Event], index: Mapping[str, int], onsets: Sequence[Fraction],
    events: Mapping[str, Event],
) -> Iterator[tuple[str, Event]]:
    """Swaps that fill a hole: a note bordering it (``h.around``) and a note of the pitch class the
    hole wants sounding within ``_REACH`` notes outside it, in any voice. Two notes of a statement
    written in each other's place leave the wanted pitch class out of order (it is read elsewhere,
    or not at all) and the note written in its place reads as a neighbouring position."""
    lo = max(0, bisect.bisect_left(onsets, h.lo) - _REACH)
    hi = min(len(order), bisect.bisect_right(onsets, h.hi) + _REACH)
    for b in sorted(h.around):
        if b not in events:
            continue
        for n in order[lo:hi]:
            if n.pc == h.want and n.id != b and n.onset != events[b].onset and events[b].pc != h.want:
                yield b, n


def _chains(
    reported: Mapping[str, str],
    analysis: Analysis,
    events: Mapping[str, Event],
    by_voice: Mapping[str, Sequence[Event]],
    holes: Sequence[_Hole],
) -> Iterator[tuple[str, dict[str, int], tuple[str, str]]]:
    """Two wrong notes side by side (``B C`` written for ``Bb B``): an unexplained note beside a
    note that borders a hole in its voice. The neighbour, read as the position after (or before)
    the hole, is meant for the hole, and the unexplained note for the neighbour's position. Neither
    change alone explains more (the first only moves the hole; the second only repeats the
    neighbour), so both are one candidate: (the unexplained note, the changes, the error models
    of its change and of its neighbour's). Only when both are common copying errors."""
    for eid, why in reported.items():
        if why != "unexplained" or analysis.tags.get(eid) is not None:
            continue
        u = events[eid]
        voice = by_voice.get(u.voice, [])
        k = next((i for i, e in enumerate(voice) if e.id == eid), -1)
        for j in (k - 1, k + 1):
            if k < 0 or not 0 <= j < len(voice) or voice[j].onset == u.onset:
                continue
            x = voice[j]
            if analysis.tags.get(x.id) is None:
                continue
            for h in holes:
                if x.id not in h.around:
                    continue
                mx, mu = _nearest(x.midi, h.want), _nearest(u.midi, x.pc)
                models = (error_model(u.midi, mu), error_model(x.midi, mx))
                if "other" not in models and x.pc != h.want and u.pc != x.pc:
                    yield eid, {eid: mu, x.id: mx}, models


def _loose_partners(voice: Sequence[Event], event: Event, reported: Mapping[str, str]) -> Iterator[Event]:
    """The other unexplained notes of ``event``'s voice within ``2 * _REACH`` notes of it: a swap
    across a run of repeated positions (``F G# F G# B`` written ``B G# F G# F``) leaves both notes
    unexplained with the repeats between them."""
    k = next((i for i, e in enumerate(voice) if e.id == event.id), -1)
    for other in voice[max(0, k - 2 * _REACH):k + 2 * _REACH + 1] if k >= 0 else ():
        if other.id != event.id and reported.get(other.id) == "unexplained" and other.pc != event.pc:
            yield other


def _swap_partners(voice: Sequence[Event], event: Event) -> Iterator[Event]:
    """The notes of ``event``'s voice it may have been written in place of: on each side the
    nearest note of another pitch class (repeats of the note's own pitch class are stepped over: in
    ``D# D# D# E`` written ``E D# D# D#`` the E's partner is the last D#), and, when that note is
    repeated, the last of its repeats (a repeated position is one position: the swap may have taken
    any note of it, and only its far end leaves the repeats together)."""
    k = next((i for i, e in enumerate(voice) if e.id == event.id), -1)
    if k < 0:
        return
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(voice) and voice[j].pc == event.pc and voice[j].onset != event.onset:
            j += step
        if not 0 <= j < len(voice) or voice[j].onset == event.onset:
            continue
        yield voice[j]
        far = j
        while (0 <= far + step < len(voice) and voice[far + step].pc == voice[j].pc
               and voice[far + step].onset != voice[far].onset):
            far += step
        if far != j:
            yield voice[far]


def _trades(edits: Mapping[str, int], before: Analysis, after: Analysis, index: Mapping[str, int]) -> str | None:
    """The change takes a note from the position it held: after it, the statement the note was in
    (the one sharing most of its other notes, same form) lacks that position. It trades one
    position for another, as when a correct piece's analysis leaves holes that moving a correct
    note to a neighbouring position eases; a wrong note read as a position leaves it to the note
    meant for it. A position lent to it by another statement's note (elided) after the change is
    taken from it too: a correct first note changed to continue the statement before it (that
    statement's last note written as its previous note's pitch) leaves its own statement to
    borrow its pitch class from a note far off. A note lent from just before the changed note
    (within the statement's elided notes) is an elision, not a trade: ``F# C# F#`` written for
    ``F# C# G`` where the statement starting on the G's position borrows the two notes before.

    Returns ``"hole"`` (the position is left empty: the change is refused), ``"borrowed"`` (lent
    from far off: the change is doubtful, not refused — a wrong first note put right can leave
    its statement to borrow as it did before) or None."""
    stated = {s.id: s for s in before.statements}
    lent = None
    for eid in edits:
        tag = before.tags.get(eid)
        home = stated.get(tag.statement) if tag is not None and tag.statement is not None else None
        if home is None or home.event_ids[tag.position] != eid:  # type: ignore[union-attr]
            continue
        others = set(home.members) - edits.keys()
        match = max((s for s in after.statements if s.form == home.form), default=None,
                    key=lambda s: len(others & set(s.members)))
        if match is None or not others & set(match.members):
            continue
        now = match.event_ids[tag.position]  # type: ignore[union-attr]
        if now is None:
            if len(edits) > 1 and not any(e is not None for e in match.event_ids[tag.position + 1:]):  # type: ignore[union-attr]
                continue  # a swap that leaves it ending sooner: an end is trouble where the piece goes on (badness)
            return "hole"
        if now in edits:  # the position goes to the other changed note: a swap gives it back
            continue
        if now in match.elided and now not in home.elided and (
            now not in index or abs(index[now] - index[eid]) > len(match.elided) + 1
        ):
            lent = "borrowed"
    return lent
