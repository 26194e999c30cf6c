"""Room in a voice: kept neighbours shortened, or their runs shifted into a rest, so that a missing
note's window grows (the model's rungs and reflow use it before they place a note)."""

from __future__ import annotations

from fractions import Fraction

from serialkit.harness.tasks import Slot
from serialkit.harness.verify import ProposedNote, Verifier


def shift_run(ver: Verifier, slot: Slot, step: Fraction) -> bool:
    """Widen a slot's window by one grid step: move the run of kept notes after it (``step`` > 0) or
    before it (``step`` < 0) one step into the nearest rest of the voice, if no moved note meets a
    conflict. Returns True when the run moved."""
    order = [k for k in ver.voice_order(slot.voice) if ver.kept[k].cand.slot.section == slot.section]
    sec = ver.task.section(slot.section)
    key = slot.index
    run: list[ProposedNote] = []
    seq = [ver.kept[k].cand for k in order]
    if step > 0:
        seq = [c for c in seq if c.slot.index > key]
        limit = sec.end
    else:
        seq = [c for c in reversed(seq) if c.slot.index < key]
        limit = sec.start
    absorb: ProposedNote | None = None
    for i, cand in enumerate(seq):
        if cand.duration >= 2 * abs(step):
            absorb = cand  # a long note absorbs the shift by giving up its head (or tail)
            break
        run.append(cand)
        edge = (seq[i + 1].onset if step > 0 else seq[i + 1].end) if i + 1 < len(seq) else limit
        room = edge - cand.end if step > 0 else cand.onset - edge
        if room >= abs(step):
            break
    else:
        return False
    with ver.trial() as trial:
        if absorb is not None and step > 0:
            ver.kept[absorb.id].cand = absorb.changed("retime", onset=absorb.onset + step,
                                                      duration=absorb.duration - step)
        elif absorb is not None:
            ver.kept[absorb.id].cand = absorb.changed("trim", duration=absorb.duration + step)
        for cand in reversed(run):
            moved = cand.changed("retime", onset=cand.onset + step)
            ver.kept[cand.id].cand = moved
            if ver.collisions(moved) or ver.crossing(moved):
                return False
        trial.keep()
    return True


def make_room(ver: Verifier, missing: list[Slot], need_steps: Fraction | None = None) -> bool:
    """Shorten kept neighbours (by whole grid steps, or shift their runs into a rest) until each run
    of missing slots has room: two grid steps a note (room to dodge a note of another voice), or a
    window ``need_steps`` long. With ``need_steps``, True when a window grew."""
    grid = ver.task.texture.grid
    runs: dict[tuple[Fraction, Fraction], list[Slot]] = {}
    for slot in missing:
        runs.setdefault(ver.window(slot), []).append(slot)
    grown = False
    for (lo, hi), slots in runs.items():
        need = 2 * len(slots) * grid - (hi - lo) if need_steps is None else need_steps - (hi - lo)
        before, after = ver.neighbours(slots[0])[0], ver.neighbours(slots[-1])[1]
        while need > 0:
            prev = ver.kept[before].cand if before else None
            nxt = ver.kept[after].cand if after else None
            if prev is not None and prev.end == lo and prev.duration >= 2 * grid:
                ver.shorten(prev.id, prev.end - grid, "trim")
                lo -= grid
            elif nxt is not None and nxt.onset == hi and nxt.duration >= 2 * grid:
                ver.kept[nxt.id].cand = nxt.changed("retime", onset=nxt.onset + grid, duration=nxt.duration - grid)
                hi += grid
            elif shift_run(ver, slots[-1], grid):
                hi += grid
            elif shift_run(ver, slots[0], -grid):
                lo -= grid
            else:
                break
            need -= grid
            grown = True
    return grown if need_steps is not None else True
