"""The deterministic ``rewrite`` rung: a note given its scheduled pitch class."""

from __future__ import annotations

from serialkit.harness.ladder.context import Ladder, Problems
from serialkit.harness.verify import ProposedNote


def rewrite_segment(cand: ProposedNote, problems: Problems, ctx: Ladder) -> ProposedNote | None:
    """Give the note its scheduled pitch class in the nearest octave that fits, then re-place it."""
    voice = ctx.verifier.task.voice(cand.voice)
    assert voice.low is not None and voice.high is not None
    options = sorted(
        (m for m in range(voice.low, voice.high + 1) if m % 12 == cand.slot.pc),
        key=lambda m: (abs(m - cand.midi), m),
    )
    lo, hi = ctx.verifier.free(cand)
    base = cand
    if cand.onset < lo or cand.end > hi:
        onset = max(cand.onset, lo)
        end = min(cand.end, hi)
        if end - onset <= 0:
            onset, end = lo, hi
        if end <= onset:
            return None
        base = cand.changed("rewrite", onset=onset, duration=end - onset)
    for crossing_ok in (False, True):
        for midi in options:
            option = base.changed("rewrite", midi=midi, claimed_pc=cand.slot.pc)
            found = ctx.verifier.problems(option, crossing_ok=crossing_ok)
            if not found:
                return option
            fixed = ctx.retimed(option, found, crossing_ok=crossing_ok)
            if fixed is not None:
                return fixed
    return None
