"""Whole works: ``check`` with suggestions and ``repair`` against music21 parsing the same file.

For every clean texture family of ``tests.synth`` (hardest first: the order of the last run's
ratio is not used, the families are listed by how hard their reading is) at about 150, 1,500,
5,000 and 20,000 notes, and for the Webern Op. 21 excerpt repeated 12 times with each copy
transposed a semitone higher, a bar's rest between copies (built from ``../shared/corpus`` when it
is there), and the same joined with no rest, each copy eight semitones above the last (an
adversary: the excerpt's statements cut off at its end reach into the copy after it), the bench
writes one MusicXML file and measures, in CPU seconds of this process:

- ``music21``: ``music21.converter.parse`` of the file (the anchor);
- ``check``: ``read_score`` + ``check_piece`` under the ``analysis`` profile with suggestions (what
  ``serialkit check FILE --row ROW`` does; Op. 21 also without ``--row``: the row identified);
- ``repair``: ``repair_score(..., dry_run=True)`` (what ``serialkit repair --dry-run`` does).

Targets (issue 27): check / music21 <= 1.0 at every size from 1,500 notes on, on every family and
on Op. 21 x 12; per-note time at 20,000 notes <= 1.5x the per-note time at 150 notes; repair <= 2x
check. Every correct piece must pass and repair must change nothing: a failing verdict is printed
and counts as a missed target; the Op. 21 copies may leave no more notes unexplained than the
excerpt alone does, copy by copy (its one wrong note each).

Run: ``.venv/bin/python bench/bench_scale.py [--sizes 150,1500,5000,20000] [--families a,b]
[--no-repair] [--no-webern] [--copies 2,4]`` (exit 1 if a target is missed).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.check.profiles import profile_for  # noqa: E402
from serialkit.check.report import check_piece  # noqa: E402
from serialkit.core.piece import Piece  # noqa: E402
from serialkit.core.rows import Row  # noqa: E402
from serialkit.io import read_score, write_score  # noqa: E402
from serialkit.repair import repair_score  # noqa: E402
from tests import synth  # noqa: E402

SIZES = (150, 1500, 5000, 20000)
HARDEST_FIRST = ("concurrent", "elided_repeats", "handed", "pivot_voice_change", "repeats", "distributed",
                 "piano_hands", "elided", "invariant_chords", "chords", "pivots", "row_per_voice", "one_voice")
CORPUS = ROOT.parent / "shared" / "corpus"
RATIO, FLAT, REPAIR = 1.0, 1.5, 2.0


@dataclass
class Row_:
    name: str
    notes: int
    music21: float
    check: float
    repair: float | None
    passed: bool
    findings: int
    changed: int | None
    unexplained: int = 0

    @property
    def ratio(self) -> float:
        return self.check / self.music21 if self.music21 else float("inf")


def cpu(fn: Any) -> tuple[float, Any]:
    gc.collect()
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def webern_x12(copies: int = 12, step: int = 1, joined: bool = False) -> tuple[Piece, Row] | None:
    """Op. 21 bars 1-25, twelve (``copies``) copies one after another, copy k transposed ``step`` * k
    semitones up (within an octave: ``step`` * k % 12); a bar's rest between copies, none when
    ``joined``."""
    source = CORPUS / "webern-op21-i-mm1-25.mei"
    if not source.exists():
        return None
    from serialkit.core.catalog import get

    piece = read_score(source)
    span = max(e.onset + e.duration for e in piece.events)
    if not joined:
        span = Fraction(int(span) + 2 - int(span) % 2)  # whole bars of 2/4 after the excerpt's end
    events = []
    for k in range(copies):
        shift = k if step == 1 else step * k % 12  # (a semitone a copy: the bench's first Op. 21 file)
        for e in piece.events:
            events.append(e.copy(id=f"{e.id}-c{k}", onset=e.onset + k * span, midi=e.midi + shift, tag=None,
                                 tied_ids=tuple(f"{t}-c{k}" for t in e.tied_ids)))
    return piece.with_events(events), get("webern-op21").row


def measure(name: str, piece: Piece, row: Row | None, tmp: Path, repair: bool) -> Row_:
    path = tmp / f"{name}.musicxml"
    write_score(piece, path)
    from music21 import converter

    t_m21, _ = cpu(lambda: converter.parse(str(path), forceSource=True))
    profile = profile_for("analysis")

    def check() -> Any:
        read = read_score(path)
        return check_piece(read, row=row, profile=profile, suggest=True, identify=row is None)

    t_check, report = cpu(check)
    t_repair, changed = None, None
    if repair:
        t_repair, result = cpu(lambda: repair_score(path, row, identify=row is None, dry_run=True))
        changed = len(result.changes)
    findings = len(report.verdict.violations)
    return Row_(name, len(piece.events), t_m21, t_check, t_repair, report.verdict.strict, findings, changed,
                len(report.unexplained))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--families", default=",".join(HARDEST_FIRST))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-repair", action="store_true")
    parser.add_argument("--no-webern", action="store_true", help="leave out Op. 21 x 12")
    parser.add_argument("--copies", default="", help="also Op. 21 with these numbers of copies (2,4: --row)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    families = [f for f in args.families.split(",") if f]
    rows: list[Row_] = []
    missed: list[str] = []
    from serialkit.core import native

    print("chain search:", ", ".join(native.status().values()))
    print(f"{'piece':34s} {'notes':>6s} {'music21 s':>9s} {'check s':>8s} {'ratio':>6s} {'ms/note':>7s} "
          f"{'repair s':>8s} {'rep/chk':>7s}  verdict")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as d:
        tmp = Path(d)
        pieces: list[tuple[str, Piece, Row | None, bool]] = []
        x12 = None if args.no_webern else webern_x12()
        if x12 is not None:
            pieces.append(("webern_op21_x12 (--row)", x12[0], x12[1], True))
            pieces.append(("webern_op21_x12 (identified)", x12[0], None, False))
            joined = webern_x12(step=8, joined=True)
            assert joined is not None
            pieces.append(("webern_op21_x12 joined (--row)", joined[0], joined[1], True))
        else:
            print("(../shared/corpus absent: Op. 21 x 12 skipped)")
        copies = [(n, webern_x12(n)) for n in (int(c) for c in args.copies.split(",") if c)]
        pieces[:0] = [(f"webern_op21_x{n} (--row)", xn[0], xn[1], True) for n, xn in copies if xn is not None]
        for family in families:
            for size in sizes:
                s = synth.whole(family, args.seed, size)
                pieces.append((f"{family} {size}", s.piece, s.row, True))
        for name, piece, row, correct in pieces:
            r = measure(name.replace(" ", "_").replace("(", "").replace(")", ""), piece, row, tmp,
                        not args.no_repair)
            r.name = name
            rows.append(r)
            rep = f"{r.repair:8.2f} {r.repair / r.check:7.2f}" if r.repair is not None else f"{'-':>8s} {'-':>7s}"
            verdict = "pass" if r.passed else f"FAIL ({r.findings} findings, {r.unexplained} unexplained)"
            if r.changed:
                verdict += f", repair changes {r.changed}"
            print(f"{name:34s} {r.notes:6d} {r.music21:9.2f} {r.check:8.2f} {r.ratio:6.2f} "
                  f"{1000 * r.check / r.notes:7.3f} {rep}  {verdict}", flush=True)
            if r.notes >= 1500 and r.ratio > RATIO:
                missed.append(f"{name}: check/music21 {r.ratio:.2f} > {RATIO}")
            if r.repair is not None and r.repair > REPAIR * r.check:
                missed.append(f"{name}: repair/check {r.repair / r.check:.2f} > {REPAIR}")
            if "webern" in name and r.unexplained > r.notes // 128:
                missed.append(f"{name}: {r.unexplained} notes unexplained, the excerpt alone leaves one a copy")
            if correct and "webern" not in name and (not r.passed or r.changed):
                missed.append(f"{name}: a correct piece {'fails' if not r.passed else 'is edited'}")
    for family in families:
        mine = {r.notes: r for r in rows if r.name.split()[0] == family}
        if len(mine) >= 2:
            small, big = mine[min(mine)], mine[max(mine)]
            flat = (big.check / big.notes) / (small.check / small.notes)
            print(f"per-note time {family}: {max(mine)} notes / {min(mine)} notes = {flat:.2f}")
            if min(mine) <= 200 and max(mine) >= 20000 and flat > FLAT:
                missed.append(f"{family}: per-note time grows {flat:.2f}x > {FLAT}")
    for m in missed:
        print("missed:", m)
    print("all targets met" if not missed else f"{len(missed)} targets missed")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
