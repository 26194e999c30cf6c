"""Programmatic tasks (seeded) for benchmarks and tests, and the seam check for blueprints."""

from __future__ import annotations

import random
from fractions import Fraction

from serialkit.core.piece import Blueprint, BlueprintEntry, Section, TimeSignature, Voice
from serialkit.core.rows import ALL_FORMS, Row, RowForm
from serialkit.harness.tasks import Task, Texture

_VOICE_SETS = (
    (("s", 60, 84), ("b", 40, 64)),
    (("hi", 62, 88), ("mid", 50, 76), ("lo", 36, 62)),
    (("v1", 67, 93), ("v2", 57, 83), ("v3", 47, 73), ("v4", 36, 62)),
)
_METERS = ((4, 4), (3, 4), (2, 4), (6, 8))


def seam_clashes(task: Task, width: int = 3) -> list[str]:
    """Joins where a voice's next statement begins with pitch classes its last one ended with.

    Such seams read equally well as an elision, so an independent analysis may label them
    differently from the schedule; tasks meant for delivery benchmarks avoid them.
    """
    out = []
    for voice in task.voice_ids:
        forms = [f for s in task.sections for f in task.blueprint.forms_for(s.id, voice)]
        for a, b in zip(forms, forms[1:], strict=False):
            tail = set(task.row.form(a, task.convention)[-width:])
            head = set(task.row.form(b, task.convention)[:width])
            if tail & head:
                out.append(f"{voice}: {a.label} -> {b.label} share {sorted(tail & head)}")
    return out


def _pick_form(rng: random.Random, row: Row, previous: RowForm | None, used: set[RowForm]) -> RowForm:
    for _ in range(200):
        form = rng.choice(ALL_FORMS)
        if form in used:
            continue
        if previous is not None:
            tail = set(row.form(previous)[-3:])
            if tail & set(row.form(form)[:3]):
                continue
        return form
    raise RuntimeError("no form fits the seam rule")  # pragma: no cover - 48 forms always suffice


def generate_task(seed: int, name: str | None = None) -> Task:
    """One seeded task: a random row, 2-4 voices, a meter, 2-3 sections, 1-2 forms per voice."""
    rng = random.Random(f"serialkit-bank/{seed}")
    pcs = list(range(12))
    rng.shuffle(pcs)
    row = Row(tuple(pcs))
    voice_spec = rng.choice(_VOICE_SETS)
    voices = tuple(Voice(v, v, low, high) for v, low, high in voice_spec)
    num, den = rng.choice(_METERS)
    meter = TimeSignature(num, den)
    texture = Texture(Fraction(1, 2), Fraction(2), Fraction(1, 2))
    n_sections = rng.choice((2, 3))
    sections = []
    entries = []
    cursor = 0
    previous: dict[str, RowForm | None] = {v.id: None for v in voices}
    for k in range(n_sections):
        sid = "ABC"[k]
        per_voice = rng.choice((1, 1, 2))
        needed = Fraction(12 * per_voice * 3, 2)  # quarter notes: 12 notes of about 1.5 each
        bars = int(max(2, -(-needed // meter.bar_length)))
        sections.append(Section(sid, cursor * meter.bar_length, (cursor + bars) * meter.bar_length))
        cursor += bars
        used: set[RowForm] = set()
        for v in voices:
            forms = []
            for _ in range(per_voice):
                form = _pick_form(rng, row, previous[v.id], used)
                used.add(form)
                forms.append(form)
                previous[v.id] = form
            entries.append(BlueprintEntry(sid, v.id, tuple(forms)))
    return Task(
        name=name or f"bank-{seed:03d}",
        row=row,
        voices=voices,
        meter=meter,
        bars=cursor,
        sections=tuple(sections),
        blueprint=Blueprint(tuple(entries)),
        texture=texture,
        attempts=3,
        description=f"generated task (seed {seed})",
    )


def generate_tasks(count: int, start: int = 0) -> list[Task]:
    """``count`` seeded tasks."""
    return [generate_task(start + i) for i in range(count)]
