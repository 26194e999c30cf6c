"""Row-form inference, step by step: the order in which the notes of a piece get their labels.

Read top to bottom. Each step is a function from the :class:`Assignment` (the statements accepted
so far and who holds each note) to the next one; the steps that take chains claim notes for whole
statements, the later ones place single notes and record the readings a note could also have.

1. ``take_obvious_statements`` — twelve successive notes of one voice spelling exactly one form
   (repeated notes and two-note tremolos allowed).
2. ``take_statements_best_first`` — chains from every note that can begin a statement, accepted
   best-first (a chain that lost notes to a better one is built again);
   ``give_obvious_statements_their_tails`` — then each obvious statement gets the repeats after
   its last position that no statement began on.
3. ``read_again_knowing_voice_passing`` — when the first reading shows which voices pass rows to
   which, steps 1–2 are run again on a fresh state with passes between other voices dearer (from
   ``LOCAL_FROM`` notes on, only where that changes something: the statements passing at a cost
   now, with those sounding with them, are released and their stretch read again). The habits are
   the whole first reading's, but a section between silences that hands its lines between other
   instruments than the piece does keeps its own.
4. ``take_fragments`` — statements cut off by the excerpt or whose opening is wrong.
5. ``rechoose_overlapping_pairs`` — two statements sounding at once re-choose their notes together.
6. ``reread_unexplained_stretches`` — a statement near several unexplained notes is dropped and its
   stretch searched again; the new reading stays if it explains more.
   ``reread_around_unexplained`` — the statements sounding at a stretch of unexplained notes are
   released together and the stretch searched again (two forms that took each other's notes).
7. ``index_owners`` — from here on single notes move: every note's readings are indexed.
   ``split_shared_chords`` — a note two statements share whose pitch class sounds again before the
   second goes on is two notes: the second statement begins on the later one (or, with no later
   one, the first ends on an earlier one).
   ``put_statements_in_time_order`` — two statements holding one pitch class out of time order
   (an invariant segment sounding twice) swap those notes: the ending statement takes the earlier.
8. ``prefer_new_positions`` — a note read as a repeat that another statement holds as a position
   is that position (the pivot between two statements).
9. ``split_shared_repeats`` — ``x | x`` across a boundary is two notes, not one shared note.
10. ``give_repeats_to_statements_missing_them`` — ``x y | x y`` is two statements, not a tremolo.
11. ``place_unexplained_notes`` — each unexplained note fills a gap, repeats its neighbour, leads
    in to its own position, doubles a note, or trades places with a note another statement needs;
    ``untangle_beside_unexplained`` — where notes stay unexplained, the statements sounding there
    are put in time order and the notes placed again.
12. ``move_early_positions_later`` — ``a x a a b``: ``x`` is the wrong note, the later ``b`` holds it.
    ``give_back_exchanged_notes`` — two statements that each took one note of the other's voice of
    one pitch class exchange them when both then keep their voices and time order.
13. ``read_tremolos_and_boundaries`` — an unexplained inner note of a tremolo joins its statement
    (taking the closing note from the next statement when that one can begin on its own repeat),
    and a hole is filled by a note the next statement can spare the same way.
14. ``uncross_pivot_runs`` — in a run of one pitch class the ending statement takes the earlier note.
    ``restrike_in_another_voice`` — a note still unexplained that strikes again, in another
    instrument, the note a statement has just played, as it ends, is a repeat of that position.
15. ``record_notes_fitting_two_statements`` and ``record_pivot_readings`` — the readings not chosen.
"""

from __future__ import annotations

from collections.abc import Callable

from serialkit.core.analysis.exchange import give_back_exchanged_notes
from serialkit.core.analysis.index import EventIndex
from serialkit.core.analysis.order import put_statements_in_time_order, split_shared_chords
from serialkit.core.analysis.pairs import (
    rechoose_overlapping_pairs,
    reread_around_unexplained,
    reread_strange_passes,
    reread_unexplained_stretches,
)
from serialkit.core.analysis.passing import learn_passing_by_section
from serialkit.core.analysis.pivots import (
    prefer_new_positions,
    record_pivot_readings,
    uncross_pivot_runs,
)
from serialkit.core.analysis.placing import (
    give_repeats_to_statements_missing_them,
    index_owners,
    move_early_positions_later,
    place_unexplained_notes,
    record_notes_fitting_two_statements,
    split_shared_repeats,
    untangle_beside_unexplained,
)
from serialkit.core.analysis.restrike import restrike_in_another_voice
from serialkit.core.analysis.state import Assignment, new_assignment
from serialkit.core.analysis.statements import (
    give_obvious_statements_their_tails,
    take_fragments,
    take_obvious_statements,
    take_statements_best_first,
)
from serialkit.core.analysis.tremolos import read_tremolos_and_boundaries

Step = Callable[[Assignment], Assignment]

FIRST_READING: tuple[Step, ...] = (take_obvious_statements, take_statements_best_first,
                                   give_obvious_statements_their_tails)


def first_reading(ix: EventIndex, forms: list[tuple[int, ...]]) -> Assignment:
    """Whole statements only (steps 1–2): what identification compares candidate rows by."""
    state = new_assignment(ix, forms)
    for step in FIRST_READING:
        state = step(state)
    return state


LOCAL_FROM = 1000
"""From this many notes on, the reading knowing voice passing is redone only where the new costs
change something (``reread_strange_passes``); a shorter piece is read afresh."""


def read_again_knowing_voice_passing(state: Assignment) -> Assignment:
    """The first reading again with the voice-passing costs the current one teaches (if any), a
    section's own where its habits differ from the piece's (``learn_passing_by_section``)."""
    strange = learn_passing_by_section(state.ix, state.found, state.silence, state.sections[0])
    if strange is None:
        return state
    state.ix.strange = strange
    if state.ix.n >= LOCAL_FROM:
        return reread_strange_passes(state)
    return first_reading(state.ix, state.forms)


STEPS: tuple[Step, ...] = (
    read_again_knowing_voice_passing,
    take_fragments,
    rechoose_overlapping_pairs,
    reread_unexplained_stretches,
    reread_around_unexplained,
    index_owners,
    split_shared_chords,
    put_statements_in_time_order,
    prefer_new_positions,
    split_shared_repeats,
    give_repeats_to_statements_missing_them,
    place_unexplained_notes,
    untangle_beside_unexplained,
    move_early_positions_later,
    give_back_exchanged_notes,
    read_tremolos_and_boundaries,
    uncross_pivot_runs,
    restrike_in_another_voice,
    record_notes_fitting_two_statements,
    record_pivot_readings,
)


def read(ix: EventIndex, forms: list[tuple[int, ...]]) -> Assignment:
    """Every step in order, from an empty assignment to the final one."""
    state = first_reading(ix, forms)
    for step in STEPS:
        state = step(state)
    return state
