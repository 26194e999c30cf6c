"""Which voices pass rows to which: learnt from a first reading, used to read again."""

from __future__ import annotations

from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.state import Found

MIN_LINKS = 24  # voice-to-voice links a first reading needs before it teaches anything
MIN_SHARE = 0.1  # … and the share of links that cross voices
APART = 0.02  # at most this share of links crossing voices: rows keep to their voices
STRANGE = 0.5  # the cost of a pass between voices that never pass rows to each other
MIN_FROM = 4  # links out of a voice before its passing habits count
RARE = 0.85  # a reading teaches something only if some pass happens at most 15 % as often as the
# commonest pass out of the same voice


def learn_passing_per_note(ix: EventIndex, statements: list[Found]) -> list[list[float]] | None:
    """Per event, the extra cost of a row passing from its voice to each voice (``ix.strange``):
    its voice's row of ``learn_voice_passing``; None when that learns nothing."""
    costs = learn_voice_passing(ix, statements)
    return None if costs is None else [costs[v] for v in ix.voice]


def learn_voice_passing(ix: EventIndex, statements: list[Found]) -> list[list[float]] | None:
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
        ordered = sorted(found.slots.values())
        for a, b in zip(ordered, ordered[1:], strict=False):
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
