"""Two notes of one voice written in each other's place beside a beat where both voices sound that
pitch class: the analysis can read each voice's statement taking the other voice's note, so that
nothing is out of order. The check names the crossing (one ROW finding), the suggestion swaps the
two notes back and the repair restores them. (An outside tester's piano exercise passed before.)"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.check import check_piece
from serialkit.check.profiles import profile_for
from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import Row, RowForm
from serialkit.core.suggest import plan_repairs

ROW = Row.parse("C D C# F E A B D# F# A# G# G")
ANALYSIS = profile_for("analysis")


def _duet(upper: list[RowForm], lower: list[RowForm], low_octave: int = 48) -> Piece:
    """Two voices in quarter notes, one statement after another: the upper an octave and more
    above the lower."""
    events: list[Event] = []
    for voice, forms, base in (("v1", upper, 72), ("v2", lower, low_octave)):
        pcs = [pc for f in forms for pc in ROW.form(f)]
        events += [Event(f"{voice}n{k}", voice, Fraction(k), Fraction(1), base + pc) for k, pc in enumerate(pcs)]
    return Piece(tuple(events), voices=(Voice("v1", "Upper", 60, 96), Voice("v2", "Lower", 36, 72)))


def _swap(piece: Piece, a: str, b: str) -> Piece:
    """The two notes' pitch classes exchanged, each note kept in its octave (a copyist's slip)."""
    ea, eb = (next(e for e in piece.events if e.id == x) for x in (a, b))
    return piece.with_events(
        e.copy(midi=e.midi - e.pc + eb.pc) if e.id == a else e.copy(midi=e.midi - e.pc + ea.pc) if e.id == b else e
        for e in piece.events
    )


P0, I0, RI5, R5 = (RowForm.parse(x) for x in ("P0", "I0", "RI5", "R5"))


def test_the_testers_exercise_fails_and_is_repaired() -> None:
    correct = _duet([P0, RI5], [I0, R5])  # both voices sound B on beat 15
    assert check_piece(correct, ROW, profile=ANALYSIS).passed()
    wrong = _swap(correct, "v2n14", "v2n15")  # the lower voice's D# B written B D#
    report = check_piece(wrong, ROW, profile=ANALYSIS, suggest=True)
    assert not report.passed()
    crossing = [v for v in report.violations if "each take the other voice's B" in v.message]
    assert len(crossing) == 1 and set(crossing[0].event_ids) == {"v2n14", "v1n15"}
    fixed, applied = plan_repairs(wrong, ROW)
    assert {e.id: e.pc for e in fixed.events} == {e.id: e.pc for e in correct.events}
    assert {e.event_id for a in applied for e in a.suggestion.edits} == {"v2n14", "v2n15"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["P", "I", "R", "RI"]), st.integers(0, 11), st.sampled_from(["P", "I", "R", "RI"]),
       st.integers(0, 11))
def test_two_voices_stating_rows_pass_whatever_they_share(t1: str, n1: int, t2: str, n2: int) -> None:
    """Correct duets never show the crossing, however often the voices sound one pitch class
    together or a beat apart."""
    upper = [RowForm.parse(f"{t1}{n1}"), RowForm.parse(f"{t2}{n2}")]
    lower = [RowForm.parse(f"{t2}{(n2 + 5) % 12}"), RowForm.parse(f"{t1}{(n1 + 7) % 12}")]
    report = check_piece(_duet(upper, lower), ROW, profile=ANALYSIS)
    assert not [v for v in report.violations if "each take the other voice's" in v.message]
