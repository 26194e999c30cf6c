"""Which voices pass rows to which: learnt from a first reading, used to read again.

The habits are learnt where they are used: in a piece whose first reading falls into sections (cut
at silences), a section whose statements go between other instruments than the whole piece's do
is read again with the habits of its own statements, so the way a section 500 bars on is
orchestrated does not make this one's passes dear. A section with the piece's habits is read with
those learnt from the whole piece, the steadier: a voice that passes a row once a copy teaches
nothing in one copy, but four passes in four copies do."""

from __future__ import annotations

from bisect import bisect_right

from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.state import Found

MIN_LINKS = 24  # voice-to-voice links a first reading needs before it teaches anything
MIN_SHARE = 0.1  # … and the share of links that cross voices
APART = 0.02  # at most this share of links crossing voices: rows keep to their voices
STRANGE = 0.5  # the cost of a pass between voices that never pass rows to each other
MIN_FROM = 4  # links out of a voice before its passing habits count
RARE = 0.85  # a reading teaches something only if some pass happens at most 15 % as often as the
# commonest pass out of the same voice
TEACHES = 9  # positions a statement of the first reading holds before its links teach anything: one
# with more holes may be read across two streams (a copy's cut-off statement finished from the
# next copy's notes: eight positions), and its few links outweigh a voice's real habits (10 lost
# a held-out reversed copy's note and 11-12 a reversed section's own habits: too little to learn)
OWN = 1.0  # a section keeps its own habits when they cost its reading less than this share of
# what the whole piece's cost it (0.75 before sections were cut at every general pause: a reversed
# section beside a plain one then kept the piece's habits and lost 6-13 correct notes)


Costs = list[list[float]]


def learn_passing_by_section(ix: EventIndex, statements: list[Found], silence: list[int],
                             breaks: list[int]) -> Costs | None:
    """Per event, the extra cost of a row passing from its voice to each voice (``ix.strange``),
    learnt from the first reading's statements of TEACHES positions or more.
    The notes of a section (``_sections``, from the first note its statements hold to the last;
    the first section from the piece's start, the last to its end) take the costs its own
    statements teach (``learn_voice_passing``; none, if they teach nothing) when these charge its
    statements' links less than OWN times what the whole first reading's costs charge them: its
    lines go between other instruments than the piece's do. Every other note (of a section with
    the piece's habits, or between two sections) takes the whole reading's costs. None when no
    costs are learnt. ``silence`` and ``breaks``: per slice, how long nothing has sounded when it
    begins, and 0 where a section begins (``state.silences``, ``state.sections``)."""
    statements = [f for f in statements if len(f.slots) >= TEACHES]
    whole = learn_voice_passing(ix, statements)
    sections = _sections(ix, statements, silence, breaks)
    learnt = [whole] if len(sections) == 1 else [_own_or_whole(ix, group, whole) for _, _, group in sections]
    if all(m is None for m in learnt):
        return None
    free = [0.0] * len(ix.voice_names)
    firsts = [lo for lo, _, _ in sections]
    out: list[list[float]] = []
    for i in range(ix.n):
        k = max(0, bisect_right(firsts, ix.sl[i]) - 1)
        m = learnt[k] if ix.sl[i] <= sections[k][1] or k == len(sections) - 1 else whole
        out.append(free if m is None else m[ix.voice[i]])
    return out


def _own_or_whole(ix: EventIndex, group: list[Found], whole: Costs | None) -> Costs | None:
    """The passing costs ``group``'s own statements teach, if they cost its links less than OWN times
    what ``whole`` costs them; else ``whole``."""
    own = learn_voice_passing(ix, group)
    return own if _cost(ix, group, own) < OWN * _cost(ix, group, whole) else whole


def _cost(ix: EventIndex, group: list[Found], costs: Costs | None) -> float:
    """What ``costs`` charge the links of ``group``'s statements (position to position)."""
    if costs is None:
        return 0.0
    return sum(costs[ix.voice[a]][ix.voice[b]] for f in group for a, b in _steps(f))


def _sections(ix: EventIndex, statements: list[Found], silence: list[int],
              breaks: list[int]) -> list[tuple[int, int, list[Found]]]:
    """The statements in groups, as (first slice, last slice, statements) in time order, cut at
    each silence (a moment no note sounds) that no statement reads across, or that ends a section
    (``state.sections``: a general pause of BREAK times the piece's median wait between onsets;
    a statement read across it is music the silence cut off, taking its end from the next section:
    it teaches its own section only the links before the silence); a group with fewer than MIN_LINKS links (too few
    to learn from) is read with the one after it (the last, with the one before it). One group
    (the whole piece) when the piece has no such silence."""
    spans = sorted((min(evs), k) for k, f in enumerate(statements) if (evs := _slices(ix, f)))
    onsets = ix.slice_onsets
    if not spans or len(onsets) < 2:
        return [(0, len(onsets) - 1, statements)]
    reach = [-1] * len(onsets)  # per slice: the last slice of a statement begun by then
    for lo, k in spans:
        reach[lo] = max(reach[lo], *_slices(ix, statements[k]))
    for s in range(1, len(onsets)):
        reach[s] = max(reach[s], reach[s - 1])
    cuts = [s + 1 for s in range(len(onsets) - 1) if silence[s + 1] and (reach[s] <= s or breaks[s + 1] == 0)]
    groups: list[tuple[int, list[Found]]] = []  # (the first slice past the group, its statements)
    at = 0
    for lo, k in spans:
        if not groups or at < len(cuts) and lo >= cuts[at]:
            while at < len(cuts) and cuts[at] <= lo:
                at += 1
            groups.append((cuts[at] if at < len(cuts) else len(onsets), []))
        end, group = groups[-1]
        f = statements[k]
        group.append(Found(f.form, {p: e for p, e in f.slots.items() if ix.sl[e] < end},
                           [(e, p) for e, p in f.repeats if ix.sl[e] < end]))
    merged: list[tuple[int, int, list[Found]]] = []
    for _, group in groups:
        held = [s for f in group for s in _slices(ix, f)]
        lo, hi = min(held), max(held)
        if merged and _links(merged[-1][2]) < MIN_LINKS:
            merged[-1] = (merged[-1][0], hi, merged[-1][2] + group)
        else:
            merged.append((lo, hi, group))
    if len(merged) > 1 and _links(merged[-1][2]) < MIN_LINKS:
        _, hi, group = merged.pop()
        merged[-1] = (merged[-1][0], hi, merged[-1][2] + group)
    return merged


def _steps(f: Found) -> list[tuple[int, int]]:
    """The links of statement ``f``: each note it holds as a position with the next, in time order."""
    ordered = sorted(f.slots.values())
    return list(zip(ordered, ordered[1:], strict=False))


def _slices(ix: EventIndex, f: Found) -> list[int]:
    """The slices of the notes ``f`` holds."""
    return [ix.sl[e] for e in (*f.slots.values(), *(e for e, _ in f.repeats))]


def _links(statements: list[Found]) -> int:
    """How many voice-to-voice links ``statements`` make (one fewer than the positions each holds)."""
    return sum(max(0, len(f.slots) - 1) for f in statements)


def learn_voice_passing(ix: EventIndex, statements: list[Found]) -> Costs | None:
    """For each pair of voices (u, v), the extra cost of a row passing from u to v: 0 for the
    passes the first reading made often, up to STRANGE for passes it never made; STRANGE for every
    pass when the first reading keeps its rows to their voices (at most APART of its links cross:
    a statement that takes its opening from another voice there is a misreading), but for two
    voices that hand rows to each other (``_handing``), as also when fewer than MIN_SHARE of its
    links cross and two voices hand rows to each other (three voices or more). None when the
    first reading has too few links to learn from, or its voices pass rows to one another alike
    (nothing to change)."""
    voices = len(ix.voice_names)
    if voices < 2:
        return None
    counts = [[0] * voices for _ in range(voices)]
    links = crossing = 0
    for found in statements:
        for a, b in _steps(found):
            u, v = ix.voice[a], ix.voice[b]
            counts[u][v] += 1
            links += 1
            crossing += u != v
    if links < MIN_LINKS:
        return None
    handing = {(u, v) for u in range(voices) for v in range(voices) if u != v and _handing(counts, crossing, u, v)}
    if 0 < crossing <= APART * links or voices >= 3 and crossing < MIN_SHARE * links and handing:
        # rows stay in their voices (but for two that hand rows to each other): any other pass is strange
        return [[0.0 if u == v or (u, v) in handing else STRANGE for v in range(voices)] for u in range(voices)]
    if voices < 3 or crossing < MIN_SHARE * links:
        return None
    strange = [[0.0] * voices for _ in range(voices)]
    for u in range(voices):
        out = sum(counts[u][v] for v in range(voices) if v != u)
        if out < MIN_FROM:
            continue
        top = max(counts[u][v] for v in range(voices) if v != u)
        for v in range(voices):
            if v != u:
                strange[u][v] = STRANGE * (1 - counts[u][v] / top)
    if max(max(row) for row in strange) < RARE * STRANGE:
        return None  # every voice passes to every other: nothing to learn
    return strange


def _handing(counts: list[list[int]], crossing: int, u: int, v: int) -> bool:
    """Do voices ``u`` and ``v`` hand rows to each other: at least MIN_FROM of the first reading's
    links between them (either way), and most of its links that cross voices? Rows that keep to
    their voices cross only where a misreading takes a note from anywhere; statements handed
    between two instruments, each beginning on the note that ends the other's (elided), cross once
    a statement and always between the same two."""
    pair = counts[u][v] + counts[v][u]
    return pair >= MIN_FROM and 2 * pair > crossing
