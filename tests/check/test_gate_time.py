"""The gate enforces the task's time limits in both modes (SPAN, GRID, DUR, MONO): hand-made
candidates of an outside tester's report — a note past the piece's end, a note moved into another
section, an off-grid onset, too long and too short notes, a monophonic voice playing a chord.
None is released, and each failure is named with voice, bar and beat."""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.check.gate import GateVerdict, gate_candidate
from serialkit.cli import cli
from serialkit.core.piece import Event, Piece
from serialkit.core.predicates import Limits, check_time
from serialkit.harness import load_task, run
from serialkit.harness.judging import judge_candidate, limits_for, rules_for
from serialkit.harness.tasks import Task


@cache
def clean() -> tuple[Task, tuple[Event, ...]]:
    """A clean candidate the gate releases (raw writer, clean profile)."""
    task = load_task("duo-berg")
    for seed in range(8):
        events = run(task, variant="raw", seed=seed, proposer_options={"profile": "clean"}).piece.events
        if judge_candidate(task, list(events)).strict:
            return task, tuple(events)
    raise AssertionError("no clean candidate")


def judge(task: Task, events: list[Event]) -> GateVerdict:
    return gate_candidate(task.frame(tuple(events)), rules_for(task), limits=limits_for(task))


def only(verdict: GateVerdict, code: str) -> list[dict[str, object]]:
    assert not verdict.strict and not verdict.relaxed, verdict.violations
    found = [v for v in verdict.violations if v["code"] == code]
    assert found, (code, verdict.counts())
    for v in found:
        assert "bar" in str(v["location"]) and "beat" in str(v["location"]), v
    return found


def test_the_clean_candidate_passes_the_time_predicates() -> None:
    task, events = clean()
    assert check_time(task.frame(events), limits_for(task)) == []
    assert judge(task, list(events)).strict


def last_note(events: tuple[Event, ...]) -> int:
    return max(range(len(events)), key=lambda i: events[i].onset + events[i].duration)


def test_a_note_past_the_pieces_end_is_not_released() -> None:
    task, events = clean()
    i = last_note(events)
    moved = list(events)
    moved[i] = events[i].copy(onset=task.length - events[i].duration + Fraction(1, 2))
    found = only(judge(task, moved), "SPAN")
    assert events[i].id in found[0]["event_ids"] and "outside the piece" in str(found[0]["message"])


def test_a_note_moved_into_another_section_is_not_released() -> None:
    task, events = clean()
    a = next(e for e in events if e.section == "A")
    b = next(e for e in events if e.section == "B" and e.voice == a.voice)
    moved = [a.copy(onset=b.onset) if e is a else e for e in events]
    verdict = judge(task, moved)
    span = only(verdict, "SPAN")
    assert "outside section A" in str(span[0]["message"])
    mono = only(verdict, "MONO")  # and it sounds together with b in the same monophonic voice
    assert set(mono[0]["event_ids"]) == {a.id, b.id}  # type: ignore[arg-type]


def test_an_off_grid_onset_is_not_released() -> None:
    task, events = clean()
    e = events[0]
    moved = [e.copy(onset=e.onset + Fraction(1, 6), duration=e.duration - Fraction(1, 6) + Fraction(1, 2))
             if x is e else x for x in events]
    found = only(judge(task, moved), "GRID")
    assert "off the grid of 1/2" in str(found[0]["message"]) and found[0]["event_ids"] == [e.id]


@pytest.mark.parametrize("which", ["long", "short"])
def test_a_duration_outside_the_tasks_limits_is_not_released(which: str) -> None:
    task, events = clean()
    tex = task.texture
    if which == "long":
        i = last_note(events)  # lengthen the last note within the piece? it would leave it: shorten its onset
        e = events[i]
        dur = tex.max_duration + Fraction(1, 2)
        changed = e.copy(onset=min(e.onset, task.length - dur), duration=dur)
    else:
        e = events[0]
        changed = e.copy(duration=tex.min_duration - Fraction(1, 4))
    found = only(judge(task, [changed if x is e else x for x in events]), "DUR")
    assert ("above the longest" if which == "long" else "below the shortest") in str(found[0]["message"])


def test_a_monophonic_voice_playing_a_chord_is_not_released() -> None:
    task, events = clean()
    e = events[0]
    chord = [*events, e.copy(id="chord", midi=e.midi + 4, tag=None, claimed_pc=None)]
    found = only(judge(task, chord), "MONO")
    assert set(found[0]["event_ids"]) == {e.id, "chord"}  # type: ignore[arg-type]
    assert "same onset" in str(found[0]["message"])


def test_touching_notes_of_one_voice_are_no_overlap() -> None:
    piece = Piece(events=(Event("a", "v1", Fraction(0), Fraction(1), 60), Event("b", "v1", Fraction(1), Fraction(1), 62),
                          Event("c", "v1", Fraction(3, 2), Fraction(1, 2), 64)))
    found = check_time(piece, Limits())
    assert [(v.code, v.event_ids) for v in found] == [("MONO", ("b", "c"))]


def test_check_with_the_task_refuses_a_candidate_with_a_note_past_the_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run("duo-berg", variant="raw", seed=0, out_dir=out, proposer_options={"profile": "clean"})
    data = json.loads((out / "candidate.json").read_text("utf-8"))
    events = result.piece.events
    i = last_note(events)
    late = str(load_task("duo-berg").length - events[i].duration + 1)
    for ev in data["events"]:
        if ev["id"] == events[i].id:
            ev["onset"] = late
    (out / "late.json").write_text(json.dumps(data), "utf-8")
    done = CliRunner().invoke(cli, ["check", str(out / "late.json"), "--task", "duo-berg", "--json"])
    assert done.exit_code == 1, done.output
    report = json.loads(done.stdout)
    assert report["strict"] is False and report["relaxed"] is False and report["counts"]["SPAN"] >= 1


def test_the_analysis_profile_never_judges_time() -> None:
    """A score without a task: overlapping notes of one voice (a chord) are no violation."""
    from serialkit.check.report import check_piece

    piece = Piece(events=(Event("a", "v1", Fraction(0), Fraction(1), 60), Event("b", "v1", Fraction(0), Fraction(1), 64),
                          Event("c", "v1", Fraction(97, 6), Fraction(9), 67)))
    report = check_piece(piece)
    assert not {"SPAN", "GRID", "DUR", "MONO"} & {v.code for v in report.violations}
