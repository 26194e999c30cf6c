"""MEI → MusicXML benchmark: what survives and how long it takes, serialkit vs music21.

For each MEI score of the real corpus (../shared/corpus; skipped when absent) it converts the
score to MusicXML with serialkit (``serialkit.io.mei.convert``) and with music21 (its MEI
reader and MusicXML writer), counts what the result holds — dynamics, slurs, text directions,
clefs, transpositions, articulations — against the source's own count, and times both (median
CPU seconds of ``--repeat`` runs, same process, same run). Prints one line per score and tool and
the ratio music21 / serialkit. Exit 1 when serialkit loses anything the source has.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.io.mei.convert import mei_musicxml_bytes  # noqa: E402
from tests.io.test_mei_musicxml import mei_counts, musicxml_counts  # noqa: E402

SHARED = Path(os.environ.get("SERIALKIT_SHARED", ROOT.parent / "shared"))


def run_serialkit(src: Path, out: Path) -> None:
    out.write_bytes(mei_musicxml_bytes(src))


def run_music21(src: Path, out: Path) -> None:
    from music21 import converter

    converter.parse(str(src), format="mei", forceSource=True).write("musicxml", fp=str(out))


def median_cpu(fn, *args, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn(*args)
        times.append(time.process_time() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (median reported)")
    args = parser.parse_args(argv)
    corpus = SHARED / "corpus"
    scores = sorted(corpus.glob("*.mei")) if corpus.is_dir() else []
    if not scores:
        print(f"no MEI scores in {corpus}; nothing to measure")
        return 0
    lost = False
    keys = ("dynamics", "slurs", "words", "clefs", "transpositions", "articulations")
    print(f"load average {os.getloadavg()[0]:.1f}; CPU seconds, median of {args.repeat}")
    print(f"{'score':32} {'tool':10} " + " ".join(f"{k[:6]:>6}" for k in keys) + "   seconds")
    with tempfile.TemporaryDirectory() as tmp:
        for src in scores:
            want = mei_counts(src)
            print(f"{src.name:32} {'source':10} " + " ".join(f"{want[k]:>6}" for k in keys))
            times = {}
            for name, fn in (("serialkit", run_serialkit), ("music21", run_music21)):
                out = Path(tmp) / f"{name}.musicxml"
                try:
                    fn(src, out)  # warm-up (imports), not timed
                    times[name] = median_cpu(fn, src, out, repeat=args.repeat)
                    got = musicxml_counts(etree.parse(str(out)).getroot())
                except Exception as exc:  # music21 fails on some MEI
                    print(f"{'':32} {name:10} failed: {type(exc).__name__}: {str(exc)[:80]}")
                    continue
                print(f"{'':32} {name:10} " + " ".join(f"{got[k]:>6}" for k in keys) + f"   {times[name]:.3f}")
                if name == "serialkit" and got != want:
                    lost = True
            if len(times) == 2:
                print(f"{'':32} ratio music21/serialkit: {times['music21'] / times['serialkit']:.1f}x")
    print("serialkit keeps every counted mark" if not lost else "serialkit LOST marks the source has")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
