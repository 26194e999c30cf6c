"""Find a piece's row when none is given: the catalogue first, then the opening aggregate.

Candidates come from two places: the catalogued row classes whose short segments the music
holds (``shortlist``), and runs of twelve distinct pitch classes in a voice or in the texture
(the opening aggregate; named from the catalogue when it knows them, else taken as P0 as first
stated). Where statements sound as chords, an uncatalogued row is read from the succession of
sets that fill each aggregate (``aggregates``), and none is proposed when the chords cannot decide
between rows. A quick first reading (whole statements only) ranks them all; the best few are analysed
in full and the one explaining the most notes wins (never a row explaining fewer notes than the
runner-up); equal coverages go to the more complete statements, then to a catalogued row. The
runner-up and its coverage are kept so the user can see the decision. No row is claimed when the
winner explains fewer than MIN_COVERAGE of the notes (a twelve-tone work's row explains nearly all
of them; the best fits of free atonality stay well below), or explains most notes only in
fragments: a ``RowError`` names the best candidate, says which of the two it is, and asks for the row.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from serialkit.core.analysis.aggregates import propose
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.pipeline import first_reading
from serialkit.core.analysis.result import percent
from serialkit.core.errors import RowError, RowNotIdentified
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import Row

if TYPE_CHECKING:
    from serialkit.core.analysis.model import Analysis
    from serialkit.core.catalog import CatalogEntry

SCAN = 96  # events per stream searched for twelve-note windows
TRIAL = 240  # events analysed to compare candidate rows
PLAIN = 3  # uncatalogued twelve-note windows tried
FULL = 2  # candidates analysed in full after the quick reading
MIN_COMPLETE = Fraction(1, 2)  # below this share of notes in complete statements: no confident pick
MIN_COVERAGE = Fraction(9, 10)  # below this share of notes explained: not a twelve-tone reading


@dataclass(frozen=True, slots=True)
class Candidate:
    """A row tried for a piece, with what the trial analysis made of it."""

    row: Row
    entry: CatalogEntry | None  # None: an uncatalogued row (a twelve-note run of the piece)
    also: tuple[str, ...] = ()  # other catalogue entries with the same row (any of 48 forms)
    coverage: Fraction | None = None  # share of the trial's notes explained (None: not analysed)
    completeness: Fraction = Fraction(0)  # share of explained notes in complete statements

    @property
    def name(self) -> str:
        """The catalogue name, or the row spelt out."""
        return self.entry.name if self.entry is not None else self.row.names()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        entry = self.entry
        return {
            "name": entry.name if entry else None,
            "composer": entry.composer if entry else None,
            "work": entry.work if entry else None,
            "opus": entry.opus if entry else None,
            "title": entry.title if entry else None,
            "row": list(self.row.pcs),
            "row_names": self.row.names(),
            "also": list(self.also),
            "coverage": None if self.coverage is None else round(float(self.coverage), 6),
            "complete_share": round(float(self.completeness), 6),
        }


@dataclass(frozen=True, slots=True)
class Identification:
    """The row found for a piece, the catalogue entry it is, and the runner-up."""

    chosen: Candidate
    runner_up: Candidate | None
    method: str  # "catalog" or "aggregate"
    tried: int  # candidate rows given a first reading
    trial_events: int
    seconds: float

    @property
    def row(self) -> Row:
        """The identified row (P0 as the catalogue stores it, or as the piece first states it)."""
        return self.chosen.row

    @property
    def entry(self) -> CatalogEntry | None:
        """The catalogue entry, None for an uncatalogued row."""
        return self.chosen.entry

    def summary(self) -> str:
        """One line for people: which row, from where, and what it beat."""
        c = self.chosen
        what = f"{c.entry.name} ({c.entry.title})" if c.entry else f"{c.row.names()} (not catalogued)"
        text = f"row identified: {what}, explaining {_pct(c.coverage)} of the first {self.trial_events} notes"
        if self.runner_up is not None:
            text += f"; runner-up {self.runner_up.name}: {_pct(self.runner_up.coverage)}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the ``identification`` key of the analysis)."""
        return {
            **self.chosen.to_dict(),
            "identified": True,
            "method": self.method,
            "runner_up": None if self.runner_up is None else self.runner_up.to_dict(),
            "tried": self.tried,
            "trial_events": self.trial_events,
            "seconds": round(self.seconds, 4),
            "summary": self.summary(),
        }


def _pct(value: Fraction | None) -> str:
    return "?" if value is None else percent(value)


def _streams(events: Sequence[Event], piece: Piece) -> list[list[int]]:
    """Pitch-class streams to search: the notes in time order, then each voice."""
    streams = [_pcs(events)]
    chosen = {id(e) for e in events}
    for line in piece.by_voice().values():
        streams.append(_pcs([e for e in line if id(e) in chosen]))
    return streams


def _pcs(events: Sequence[Event]) -> list[int]:
    out: list[int] = []
    for e in events:
        if not out or out[-1] != e.pc:  # repeated notes do not break a row
            out.append(e.pc)
    return out[:SCAN]


def _windows(events: Sequence[Event], piece: Piece) -> list[tuple[int, ...]]:
    """Runs of twelve distinct pitch classes, in order of appearance."""
    found: list[tuple[int, ...]] = []
    for stream in _streams(events, piece):
        for i in range(max(0, len(stream) - 11)):
            window = tuple(stream[i : i + 12])
            if len(set(window)) == 12 and window not in found:
                found.append(window)
    return found


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+|\d+", text.lower()) if len(w) > 2 or w.isdigit()}


def _entry_for(row: Row, piece: Piece) -> tuple[CatalogEntry, tuple[str, ...]]:
    """The catalogue entry a class is named by (the one the piece's title or file name mentions
    most, else the first catalogued), and the other entries with the same row."""
    from serialkit.core import catalog

    group = [m.entry for m in catalog.identify(row)]
    hints = _words(" ".join(str(v) for v in (piece.title, piece.metadata.get("source_path")) if v))

    def mentions(entry: CatalogEntry) -> int:
        fields = (entry.name, entry.composer, entry.work, entry.opus, *entry.aliases)
        return len(hints & _words(" ".join(f for f in fields if f)))

    best = max(group, key=mentions)  # max keeps the first of equals: catalogue order
    return best, tuple(e.name for e in group if e is not best)


def candidate_rows(piece: Piece) -> list[Row]:
    """Rows the piece may use: catalogued rows its segments and twelve-note runs point to, then
    uncatalogued twelve-note runs (each taken as P0, as first stated)."""
    return [c.row for c in _candidates(piece, _trial(piece))]


def _trial(piece: Piece) -> list[Event]:
    return sorted(piece.events, key=lambda e: (e.onset, e.midi, e.id))[:TRIAL]


def _candidates(piece: Piece, events: Sequence[Event]) -> list[Candidate]:
    from serialkit.core import catalog
    from serialkit.core.analysis.shortlist import shortlist

    trial = piece.with_events(events)
    keys: dict[tuple[int, ...], Row] = {}
    runs: dict[tuple[int, ...], list[tuple[int, ...]]] = {}  # uncatalogued runs by row class, first seen first
    for window in _windows(events, piece):
        key = catalog.interval_key(window)
        if catalog.identify(window):
            keys.setdefault(key, Row(window))
        else:
            runs.setdefault(key, []).append(window)
    # the row classes found most often first: a row recurs in every statement a voice states
    # whole, while a run across two statements or streams is one of many (a hand-off texture's
    # own row was the eighth class seen first and the most frequent)
    windows = [found[0] for found in sorted(runs.values(), key=len, reverse=True)[:PLAIN]]
    proposal = propose(events, windows, catalog.interval_key)
    plain = [Row(r) for r in proposal.rows]
    for key, pcs in shortlist(trial):
        keys.setdefault(key, Row(pcs))
    keys = {key: row for key, row in keys.items() if proposal.fits(row.pcs)}
    out = []
    for row in keys.values():
        entry, also = _entry_for(row, piece)
        out.append(Candidate(entry.row, entry, also))
    return out + [Candidate(row, None) for row in plain]


def _quick(events: Sequence[Event], piece: Piece, rows: Sequence[Row]) -> list[int]:
    """Notes in whole statements (eleven or twelve positions) of a first reading with each row."""
    ix = EventIndex(events, piece.voice_ids)
    out = []
    for row in rows:
        reading = first_reading(ix, [row.form(f) for f in row.distinct_forms()])
        out.append(sum(len(f.slots) for f in reading.found if len(f.slots) >= 11))
    return out


def _judged(candidate: Candidate, analysis: Analysis) -> Candidate:
    return Candidate(candidate.row, candidate.entry, candidate.also, analysis.coverage, analysis.complete_share)


def _ranked(judged: list[Candidate]) -> list[Candidate]:
    """Best first: the row that explains the most notes. Equal coverage: the more complete
    statements, then a catalogued row. A row whose statements are merely more complete never beats
    one that explains more notes: one wrong note breaks a statement of the right row, and a short
    score has few statements to lose; a wrong row explaining many notes in fragments is refused
    afterwards (MIN_COMPLETE), not outranked."""

    def key(c: Candidate) -> tuple[Fraction, Fraction, bool]:
        return c.coverage or Fraction(0), c.completeness, c.entry is not None

    return sorted(judged, key=key, reverse=True)


def identify(piece: Piece, analyze: Callable[[Piece, Row], Analysis]) -> Identification:
    """The row of an untagged piece, judged by trial analyses (``analyze(piece, row)``)."""
    started = time.perf_counter()
    events = _trial(piece)
    candidates = _candidates(piece, events)
    if not candidates:
        raise RowError(
            "cannot identify the row: no catalogued row fits the music and no twelve successive "
            "notes have twelve distinct pitch classes; give the row explicitly (e.g. --row 'A F# G G# ...')"
        )
    quick = _quick(events, piece, [c.row for c in candidates])
    order = sorted(range(len(candidates)), key=lambda i: -quick[i])  # stable: earlier first
    trial = piece.with_events(events)
    judged = [_judged(candidates[i], analyze(trial, candidates[i].row)) for i in order[:FULL]]
    judged = _ranked(judged)
    chosen = judged[0]
    runner_up = judged[1] if len(judged) > 1 else None
    rival = f"; runner-up {runner_up.name}: {_pct(runner_up.coverage)}" if runner_up else ""
    failed = None
    if (chosen.coverage or Fraction(0)) < MIN_COVERAGE:
        tried = "the notes" if len(events) >= len(piece.events) else f"the first {len(events)} notes"
        failed = (f"no row identified: the best fit, {chosen.name}, explains only {_pct(chosen.coverage)} "
                  f"of {tried}, below the {_pct(MIN_COVERAGE)} a twelve-tone work's row explains (this "
                  f"reads as music without a row: free atonality, or tonal music){rival}",
                  "if the piece is serial, give the row explicitly (--row ROW)")
    elif chosen.completeness < MIN_COMPLETE:
        failed = (f"cannot identify the row with confidence: the best candidate, {chosen.name}, explains "
                  f"{_pct(chosen.coverage)} of the notes but only {_pct(chosen.completeness)} of them in "
                  f"complete statements{rival}", "give the row explicitly (--row ROW)")
    if failed is not None:
        record = {**chosen.to_dict(), "identified": False,
                  "runner_up": None if runner_up is None else runner_up.to_dict(), "tried": len(candidates),
                  "trial_events": len(events), "min_coverage": float(MIN_COVERAGE),
                  "min_complete_share": float(MIN_COMPLETE), "summary": failed[0]}
        raise RowNotIdentified(f"{failed[0]}; {failed[1]}", record)
    return Identification(
        chosen=chosen,
        runner_up=runner_up,
        method="catalog" if chosen.entry is not None else "aggregate",
        tried=len(candidates),
        trial_events=len(events),
        seconds=time.perf_counter() - started,
    )


def identify_row(piece: Piece, analyze: Callable[[Piece, Row], Analysis]) -> Row:
    """The piece's own row if it names one, else the identified row."""
    if piece.row is not None:
        return piece.row
    return identify(piece, analyze).row
