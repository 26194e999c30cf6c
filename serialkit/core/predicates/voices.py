"""Predicates on voices: RANGE (register) and CROSS (voice crossings)."""

from __future__ import annotations

from fractions import Fraction

from serialkit.core.piece import Piece
from serialkit.core.predicates.columns import Columns, columns_of
from serialkit.core.predicates.model import Violation
from serialkit.core.rows import pc_name


def check_range(piece: Piece | Columns) -> list[Violation]:
    """RANGE: every event lies within its voice's declared [low, high] (MIDI, inclusive)."""
    cols = columns_of(piece)
    voices = cols.piece.voices
    low = [-1 if v.low is None else v.low for v in voices]
    high = [128 if v.high is None else v.high for v in voices]
    if all(x == -1 for x in low) and all(x == 128 for x in high):
        return []
    out: list[Violation] = []
    for i, (v, m) in enumerate(zip(cols.voice, cols.midi, strict=True)):
        if low[v] <= m <= high[v]:
            continue
        edge, side = (low[v], "below") if m < low[v] else (high[v], "above")
        out.append(
            Violation(
                "RANGE",
                (cols.ids[i],),
                f"MIDI {m} ({pc_name(m)}) is {side} voice {voices[v].id}'s range "
                f"{low[v] if low[v] >= 0 else '-'}..{high[v] if high[v] <= 127 else '-'} (limit {edge})",
                cols.where(i),
            )
        )
    return out


def crossed_noteheads(piece: Piece | Columns) -> tuple[list[int], int]:
    """Indices of crossed noteheads (in onset order) and how many noteheads were judged.

    Voices are ordered top to bottom as the piece lists them. A notehead in voice i is crossed
    when, at its onset, it sounds strictly below a note then sounding in a voice listed below i,
    or strictly above a note then sounding in a voice listed above i ("sounding at t" means
    onset <= t < end, so notes starting together count). Grace notes are not judged. Voice pairs
    whose whole registers cannot cross are skipped.
    """
    cols = columns_of(piece)
    start, end, voice, midi = cols.start, cols.end, cols.voice, cols.midi
    n_voices = len(cols.piece.voices)
    vmin = [128] * n_voices
    vmax = [-1] * n_voices
    judged = 0
    for s, e, v, m in zip(start, end, voice, midi, strict=True):
        if e > s:
            judged += 1
            if m < vmin[v]:
                vmin[v] = m
            if m > vmax[v]:
                vmax[v] = m
    below = [[j for j in range(i + 1, n_voices) if vmax[j] > vmin[i]] for i in range(n_voices)]
    above = [[j for j in range(i) if vmin[j] < vmax[i]] for i in range(n_voices)]
    # A note at or above every partner below, and at or below every partner above, cannot cross.
    floor = [max((vmax[j] for j in below[i]), default=-1) for i in range(n_voices)]
    ceiling = [min((vmin[j] for j in above[i]), default=128) for i in range(n_voices)]
    watched = [False] * n_voices
    for i in range(n_voices):
        for j in below[i] + above[i]:
            watched[j] = True
    crossed: list[int] = []
    if not any(watched):
        return crossed, judged
    never = max(end, default=0) + 1
    active: list[list[int]] = [[] for _ in range(n_voices)]
    low_now = [128] * n_voices  # lowest / highest MIDI sounding now in each watched voice
    high_now = [-1] * n_voices
    expiry = [never] * n_voices  # earliest end among the notes sounding now

    def refresh(j: int, t: int) -> None:
        act = active[j] = [x for x in active[j] if end[x] > t]
        if act:
            pitches = [midi[x] for x in act]
            low_now[j], high_now[j] = min(pitches), max(pitches)
            expiry[j] = min(end[x] for x in act)
        else:
            low_now[j], high_now[j], expiry[j] = 128, -1, never

    order = cols.order
    n, k = len(order), 0
    while k < n:
        t = start[order[k]]
        g = k + 1
        while g < n and start[order[g]] == t:
            g += 1
        group = order[k:g]
        k = g
        for i in group:
            v = voice[i]
            e = end[i]
            if watched[v] and e > t:
                if expiry[v] <= t:
                    refresh(v, t)
                active[v].append(i)
                m = midi[i]
                if m < low_now[v]:
                    low_now[v] = m
                if m > high_now[v]:
                    high_now[v] = m
                if e < expiry[v]:
                    expiry[v] = e
        for i in group:
            v = voice[i]
            m = midi[i]
            if (floor[v] <= m <= ceiling[v]) or end[i] <= t:
                continue
            hit = False
            for j in below[v]:
                if expiry[j] <= t:
                    refresh(j, t)
                if high_now[j] > m:
                    hit = True
                    break
            if not hit:
                for j in above[v]:
                    if expiry[j] <= t:
                        refresh(j, t)
                    if low_now[j] < m:
                        hit = True
                        break
            if hit:
                crossed.append(i)
    return crossed, judged


def crossing_share(piece: Piece | Columns) -> Fraction:
    """The share of judged noteheads that are crossed (0 for an empty piece)."""
    crossed, judged = crossed_noteheads(piece)
    return Fraction(len(crossed), judged) if judged else Fraction(0)


def check_crossings(piece: Piece | Columns, max_share: Fraction = Fraction(1, 10)) -> list[Violation]:
    """CROSS: one violation naming every crossed notehead when their share exceeds ``max_share``."""
    cols = columns_of(piece)
    crossed, judged = crossed_noteheads(cols)
    if not judged or Fraction(len(crossed), judged) <= max_share:
        return []
    share = Fraction(len(crossed), judged)
    return [
        Violation(
            "CROSS",
            tuple(cols.ids[i] for i in crossed),
            f"{len(crossed)} of {judged} noteheads sit in a voice crossing "
            f"({float(share):.1%} > {float(max_share):.1%} allowed)",
            cols.where(crossed[0]),
        )
    ]
