"""The verifier's interval index answers exactly as the linear scan over every kept note."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.harness import load_task
from serialkit.harness.verify import ProposedNote, Verifier

TASK = load_task("quartet-webern")
SLOTS = [s for sec in TASK.sections for v in TASK.voice_ids for s in TASK.slots(sec.id, v)]

notes = st.tuples(st.integers(0, len(SLOTS) - 1), st.integers(0, 63), st.integers(1, 12), st.integers(36, 96))
ops = st.lists(st.tuples(st.sampled_from(["add", "add", "move", "move", "shorten", "remove", "trial"]), notes), min_size=1, max_size=60)


def _cand(slot_index: int, onset: int, length: int, midi: int) -> ProposedNote:
    slot = SLOTS[slot_index]
    return ProposedNote(f"{slot.voice}-{slot.section}-{slot.index:02d}", slot, Fraction(onset, 2), Fraction(length, 4),
                     midi, slot.pc)


@settings(max_examples=80, deadline=None)
@given(ops=ops, probe=notes)
def test_index_and_linear_scan_agree(ops: list[tuple[str, tuple[int, int, int, int]]],
                                     probe: tuple[int, int, int, int]) -> None:
    indexed, linear = Verifier(TASK, indexed=True), Verifier(TASK, indexed=False)
    for op, note in ops:
        cand = _cand(*note)
        if op != "add" and linear.kept:  # the other operations act on a kept note
            target = sorted(linear.kept)[note[0] % len(linear.kept)]
            cand = linear.kept[target].cand.changed("retime", onset=cand.onset, midi=cand.midi)
        for ver in (indexed, linear):
            if op == "add" and cand.id not in ver.kept:
                ver.add(cand)
            elif op == "move" and cand.id in ver.kept:  # a repair changes a kept note in place
                ver.kept[cand.id].cand = ver.kept[cand.id].cand.changed("retime", onset=cand.onset, midi=cand.midi)
            elif op == "shorten" and cand.id in ver.kept:
                kept = ver.kept[cand.id].cand
                ver.shorten(cand.id, kept.onset + Fraction(1, 4), "trim")
            elif op == "remove" and cand.id in ver.kept:
                ver.remove(cand.id)
        if op == "trial" and indexed.kept:  # changes rolled back by a trial leave the index as it was
            with indexed.trial():
                some = sorted(indexed.kept)[note[0] % len(indexed.kept)]
                indexed.kept[some].cand = indexed.kept[some].cand.changed("retime", onset=cand.onset + 1)
                indexed.remove(sorted(indexed.kept)[note[1] % len(indexed.kept)])
                if cand.id not in indexed.kept:
                    indexed.add(cand)
    for kept in list(linear.kept.values()):  # every kept note's view of the others
        assert [o.id for o in indexed.collisions(kept.cand)] == [o.id for o in linear.collisions(kept.cand)]
        assert [o.id for o in indexed.crossing(kept.cand)] == [o.id for o in linear.crossing(kept.cand)]
    query = _cand(*probe)
    assert [o.id for o in indexed.collisions(query)] == [o.id for o in linear.collisions(query)]
    assert [o.id for o in indexed.crossing(query)] == [o.id for o in linear.crossing(query)]
    assert indexed.problems(query).keys() == linear.problems(query).keys()


def _state(ver: Verifier) -> tuple[object, ...]:
    return ([(k, v.cand) for k, v in ver.kept.items()], {v: list(o) for v, o in ver._order.items() if o},
            {p: set(ids) for p, ids in ver._by_pc.items() if ids}, set(ver.crossing_ids),
            {v: list(s) for v, s in ver._starts.items() if s})


@settings(max_examples=80, deadline=None)
@given(before=ops, inside=ops, keep_inner=st.booleans())
def test_a_trial_not_kept_restores_the_kept_notes_exactly(before: list[tuple[str, tuple[int, int, int, int]]],
                                                          inside: list[tuple[str, tuple[int, int, int, int]]],
                                                          keep_inner: bool) -> None:
    """Whatever happens inside a trial (notes kept, moved, shortened, removed; a nested trial kept or
    not), rolling it back gives the same notes in the same order, indexes and crossings."""
    ver = Verifier(TASK)

    def apply(steps: list[tuple[str, tuple[int, int, int, int]]]) -> None:
        for op, note in steps:
            cand = _cand(*note)
            target = sorted(ver.kept)[note[0] % len(ver.kept)] if ver.kept else None
            if op in ("add", "trial") and cand.id not in ver.kept:
                ver.add(cand)
            elif op == "move" and target is not None:
                ver.kept[target].cand = ver.kept[target].cand.changed("retime", onset=cand.onset, midi=cand.midi)
            elif op == "shorten" and target is not None:
                ver.shorten(target, ver.kept[target].cand.onset + Fraction(1, 4), "trim")
            elif op == "remove" and target is not None:
                ver.remove(target)

    apply(before)
    state = _state(ver)
    with ver.trial() as outer:
        apply(inside[: len(inside) // 2])
        with ver.trial() as inner:
            apply(inside[len(inside) // 2:])
            inner.keep(keep_inner)
        assert not outer.kept
    assert _state(ver) == state
    with ver.trial() as kept:  # a kept trial changes what it changed
        apply(inside)
        after = _state(ver)
        kept.keep()
    assert _state(ver) == after
