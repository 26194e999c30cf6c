"""The generator's ladder: each rung on a constructed conflict, the registry order, the gate's symmetry."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction as F
from functools import partial
from typing import Any

import pytest

from serialkit.core.errors import PluginError
from serialkit.core.piece import Event, Tag
from serialkit.harness import load_task, run
from serialkit.harness.judging import judge_candidate
from serialkit.harness.ladder import Ladder, ladder_rungs
from serialkit.harness.ladder.rewrite import rewrite_segment
from serialkit.harness.ladder.timing import free_spans, retime, trim_tail, yield_
from serialkit.harness.tasks import Task
from serialkit.harness.verify import ProposedNote, Verifier
from serialkit.plugins import hookimpl, register_plugin, unregister_plugin


@pytest.fixture()
def task() -> Task:
    return load_task("duo-berg")


def _cand(task: Task, voice: str, index: int, onset: F, duration: F, midi: int | None = None,
          section: str = "A") -> ProposedNote:
    slot = task.slots(section, voice)[index]
    voice_obj = task.voice(voice)
    assert voice_obj.low is not None
    if midi is None:
        midi = voice_obj.low + (slot.pc - voice_obj.low) % 12
    return ProposedNote(f"{voice}-{section}-{index:02d}", slot, onset, duration, midi, slot.pc)


def _clash(task: Task, onset_other: F, dur_other: F, onset: F, duration: F) -> tuple[Verifier, ProposedNote]:
    """A kept violin note and a cello candidate with the same pitch class overlapping it."""
    ver = Verifier(task)
    vc_slot = task.slots("A", "vc")[0]
    vn_index = next(s.index for s in task.slots("A", "vn") if s.pc == vc_slot.pc)
    other = _cand(task, "vn", vn_index, onset_other, dur_other)
    ver.add(other)
    return ver, _cand(task, "vc", 0, onset, duration)


def test_ladder_order_comes_from_explicit_ranks() -> None:
    names = [r.name for r in ladder_rungs()]
    assert names == ["trim", "yield", "retime", "patch", "rewrite", "reflow", "complete"]
    assert [r.scope for r in ladder_rungs()] == ["note", "note", "note", "batch", "note", "note", "holes"]
    assert [r.name for r in ladder_rungs("paper")] == ["trim", "yield", "retime", "patch", "segment"]
    ranks = [r.rank for r in ladder_rungs()]
    assert ranks == sorted(ranks)


def test_trim_cuts_own_tail_before_a_later_conflict(task: Task) -> None:
    ver, cand = _clash(task, F(1), F(2), F(0), F(2))
    problems = ver.problems(cand)
    assert set(problems) == {"COLL"}
    fixed = trim_tail(cand, problems, Ladder(ver))
    assert fixed is not None and fixed.end == F(1) and fixed.rungs == ("trim",)
    assert not ver.problems(fixed)


def test_yield_cuts_the_earlier_note_in_the_other_voice(task: Task) -> None:
    ver, cand = _clash(task, F(0), F(3), F(1), F(1))
    (other_id,) = ver.kept
    with ver.trial():  # not kept: rolled back when the block ends
        fixed = yield_(cand, ver.problems(cand), Ladder(ver))
        assert fixed is not None and not ver.problems(fixed)
        other = ver.kept[other_id].cand
        assert other.end == F(1) and "yield" in other.rungs
    assert ver.kept[other_id].cand.end == F(3) and ver.kept[other_id].cand.rungs == ()


def test_settle_keeps_the_first_clean_try_and_rolls_back_the_others(task: Task) -> None:
    ver, cand = _clash(task, F(0), F(3), F(1), F(1))
    (other_id,) = ver.kept
    ctx = Ladder(ver)

    def moves_then_fails() -> ProposedNote | None:
        ver.shorten(other_id, F(2), "trim")
        return None

    assert ctx.settle(moves_then_fails, lambda: cand) is None  # cand still collides: nothing kept
    assert ver.kept[other_id].cand.end == F(3) and cand.id not in ver.kept
    kept = ctx.settle(moves_then_fails, partial(yield_, cand, ver.problems(cand), ctx))
    assert kept is not None and ver.kept[kept.id].cand == kept
    assert ver.kept[other_id].cand.end == F(1)  # the yield's change stays, the failed try's does not


def test_yield_after_a_shared_onset_enters_one_grid_step_later(task: Task) -> None:
    ver, cand = _clash(task, F(0), F(2), F(0), F(1))
    fixed = yield_(cand, ver.problems(cand), Ladder(ver))
    assert fixed is not None and fixed.onset == task.texture.grid and not ver.problems(fixed)


def test_retime_moves_into_a_free_span(task: Task) -> None:
    ver, cand = _clash(task, F(0), F(1, 2), F(0), F(1))
    cand = ProposedNote(cand.id, cand.slot, cand.onset, cand.duration, cand.midi, cand.claimed_pc, until=F(2))
    fixed = retime(cand, ver.problems(cand), Ladder(ver))
    assert fixed is not None and fixed.onset == F(1, 2) and fixed.end <= F(2)
    assert not ver.problems(fixed)


def test_rewrite_gives_the_scheduled_pitch_class_in_range(task: Task) -> None:
    ver = Verifier(task)
    slot = task.slots("A", "vn")[3]
    wrong = ProposedNote("vn-A-03", slot, F(0), F(1), 100, (slot.pc + 1) % 12)
    problems = ver.problems(wrong)
    assert {"ROW", "PC", "RANGE"} <= set(problems)
    for rung in (trim_tail, yield_, retime):
        assert rung(wrong, problems, Ladder(ver)) is None  # timing rungs leave pitch alone
    fixed = rewrite_segment(wrong, problems, Ladder(ver))
    assert fixed is not None and fixed.midi % 12 == slot.pc and not ver.problems(fixed)
    assert fixed.rungs == ("rewrite",)


def test_free_spans() -> None:
    spans = free_spans(F(0), F(10), [(F(1), F(2)), (F(1, 2), F(3)), (F(5), F(6)), (F(9), F(12))])
    assert spans == [(F(0), F(1, 2)), (F(3), F(5)), (F(6), F(9))]


def test_a_candidate_is_judged_on_inferred_tags_not_only_its_own() -> None:
    """The paper's flaw: a pitch class repeated under a tag the harness wrote itself. A released
    candidate with such a note appended must fail, and the inferred labels must say why."""
    result = run("duo-berg", seed=0)
    assert result.released
    task = result.task
    events = list(result.piece.events)
    last = max((e for e in events if e.voice == "vc"), key=lambda e: e.onset)
    earlier = sorted((e for e in events if e.voice == "vc" and e.section == last.section), key=lambda e: e.onset)[-4]
    assert earlier.tag is not None
    repeat = Event("vc-extra", "vc", last.end, F(1, 2), earlier.midi, section=last.section,
                   tag=Tag(earlier.tag.form, earlier.tag.position, "vc.extra"))
    verdict = judge_candidate(task, [*events, repeat])
    assert not verdict.strict and not verdict.relaxed
    assert any(v["code"] == "EXTRA" and "vc-extra" in v["event_ids"] for v in verdict.violations)
    assert judge_candidate(task, events).strict
    assert verdict.checker == "serialkit.check"


def test_harness_beats_raw_on_the_same_proposals() -> None:
    released = {"harness": 0, "raw": 0}
    for seed in range(4):
        for variant in released:
            released[variant] += run("trio-schoenberg", variant=variant, seed=seed,
                                     proposer_options={"profile": "paper-raw"}).released
    assert released["harness"] >= 3 and released["harness"] > released["raw"]


class _OctaveFirst:
    """A plugin rung ranked between yield and retime that records what it was offered."""

    def __init__(self) -> None:
        self.seen: list[frozenset[str]] = []

    def rung(self, cand: ProposedNote, problems: dict[str, list[ProposedNote]], ctx: Ladder) -> ProposedNote | None:
        self.seen.append(frozenset(problems))
        return None

    @hookimpl
    def register_repair_rungs(self, register: Callable[..., None]) -> None:
        register("octave_first", self.rung, rank=25)


def test_plugin_rungs_join_the_ladder_by_rank() -> None:
    plugin = _OctaveFirst()
    register_plugin(plugin, "test-octave-first")
    try:
        assert [r.name for r in ladder_rungs()] == ["trim", "yield", "octave_first", "retime", "patch", "rewrite", "reflow",
                                             "complete"]
        result = run("trio-schoenberg", seed=1, proposer_options={"profile": "paper-raw"})
        assert plugin.seen, "the plugin rung was never offered a flagged note"
        assert all(problems for problems in plugin.seen)
        assert result.verdict.checker == "serialkit.check"
    finally:
        unregister_plugin("test-octave-first")
    assert "octave_first" not in [r.name for r in ladder_rungs()]


class _Vandal:
    """A plugin note rung after rewrite that moves another voice's note and then gives up, and a
    holes rung before the completion that only looks."""

    def __init__(self) -> None:
        self.offered = 0
        self.holes: list[int] = []

    def rung(self, cand: ProposedNote, problems: dict[str, list[ProposedNote]], ctx: Ladder) -> ProposedNote | None:
        other = next((k.cand for k in ctx.verifier.kept.values() if k.cand.voice != cand.voice), None)
        if other is not None:
            self.offered += 1
            ctx.verifier.shorten(other.id, other.onset + ctx.grid, "vandal")
        return None

    def look(self, holes: list[Any], ctx: Ladder) -> list[Any]:
        self.holes.append(len(holes))
        return holes

    @hookimpl
    def register_repair_rungs(self, register: Callable[..., None]) -> None:
        register("vandal", self.rung, rank=55)
        register("look", self.look, rank=65, scope="holes")


def test_what_a_rung_changes_is_rolled_back_unless_its_note_is_kept() -> None:
    task = "dense-four-05"
    options = {"profile": "hostile"}
    from serialkit.eval.bank import load_bank

    path = next(str(b.path) for b in load_bank() if b.path.stem == task)
    baseline = run(path, seed=2, proposer_options=options)
    plugin = _Vandal()
    register_plugin(plugin, "test-vandal")
    try:
        assert [(r.name, r.scope) for r in ladder_rungs()][-4:] == [("vandal", "note"), ("reflow", "note"),
                                                             ("look", "holes"), ("complete", "holes")]
        assert "vandal" not in [r.name for r in ladder_rungs("paper")]
        result = run(path, seed=2, proposer_options=options)
    finally:
        unregister_plugin("test-vandal")
    assert plugin.offered and plugin.holes and all(plugin.holes)
    assert not any("vandal" in e["rungs"] for e in result.certificate["events"])
    assert result.certificate["events"] == baseline.certificate["events"]


def test_a_rung_with_an_unknown_scope_is_an_error() -> None:
    class Odd:
        @hookimpl
        def register_repair_rungs(self, register: Callable[..., None]) -> None:
            register("odd", lambda *args: None, rank=57, scope="section")

    register_plugin(Odd(), "test-odd-scope")
    try:
        with pytest.raises(PluginError, match="repair rung 'odd' .*unknown scope 'section'"):
            ladder_rungs()
    finally:
        unregister_plugin("test-odd-scope")


def test_baselines_use_the_same_checker_and_self_refine_feeds_violations_back() -> None:
    options = {"profile": "paper-raw", "rates": {"wrong_pc": 0.05}}
    raw = run("trio-schoenberg", variant="raw", seed=4, proposer_options=options)
    refine = run("trio-schoenberg", variant="self-refine", seed=4, proposer_options=options)
    assert raw.usage.calls == len(raw.task.sections) and raw.report["repairs"] == {}
    assert raw.verdict.checker == refine.verdict.checker == "serialkit.check"
    assert not raw.verdict.strict  # 5 % wrong pitch classes: some note is wrong
    kinds = [c["kind"] for c in refine.report["calls"]]
    assert "refine" in kinds and refine.usage.calls > raw.usage.calls
    feedback = [line for line in refine.transcript.splitlines() if '"kind":"refine"' in line]
    assert feedback and all('"feedback":"- ' in line for line in feedback)
    # the first proposal of each section is the raw one: same seed, same answer
    first = [json.loads(t.splitlines()[1])["response"] for t in (raw.transcript, refine.transcript)]
    assert first[0] == first[1]
