"""Suggested corrections (core.suggest): error models, planted errors restored, correct notes kept."""

from __future__ import annotations

import functools
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from serialkit.core.analysis import analyze
from serialkit.core.piece import Piece, Tag
from serialkit.core.predicates import Violation
from serialkit.core.rows import Row
from serialkit.core.suggest import DEFAULT_THRESHOLD, Readings, error_model, plan_repairs, suggest
from serialkit.core.suggest.trouble import _doubled, _out_of_line
from tests.planted import Outcome, Plant, evaluate, plant_errors
from tests.synth import CLEAN, FAMILIES, one_voice

WEBERN = {
    "webern-op21-i-mm1-25.mei": "A F# G G# E F B Bb D C# C Eb",
    "webern-op27-ii-mm1-11.mei": "Eb B Bb D C# C F# E G F A Ab",
}


def test_error_models() -> None:
    assert error_model(60, 61) == "accidental"
    assert error_model(61, 60) == "accidental"
    assert error_model(60, 63) == "third"
    assert error_model(60, 56) == "third"
    assert error_model(60, 62) == "step"
    assert error_model(60, 66) == "other"


def _changed(before: Piece, after: Piece) -> dict[str, int]:
    return {e.id: e.midi for e, o in zip(after.events, before.events, strict=True) if e.midi != o.midi}


def _plant(kind: str) -> Plant:
    synth = one_voice(3, statements=6)
    return next(p for p in plant_errors(synth.piece, synth.row, "one_voice/3", 3, 5) if p.kind == kind)


@pytest.mark.parametrize("kind", ["accidental", "third", "swap"])
def test_planted_error_is_restored_by_the_top_suggestion(kind: str) -> None:
    plant = _plant(kind)
    analysis = analyze(plant.piece, plant.row)
    found = {n.event_id: n for n in suggest(plant.piece, analysis)}
    hit = [found[eid] for eid in plant.original if eid in found]
    assert hit, "the planted note is reported"
    best = hit[0].best
    assert best is not None
    assert {e.event_id: e.after for e in best.edits} == (
        plant.original if kind == "swap" else {hit[0].event_id: plant.original[hit[0].event_id]}
    )
    assert best.model == kind
    assert best.confidence >= DEFAULT_THRESHOLD
    assert best.statement is not None and best.label.startswith(best.form.label + ":")
    data = hit[0].to_dict()
    assert data["candidates"][0]["edits"][0]["before"] == plant.piece.event(hit[0].event_id).midi


@pytest.mark.parametrize("kind", ["accidental", "third", "swap"])
def test_plan_repairs_restores_exactly_the_planted_notes(kind: str) -> None:
    plant = _plant(kind)
    fixed, applied = plan_repairs(plant.piece, plant.row)
    assert _changed(plant.piece, fixed) == plant.original
    assert len(applied) == 1 and applied[0].unexplained_after < applied[0].unexplained_before
    assert not analyze(fixed, plant.row).unexplained


def test_only_limits_the_notes_a_repair_may_change() -> None:
    plant = _plant("accidental")
    fixed, applied = plan_repairs(plant.piece, plant.row, only=["nobody"])
    assert applied == () and fixed == plant.piece


def test_a_tagged_note_a_row_finding_names_gets_its_forms_pitch() -> None:
    synth = one_voice(1, statements=2)
    first = synth.piece.events[0]
    (form, position), = synth.truth[first.id]
    wrong = synth.piece.with_events(
        [first.copy(midi=first.midi + 1, tag=Tag(form, position)), *synth.piece.events[1:]]
    )
    finding = Violation("ROW", (first.id,), "wrong", "here")
    bare = wrong.with_events(e.copy(tag=None) for e in wrong.events)
    found = {n.event_id: n for n in suggest(wrong, analyze(bare, synth.row), [finding])}
    assert [c.midi for c in found[first.id].candidates][:1] == [first.midi]


@pytest.mark.slow
def test_planted_sample_reaches_the_targets() -> None:
    """A fixed sample (four families, three kinds): the top suggestion restores >= 90 %."""
    outcomes = []
    for family in ("one_voice", "distributed", "elided", "pivots"):
        for seed in (0,):
            synth = FAMILIES[family](seed)
            outcomes += [evaluate(p, DEFAULT_THRESHOLD)
                         for p in plant_errors(synth.piece, synth.row, family, 3, seed)]
    top = sum(o.top for o in outcomes) / len(outcomes)
    top3 = sum(o.top3 for o in outcomes) / len(outcomes)
    print(f"\nplanted sample: {len(outcomes)} plants, top {top:.1%}, top three {top3:.1%}")
    assert top >= 0.9 and top3 >= top


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.filter_too_much])
@given(family=st.sampled_from(CLEAN), seed=st.integers(0, 10_000))
def test_correct_pieces_are_never_corrected(family: str, seed: int) -> None:
    """Property: a correct synthetic piece the analysis explains gets no edit. (Known limit: where
    the analysis loses most of a correct statement — concurrent seed 3110 — a repair can rewrite a
    note near it.)"""
    try:
        synth = FAMILIES[family](seed)
    except ValueError:  # a row too symmetric for the family (invariant_chords 85): no piece to check
        assume(False)
        raise
    assume(not analyze(synth.piece, synth.row).unexplained)
    fixed, applied = plan_repairs(synth.piece, synth.row)
    assert applied == () and _changed(synth.piece, fixed) == {}


@pytest.mark.slow
@pytest.mark.parametrize(("family", "seed"), [("concurrent", 371)])  # repeats 6684, 7070 now read whole
def test_correct_notes_the_analysis_leaves_beside_their_statement_are_not_corrected(family: str, seed: int) -> None:
    """Correct pieces whose analysis leaves notes unexplained right beside their own statement (a
    repeat or tremolo it did not take in, a position of their voice given to another voice): no
    suggestion is made for them and a repair changes nothing."""
    synth = FAMILIES[family](seed)
    analysis = analyze(synth.piece, synth.row)
    assert analysis.unexplained, "the case still exercises unexplained correct notes"
    readings = Readings()  # the repair's first round is the suggestion just made: read once
    found = suggest(synth.piece, analysis, readings=readings)
    assert not [n for n in found if n.best is not None and n.best.confidence >= DEFAULT_THRESHOLD]
    plan = plan_repairs(synth.piece, synth.row, readings=readings)
    assert plan.applied == () and _changed(synth.piece, plan.piece) == {}


SHARED_PLANTS = {("one_voice", 3, "accidental"): "planted-one_voice-3", ("chords", 1, "swap"): "planted-chords-1"}
"""Plants whose outcome two tests read (``_outcome``), each with its ``xdist_group``: the
first accidental of one_voice 3 (restored on top, and no confident edit of a correct note near
it), the swap of chords 1 (restored on top, and no confident edit near it)."""


def _shared(family: str, seed: int, kind: str) -> list[pytest.MarkDecorator]:
    group = SHARED_PLANTS.get((family, seed, kind))
    return [pytest.mark.xdist_group(group)] if group else []


COVERED = {(2, "one_voice", "accidental"), (1, "one_voice", "third"), (1, "one_voice", "swap"),
           (1, "pivots", "third"), (1, "pivots", "swap")}
"""Plants of the seeds-by-families-by-kinds grid below left out: every branch each takes in
serialkit is taken by the cases kept (coverage.py, branch coverage, one context per case: the 22
kept take all 3,858 arcs and 2,275 lines the 27 take), and a kept case of its family and kind ends
alike (the same finding kinds, candidate models and top suggestion's model). No other case is
covered so: each brings branches or an outcome of its own."""


@pytest.mark.parametrize(("seed", "family", "kind"), [
    pytest.param(seed, family, kind, id=f"{seed}-{family}-{kind}", marks=_shared(family, seed, kind))
    for seed in (1, 2, 3) for family in ("one_voice", "row_per_voice", "pivots")
    for kind in ("accidental", "third", "swap") if (seed, family, kind) not in COVERED])
def test_the_top_suggestion_restores_a_planted_error(seed: int, kind: str, family: str) -> None:
    """One error of each kind planted into a correct piece (one statement stream per voice) is
    restored by its note's top suggestion."""
    index = next(k for k, p in enumerate(_plants(family, seed)[:3]) if p.kind == kind)  # plant_errors(…, 3, seed)
    outcome = _outcome(family, seed, index)
    assert outcome.top, f"{family}/{seed} {kind} {outcome.plant.original}"


def test_a_wrong_note_the_analysis_absorbs_is_still_found() -> None:
    """A wrong note absorbed by the analysis (it reads as another position, nothing is left
    unexplained, a hole stays beside it, here at a statement's start) is still found: the hole's
    pitch class is tried on the notes around it."""
    synth = one_voice(3, statements=6)
    events = list(synth.piece.events)
    # the note of position 5 of the second statement written as position 6's pitch class a
    # semitone or third away: it reads as a repeat or another position, and position 5 is a hole
    for k in range(12, 23):
        a, b = events[k], events[k + 1]
        d = (b.pc - a.pc) % 12
        if d in (1, 3, 4, 8, 9, 11):
            break
    else:  # pragma: no cover - the seed is fixed
        pytest.skip("no neighbouring pair a semitone or third apart")
    shift = d if d < 6 else d - 12
    wrong = synth.piece.with_events(e.copy(midi=e.midi + shift) if e.id == a.id else e for e in events)
    analysis = analyze(wrong, synth.row)
    assert analysis.tags[a.id] is not None, "the wrong note is absorbed"
    found = {n.event_id: n for n in suggest(wrong, analysis)}
    assert a.id in found and found[a.id].best is not None
    assert found[a.id].best.midi == a.midi


def test_plan_repairs_holds_back_suggestions_below_the_threshold() -> None:
    plant = _plant("third")
    plan = plan_repairs(plant.piece, plant.row, threshold=1.0)
    assert plan.applied == () and plan.piece == plant.piece
    assert [s.event_id for s in plan.held] == list(plant.original)
    assert all(s.confidence < 1.0 for s in plan.held)
    fixed, applied = plan_repairs(plant.piece, plant.row)  # unpacks as (piece, applied)
    assert _changed(plant.piece, fixed) == plant.original and len(applied) == 1


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_repairs_never_leave_more_trouble(seed: int, kind: str) -> None:
    """Property: every applied correction leaves fewer notes unexplained or missing, and only
    notes named by a suggestion change."""
    synth = one_voice(seed, statements=5)
    plant = next(p for p in plant_errors(synth.piece, synth.row, "p", 3, seed) if p.kind == kind)
    before = analyze(plant.piece, plant.row)
    fixed, applied = plan_repairs(plant.piece, plant.row)
    after = analyze(fixed, plant.row)
    assert len(after.unexplained) <= len(before.unexplained)
    named = {e.event_id for a in applied for e in a.suggestion.edits}
    assert set(_changed(plant.piece, fixed)) <= named


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(WEBERN))
def test_unmodified_webern_gets_no_edit(corpus: Path, name: str) -> None:
    from serialkit.io import read_score

    piece = read_score(corpus / name)
    fixed, applied = plan_repairs(piece, Row.parse(WEBERN[name]))
    assert applied == ()
    assert _changed(piece, fixed) == {}


@pytest.mark.slow
@pytest.mark.corpus
def test_planted_errors_in_webern_op27(corpus: Path) -> None:
    from serialkit.io import read_score

    piece = read_score(corpus / "webern-op27-ii-mm1-11.mei")
    row = Row.parse(WEBERN["webern-op27-ii-mm1-11.mei"])
    outcomes = [evaluate(p, DEFAULT_THRESHOLD) for p in plant_errors(piece, row, "op27", 12, 1)]
    top = sum(o.top for o in outcomes) / len(outcomes)
    top3 = sum(o.top3 for o in outcomes) / len(outcomes)
    print(f"\nOp. 27 planted: top {top:.1%}, top three {top3:.1%}")
    assert top >= 0.75 and top3 >= 0.9


@functools.cache
def _plants(family: str, seed: int) -> tuple[Plant, ...]:
    """Six single-error copies of the family's correct piece (the first three are those of
    ``plant_errors(…, 3, seed)``: the notes are drawn in turn from one seeded generator)."""
    synth = FAMILIES[family](seed)
    return tuple(plant_errors(synth.piece, synth.row, f"{family}/{seed}", 6, seed))


def _planted(family: str, seed: int, index: int) -> Plant:
    return _plants(family, seed)[index]


@functools.cache
def _outcome(family: str, seed: int, index: int) -> Outcome:
    """``evaluate`` of a plant, once per worker: two tests read some (``SHARED_PLANTS``). Its
    readers assert the suggestions only, not whether the planted piece fails the check
    (``detect=False``: two checks fewer a plant)."""
    return evaluate(_planted(family, seed, index), DEFAULT_THRESHOLD, detect=False)


@pytest.mark.xdist_group(SHARED_PLANTS["chords", 1, "swap"])
def test_a_swap_whose_position_another_note_took_is_suggested() -> None:
    """Two notes of a chord texture swapped: one reads as the other's position (no hole is left
    for it), the other is unexplained; the top suggestion is the swap."""
    plant = _planted("chords", 1, 5)
    assert plant.kind == "swap"
    outcome = _outcome("chords", 1, 5)
    assert outcome.top


@pytest.mark.parametrize(("family", "seed", "index"), [
    pytest.param("one_voice", 3, 0, marks=_shared("one_voice", 3, "accidental")),
    pytest.param("chords", 1, 5, marks=_shared("chords", 1, "swap"))])
def test_correct_notes_near_a_wrong_note_get_no_confident_suggestion(family: str, seed: int, index: int) -> None:
    """A wrong note leaves holes around it that changing correct notes nearby also eases; those
    changes are beaten by the wrong note's own correction and share their confidence with it."""
    outcome = _outcome(family, seed, index)
    assert outcome.top and outcome.false_edits == 0


@pytest.mark.slow
def test_ties_between_positions_go_to_the_plainer_statement() -> None:
    """A wrong note in a repeated texture that a semitone either way would explain: the fix that
    leaves the statement in its voice and in time order (not a position taken by another voice)
    ranks first."""
    plant = _planted("repeats", 1, 0)
    assert evaluate(plant, DEFAULT_THRESHOLD).top


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_suggest_is_deterministic(seed: int, kind: str) -> None:
    """Property: suggesting twice on the same planted piece gives the same candidates."""
    synth = one_voice(seed, statements=4)
    plant = next(p for p in plant_errors(synth.piece, synth.row, "p", 3, seed) if p.kind == kind)
    analysis = analyze(plant.piece, plant.row)
    assert suggest(plant.piece, analysis) == suggest(plant.piece, analyze(plant.piece, plant.row))


def test_a_wrong_note_read_as_the_previous_statements_doubled_edge_is_caught_and_repaired() -> None:
    """invariant_chords 1: a statement's first note a semitone off, onto the previous statement's
    edge pitch, reads as a doubling of that edge (once only a suspect): it is a ROW finding now
    (``Analysis.edge_repeats(piece)``), the suggestion restores it and a repair changes exactly it."""
    plant = _planted("invariant_chords", 1, 0)
    analysis = analyze(plant.piece, plant.row)
    (eid, midi), = plant.original.items()
    assert any(eid in (r.edge, r.repeat) and r.of is not None for r in analysis.edge_repeats(plant.piece))
    found = {n.event_id: n for n in suggest(plant.piece, analysis)}
    assert found[eid].finding == "ROW" and found[eid].best is not None and found[eid].best.midi == midi
    assert [(a.suggestion.event_id, a.suggestion.midi) for a in plan_repairs(plant.piece, plant.row).applied] == [
        (eid, midi)]


@pytest.mark.parametrize(("family", "seed", "index"), [("pivot_voice_change", 1, 1)])
def test_a_wrong_note_read_as_a_doubling_is_a_suspect(family: str, seed: int, index: int) -> None:
    """A wrong note the analysis reads as a repeat or doubling of its neighbour (nothing is left
    unexplained, no statement has a hole) is still suggested as a suspect, below the repair
    threshold, and a repair does not apply it."""
    plant = _planted(family, seed, index)
    analysis = analyze(plant.piece, plant.row)
    assert not analysis.unexplained, "the wrong note is absorbed"
    (eid, midi), = plant.original.items()
    found = {n.event_id: n for n in suggest(plant.piece, analysis)}
    assert found[eid].finding == "suspect"
    best = found[eid].best
    assert best is not None and best.midi == midi and best.confidence < DEFAULT_THRESHOLD
    assert not [n for n in found.values() if n.finding != "suspect"]
    assert not suggest(plant.piece, analysis, suspects=False)
    assert plan_repairs(plant.piece, plant.row).applied == ()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.filter_too_much])
@given(family=st.sampled_from(CLEAN), seed=st.integers(0, 10_000))
def test_suspects_in_correct_pieces_stay_below_a_third(family: str, seed: int) -> None:
    """Property: in a correct piece the analysis explains, whatever suspects are tried, none is
    confident (a third at most)."""
    synth = FAMILIES[family](seed)
    analysis = analyze(synth.piece, synth.row)
    assume(not analysis.unexplained)
    for note in suggest(synth.piece, analysis):
        if note.finding == "suspect":
            assert all(c.confidence <= 1 / 3 + 1e-9 for c in note.candidates)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_shared_readings_change_no_result(seed: int, kind: str) -> None:
    """Property: suggestions and a repair made with analyses shared (one ``Readings`` for both, as
    a report then a repair would) equal those made afresh; the second asks for no new analysis of
    what the first verified."""
    synth = one_voice(seed, statements=4)
    plant = next(p for p in plant_errors(synth.piece, synth.row, "p", 3, seed) if p.kind == kind)
    analysis = analyze(plant.piece, plant.row)
    readings = Readings()
    shared = suggest(plant.piece, analysis, readings=readings)
    made = readings.analysed
    assert suggest(plant.piece, analysis, readings=readings) == shared == suggest(plant.piece, analysis)
    assert readings.analysed == made
    assert plan_repairs(plant.piece, plant.row, readings=readings) == plan_repairs(plant.piece, plant.row)


def test_readings_keep_at_most_their_size() -> None:
    synth = one_voice(1, statements=2)
    readings = Readings(size=2)
    pieces = [synth.piece.with_events(e.copy(midi=e.midi + k) if i == 0 else e
                                      for i, e in enumerate(synth.piece.events)) for k in range(3)]
    for piece in pieces:
        readings.read(piece, synth.row, "relative")
    assert readings.analysed == 3
    readings.read(pieces[2], synth.row, "relative")  # still there
    readings.read(pieces[0], synth.row, "relative")  # the oldest went
    assert readings.analysed == 4


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_plain_repeats_are_never_suspect(seed: int) -> None:
    """Property: statements that repeat and tremolo notes along a plain line (no borrowed note, no
    note out of line) give no suspect to try: Webern's own repeats are music."""
    synth = FAMILIES["repeats"](seed, statements=3)
    analysis = analyze(synth.piece, synth.row)
    events = {e.id: e for e in synth.piece.events}
    plain = [s for s in analysis.statements if not s.elided and not _out_of_line(s, events)]
    odd = {e for s in analysis.statements if s not in plain for e in (*s.members, *s.repeats)}
    suspects = {eid for eid, _midi in _doubled(analysis, events, {})}
    assert not suspects & {e for s in plain for e in (*s.members, *s.repeats)} - odd


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), family=st.sampled_from(["invariant_chords", "pivot_voice_change", "chords"]))
def test_suspects_stay_below_a_third_in_planted_pieces(seed: int, family: str) -> None:
    """Property: whatever a suspect change gains, it is reported at a third of the confidence at
    most (plan_repairs never applies one)."""
    try:
        synth = FAMILIES[family](seed, statements=3)
    except ValueError:  # a seed whose row the family cannot write (invariant_chords: no unambiguous chords)
        assume(False)
        raise
    for plant in plant_errors(synth.piece, synth.row, family, 2, seed):
        for note in suggest(plant.piece, analyze(plant.piece, plant.row)):
            if note.finding == "suspect":
                assert all(c.confidence <= 1 / 3 + 1e-9 for c in note.candidates)


def _wide_pair(piece: Piece) -> tuple[str, str]:
    """Two neighbouring notes (one voice, in time order) more than a tritone less a semitone
    apart: the two swap models put them right in different octaves."""
    events = sorted(piece.events, key=lambda e: e.onset)
    for a, b in zip(events, events[1:], strict=False):
        if abs(a.midi - b.midi) >= 6 and a.onset != b.onset:
            return a.id, b.id
    pytest.skip("no wide neighbouring pair")  # pragma: no cover - the seed is fixed


@pytest.mark.parametrize("written", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_swap_is_put_right_in_the_octave_it_was_written(seed: int, written: bool) -> None:
    """Two notes written in each other's place, whole (an engraver's swap: octave and all) or by
    pitch class in each note's register (a copyist's): the top suggestion and the repair give
    back both notes in their own octave — the register habit of the piece says which."""
    from tests.planted import _octave_near, exercise

    piece, row = exercise(seed)
    a, b = _wide_pair(piece)
    ea, eb = piece.event(a), piece.event(b)
    midis = {a: eb.midi, b: ea.midi} if written else {a: _octave_near(ea.midi, eb.pc), b: _octave_near(eb.midi, ea.pc)}
    wrong = piece.with_events(e.copy(midi=midis[e.id]) if e.id in midis else e for e in piece.events)
    plant = Plant("exercise", "swap", wrong, row, {a: ea.midi, b: eb.midi}, written)
    assert evaluate(plant, DEFAULT_THRESHOLD).top
    fixed, applied = plan_repairs(wrong, row)
    assert _changed(wrong, fixed) == plant.original and len(applied) == 1


def test_a_correct_piece_whose_analysis_leaves_holes_gets_no_edit() -> None:
    """piano_hands 147: the analysis of a correct piece leaves holes (two statements tangled), and
    changing a correct note would fill one of them or move a note off its position: no edit."""
    synth = FAMILIES["piano_hands"](147)
    analysis = analyze(synth.piece, synth.row)
    assert not analysis.unexplained and analysis.statements, "the case still has every note read"
    assert [s for s in analysis.statements if s.found < 12], "the case still leaves holes"
    plan = plan_repairs(synth.piece, synth.row)
    assert plan.applied == () and _changed(synth.piece, plan.piece) == {}


def test_the_two_swap_models_and_the_register_habit() -> None:
    """A swap of two notes a tritone or more apart has two corrections (each note kept in its
    register, or the written notes exchanged); the voice's register habit chooses between them,
    the piece's when the voice's is even; with no habit the written exchange is preferred."""
    from fractions import Fraction

    from serialkit.core.piece import Event
    from serialkit.core.suggest.swap import Habit, in_register, written

    def note(eid: str, voice: str, t: int, midi: int) -> Event:
        return Event(eid, voice, Fraction(t), Fraction(1), midi)

    a, b = note("a", "v1", 0, 62), note("b", "v1", 1, 70)  # D4 and Bb4, written in each other's place
    assert in_register(a, b) == {"a": 58, "b": 74}
    assert written(in_register(a, b), {"a": a, "b": b}) == {"a": 70, "b": 62}
    near = note("c", "v1", 2, 64)
    assert written(in_register(near, a), {"a": a, "c": near}) is None  # a third apart: one model
    both = {"a": a, "b": b}
    assert Habit(both).factors({"a": 58, "b": 74}, {"a": 70, "b": 62}) == (0.8, 1.0)
    habit = {**both, "x": note("x", "v1", 5, 58), "y": note("y", "v2", 6, 70), "z": note("z", "v2", 7, 62)}
    mine, theirs = Habit(habit).factors({"a": 58, "b": 74}, {"a": 70, "b": 62})
    assert mine == 1.0 and theirs < mine  # the voice writes Bb3 (58); another voice's 70 and 62 do not count first
    piece = {**both, "y": note("y", "v2", 6, 70)}
    mine, theirs = Habit(piece).factors({"a": 58, "b": 74}, {"a": 70, "b": 62})
    assert theirs == 1.0 and mine < theirs  # the voice is even: the piece writes Bb4 (70)


def test_a_plant_counts_as_detectable_only_with_a_finding_the_correct_piece_lacks() -> None:
    """A real score may fail the check as written (Webern Op. 21's unexplained D): a plant that
    leaves only that finding wrote another reading of the same music and is no error to detect;
    one that adds a finding is."""
    from fractions import Fraction

    from serialkit.core.piece import Event
    from tests.planted import _fails_check, exercise

    piece, row = exercise(2)
    last = piece.events[-1]
    stray = Event("stray", last.voice, last.onset + last.duration, Fraction(1), last.midi - 5)
    clean = piece.with_events([*piece.events, stray])
    assert not analyze(clean, row).tags.get("stray")  # the correct piece fails as written
    same = Plant("x", "accidental", clean.with_events(
        e.copy(midi=e.midi + 1) if e.id == "stray" else e for e in clean.events), row, {"stray": stray.midi}, clean=clean)
    assert not analyze(same.piece, row).tags.get("stray")
    assert not _fails_check(same, analyze(same.piece, row))
    wrong = next(p for p in plant_errors(clean, row, "x", 3, 2) if "stray" not in p.original)
    assert _fails_check(wrong, analyze(wrong.piece, row))
    blind = Plant(same.source, same.kind, same.piece, row, same.original)  # no correct piece: any finding counts
    assert _fails_check(blind, analyze(blind.piece, row))


def test_a_note_the_budget_leaves_untried_says_so() -> None:
    """"Nothing plausible" is said only of a note whose every candidate was verified: a note the
    ``budget`` (or ``max_notes``) leaves untried is listed with ``complete`` False."""
    from tests.planted import exercise

    piece, row = exercise(3, statements=4)
    ids = [e.id for e in piece.events]
    wrong = {ids[5]: piece.events[5].midi + 1, ids[30]: piece.events[30].midi - 1}
    piece = piece.with_events(e.copy(midi=wrong[e.id]) if e.id in wrong else e for e in piece.events)
    analysis = analyze(piece, row)
    assert set(wrong) <= set(analysis.unexplained)
    full = {n.event_id: n for n in suggest(piece, analysis)}
    assert all(full[e].complete and full[e].best is not None for e in wrong)
    assert all(full[e].to_dict().get("complete", True) for e in wrong)
    cut = {n.event_id: n for n in suggest(piece, analysis, budget=1, wide=0)}
    assert not cut[ids[30]].complete and cut[ids[30]].to_dict()["complete"] is False
    first = {n.event_id: n for n in suggest(piece, analysis, max_notes=1)}
    assert first[ids[5]].complete and first[ids[5]].best is not None
    assert not first[ids[30]].complete and first[ids[30]].finding == "unexplained"



def test_a_swap_is_offered_only_with_a_note_the_statement_could_reach() -> None:
    """A statement missing a position is offered a swap with a note of that pitch class only when
    the note could stand in the statement: near its other notes, not bars after them (a whole
    work's unexplained note was once offered a swap with a note 170 bars away, and each such
    candidate is verified on a window spanning both)."""
    from serialkit.core.analysis.model import Statement
    from serialkit.core.piece import Event
    from serialkit.core.rows import RowForm
    from serialkit.core.suggest.trouble import _Stmt, _swaps

    row = Row.parse("C C# D D# E F F# G G# A A# B")
    pcs = row.form(RowForm("P", 0))
    notes = {p: Event(f"n{p}", "v1", Fraction(p), Fraction(1), 60 + pcs[p]) for p in range(12) if p != 10}
    ids = tuple(notes[p].id if p in notes else None for p in range(12))
    st = _Stmt(Statement("S1", RowForm("P", 0), ids, ("v1",), False), pcs, {p: e.onset for p, e in notes.items()},
               {p: "v1" for p in notes}, {p: e.id for p, e in notes.items()}, Fraction(1))

    def swapped(onset: int) -> bool:
        stray = Event("stray", "v2", Fraction(onset), Fraction(1), 60 + pcs[10])
        events = {**{e.id: e for e in notes.values()}, stray.id: stray}
        return any({e.event_id for e in s.edits} == {"stray", "n11"} for _w, s in _swaps(stray, st, events))

    assert swapped(13)  # right after the statement's end
    assert not swapped(40)  # far after it
