"""Reflow: a missing note placed by re-placing its voice's neighbours when no window is free."""

from __future__ import annotations

from fractions import Fraction as F
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from serialkit.harness import load_task
from serialkit.harness.ladder import Ladder
from serialkit.harness.ladder.reflow import push, reflow
from serialkit.harness.tasks import Task, task_from_dict
from serialkit.harness.verify import ProposedNote, Verifier

# duo-berg with notes up to a whole section long (the gate's DUR limit), so one violin note can
# block a section
TASK = task_from_dict({**load_task("duo-berg").to_dict(), "texture": {"min_duration": "1/2", "max_duration": "16",
                                                                       "grid": "1/2"}})
GRID = TASK.texture.grid


def _note(task: Task, voice: str, index: int, onset: F, duration: F) -> ProposedNote:
    slot = task.slots("A", voice)[index]
    low = task.voice(voice).low
    assert low is not None
    midi = low + (slot.pc - low) % 12
    return ProposedNote(f"{voice}-A-{index:02d}", slot, onset, duration, midi, slot.pc)


def _packed(hole: int, start: int, blocker: tuple[F, F]) -> tuple[Verifier, ProposedNote]:
    """Cello notes one grid step each from ``start`` steps with slot ``hole`` left out (no window),
    and a long violin note holding the hole's pitch class over ``blocker``."""
    ver = Verifier(TASK)
    vc = TASK.slots("A", "vc")
    onset = start * GRID
    for slot in vc:
        if slot.index == hole:
            continue
        ver.add(_note(TASK, "vc", slot.index, onset, GRID))
        onset += GRID
    vn_index = next(s.index for s in TASK.slots("A", "vn") if s.pc == vc[hole].pc)
    ver.add(_note(TASK, "vn", vn_index, blocker[0], blocker[1] - blocker[0]))
    missing = _note(TASK, "vc", hole, ver.window(vc[hole])[0], 2 * GRID)
    return ver, missing


def _midis(cand: ProposedNote) -> list[int]:
    voice = TASK.voice(cand.voice)
    assert voice.low is not None and voice.high is not None
    return [m for m in range(voice.low, voice.high + 1) if m % 12 == cand.slot.pc]


def _assert_clean_voice(ver: Verifier, voice: str) -> None:
    notes = [ver.kept[k].cand for k in ver.voice_order(voice)]
    sec = TASK.section("A")
    for a, b in zip(notes, notes[1:], strict=False):
        assert a.end <= b.onset, (a, b)
    for n in notes:
        assert sec.start <= n.onset and n.end <= sec.end
        assert n.onset % GRID == 0 and n.duration % GRID == 0 and n.duration >= GRID
        assert not ver.collisions(n) and not ver.crossing(n)


def test_reflow_places_a_note_whose_window_is_empty_and_blocked() -> None:
    ver, missing = _packed(hole=5, start=0, blocker=(F(0), F(6)))
    assert ver.window(missing.slot)[1] - ver.window(missing.slot)[0] == 0
    fixed = reflow(Ladder(ver), missing, _midis(missing))
    assert fixed is not None
    assert fixed.onset >= 6 and fixed.midi % 12 == missing.slot.pc
    assert not ver.problems(fixed)
    ver.add(fixed)
    _assert_clean_voice(ver, "vc")


def test_reflow_gives_up_when_the_voice_cannot_hold_the_note() -> None:
    # the blocker leaves fewer free steps after it than the notes that must follow the hole
    ver, missing = _packed(hole=0, start=0, blocker=(F(0), F(16) - 5 * GRID))
    before = {k: v.cand for k, v in ver.kept.items()}
    ctx = Ladder(ver)
    assert reflow(ctx, missing, _midis(missing)) is None
    assert {k: v.cand for k, v in ver.kept.items()} == before


def test_pushing_moves_the_blocking_note_of_another_voice() -> None:
    # a violin note holds the hole's pitch class over the whole section: no cello placement exists
    # with the violin fixed, so the violin note is moved out of the way after the cello note lands
    ver, missing = _packed(hole=0, start=0, blocker=(F(0), F(16)))
    ctx = Ladder(ver)
    assert reflow(ctx, missing, _midis(missing)) is None
    pushes = [partial(push, ctx, missing, _midis(missing), how) for how in (False, True, "all")]
    assert ctx.settle(*pushes) is not None
    kept = ver.kept[missing.id].cand
    assert not ver.problems(kept) and kept.midi % 12 == missing.slot.pc
    _assert_clean_voice(ver, "vc")
    _assert_clean_voice(ver, "vn")


def test_pushing_leaves_every_note_as_it_was_when_it_fails() -> None:
    ver, missing = _packed(hole=0, start=0, blocker=(F(0), F(16)))
    before = {k: v.cand for k, v in ver.kept.items()}
    ctx = Ladder(ver)
    assert ctx.settle(*(partial(push, ctx, missing, [], how) for how in (False, True, "all"))) is None
    assert {k: v.cand for k, v in ver.kept.items()} == before
    assert not ver.filled(missing.slot)


@settings(max_examples=40, deadline=None)
@given(hole=st.integers(0, 11), start=st.integers(0, 20), a=st.integers(0, 31), length=st.integers(1, 31))
def test_reflow_placements_are_clean_and_found_when_room_exists(hole: int, start: int, a: int,
                                                                length: int) -> None:
    blocker = (a * GRID, min(32, a + length) * GRID)
    ver, missing = _packed(hole, start, blocker)
    fixed = reflow(Ladder(ver), missing, _midis(missing))
    # a placement surely exists when the hole and every later note fit after the blocker
    room_after = 16 - blocker[1] >= (12 - hole) * GRID
    if room_after:
        assert fixed is not None
    if fixed is not None:
        assert not ver.problems(fixed)
        ver.add(fixed)
        _assert_clean_voice(ver, "vc")
        order = [ver.kept[k].cand.slot.index for k in ver.voice_order("vc")]
        onsets = [ver.kept[k].cand.onset for k in ver.voice_order("vc")]
        assert order == sorted(order) and onsets == sorted(onsets)
