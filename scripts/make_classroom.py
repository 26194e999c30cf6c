"""Write fixtures/classroom/: five one-voice twelve-tone exercises as a class might hand them in.

Each is a correct exercise on the row C B G Ab Eb Db D Bb F# F E A (four statements) in which a
"student" made the mistakes copyists make: anna none, ben a dropped sharp, carla a note a third
off, dev two notes swapped, emma two mistakes (an added flat and a third). Used by the README's
``serialkit repair`` example. Run: ``.venv/bin/python scripts/make_classroom.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.core.piece import Piece  # noqa: E402
from serialkit.io import write_musicxml  # noqa: E402
from tests.planted import exercise, plant_errors  # noqa: E402

OUT = ROOT / "fixtures" / "classroom"


def _plant(piece: Piece, seed: int, kinds: tuple[str, ...]) -> Piece:
    from serialkit.core.rows import Row
    from tests.planted import EXERCISE_ROW

    row = Row.parse(EXERCISE_ROW)
    for kind in kinds:
        plant = next(p for p in plant_errors(piece, row, "class", 3, seed) if p.kind == kind)
        piece = plant.piece
        seed += 1
    return piece


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    students = {"anna": (11, ()), "ben": (12, ("accidental",)), "carla": (13, ("third",)),
                "dev": (14, ("swap",)), "emma": (15, ("accidental", "third"))}
    for name, (seed, kinds) in students.items():
        piece, _row = exercise(seed)
        piece = _plant(piece, seed, kinds).copy(title=f"Exercise 3 — {name}")
        write_musicxml(piece, OUT / f"{name}.musicxml")
        print(f"wrote {OUT / f'{name}.musicxml'} ({', '.join(kinds) or 'correct'})")


if __name__ == "__main__":
    main()
