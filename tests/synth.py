"""Ground-truth generator for row-form inference: seeded synthetic pieces in thirteen texture families.

Every family returns a :class:`Synth`: an untagged :class:`Piece` plus the truth — the label each
note must get, the statements written, and the notes that are deliberately wrong. Used by the
analysis tests (which assert the accuracy targets) and by ``bench/bench_analysis.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import ALL_FORMS, Row, RowForm

IOIS = (Fraction(1, 2), Fraction(1), Fraction(1, 4), Fraction(3, 2), Fraction(2), Fraction(1, 3),
        Fraction(3, 4))


@dataclass
class Synth:
    """A generated piece and its truth."""

    family: str
    piece: Piece
    row: Row
    truth: dict[str, set[tuple[RowForm, int]]] = field(default_factory=dict)
    statements: list[tuple[RowForm, list[str]]] = field(default_factory=list)
    wrong: set[str] = field(default_factory=set)


class _Writer:
    """Collects events and their true labels while a family generator writes statements."""

    def __init__(self, rng: random.Random, row: Row, voices: int) -> None:
        self.rng = rng
        self.row = row
        self.voices = [Voice(f"v{i + 1}", low=70 - 10 * i - 8, high=70 - 10 * i + 14)
                       for i in range(voices)]
        self.events: list[Event] = []
        self.truth: dict[str, set[tuple[RowForm, int]]] = {}
        self.statements: list[tuple[RowForm, list[str]]] = []

    def midi(self, voice: int, pc: int, spread: bool = False) -> int:
        low = self.voices[voice].low or 48
        base = low + (pc - low) % 12
        return base + (12 if spread and self.rng.random() < 0.5 else 0)

    def note(self, voice: int, onset: Fraction, duration: Fraction, pc: int,
             label: tuple[RowForm, int] | None, spread: bool = False) -> str:
        eid = f"n{len(self.events)}"
        self.events.append(Event(eid, self.voices[voice].id, onset, duration,
                                 self.midi(voice, pc, spread)))
        self.truth[eid] = {label} if label else set()
        return eid

    def form(self) -> RowForm:
        return self.rng.choice(ALL_FORMS)

    def ioi(self) -> Fraction:
        return self.rng.choice(IOIS)

    def done(self, family: str) -> Synth:
        piece = Piece(tuple(self.events), voices=tuple(self.voices))
        return Synth(family, piece, self.row, self.truth, self.statements)


def _stream(w: _Writer, voices: list[int], statements: int, start: Fraction = Fraction(0)) -> None:
    """Statements one after another, each note in a voice drawn from ``voices``."""
    onset = start
    for _ in range(statements):
        form = w.form()
        ids = []
        for pos, pc in enumerate(w.row.form(form)):
            ioi = w.ioi()
            ids.append(w.note(w.rng.choice(voices), onset, ioi * w.rng.choice((1, 1, 2)), pc, (form, pos)))
            onset += ioi
        w.statements.append((form, ids))


def one_voice(seed: int, statements: int = 16) -> Synth:
    """One voice states row forms one after another."""
    w = _Writer(random.Random(seed), _row(seed), 1)
    _stream(w, [0], statements)
    return w.done("one_voice")


def row_per_voice(seed: int, statements: int = 6, voices: int = 4) -> Synth:
    """Each voice states its own succession of forms, in its own rhythm."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    for v in range(voices):
        _stream(w, [v], statements, Fraction(w.rng.randrange(4), 2))
    return w.done("row_per_voice")


def distributed(seed: int, statements: int = 16, voices: int = 4) -> Synth:
    """One stream of statements whose notes pass from voice to voice (Klangfarben)."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    _stream(w, list(range(voices)), statements)
    return w.done("distributed")


def concurrent(seed: int, statements: int = 8) -> Synth:
    """Two or three statements at once, each passed between its own pair of voices."""
    rng = random.Random(seed)
    streams = rng.choice((2, 3))
    w = _Writer(rng, _row(seed), 2 * streams)
    for s in range(streams):
        _stream(w, [2 * s, 2 * s + 1], statements, Fraction(rng.randrange(4), 2))
    return w.done("concurrent")


def chords(seed: int, statements: int = 14) -> Synth:
    """Adjacent row segments sounding together as chords, in any vertical order."""
    w = _Writer(random.Random(seed), _row(seed), 2)
    onset = Fraction(0)
    for _ in range(statements):
        form = w.form()
        pcs = w.row.form(form)
        ids: list[str] = []
        pos = 0
        voice = w.rng.randrange(2)
        while pos < 12:
            size = min(w.rng.choice((1, 2, 3, 3, 4)), 12 - pos)
            ioi = w.ioi()
            for p in w.rng.sample(range(pos, pos + size), size):
                ids.append(w.note(voice, onset, ioi, pcs[p], (form, p), spread=True))
            onset += ioi
            pos += size
        w.statements.append((form, ids))
    return w.done("chords")


def _ornament(w: _Writer, v: int, onset: Fraction, form: RowForm, pcs: tuple[int, ...], pos: int) -> Fraction:
    """After the note of position ``pos`` in voice ``v``: one to three repeats of it (one time in
    five) or a two-note tremolo with the next position (one in ten). Returns the onset after them."""
    roll = w.rng.random()
    if roll < 0.2:  # repeated note
        for _ in range(w.rng.randint(1, 3)):
            w.note(v, onset, Fraction(1, 4), pcs[pos], (form, pos))
            onset += Fraction(1, 4)
    elif roll < 0.3 and pos < 11:  # tremolo between this position and the next
        for _ in range(w.rng.randint(2, 3)):
            for q in (pos + 1, pos):
                w.note(v, onset, Fraction(1, 8), pcs[q], (form, q))
                onset += Fraction(1, 8)
    return onset


def repeats(seed: int, statements: int = 8, voices: int = 2) -> Synth:
    """Repeated notes and two-note tremolos inside statements, one row per voice."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    for v in range(voices):
        onset = Fraction(w.rng.randrange(4), 2)
        for _ in range(statements):
            form = w.form()
            pcs = w.row.form(form)
            ids: list[str] = []
            pos = 0
            while pos < 12:
                ioi = w.ioi()
                ids.append(w.note(v, onset, ioi, pcs[pos], (form, pos)))
                onset = _ornament(w, v, onset + ioi, form, pcs, pos)
                pos += 1
            w.statements.append((form, ids))
    return w.done("repeats")


def elided(seed: int, statements: int = 16) -> Synth:
    """Consecutive statements that share notes: the last notes of one begin the next."""
    w = _Writer(random.Random(seed), _row(seed), 2)
    onset = Fraction(0)
    form = w.form()
    carried: list[str] = []
    forms = w.row.forms()
    for _ in range(statements):
        pcs = forms[form]
        ids = list(carried)
        for pos in range(len(carried), 12):
            ioi = w.ioi()
            ids.append(w.note(w.rng.randrange(2), onset, ioi, pcs[pos], (form, pos)))
            onset += ioi
        w.statements.append((form, ids))
        m = w.rng.choice((1, 2, 2, 3))
        options = []
        while m and not options:
            options = [f for f, seq in forms.items() if seq[:m] == pcs[12 - m:]]
            m -= 0 if options else 1
        if not options:
            form, carried = w.form(), []
            continue
        nxt = w.rng.choice(options)
        carried = ids[12 - m:]
        for k, eid in enumerate(carried):
            w.truth[eid].add((nxt, k))
        form = nxt
    return w.done("elided")


def elided_repeats(seed: int, statements: int = 8, voices: int = 2) -> Synth:
    """One row per voice whose statements mostly share their last note with the next statement's
    first (elided), with repeated notes and two-note tremolos inside them, as in ``repeats``: a
    repeat or a tremolo may stand right before or after a shared note."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    forms = w.row.forms()
    for v in range(voices):
        onset = Fraction(w.rng.randrange(4), 2)
        form, carried = w.form(), []
        for _ in range(statements):
            pcs = forms[form]
            ids, onset, after = _elided_statement(w, v, onset, form, carried, ornaments=True)
            form, carried = _next_form(w, pcs, ids, 0.6)
            for e in [*carried, *(x.id for x in w.events[after:])] if carried else ():  # the shared note and its repeats
                w.truth[e].add((form, 0))
    return w.done("elided_repeats")


def _elided_statement(w: _Writer, v: int, onset: Fraction, form: RowForm, carried: list[str],
                      ornaments: bool = False) -> tuple[list[str], Fraction, int]:
    """A statement of ``form`` in voice ``v`` from ``onset`` that begins on the ``carried`` notes
    (shared with the statement before), each of its own notes followed by ``_ornament`` when
    ``ornaments``. Returns its notes, the onset after it and how many notes were written before
    its last note's ornament (what follows is the last position's repeats)."""
    pcs = w.row.forms()[form]
    ids, after = list(carried), len(w.events)
    for pos in range(len(carried), 12):
        ioi = w.ioi()
        ids.append(w.note(v, onset, ioi, pcs[pos], (form, pos)))
        after = len(w.events)
        onset = _ornament(w, v, onset + ioi, form, pcs, pos) if ornaments else onset + ioi
    w.statements.append((form, ids))
    return ids, onset, after


def _next_form(w: _Writer, pcs: tuple[int, ...], ids: list[str], rate: float) -> tuple[RowForm, list[str]]:
    """The form of the statement after the one of ``pcs`` (its notes ``ids``) and the notes it
    begins with: at ``rate``, a form beginning on the last pitch class, which shares the last note
    (elided); else any form, sharing nothing."""
    forms = w.row.forms()
    options = [f for f, seq in forms.items() if seq[0] == pcs[11]] if w.rng.random() < rate else []
    if not options:
        return w.form(), []
    return w.rng.choice(options), ids[11:]


def handed(seed: int, statements: int = 8) -> Synth:
    """Two streams at once: one voice states its own rows, and the other stream's statements are
    handed between two voices, most beginning on the note that ends the one before (elided: the
    shared note sounds in the first voice, the rest of the statement in the other)."""
    w = _Writer(random.Random(seed), _row(seed), 3)
    forms = w.row.forms()
    _stream(w, [0], statements, Fraction(w.rng.randrange(4), 2))
    onset = Fraction(w.rng.randrange(4), 2)
    form, carried, voice = w.form(), [], 1
    for _ in range(statements):
        pcs = forms[form]
        ids, onset, _after = _elided_statement(w, voice, onset, form, carried)
        voice = 3 - voice  # the next statement in the other voice
        form, carried = _next_form(w, pcs, ids, 0.8)
        for e in carried:
            w.truth[e].add((form, 0))
    return w.done("handed")


def pivots(seed: int, statements: int = 8, voices: int = 2) -> Synth:
    """Each voice's next statement begins on the pitch class the last one ended on, struck
    again (a pivot: two notes, the end of one statement and the start of the next)."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    forms = w.row.forms()
    for v in range(voices):
        onset = Fraction(w.rng.randrange(4), 2)
        form = w.form()
        for _ in range(statements):
            ids = []
            for pos, pc in enumerate(forms[form]):
                ioi = w.ioi()
                ids.append(w.note(v, onset, ioi * w.rng.choice((1, 1, 2)), pc, (form, pos)))
                onset += ioi
            w.statements.append((form, ids))
            form = w.rng.choice([f for f in ALL_FORMS if forms[f][0] == forms[form][11]])
    return w.done("pivots")


MAX_TRIES = 2000  # chord splits tried before a generator gives up on a seed


def _chord_sizes(rng: random.Random, end_size: int, start_size: int) -> list[int]:
    """Chord sizes summing to 12: the first ``start_size`` notes, the last ``end_size`` notes."""
    middle = 12 - end_size - start_size
    sizes = [start_size]
    while middle > 0:
        s = min(rng.choice((1, 2, 3, 3, 4)), middle)
        sizes.append(s)
        middle -= s
    sizes.append(end_size)
    return sizes

def _ambiguous(forms: dict[RowForm, tuple[int, ...]], pcs: tuple[int, ...], sizes: list[int]) -> bool:
    """Would another form spell the same succession of chords (then no order can decide)?"""
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    spans = list(zip(bounds, bounds[1:], strict=False))
    sets = [frozenset(pcs[a:b]) for a, b in spans]
    return any(seq != pcs and all(frozenset(seq[a:b]) == x for (a, b), x in zip(spans, sets, strict=True))
               for seq in forms.values())


def invariant_chords(seed: int, statements: int = 12) -> Synth:
    """Rows stated as chords where one statement's last chord and the next one's first chord
    hold the same pitch classes (an invariant segment: P then R, I then RI, or any form pair
    sharing the segment), sounding one after the other: time order decides which is which."""
    w = _Writer(random.Random(seed), _row(seed), 2)
    forms = w.row.forms()
    onset = Fraction(0)
    form = w.form()
    start = w.rng.choice((1, 2, 3, 4))
    for _ in range(statements):
        pcs = forms[form]
        nxt_size = w.rng.choice((3, 4))
        sizes = _chord_sizes(w.rng, nxt_size, start)
        tries = 1
        while _ambiguous(forms, pcs, sizes):  # no other form may spell the same chords
            if tries == MAX_TRIES:  # every split is ambiguous (a row symmetric enough): give up
                raise ValueError(f"invariant_chords({seed}): no chord sizes spell the row unambiguously")
            sizes = _chord_sizes(w.rng, nxt_size, start)
            tries += 1
        ids = []
        pos = 0
        voice = w.rng.randrange(2)
        for s in sizes:
            ioi = w.ioi()
            for p in w.rng.sample(range(pos, pos + s), s):
                ids.append(w.note(voice, onset, ioi, pcs[p], (form, p), spread=True))
            onset += ioi
            pos += s
        w.statements.append((form, ids))
        tail = set(pcs[12 - nxt_size:])
        options = [f for f in ALL_FORMS if set(forms[f][:nxt_size]) == tail and forms[f] != pcs]
        form = w.rng.choice(options)
        start = nxt_size
    return w.done("invariant_chords")

def pivot_voice_change(seed: int, statements: int = 10, voices: int = 3) -> Synth:
    """A statement ends on a pitch class in one voice; the next begins on it in another voice
    while the first voice strikes it again (a repeat of the end), so the pivot moves voices."""
    w = _Writer(random.Random(seed), _row(seed), voices)
    forms = w.row.forms()
    onset = Fraction(0)
    form = w.form()
    voice = w.rng.randrange(voices)
    for _ in range(statements):
        ids = []
        for pos, pc in enumerate(forms[form]):
            ioi = w.ioi()
            if pos == 0 and w.statements:  # the pivot: the old voice repeats, the new one begins
                old = voice
                voice = w.rng.choice([v for v in range(voices) if v != old])
                last_form = w.statements[-1][0]
                w.note(old, onset, ioi, pc, (last_form, 11))
            ids.append(w.note(voice, onset, ioi, pc, (form, pos)))
            onset += ioi
        w.statements.append((form, ids))
        form = w.rng.choice([f for f in ALL_FORMS if forms[f][0] == forms[form][11]])
    return w.done("pivot_voice_change")

def piano_hands(seed: int, statements: int = 12) -> Synth:
    """A piano part: each statement's notes split between the two hands (staves of one part) at
    random, and a quarter of its adjacent pairs struck together, one note in each hand."""
    rng = random.Random(seed)
    w = _Writer(rng, _row(seed), 2)
    w.voices = [Voice("P1/1/1", low=60, high=84), Voice("P1/2/1", low=36, high=59)]
    onset = Fraction(0)
    for _ in range(statements):
        form = w.form()
        pcs = w.row.form(form)
        ids = []
        pos = 0
        while pos < 12:
            ioi = w.ioi()
            if pos < 11 and rng.random() < 0.25:  # a dyad across the hands
                hands = rng.sample((0, 1), 2)
                for p, h in zip((pos, pos + 1), hands, strict=True):
                    ids.append(w.note(h, onset, ioi, pcs[p], (form, p), spread=True))
                pos += 2
            else:
                ids.append(w.note(rng.randrange(2), onset, ioi, pcs[pos], (form, pos), spread=True))
                pos += 1
            onset += ioi
        w.statements.append((form, ids))
    return w.done("piano_hands")


def wrong_notes(seed: int, rate: float | None = None, base: Callable[[int], Synth] | None = None) -> Synth:
    """A clean texture with ``rate`` of its notes changed to another pitch class (never the
    pitch class of the note itself or of its neighbours in its voice: that would be a repeat)."""
    synth = (base or (lambda s: row_per_voice(s, statements=8, voices=3)))(seed)
    if rate is None:
        rate = (1, 2, 3)[seed % 3] / 100  # 1 %, 2 % or 3 % by seed
    rng = random.Random(seed * 7919 + 1)
    events = list(synth.piece.events)
    count = max(1, round(rate * len(events)))
    onsets: dict[str, dict[Fraction, set[int]]] = {}
    for e in events:
        onsets.setdefault(e.voice, {}).setdefault(e.onset, set()).add(e.pc)
    neighbours: dict[int, set[int]] = {}
    for i, e in enumerate(events):
        times = sorted(onsets[e.voice])
        k = times.index(e.onset)
        neighbours[i] = set().union(*(onsets[e.voice][t] for t in times[max(0, k - 1) : k + 2]))
    for i in rng.sample(range(len(events)), count):
        e = events[i]
        # a note that repeats its neighbour's pitch class is a repeated note, not a wrong one
        choices = [d for d in range(1, 12) if (e.pc + d) % 12 not in neighbours[i]]
        shift = rng.choice(choices or list(range(1, 12)))
        events[i] = e.copy(midi=e.midi + shift if e.midi + shift <= 100 else e.midi + shift - 12)
        synth.truth[e.id] = set()
        synth.wrong.add(e.id)
    synth.piece = synth.piece.with_events(events)
    synth.family = "wrong_notes"
    return synth


def catalogued(seed: int, statements: int = 6, voices: int = 3) -> Synth:
    """A random catalogued row (any of its 48 forms as P0), its statements passed between
    voices, some notes sounding together (the texture ``identify`` must see through)."""
    from serialkit.core import catalog

    rng = random.Random(seed)
    entries = catalog.entries()
    entry = entries[rng.randrange(len(entries))]
    row = Row(entry.row.form(rng.choice(ALL_FORMS)))
    w = _Writer(rng, row, voices)
    onset = Fraction(0)
    for _ in range(statements):
        form = w.form()
        ids = []
        for pos, pc in enumerate(row.form(form)):
            ioi = Fraction(0) if pos and rng.random() < 0.15 else w.ioi()  # a dyad now and then
            onset += ioi
            ids.append(w.note(rng.randrange(voices), onset, max(ioi, Fraction(1, 2)), pc, (form, pos)))
        w.statements.append((form, ids))
        onset += w.ioi()
    synth = w.done("catalogued")
    synth.piece = synth.piece.copy(title=None)
    return synth


def _row(seed: int) -> Row:
    pcs = list(range(12))
    random.Random(seed * 31 + 7).shuffle(pcs)
    return Row(tuple(pcs))


FAMILIES: dict[str, Callable[[int], Synth]] = {
    "one_voice": one_voice,
    "row_per_voice": row_per_voice,
    "distributed": distributed,
    "concurrent": concurrent,
    "chords": chords,
    "repeats": repeats,
    "elided": elided,
    "elided_repeats": elided_repeats,
    "handed": handed,
    "pivots": pivots,
    "invariant_chords": invariant_chords,
    "pivot_voice_change": pivot_voice_change,
    "piano_hands": piano_hands,
    "wrong_notes": wrong_notes,
}
CLEAN = tuple(f for f in FAMILIES if f != "wrong_notes")


def large(seed: int, notes: int = 5000) -> Synth:
    """A long piece (about ``notes`` notes): four voices, one row per voice."""
    return row_per_voice(seed, statements=max(1, notes // 48), voices=4)


@dataclass
class Score:
    """Accuracy of one analysis against the truth."""

    notes: int
    correct: int
    statements: int
    recalled: int
    wrong: int
    wrong_unexplained: int

    @property
    def accuracy(self) -> float:
        """Share of clean notes labelled with their true form (or an alias) and position."""
        return self.correct / self.notes if self.notes else 1.0

    @property
    def recall(self) -> float:
        """Share of written statements found (same form class, at least 10 of their notes)."""
        return self.recalled / self.statements if self.statements else 1.0

    @property
    def wrong_reported(self) -> float:
        """Share of wrong notes left unexplained."""
        return self.wrong_unexplained / self.wrong if self.wrong else 1.0


def score(synth: Synth, analysis: object) -> Score:
    """Compare an :class:`~serialkit.core.analysis.Analysis` with the truth."""
    row = synth.row
    forms = row.forms()
    tags = analysis.tags  # type: ignore[attr-defined]
    correct = notes = 0
    for eid, labels in synth.truth.items():
        if eid in synth.wrong:
            continue
        notes += 1
        tag = tags.get(eid)
        if tag is not None and any(
            forms[tag.form] == forms[f] and tag.position == p for f, p in labels
        ):
            correct += 1
    recalled = 0
    found = [(forms[s.form], set(s.members)) for s in analysis.statements]  # type: ignore[attr-defined]
    for form, ids in synth.statements:
        clean = set(ids) - synth.wrong
        if any(seq == forms[form] and len(clean & got) >= min(10, len(clean)) for seq, got in found):
            recalled += 1
    wrong_unexplained = sum(1 for eid in synth.wrong if tags.get(eid) is None)
    return Score(notes, correct, len(synth.statements), recalled, len(synth.wrong), wrong_unexplained)


def whole(family: str, seed: int, notes: int) -> Synth:
    """A whole-work-sized piece of ``family`` (about ``notes`` notes): its generator with as many
    statements as that size needs, measured from the family's default piece of the same seed."""
    make = FAMILIES[family]
    base = make(seed)
    per = max(1, len(base.piece.events)) / max(1, _default_statements(make))
    return make(seed, statements=max(1, round(notes / per)))  # type: ignore[call-arg]


def _default_statements(make: Callable[..., Synth]) -> int:
    import inspect

    param = inspect.signature(make).parameters.get("statements")
    return int(param.default) if param is not None else 1
