"""Which catalogued rows a piece may use, found without analysing it against all 1,395 classes.

A row statement passed between instruments or split between the hands rarely shows twelve
successive notes of one voice, but its short segments survive. Every ordered trichord and
tetrachord of successive onsets in one voice (and every tetrachord of the whole texture) votes for
each (row class, form) that holds it, found through its interval succession (transposition-free),
not a scan of every form. A class scores the votes of its best-supported forms beyond what chance
gives it (a form's segment is present as often as the piece uses its intervals), so rows rich in
the piece's own intervals gain nothing for that. The few best classes go on to the real analysis.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from serialkit.core.piece import Event, Piece

TOP_FORMS = 8  # a class scores the segments of its best-supported forms (a piece states a few)
SCAN = 400  # events (in time order) whose segments vote
VOTED = 12  # classes kept (by segments within voices) for the real analysis to compare
TEXTURE = 4  # … and by segments of the whole texture
PART = 128  # events per part of a longer scan that votes on its own too


@dataclass(frozen=True, slots=True)
class _Index:
    """Ordered segments of every catalogued row class, by interval succession."""

    classes: tuple[tuple[int, ...], ...]  # interval key of each class
    rows: tuple[tuple[int, ...], ...]  # a representative row (P0) of each class
    segments: dict[int, tuple[tuple[int, int, int], ...]]  # key → (class, form type, first pc)
    canonical: dict[int, dict[int, int]]  # symmetric classes: form key → its first alias's key
    keys: tuple[tuple[tuple[int, ...], ...], ...]  # per class and form type: its segments' keys


def _key(segment: Sequence[int]) -> int:
    """The interval succession of a segment as one int (its length is part of the key)."""
    key = len(segment)
    for a, b in zip(segment, segment[1:], strict=False):
        key = key * 12 + (b - a) % 12
    return key


def _lines(pcs: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """P0, R0, I0, RI0 in the relative convention."""
    prime = tuple(pcs)
    inverse = tuple((2 * pcs[0] - p) % 12 for p in pcs)
    return prime, prime[::-1], inverse, inverse[::-1]


@lru_cache(maxsize=1)
def _index() -> _Index:
    """Built once per process from ``core.catalog``."""
    from serialkit.core import catalog

    classes: dict[tuple[int, ...], tuple[int, ...]] = {}
    for entry in catalog.entries():
        classes.setdefault(catalog.interval_key(entry.row.pcs), entry.row.pcs)
    segments: dict[int, list[tuple[int, int, int]]] = {}
    canonical: dict[int, dict[int, int]] = {}
    keys: list[tuple[tuple[int, ...], ...]] = []
    for c, pcs in enumerate(classes.values()):
        lines = _lines(pcs)
        per_kind = []
        for kind, line in enumerate(lines):
            mine = []
            for size in (3, 4):
                for k in range(13 - size):
                    key = _key(line[k : k + size])
                    segments.setdefault(key, []).append((c, kind, line[k]))
                    mine.append(key)
            per_kind.append(tuple(mine))
        keys.append(tuple(per_kind))
        steps = [(b - a) % 12 for a, b in zip(pcs, pcs[1:], strict=False)]
        if steps[::-1] in ([(-x) % 12 for x in steps], steps):  # P0 is some R or RI form
            seen: dict[tuple[int, ...], int] = {}
            canonical[c] = {
                kind * 12 + t: seen.setdefault(tuple((p + t) % 12 for p in line), kind * 12 + t)
                for kind, line in enumerate(lines)
                for t in range(12)
            }
    return _Index(
        tuple(classes), tuple(classes.values()), {k: tuple(v) for k, v in segments.items()},
        canonical, tuple(keys),
    )


def _slices(events: Iterable[Event]) -> list[list[int]]:
    """The distinct pitch classes of successive onsets (events in time order)."""
    out: list[list[int]] = []
    previous = None
    for e in events:
        if e.onset != previous:
            out.append([])
            previous = e.onset
        if e.pc not in out[-1]:
            out[-1].append(e.pc)
    return out


def _segments(slices: Sequence[Sequence[int]]) -> set[tuple[int, ...]]:
    """Ordered trichords and tetrachords of distinct pitch classes, each note in the same onset
    as the one before or the next."""
    out: set[tuple[int, ...]] = set()
    n = len(slices)

    def extend(i: int, seq: tuple[int, ...]) -> None:
        if len(seq) >= 3:
            out.add(seq)
            if len(seq) == 4:
                return
        for j in (i, i + 1):
            if j < n:
                for p in slices[j]:
                    if p not in seq:
                        extend(j, (*seq, p))

    for i in range(n):
        for p in slices[i]:
            extend(i, (p,))
    return out


def _voted(segments: set[tuple[int, ...]], keep: int) -> list[int]:
    """The classes whose best forms hold the most segments beyond chance, best first."""
    index = _index()
    votes: dict[int, dict[int, int]] = {}
    chance: dict[int, float] = {}
    for seg in segments:
        key = _key(seg)
        chance[key] = chance.get(key, 0.0) + 1 / 12
        hits: set[tuple[int, int]] = set()  # a symmetric row holds a segment under two labels
        for c, kind, first in index.segments.get(key, ()):
            form = kind * 12 + (seg[0] - first) % 12
            aliases = index.canonical.get(c)
            hits.add((c, form if aliases is None else aliases[form]))
        for c, form in hits:
            tally = votes.setdefault(c, {})
            tally[form] = tally.get(form, 0) + 1
    scored = []
    for c, tally in votes.items():
        expected = [sum(chance.get(k, 0.0) for k in kinds) for kinds in index.keys[c]]
        excess = sorted((n - expected[form // 12] for form, n in tally.items()), reverse=True)
        scored.append((sum(excess[:TOP_FORMS]), c))
    scored.sort(key=lambda sc: (-sc[0], sc[1]))
    return [c for _, c in scored[:keep]]


def shortlist(piece: Piece, keep: int = VOTED) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The catalogued row classes the piece most likely uses, best first: (interval key, a row
    of the class); the best by segments within voices, then the best by the whole texture.

    A scan longer than PART events also votes part by part (PART events each, the last part
    ending with the scan) and adds each part's best classes: a piece that moves on to other forms
    and transpositions spreads its row's votes over more forms than TOP_FORMS, while a row rich in
    the intervals of both parts gathers them, so the scan as a whole may rank its own row low."""
    index = _index()
    events = sorted(piece.events, key=lambda e: (e.onset, e.midi, e.id))[:SCAN]
    parts = [events]
    if len(events) > PART:
        parts += [events[k:k + PART] for k in range(0, len(events) - PART, PART)] + [events[-PART:]]
    lines = list(piece.by_voice().values())
    classes: list[int] = []
    for part in parts:
        classes += [c for c in _vote(lines, part, keep) if c not in classes]
    return [(index.classes[c], index.rows[c]) for c in classes]


def _vote(lines: Sequence[Sequence[Event]], events: Sequence[Event], keep: int) -> list[int]:
    """The classes ``events`` vote for: ``keep`` by segments within voices (``lines``: the
    piece's voices), TEXTURE more by the segments of the whole texture."""
    chosen = {id(e) for e in events}
    segments: set[tuple[int, ...]] = set()
    for line in lines:
        segments |= _segments(_slices(e for e in line if id(e) in chosen))
    classes = _voted(segments, keep)
    # rows passed from note to note between instruments: segments of the whole texture
    # (tetrachords only: a dense texture holds a great many trichords, each in many rows)
    texture: set[tuple[int, ...]] = {seg for seg in _segments(_slices(events)) if len(seg) == 4}
    classes += [c for c in _voted(texture, TEXTURE) if c not in classes]
    return classes
