"""Planted engraving errors: realistic mistakes written into correct pieces, with the truth.

Each :class:`Plant` is one error in one copy of a correct piece: an accidental dropped or added
(a semitone), a note a line off (a third: three or four semitones), or two neighbouring notes of a
statement swapped. ``planted_set`` plants them into the clean synthetic families of
``tests/synth.py`` and into real scores; :func:`evaluate` runs the analysis and the suggestion
engine on each and says whether the top (or a top-three) suggestion restores the original notes.
Used by ``tests/core/test_suggest.py`` and ``bench/bench_suggest.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from serialkit.core.analysis import Analysis, analyze
from serialkit.core.piece import Event, Piece
from serialkit.core.rows import Row
from serialkit.core.suggest import NoteSuggestions, Readings, suggest

KINDS = ("accidental", "third", "swap")


@dataclass
class Plant:
    """One planted error: the piece with it, and the original pitch of every changed note."""

    source: str
    kind: str
    piece: Piece
    row: Row
    original: dict[str, int] = field(default_factory=dict)
    """Changed event id → its original MIDI pitch."""
    written: bool = False
    """A swap that exchanges the two written notes (pitch and octave), not pitch classes in each
    note's register."""
    clean: Piece | None = None
    """The correct piece the error was planted into (its own findings are not the plant's)."""


@dataclass
class Outcome:
    """What the suggestion engine made of one plant."""

    plant: Plant
    reported: bool
    top: bool
    top3: bool
    false_edits: int
    """Confident suggestions (above the repair threshold) on notes that were not planted."""
    found: tuple[NoteSuggestions, ...] = ()
    """The suggestions made."""
    detectable: bool | None = True
    """The planted piece fails ``serialkit check`` (the analysis profile). A plant that passes it
    made another correct twelve-tone piece (``C# C C`` written ``C# C# C``: a repeat; two notes of
    different statements exchanged where each statement takes the other's): no verifier can tell
    it from the music meant, so no suggestion is due. None: not checked (``evaluate(detect=False)``)."""


def plant_errors(piece: Piece, row: Row, source: str, count: int, seed: int,
                 analysis: Analysis | None = None) -> Iterator[Plant]:
    """``count`` single-error copies of a correct ``piece``, kinds in turn, notes drawn by ``seed``.

    Swaps exchange two notes holding neighbouring positions of one statement at different times
    (from the analysis of the clean piece), in turn in two ways: their pitch classes, each note
    keeping its register (a copyist's slip), and the written notes themselves, octave and all (an
    engraver's)."""
    rng = random.Random(seed)
    clean = analysis if analysis is not None else analyze(piece, row)
    events = {e.id: e for e in piece.events}
    pairs: list[tuple[str, str]] = []
    for s in clean.statements:
        ids = s.event_ids
        for p in range(11):
            a, b = ids[p], ids[p + 1]
            if a is None or b is None or a in s.elided or b in s.elided:
                continue
            ea, eb = events[a], events[b]
            if ea.onset != eb.onset and ea.pc != eb.pc:
                pairs.append((a, b))
    explained = [e for e in piece.events if clean.tags.get(e.id) is not None]
    for k in range(count):
        kind = KINDS[k % len(KINDS)]
        if kind == "swap" and pairs:
            a, b = rng.choice(pairs)
            ea, eb = events[a], events[b]
            written = k // len(KINDS) % 2 == 1
            midis = {a: eb.midi, b: ea.midi} if written else {
                a: _octave_near(ea.midi, eb.pc), b: _octave_near(eb.midi, ea.pc)}
            yield Plant(source, kind, _replace(piece, midis), row, {a: ea.midi, b: eb.midi}, written, piece)
            continue
        if kind == "swap":
            kind = "accidental"
        e = rng.choice(explained)
        shift = rng.choice((-1, 1)) if kind == "accidental" else rng.choice((-4, -3, 3, 4))
        midi = e.midi + shift
        if not 0 <= midi <= 127:
            midi = e.midi - shift
        yield Plant(source, kind, _replace(piece, {e.id: midi}), row, {e.id: e.midi}, clean=piece)


def _octave_near(midi: int, pc: int) -> int:
    """The pitch of class ``pc`` nearest ``midi`` (a swap keeps each note in its register)."""
    up = (pc - midi) % 12
    return midi + up if up <= 6 else midi - (12 - up)


def _replace(piece: Piece, midis: dict[str, int]) -> Piece:
    events: list[Event] = [e.copy(midi=midis[e.id]) if e.id in midis else e for e in piece.events]
    return piece.with_events(events)


def evaluate(plant: Plant, threshold: float, readings: Readings | None = None, detect: bool = True) -> Outcome:
    """Analyse the planted piece, suggest, and compare with the original notes (``readings``:
    analyses to share with a repair of the same plant; ``detect``: check whether the planted piece
    fails the check at all, two more checks a test that asserts only the suggestions can skip)."""
    analysis = analyze(plant.piece, plant.row)
    found = suggest(plant.piece, analysis, readings=readings)
    by_id: dict[str, NoteSuggestions] = {n.event_id: n for n in found}
    wanted = dict(plant.original)
    restored_top = restored3 = False
    reported = any(eid in by_id for eid in wanted)
    for eid in wanted:
        note = by_id.get(eid)
        if note is None:
            continue
        for rank, cand in enumerate(note.candidates[:3]):
            if _restores(cand.edits, wanted, eid, cand.midi):
                restored3 = True
                if rank == 0:
                    restored_top = True
    false_edits = sum(
        1 for n in found
        if n.event_id not in wanted and n.best is not None and n.best.confidence >= threshold
    )
    return Outcome(plant, reported, restored_top, restored3, false_edits, found,
                   _fails_check(plant, analysis) if detect else None)


def _fails_check(plant: Plant, analysis: Analysis) -> bool:
    """The planted piece fails the check a user runs on a score (the analysis profile) with a
    finding the correct piece lacks (a real score may fail the check as written: Webern Op. 21's
    unexplained D; a plant that only leaves that finding is another correct reading, not an error
    to detect)."""
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import check_piece

    report = check_piece(plant.piece, plant.row, profile=profile_for("analysis"), analysis=analysis)
    if report.passed():
        return False
    if plant.clean is None:
        return True
    return bool(_findings(report) - _clean_findings(plant.clean, plant.row))


_CLEAN: dict[tuple[tuple[tuple[str, int], ...], tuple[int, ...]], frozenset[tuple[str, tuple[str, ...]]]] = {}


def _findings(report: object) -> frozenset[tuple[str, tuple[str, ...]]]:
    return frozenset((v.code, tuple(v.event_ids)) for v in report.violations)  # type: ignore[attr-defined]


def _clean_findings(piece: Piece, row: Row) -> frozenset[tuple[str, tuple[str, ...]]]:
    """The findings of the correct piece (checked once per piece)."""
    from serialkit.check.profiles import profile_for
    from serialkit.check.report import check_piece

    key = (tuple((e.id, e.midi) for e in piece.events), row.pcs)
    if key not in _CLEAN:
        _CLEAN[key] = _findings(check_piece(piece, row, profile=profile_for("analysis")))
    return _CLEAN[key]


def _restores(edits: tuple[object, ...], wanted: dict[str, int], eid: str, midi: int) -> bool:
    """Every planted note the suggestion touches gets its original pitch back, and a swap's
    suggestion restores both notes (a single planted note: its pitch)."""
    changes = {e.event_id: e.after for e in edits}  # type: ignore[attr-defined]
    if len(wanted) == 1:
        return midi == wanted[eid] and set(changes) == {eid}
    return changes == wanted


EXERCISE_ROW = "C B G Ab Eb Db D Bb F# F E A"


def exercise(seed: int, statements: int = 4) -> tuple[Piece, Row]:
    """A correct one-voice exercise on ``EXERCISE_ROW``: forms chosen by ``seed``, each note
    lasting until the next (so it passes every rule), in the octave above middle C."""
    from fractions import Fraction

    from serialkit.core.piece import Voice
    from serialkit.core.rows import ALL_FORMS

    rng = random.Random(seed)
    row = Row.parse(EXERCISE_ROW)
    events: list[Event] = []
    onset = Fraction(0)
    for _ in range(statements):
        form = rng.choice(ALL_FORMS)
        for pc in row.form(form):
            length = rng.choice((Fraction(1), Fraction(1, 2), Fraction(1, 2), Fraction(3, 2)))
            events.append(Event(f"n{len(events)}", "v1", onset, length, 60 + pc))
            onset += length
    return Piece(tuple(events), voices=(Voice("v1", low=55, high=80),)), row


def held_canon(seed: int, statements: int = 2) -> tuple[Piece, Row, tuple[str, str]]:
    """A two-voice canon on ``EXERCISE_ROW`` with one planted collision: the lower voice follows the
    upper two octaves down one quarter later, in its rhythm; every note lasts a quarter except one
    held for two (drawn by ``seed``), so the follower enters on that pitch class while the leader
    still holds it. Returns the piece, the row and (the held note, the entry it collides with)."""
    from fractions import Fraction

    from serialkit.core.piece import TimeSignature, Voice
    from serialkit.core.rows import ALL_FORMS

    rng = random.Random(seed)
    row = Row.parse(EXERCISE_ROW)
    pcs = [pc for _ in range(statements) for pc in row.form(rng.choice(ALL_FORMS))]
    held = rng.randrange(2, len(pcs) - 2)
    events: list[Event] = []
    onset = Fraction(0)
    for k, pc in enumerate(pcs):
        length = Fraction(2 if k == held else 1)
        events.append(Event(f"a{k}", "upper", onset, length, 72 + pc))
        events.append(Event(f"b{k}", "lower", onset + 1, length, 48 + pc))
        onset += length
    voices = (Voice("upper", "Upper", 60, 84), Voice("lower", "Lower", 36, 60))
    piece = Piece(tuple(events), voices=voices, time_signatures=(TimeSignature(4, 4),))
    return piece, row, (f"a{held}", f"b{held}")


def assert_wrong_notes_named(family: str, seed: int) -> None:
    """A piece of ``family`` with wrong notes planted (``synth.wrong_notes``) fails the analysis
    profile, and a finding or the unexplained list names one of the planted notes."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from tests.synth import FAMILIES, wrong_notes

    synth = wrong_notes(seed, base=FAMILIES[family])
    assert synth.wrong
    report = check_piece(synth.piece, row=synth.row, profile=profile_for("analysis"))
    named = {e for v in report.verdict.violations for e in v.event_ids} | set(report.unexplained)
    assert not report.verdict.strict
    assert synth.wrong & named
