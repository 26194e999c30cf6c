"""Benchmark: the full predicate set on a 1,000,000-event, 8-voice tagged piece.

Prints events/s for ``judge_predicates()`` (all seven predicates, strict and relaxed) and the ratio to a naive
pairwise collision check (the anchor), run on a subset of the same piece in the same process.
The rate is judged per CPU-second of this process (the median of ``--repeat`` runs), so that other
load on a shared machine counts little; the wall-clock rate is printed too. Target (issue 14):
>= 500,000 events/s. Usage: ``python bench/bench_verify.py [N_EVENTS] [--repeat K]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

from serialkit.core.piece import Blueprint, BlueprintEntry, Event, Piece, Section, Tag, Voice
from serialkit.core.predicates import (
    Columns,
    Rules,
    check_collisions,
    check_crossings,
    check_pc,
    check_range,
    check_schedule,
    collision_pairs,
    judge_predicates,
    naive_collision_pairs,
    order_and_row,
    scan_statements,
)
from serialkit.core.rows import Row, RowForm

TARGET = 500_000
VOICES = 8
ROW = Row((9, 6, 7, 8, 4, 5, 11, 10, 2, 1, 0, 3))
STEPS = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 3), Fraction(1, 6), Fraction(1), Fraction(3, 2)]


def build_piece(n_events: int, seed: int = 1, wrong_notes: int = 100) -> Piece:
    """A homorhythmic 8-voice row texture: in statement s every voice states form type T_s at its
    own transposition (eight distinct ones), so every step sounds eight distinct pitch classes; registers overlap (crossings happen), and a
    few wrong notes are injected so ROW, ORDER and COLL have something to find."""
    rng = random.Random(seed)
    steps = -(-n_events // VOICES)
    statements = -(-steps // 12)
    sections_n = max(1, statements // 100)
    per_section = -(-statements // sections_n)
    centres = [88 - 8 * k for k in range(VOICES)]
    voices = tuple(Voice(f"v{k + 1}", low=c - 9, high=c + 8) for k, c in enumerate(centres))
    tables = ROW.forms()
    forms_of: dict[tuple[int, int], RowForm] = {}
    spread: list[int] = []
    wrong = set(rng.sample(range(steps * VOICES), min(wrong_notes, steps * VOICES)))
    events: list[Event] = []
    onset = Fraction(0)
    section_starts: list[Fraction] = []
    kinds = ("P", "I", "R", "RI")
    for step in range(steps):
        s, pos = divmod(step, 12)
        if s % per_section == 0 and pos == 0:
            section_starts.append(onset)
        dur = rng.choice(STEPS)
        for k in range(VOICES):
            if len(events) >= n_events:
                break
            form = forms_of.get((s, k))
            if form is None:
                if k == 0:
                    spread = rng.sample(range(12), VOICES)
                form = forms_of[(s, k)] = RowForm(kinds[s % 4], spread[k])
            pc = tables[form][pos]
            if step * VOICES + k in wrong:
                pc = (pc + 1) % 12
            base = centres[k] - 6
            midi = base + (pc - base) % 12
            sec = f"s{len(section_starts)}"
            events.append(
                Event(f"v{k + 1}.{step}", f"v{k + 1}", onset, dur, midi, section=sec,
                      tag=Tag(form, pos, f"v{k + 1}.{s}"))
            )
        onset += dur
    section_starts.append(onset)
    sections = tuple(
        Section(f"s{i + 1}", a, b) for i, (a, b) in enumerate(zip(section_starts, section_starts[1:], strict=False))
    )
    entries = []
    for sec in range(len(sections)):
        for k in range(VOICES):
            forms = tuple(
                forms_of[(s, k)]
                for s in range(sec * per_section, min(statements, (sec + 1) * per_section))
                if (s, k) in forms_of
            )
            entries.append(BlueprintEntry(f"s{sec + 1}", f"v{k + 1}", forms))
    return Piece(tuple(events), voices=voices, sections=sections, blueprint=Blueprint(tuple(entries)), row=ROW)


def subset(piece: Piece, size: int) -> Piece:
    """The first ``size`` events (in onset order), as a piece of their own."""
    return piece.with_events(piece.events[:size])


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures; exit 1 when below the target."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("events", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (the median is reported)")
    parser.add_argument("--anchor-size", type=int, default=3_000)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    piece = build_piece(args.events)
    print(f"built {len(piece.events):,} events, {len(piece.voices)} voices, "
          f"{len(piece.sections)} sections in {time.perf_counter() - t0:.1f} s")

    rules = Rules()
    walls: list[float] = []
    cpus: list[float] = []
    verdict = None
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        verdict = judge_predicates(piece, rules)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    assert verdict is not None
    cpu = statistics.median(cpus)
    rate = len(piece.events) / cpu
    print(f"judge_predicates (ROW ORDER COLL PC RANGE CROSS SCHED): median of {args.repeat}: {cpu:.2f} s CPU -> "
          f"{rate:,.0f} events per CPU-second ({statistics.median(walls):.2f} s wall, "
          f"{len(piece.events) / statistics.median(walls):,.0f} events/s wall); load average "
          f"{os.getloadavg()[0]:.1f}; counts {verdict.counts()}")

    parts = []

    def timed(name: str, fn: Callable[[], object]) -> object:
        t = time.process_time()
        result = fn()
        parts.append(f"{name} {time.process_time() - t:.2f}")
        return result

    gc.disable()  # as judge_predicates() runs them
    cols = timed("columns", lambda: Columns(piece))
    assert isinstance(cols, Columns)
    timed("sort", lambda: cols.order)
    scan = timed("statements", lambda: scan_statements(cols, piece.row))  # grouped, judged for ORDER+ROW and SCHED
    assert isinstance(scan, tuple)
    statements, clean, homes = scan
    timed("ROW+ORDER", lambda: order_and_row(cols, rules, statements, piece.row, clean))
    timed("COLL", lambda: check_collisions(cols))
    timed("PC", lambda: check_pc(cols))
    timed("RANGE", lambda: check_range(cols))
    timed("CROSS", lambda: check_crossings(cols))
    timed("SCHED", lambda: check_schedule(cols, statements, None, homes))
    gc.enable()
    print("breakdown (CPU s, GC off as in judge_predicates): " + ", ".join(parts))

    small = subset(piece, args.anchor_size)
    t = time.perf_counter()
    naive = naive_collision_pairs(small)
    naive_s = time.perf_counter() - t
    t = time.perf_counter()
    sweep = collision_pairs(small)
    sweep_s = time.perf_counter() - t
    ids = [e.id for e in small.events]
    assert naive == {tuple(sorted((ids[a], ids[b]))) for a, b in sweep}, "sweep disagrees with naive"
    naive_rate = len(small.events) / naive_s
    print(f"anchor: naive pairwise COLL on {len(small.events):,} events: {naive_s:.2f} s "
          f"-> {naive_rate:,.0f} events/s (sweep on the same subset: {sweep_s * 1000:.1f} ms, "
          f"{naive_s / max(sweep_s, 1e-9):,.0f}x faster)")
    print(f"ratio judge_predicates / naive anchor (events/s): {rate / naive_rate:,.1f}x")
    ok = rate >= TARGET
    print(f"target {TARGET:,} events per CPU-second: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
