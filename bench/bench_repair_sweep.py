"""``serialkit repair`` against a sweep of single wrong notes (issue 15: the outside tester's adversary).

Every note of a correct exercise (``tests/swept.py``: built in code from a seed — a row, four
forms, one line or a duo, quarters or a drawn rhythm; seed 0 is the tester's flute exercise) is
altered each common way, one copy per note and kind: an accidental added or dropped (``up1``,
``dn1``), a third (``up3``, ``dn4``), a step (``step``, a whole tone), the note swapped with the
next (``swap``), the note written at its neighbour's pitch (``prev``, ``next``). Each copy is
repaired as ``serialkit repair --dry-run`` does (``repair.repair_score``, analysis profile) and
measured against the original:

- ``failing``: copies the check fails (the others need no repair and are not counted below);
- ``exact``: share of failing copies whose repair restores exactly the original notes;
- ``correct changed``: notes the original had right that the repair changed (target 0);
- ``passing``: share of failing copies that pass the check after the repair.

Copies whose repair changed a correct note are listed after the table. The tuning set (seeds 0-3)
and a held-out set (seeds 100-102, never looked at while tuning) are printed separately. Run:
``.venv/bin/python bench/bench_repair_sweep.py [tuning|heldout|both] [KIND,...]`` (exit 1 when a
correct note was changed, or a repair crashed, in the tuning set).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from serialkit.io.jsonio import save_piece  # noqa: E402
from serialkit.repair import repair_score  # noqa: E402
from tests.swept import KINDS, Exercise, exercises, piece  # noqa: E402

TUNING = (0, 1, 2, 3)
HELD_OUT = (100, 101, 102)


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    kinds = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else KINDS
    changed = 0
    if which in ("tuning", "both"):
        print(f"== tuning set: seeds {TUNING[0]}-{TUNING[-1]}")
        changed = measure(TUNING, kinds)
    if which in ("heldout", "both"):
        print(f"== held-out set: seeds {HELD_OUT[0]}-{HELD_OUT[-1]} (not looked at while tuning)")
        measure(HELD_OUT, kinds)
    return 1 if changed else 0


def repair(ex: Exercise, tmp: Path) -> tuple[bool, bool, dict[str, int], bool]:
    """(the copy fails the check, the repair restores exactly the original, the pitches the
    repair wrote by note, the repair passes the check). Raises what the repair raises."""
    path = tmp / "exercise.json"
    save_piece(ex.piece, path)
    result = repair_score(path, ex.row, dry_run=True, review=False)
    wrote = {c.event_id: c.after for c in result.changes}
    failing = not result.before.get("relaxed")
    return failing, wrote == ex.original, wrote, result.passed


def measure(seeds: tuple[int, ...], kinds: tuple[str, ...]) -> int:
    """Repair every copy of every seed; print the table and the copies whose repair changed a
    correct note; return how many correct notes were changed."""
    cpu = time.process_time()
    rows: dict[str, list[tuple[bool, int, bool]]] = defaultdict(list)
    harmed: list[str] = []
    crashed: list[str] = []
    total = 0
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        for seed in seeds:
            print(f"  {piece(seed)[2]}")
            for ex in exercises(seed, kinds):
                total += 1
                try:
                    failing, exact, wrote, passed = repair(ex, Path(tmp))
                except Exception as exc:  # a crash is a finding of the adversary, not the end of the run
                    crashed.append(f"{ex.name}: {type(exc).__name__}: {exc}")
                    continue
                if not failing:
                    continue
                wrong = sorted(e for e in wrote if e not in ex.original)
                for key in (ex.kind, "all"):
                    rows[key].append((exact, len(wrong), passed))
                if wrong:
                    events = {e.id: e.midi for e in ex.piece.events}
                    planted = ", ".join(f"{e} {_name(m)}→{_name(events[e])}" for e, m in ex.original.items())
                    edits = ", ".join(f"{e} {_name(events[e])}→{_name(m)}" for e, m in sorted(wrote.items()))
                    harmed.append(f"{ex.name}: planted {planted} | repaired {edits}")
    print(f"{'kind':8s} {'failing':>8s} {'exact':>7s} {'correct changed':>16s} {'passing':>8s}")
    for key in (*[k for k in KINDS if k in rows], "all"):
        got = rows.get(key, [])
        n = len(got)
        if not n:
            continue
        print(f"{key:8s} {n:8d} {sum(e for e, _, _ in got) / n:7.1%} {sum(w for _, w, _ in got):16d} "
              f"{sum(p for _, _, p in got) / n:8.1%}")
    print(f"copies: {total} ({total - len(rows.get('all', []))} pass the check as altered)")
    print(f"repairs that crashed ({len(crashed)}):")
    for line in crashed:
        print(f"  {line}")
    print(f"repairs that changed a correct note ({len(harmed)}):")
    for line in harmed:
        print(f"  {line}")
    print(f"CPU time: {(time.process_time() - cpu) / 60:.1f} min")
    return sum(w for _, w, _ in rows.get("all", [])) + len(crashed)


def _name(midi: int) -> str:
    return f"{'C C# D D# E F F# G G# A A# B'.split()[midi % 12]}{midi // 12 - 1}"


if __name__ == "__main__":
    raise SystemExit(main())
