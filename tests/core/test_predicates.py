"""Hard predicates: the sweep agrees with naive checks, ORDER's allowances, the predicate verdict's two modes."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from array import array
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from serialkit.core.errors import PieceError
from serialkit.core.piece import (
    Blueprint,
    BlueprintEntry,
    Event,
    Piece,
    Section,
    Tag,
    TimeSignature,
    Voice,
)
from serialkit.core.predicates import (
    PREDICATE_CODES,
    Columns,
    PredicateVerdict,
    Rules,
    TaggedStatement,
    Violation,
    check_collisions,
    check_crossings,
    check_order,
    check_pc,
    check_range,
    check_row,
    check_schedule,
    collision_pairs,
    crossed_notes,
    judge_predicates,
    naive_collision_pairs,
    order_and_row,
    scan_statements,
    tagged_statements,
)
from serialkit.core.predicates import columns as columns_module
from serialkit.core.predicates import voices as voices_module
from serialkit.core.rows import ALL_FORMS, Row, RowForm
from tests.strategies import row_statement_pieces, rows

MICRO = Fraction(1, 1_000_000)
ROW = Row((9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3))  # Webern Op. 21: symmetric, 24 distinct forms

# -- strategies -------------------------------------------------------------------------------

times = st.sampled_from(
    [Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(5, 4), Fraction(2), Fraction(7, 3)]
)
nudges = st.sampled_from([Fraction(0), MICRO, -MICRO, Fraction(1, 5)])
lengths = st.sampled_from([Fraction(0), MICRO, Fraction(1, 6), Fraction(1, 2), Fraction(1), Fraction(3, 2)])


@st.composite
def loose_pieces(draw: st.DrawFn, max_events: int = 40) -> Piece:
    """Untagged events on a coarse grid nudged by 1/1,000,000 so intervals touch, just overlap or
    just miss; few pitch classes, so collisions are common; grace notes included."""
    n_voices = draw(st.integers(1, 4))
    count = draw(st.integers(0, max_events))
    events = []
    for k in range(count):
        onset = max(Fraction(0), draw(times) + draw(nudges))
        duration = draw(lengths)
        v = draw(st.integers(0, n_voices - 1))
        midi = draw(st.sampled_from([60, 61, 72, 48, 67]))
        events.append(Event(f"e{k}", f"v{v}", onset, duration, midi, grace=duration == 0))
    voices = tuple(Voice(f"v{v}") for v in range(n_voices))
    return Piece(tuple(events), voices=voices)


@st.composite
def chained_pairs(draw: st.DrawFn) -> tuple[Piece, Fraction]:
    """Two same-pitch-class notes in different voices; the second starts ``gap`` after the first
    ends (negative gap = overlap)."""
    onset = draw(times)
    first = draw(lengths.filter(bool))
    gap = draw(st.sampled_from([Fraction(0), -MICRO, MICRO, -Fraction(1, 3)]))
    second_onset = onset + first + gap
    assume(second_onset >= 0)
    second = draw(st.sampled_from([Fraction(1), Fraction(1, 2)]))
    piece = Piece(
        (
            Event("a", "v1", onset, first, 62),
            Event("b", "v2", second_onset, second, 74),
        )
    )
    return piece, gap


def _ids(piece: Piece, pairs: list[tuple[int, int]]) -> set[tuple[str, str]]:
    ids = [e.id for e in piece.events]
    return {(min(ids[a], ids[b]), max(ids[a], ids[b])) for a, b in pairs}


# -- COLL -------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(loose_pieces(), st.sampled_from([Fraction(0), MICRO, Fraction(1, 6), Fraction(1, 3)]))
def test_sweep_collisions_agree_with_naive_pairwise(piece: Piece, tolerance: Fraction) -> None:
    assert _ids(piece, collision_pairs(piece, tolerance)) == naive_collision_pairs(piece, tolerance)


@settings(max_examples=60, deadline=None)
@given(chained_pairs())
def test_touching_never_collides_and_a_millionth_overlap_does(case: tuple[Piece, Fraction]) -> None:
    piece, gap = case
    found = check_collisions(piece)
    assert bool(found) == (gap < 0)
    if found:
        assert set(found[0].event_ids) == {"a", "b"}
        assert found[0].code == "COLL"


def test_tolerance_is_exclusive_and_exact() -> None:
    piece = Piece((Event("a", "v1", 0, 1, 60), Event("b", "v2", Fraction(7, 8), 1, 72)))
    assert check_collisions(piece, Fraction(1, 8)) == []  # overlap exactly 1/8: allowed
    assert len(check_collisions(piece, Fraction(1, 8) - MICRO)) == 1
    assert len(check_collisions(piece)) == 1


def test_same_voice_and_other_pitch_classes_do_not_collide() -> None:
    piece = Piece(
        (
            Event("a", "v1", 0, 2, 60),
            Event("b", "v1", 1, 2, 72),  # same voice, octave doubling
            Event("c", "v2", 1, 2, 61),  # other pitch class
        )
    )
    assert check_collisions(piece) == []


def test_collision_message_and_location_name_bar_and_beat() -> None:
    piece = Piece(
        (Event("a", "v1", 4, 2, 60), Event("b", "v2", Fraction(11, 2), 1, 48)),
        time_signatures=(TimeSignature(4, 4),),
    )
    (v,) = check_collisions(piece)
    assert v.location == "voice v2, bar 2, beat 5/2"
    assert "C" in v.message and "overlap 1/2" in v.message


# -- ORDER ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row_statement_pieces())
def test_order_accepts_every_correct_statement(piece: Piece) -> None:
    assert check_order(piece) == []
    assert check_row(piece) == []
    # without statement ids, each voice's runs of one form are found again
    bare = piece.with_events(e.copy(tag=Tag(e.tag.form, e.tag.position)) for e in piece.events if e.tag)
    assert check_order(bare) == []
    assert len(tagged_statements(bare)) == len(tagged_statements(piece))


def _statement(form: RowForm, row: Row, positions: list[int], midis: dict[int, int] | None = None) -> Piece:
    pcs = row.form(form)
    events = []
    for k, q in enumerate(positions):
        midi = (midis or {}).get(k, 60 + pcs[q])
        events.append(Event(f"e{k}", "v1", Fraction(k, 2), Fraction(1, 2), midi, tag=Tag(form, q, "s1")))
    return Piece(tuple(events), row=row)


@settings(max_examples=120, deadline=None)
@given(rows, st.sampled_from(ALL_FORMS), st.data())
def test_order_rejects_every_premature_recurrence(row: Row, form: RowForm, data: st.DataObject) -> None:
    j = data.draw(st.integers(1, 10), label="reached")
    k = data.draw(st.integers(0, j), label="recurring")
    positions = list(range(j + 1)) + [k] + list(range(j + 1, 12))
    piece = _statement(form, row, positions)
    rules = data.draw(st.sampled_from([Rules(), Rules(immediate_repeats=True), Rules(oscillation_window=1)]))
    found = {v.event_ids[0] for v in check_order(piece, rules)}
    allowed = (k == j and rules.immediate_repeats) or (k == j - 1 and rules.oscillation_window >= 1)
    assert (f"e{j + 1}" in found) != allowed
    assert found <= {f"e{j + 1}"}


@settings(max_examples=60, deadline=None)
@given(rows, st.sampled_from(ALL_FORMS), st.integers(0, 10), st.integers(1, 11))
def test_a_wrong_pitch_repeating_an_earlier_pitch_class_is_a_recurrence(
    row: Row, form: RowForm, earlier: int, later: int
) -> None:
    assume(earlier < later)
    pcs = row.form(form)
    piece = _statement(form, row, list(range(12)), {later: 60 + pcs[earlier]})
    assert [v.event_ids for v in check_order(piece)] == [(f"e{later}",)]
    assert [v.event_ids for v in check_row(piece)] == [(f"e{later}",)]


def test_gaps_are_not_order_violations() -> None:
    piece = _statement(RowForm("P", 0), ROW, [0, 1, 4, 5, 11])
    assert check_order(piece) == []


def test_late_note_is_an_order_violation() -> None:
    piece = _statement(RowForm("P", 0), ROW, [0, 1, 3, 2, 4])
    (v,) = check_order(piece)
    assert v.event_ids == ("e3",) and "must advance" in v.message


def test_oscillation_window_counts_extra_notes() -> None:
    form = RowForm("I", 4)
    positions = [0, 1, 2, 3, 2, 3, 2, 4, 5]  # three extra notes alternating positions 2 and 3
    piece = _statement(form, ROW, positions)
    assert len(check_order(piece, Rules(oscillation_window=3))) == 0
    (v,) = check_order(piece, Rules(oscillation_window=2))
    assert v.event_ids == ("e6",) and "oscillation" in v.message
    assert len(check_order(piece)) == 3  # not declared: every return is a violation


def test_immediate_repeat_must_be_the_same_note() -> None:
    form = RowForm("P", 0)
    pcs = ROW.form(form)
    same = _statement(form, ROW, [0, 1, 1, 2])
    octave = _statement(form, ROW, [0, 1, 1, 2], {2: 72 + pcs[1]})
    assert check_order(same, Rules(immediate_repeats=True)) == []
    assert len(check_order(same)) == 1
    assert len(check_order(octave, Rules(immediate_repeats=True))) == 1


def test_implicit_statements_split_on_form_change_and_completion() -> None:
    events = []
    t = Fraction(0)
    for s, label in enumerate(["P0", "P0", "RI3"]):
        form = RowForm.parse(label)
        for q, pc in enumerate(ROW.form(form)):
            events.append(Event(f"{s}-{q}", "v1", t, Fraction(1, 2), 60 + pc, tag=Tag(form, q)))
            t += Fraction(1, 2)
    piece = Piece(tuple(events), row=ROW)
    stmts = tagged_statements(piece)
    assert [len(s.indices) for s in stmts] == [12, 12, 12]
    assert check_order(piece) == []
    # ids that cut one statement into singletons hide a recurrence; without ids it shows
    cheat = piece.with_events(e.copy(tag=Tag(e.tag.form, e.tag.position, e.id)) for e in events[:6])
    cheat = cheat.with_events(cheat.events + (events[2].copy(id="again", onset=Fraction(3)),))
    assert check_order(cheat) == []
    assert [v.event_ids for v in check_order(cheat, statements=tagged_statements(cheat, use_ids=False))] == [("again",)]


# -- ROW, PC, RANGE, CROSS, SCHED -------------------------------------------------------------


def test_row_uses_the_piece_convention() -> None:
    form = RowForm("P", 9)  # absolute P9 on A = relative P0 of this row
    events = tuple(
        Event(f"e{q}", "v1", q, 1, 60 + pc, tag=Tag(form, q)) for q, pc in enumerate(ROW.form("P0"))
    )
    assert check_row(Piece(events, row=ROW, convention="absolute")) == []
    assert len(check_row(Piece(events, row=ROW))) == 12 - sum(
        a == b for a, b in zip(ROW.form("P0"), ROW.form("P9"), strict=True)
    )
    assert check_row(Piece(events)) == []  # no row: nothing to check


def test_pc_claims_must_match_midi_and_tag() -> None:
    tag = Tag(RowForm("P", 0), 0)
    piece = Piece(
        (
            Event("ok", "v1", 0, 1, 69, tag=tag, claimed_pc=9),
            Event("midi", "v1", 1, 1, 70, claimed_pc=9),
            Event("tag", "v1", 2, 1, 70, tag=tag, claimed_pc=10),
        ),
        row=ROW,
    )
    assert [v.event_ids for v in check_pc(piece)] == [("midi",), ("tag",)]


def test_range_is_inclusive() -> None:
    voices = (Voice("v1", low=60, high=72), Voice("v2"))
    piece = Piece(
        (Event("lo", "v1", 0, 1, 60), Event("hi", "v1", 1, 1, 72), Event("out", "v1", 2, 1, 73),
         Event("free", "v2", 0, 1, 5)),
        voices=voices,
    )
    (v,) = check_range(piece)
    assert v.event_ids == ("out",) and "above" in v.message


def _naive_crossed(piece: Piece) -> set[str]:
    order = {v: k for k, v in enumerate(piece.voice_ids)}
    out = set()
    for e in piece.events:
        if e.duration == 0:
            continue
        for f in piece.events:
            if f.duration == 0 or not (f.onset <= e.onset < f.end) or f.voice == e.voice:
                continue
            below = order[f.voice] > order[e.voice]
            if (below and f.midi > e.midi) or (not below and f.midi < e.midi):
                out.add(e.id)
    return out


@settings(max_examples=120, deadline=None)
@given(loose_pieces(max_events=30))
def test_crossings_agree_with_naive_definition(piece: Piece) -> None:
    crossed, judged = crossed_notes(piece)
    assert {piece.events[i].id for i in crossed} == _naive_crossed(piece)
    assert judged == sum(1 for e in piece.events if e.duration > 0)


def test_crossing_share_limit() -> None:
    voices = (Voice("up"), Voice("down"))
    events = [Event(f"u{k}", "up", k, 1, 72) for k in range(10)]
    events += [Event(f"d{k}", "down", k, 1, 60 if k else 74) for k in range(10)]
    piece = Piece(tuple(events), voices=voices)
    crossed, judged = crossed_notes(piece)
    assert judged == 20 and len(crossed) == 2  # u0 below d0, d0 above u0
    assert check_crossings(piece, Fraction(1, 10)) == []
    (v,) = check_crossings(piece, Fraction(1, 20))
    assert set(v.event_ids) == {"u0", "d0"}


def _scheduled_piece(plan: dict[str, list[str]], sung: dict[str, list[str]]) -> Piece:
    events = []
    for voice, labels in sung.items():
        t = Fraction(0)
        for s, label in enumerate(labels):
            form = RowForm.parse(label)
            for q, pc in enumerate(ROW.form(form)):
                events.append(
                    Event(f"{voice}{s}-{q}", voice, t, 1, 60 + pc, section="A", tag=Tag(form, q, f"{voice}.{s}"))
                )
                t += 1
    entries = tuple(BlueprintEntry("A", v, tuple(RowForm.parse(f) for f in fs)) for v, fs in plan.items())
    return Piece(tuple(events), row=ROW, blueprint=Blueprint(entries), sections=(Section("A", Fraction(0), Fraction(100)),))


def test_schedule_follows_each_voice_statement_sequence() -> None:
    plan = {"v1": ["P0", "I3"], "v2": ["R5"]}
    assert check_schedule(_scheduled_piece(plan, {"v1": ["P0", "I3"], "v2": ["R5"]})) == []
    swapped = check_schedule(_scheduled_piece(plan, {"v1": ["I3", "P0"], "v2": ["R5"]}))
    assert len(swapped) == 24 and all(v.code == "SCHED" for v in swapped)
    extra = check_schedule(_scheduled_piece(plan, {"v1": ["P0", "I3"], "v2": ["R5", "R5"]}))
    assert len(extra) == 12 and "beyond" in extra[0].message


def test_schedule_accepts_an_alias_of_a_symmetric_row() -> None:
    alias = ROW.aliases("P0")[0]
    assert check_schedule(_scheduled_piece({"v1": ["P0"]}, {"v1": [alias.label]})) == []


# -- verdict -------------------------------------------------------------------------------------


@st.composite
def scheduled_pieces(draw: st.DrawFn) -> Piece:
    piece = draw(row_statement_pieces(max_voices=3, max_statements=2))
    forms = st.sampled_from(ALL_FORMS)
    entries = tuple(
        BlueprintEntry("S", v, tuple(draw(st.lists(forms, min_size=0, max_size=2)))) for v in piece.voice_ids
    )
    events = list(piece.events)
    if events and draw(st.booleans()):
        k = draw(st.integers(0, len(events) - 1))
        events[k] = events[k].copy(midi=events[k].midi + 1)  # a wrong note
    return piece.copy(
        events=tuple(e.copy(section="S") for e in events), blueprint=Blueprint(entries)
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scheduled_pieces())
def test_verdict_strict_implies_relaxed_and_relaxed_ignores_only_sched(piece: Piece) -> None:
    verdict = judge_predicates(piece)
    assert not verdict.strict or verdict.relaxed
    assert verdict.relaxed == all(v.code == "SCHED" for v in verdict.violations)
    assert verdict.strict == (verdict.violations == ())
    assert sum(verdict.counts().values()) == len(verdict.violations)
    # judge_predicates checks ROW inside the ORDER pass; it must find exactly what the lone checks find
    assert verdict.by_code("ROW") == check_row(piece)
    assert verdict.by_code("ORDER") == check_order(piece)


def test_verdict_reports_both_modes_and_notes() -> None:
    piece = _scheduled_piece({"v1": ["I3"]}, {"v1": ["P0"]})
    verdict = judge_predicates(piece)
    assert (verdict.strict, verdict.relaxed) == (False, True)
    assert verdict.passed("relaxed") and not verdict.passed("strict")
    data = verdict.to_dict()
    assert data["counts"]["SCHED"] == 12 and data["strict"] is False and data["relaxed"] is True
    untagged = judge_predicates(Piece((Event("a", "v1", 0, 1, 60),)))
    assert untagged.strict and any("no event carries" in n for n in untagged.notes)
    with pytest.raises(PieceError):
        judge_predicates(piece, codes=["NOPE"])


def test_columns_ticks_are_exact_over_mixed_denominators() -> None:
    piece = Piece(
        (Event("a", "v1", Fraction(1, 3), Fraction(1, 5), 60), Event("b", "v2", MICRO, Fraction(2, 7), 61))
    )
    cols = Columns(piece)
    for k, e in enumerate(piece.events):
        assert Fraction(cols.start[k], cols.scale) == e.onset
        assert Fraction(cols.end[k], cols.scale) == e.end


tick_times = st.sampled_from(
    [Fraction(0), Fraction(1, 2), Fraction(1, 3), Fraction(2, 5), Fraction(3), Fraction(5, 7), MICRO, Fraction(9, 4)]
)


@st.composite
def read_cases(draw: st.DrawFn) -> tuple[Piece, tuple[int, ...]]:
    """Events over mixed denominators (new ones turning up late, so the one-pass reading grows
    its scale), grace notes, tags or none, in heard order or not; and extra denominators."""
    n_voices = draw(st.integers(1, 3))
    events = []
    for k in range(draw(st.integers(0, 14))):
        onset = draw(tick_times) + draw(st.sampled_from([0, 0, 0, 1]))
        duration = draw(st.sampled_from([Fraction(0), Fraction(1, 6), Fraction(1), Fraction(3, 11), MICRO]))
        tag = draw(st.one_of(st.none(), st.builds(Tag, st.sampled_from(ALL_FORMS), st.sampled_from([0, 1, 11]))))
        events.append(Event(f"e{k}", f"v{draw(st.integers(0, n_voices - 1))}", onset, duration,
                            draw(st.integers(40, 80)), grace=duration == 0, tag=tag,
                            claimed_pc=draw(st.one_of(st.none(), st.integers(0, 11)))))
    if draw(st.booleans()):  # in heard order, or all but one pair of neighbours
        events.sort(key=lambda e: (e.onset, 16 if e.tag is None else e.tag.position))
        k = draw(st.integers(-1, max(-1, len(events) - 2)))
        if k >= 0:
            events[k], events[k + 1] = events[k + 1], events[k]
    extra = tuple(draw(st.lists(st.sampled_from([2, 3, 8, 1000]), max_size=2)))
    return Piece(tuple(events), voices=tuple(Voice(f"v{v}") for v in range(n_voices))), extra


@settings(max_examples=200, deadline=None)
@given(read_cases())
def test_one_pass_columns_agree_with_reading_the_fractions(case: tuple[Piece, tuple[int, ...]]) -> None:
    """The one-pass reading (growing scale, sortedness on the way) against the plain definition."""
    piece, extra = case
    cols = Columns(piece, extra)
    index = {v: k for k, v in enumerate(piece.voice_ids)}
    assert columns_module._read(piece.events, index, extra) == columns_module._read_plain(piece.events, index, extra)
    dens = {e.onset.denominator for e in piece.events} | {e.duration.denominator for e in piece.events}
    assert cols.scale == math.lcm(1, *dens, *extra)
    assert [Fraction(s, cols.scale) for s in cols.start] == [e.onset for e in piece.events]
    assert [Fraction(t, cols.scale) for t in cols.end] == [e.end for e in piece.events]
    assert cols.silent == sum(1 for e in piece.events if e.duration == 0)
    assert cols.untagged == sum(1 for e in piece.events if e.tag is None)
    assert cols.claims == sum(1 for e in piece.events if e.claimed_pc is not None)
    heard = sorted(range(cols.n), key=lambda i: (piece.events[i].onset, cols.positions[i], i))
    assert list(cols.order) == heard
    assert cols.in_order == (heard == list(range(cols.n)))


# -- values -------------------------------------------------------------------------------------


def test_values_are_frozen_slotted_and_serialisable() -> None:
    v = Violation("ROW", ["a"], "message", "voice v1, bar 1, beat 1")  # type: ignore[arg-type]
    assert v.event_ids == ("a",) and hash(v) == hash(Violation.from_dict(v.to_dict()))
    for value in (v, Rules(), PredicateVerdict(())):
        assert not hasattr(value, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, "X")
    assert set(PredicateVerdict(()).counts()) == set(PREDICATE_CODES)
    assert Rules(tolerance=1).tolerance == Fraction(1)


@pytest.mark.parametrize(
    "kwargs",
    [{"tolerance": 0.125}, {"tolerance": -1}, {"oscillation_window": -1}, {"max_crossing_share": 2}],
)
def test_rules_reject_bad_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(PieceError):
        Rules(**kwargs)  # type: ignore[arg-type]


def test_predicates_stay_pure() -> None:
    code = (
        "import sys, serialkit.core.predicates, serialkit.core.piece; "
        "bad = [m for m in ('music21', 'lxml', 'verovio', 'openai', 'click', 'jsonschema', 'pluggy') "
        "if m in sys.modules]; print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_statement_holds_one_form() -> None:
    piece = _statement(RowForm("P", 0), ROW, [0, 1, 2, 3])
    odd = piece.events[2]
    mixed = piece.with_events(
        [*piece.events[:2], odd.copy(tag=Tag(RowForm("I", 0), 2, "s1")), piece.events[3]]
    )
    (v,) = check_order(mixed)
    assert v.event_ids == (odd.id,) and "in a statement of P0" in v.message


# -- fast paths against the straightforward checks ------------------------------------------------


@st.composite
def homorhythmic_pieces(draw: st.DrawFn) -> Piece:
    """Voices that share one rhythm (note against note) with overlapping registers, some sharing
    it only in part: a voice may drop notes, hold a note over the next (a chord in one voice) or
    have grace notes, so the note-against-note and the bisection paths of CROSS both run. A
    holding voice starts a note at every step but holds some over the next: in the same rhythm,
    but two notes at once."""
    n_voices = draw(st.integers(2, 4))
    steps = draw(st.lists(st.sampled_from([Fraction(1, 2), Fraction(1, 3), Fraction(1)]), min_size=1, max_size=12))
    onsets = [sum(steps[:k], Fraction(0)) for k in range(len(steps))]
    events = []
    kinds = {
        "plain": ["note"],  # every step a note: in the same rhythm as any other plain voice
        "holding": ["note", "held"],
        "mixed": ["note", "note", "rest", "held", "grace"],
    }
    for v in range(n_voices):
        style = kinds[draw(st.sampled_from(["plain", "plain", "holding", "mixed", "mixed"]))]
        for k, (onset, step) in enumerate(zip(onsets, steps, strict=True)):
            kind = draw(st.sampled_from(style))
            if kind == "rest":
                continue
            duration = {"note": step, "held": step * 2, "grace": Fraction(0)}[kind]
            midi = draw(st.integers(60 - 4 * v, 66 - 4 * v))
            events.append(Event(f"v{v}.{k}", f"v{v}", onset, duration, midi, grace=kind == "grace"))
    voices = tuple(Voice(f"v{v}") for v in range(n_voices))
    return Piece(tuple(events), voices=voices)


@settings(max_examples=150, deadline=None)
@given(homorhythmic_pieces())
def test_crossings_of_voices_in_one_rhythm_agree_with_naive_definition(piece: Piece) -> None:
    crossed, judged = crossed_notes(piece)
    assert {piece.events[i].id for i in crossed} == _naive_crossed(piece)
    assert len(crossed) == len(set(crossed))
    starts = [piece.events[i].onset for i in crossed]
    assert starts == sorted(starts)
    assert judged == sum(1 for e in piece.events if e.duration > 0)


@settings(max_examples=40, deadline=None)
@given(homorhythmic_pieces(), st.sampled_from([Fraction(1, 2**40 * 3**25), Fraction(1, 7**23)]))
def test_crossings_with_ticks_beyond_64_bits_agree_with_naive_definition(piece: Piece, tiny: Fraction) -> None:
    """A denominator that makes the ticks overflow 64 bits: the voices' ticks stay Python lists."""
    nudged = piece.with_events([e.copy(onset=e.onset + tiny) if k == 0 else e for k, e in enumerate(piece.events)])
    cols = Columns(nudged)
    assume(len(cols.end) > 0 and max(cols.end) >= 2**63)  # a drawn piece may be all rests: no notes
    crossed, _ = crossed_notes(cols)
    assert {nudged.events[i].id for i in crossed} == _naive_crossed(nudged)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**63 - 1), max_size=12), st.data(), st.booleans())
def test_notes_in_turn_at_once_agree_with_the_plain_test(starts: list[int], data: st.DataObject, lists: bool) -> None:
    """voices._in_turn on 64-bit lanes against comparing each end with the next onset: each end
    one tick before, on or after the next onset (the edge of the test), or anywhere."""
    ends = []
    for k in range(len(starts)):
        nxt = starts[k + 1] if k + 1 < len(starts) else 0
        near = data.draw(st.sampled_from([nxt - 1, nxt, nxt + 1]).filter(lambda t: 0 <= t < 2**63))
        ends.append(data.draw(st.one_of(st.just(near), st.integers(0, 2**63 - 1))))
    plain = all(e <= s for e, s in zip(ends, starts[1:], strict=False))
    assert voices_module._in_turn(*((starts, ends) if lists else (array("q", starts), array("q", ends)))) == plain


pitch_rows = st.integers(0, 40).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 127), min_size=n, max_size=n),
                        st.lists(st.integers(0, 127), min_size=n, max_size=n))
)


@settings(max_examples=300, deadline=None)
@given(pitch_rows)
def test_pitches_compared_a_byte_a_note_agree_with_comparing_each_pair(rows: tuple[list[int], list[int]]) -> None:
    a, b = rows
    n = len(a)
    lanes = voices_module._sounds_higher(
        int.from_bytes(bytes(a), "little"), int.from_bytes(bytes(b), "little"), voices_module._tops(n)
    )
    assert list(lanes.to_bytes(n, "little")) == [128 if y > x else 0 for x, y in zip(a, b, strict=True)]


@st.composite
def mislabelled_statements(draw: st.DrawFn) -> tuple[Piece, Rules]:
    """Statements with their tags or notes disturbed: positions moved, notes swapped, repeated or
    transposed, another form object (equal or not) on one note, statement ids crossing voices."""
    piece = draw(row_statement_pieces(max_voices=3, max_statements=3))
    assert piece.row is not None
    events = list(piece.events)
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, len(events) - 1))
        e = events[k]
        assert e.tag is not None
        kind = draw(st.sampled_from(["position", "swap", "repeat", "transpose", "form", "same_form", "statement"]))
        if kind == "position":
            events[k] = e.copy(tag=Tag(e.tag.form, draw(st.integers(0, 11)), e.tag.statement))
        elif kind == "swap" and k + 1 < len(events):
            f = events[k + 1]
            events[k], events[k + 1] = e.copy(midi=f.midi, tag=f.tag), f.copy(midi=e.midi, tag=e.tag)
        elif kind == "repeat" and k + 1 < len(events):
            f = events[k + 1]
            events[k + 1] = f.copy(midi=e.midi + draw(st.sampled_from([0, 12])), tag=e.tag)
        elif kind == "transpose":
            events[k] = e.copy(midi=e.midi + draw(st.integers(1, 11)))
        elif kind == "form":
            events[k] = e.copy(tag=Tag(draw(st.sampled_from(ALL_FORMS)), e.tag.position, e.tag.statement))
        elif kind == "same_form":  # an equal form object, not the statement's own
            form = RowForm(e.tag.form.type, e.tag.form.n)
            events[k] = e.copy(tag=Tag(form, e.tag.position, e.tag.statement))
        elif kind == "statement":
            events[k] = e.copy(tag=Tag(e.tag.form, e.tag.position, draw(st.sampled_from(["v1.0", "v2.1", None]))))
    rules = Rules(
        immediate_repeats=draw(st.booleans()),
        oscillation_window=draw(st.integers(0, 2)),
        octave_repeats=draw(st.booleans()),
    )
    return piece.with_events(events), rules


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mislabelled_statements(), st.booleans())
def test_fused_order_and_row_agree_with_walking_every_statement(case: tuple[Piece, Rules], ids: bool) -> None:
    """order_and_row skips the statements the scan finds clean; without that judgement it walks every one."""
    piece, rules = case
    assert piece.row is not None
    cols = Columns(piece)
    statements, clean, _ = scan_statements(cols, piece.row, use_ids=ids)
    assert statements == tagged_statements(cols, use_ids=ids) and clean is not None
    for stmt, ok in zip(statements, clean, strict=True):  # clean: the plain definition
        tags = [piece.events[i].tag for i in stmt.indices]
        pcs = piece.row.form(stmt.form, piece.convention)
        assert ok == (
            all(t is not None and t.form is stmt.form for t in tags)
            and all(a.position < b.position for a, b in zip(tags, tags[1:], strict=False))  # type: ignore[union-attr]
            and all(pcs[t.position] == piece.events[i].midi % 12 for t, i in zip(tags, stmt.indices, strict=True))  # type: ignore[union-attr]
        )
    order, row = order_and_row(cols, rules, statements, piece.row, clean)
    assert order == order_and_row(cols, rules, statements)[0]  # walking every statement
    assert row == check_row(cols, piece.row)


def _naive_schedule(piece: Piece, statements: list[TaggedStatement]) -> list[str]:
    """Event ids failing SCHED, in onset order: the n-th statement a voice starts in a section
    must carry the n-th form scheduled there (or an alias of it)."""
    assert piece.blueprint is not None and piece.row is not None
    of = {i: k for k, s in enumerate(statements) for i in s.indices}
    heard = sorted(of, key=lambda i: (piece.events[i].onset, piece.events[i].tag.position, i))  # type: ignore[union-attr]
    started: dict[tuple[str | None, str], list[int]] = {}
    bad = []
    for i in heard:
        e = piece.events[i]
        section = e.section if e.section is not None else piece.section_of(e.onset)
        mine = started.setdefault((section, e.voice), [])
        if of[i] not in mine:
            mine.append(of[i])
        nth = mine.index(of[i])
        forms = piece.blueprint.forms_for(section, e.voice)
        assert e.tag is not None
        if nth >= len(forms) or piece.row.form(forms[nth]) != piece.row.form(e.tag.form):
            bad.append(e.id)
    return bad


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mislabelled_statements(), st.data())
def test_schedule_agrees_with_naive_statement_count(case: tuple[Piece, Rules], data: st.DataObject) -> None:
    piece, _ = case
    end = max(e.end for e in piece.events)
    cut = data.draw(st.sampled_from([end / 3, end / 2, end]), label="cut")
    sections = (Section("A", Fraction(0), cut), Section("B", cut, end + 1))
    forms = st.lists(st.sampled_from(ALL_FORMS), min_size=0, max_size=3)
    entries = tuple(
        BlueprintEntry(s.id, v, tuple(data.draw(forms, label=f"{s.id}{v}"))) for s in sections for v in piece.voice_ids
    )
    events = [e.copy(section=data.draw(st.sampled_from([None, None, "A", "B"]), label="section")) for e in piece.events]
    if data.draw(st.booleans(), label="own sections"):  # every event's own section, often one per statement
        events = [e.copy(section="A" if e.onset < cut else "B") for e in events]
    piece = piece.copy(events=tuple(events), sections=sections, blueprint=Blueprint(entries))
    if data.draw(st.booleans(), label="kept"):  # the blueprint the statements keep, but for one form
        plan: dict[tuple[str | None, str], list[RowForm]] = {}
        for stmt in tagged_statements(piece):
            e = piece.events[stmt.indices[0]]
            plan.setdefault((e.section, e.voice), []).append(stmt.form)
        if plan and data.draw(st.booleans(), label="one off"):
            forms_of = plan[data.draw(st.sampled_from(sorted(plan, key=str)), label="off")]
            forms_of[data.draw(st.integers(0, len(forms_of) - 1), label="k")] = data.draw(st.sampled_from(ALL_FORMS))
        blueprint = Blueprint(tuple(BlueprintEntry(sec, v, tuple(f)) for (sec, v), f in plan.items() if sec is not None))
        piece = piece.copy(blueprint=blueprint)
    statements = tagged_statements(piece)
    found = check_schedule(piece, statements)
    assert [v.event_ids[0] for v in found] == _naive_schedule(piece, statements)
    scan = scan_statements(piece)
    assert check_schedule(piece, scan.statements, None, scan.homes) == found  # statement by statement
    assert check_schedule(piece) == found
