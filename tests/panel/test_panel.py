"""The panel kit on a real run: blind packet, key outside, the form's CSV, analysis."""

from __future__ import annotations

import csv
import html
import io
import json
import random
import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from serialkit.eval.plan import VARIANTS
from serialkit.panel.analyze import analyze, read_ratings
from serialkit.panel.form import CRITERIA, CSV_HEADER
from tests.conftest import require_program
from tests.eval.helpers import CLI, run_cli, small_bank

# Everything that would tell a rater which condition (or run) a candidate came from.
REVEALING = [*VARIANTS, "self refine", "soft rules", "stochastic", "openai", "replay", "released",
             "violation", "repair", "rung", "certificate", "verdict", "proposer", "transcript",
             "candidate.json", "runs.jsonl", "mono-line", "canon-02"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("panelrun")
    out = tmp / "run"
    run_cli("eval", "run", str(small_bank(tmp, ("mono-line-01", "canon-02"))), "--runs", "3",
            "-o", str(out), "--jobs", "2")
    return out


@pytest.fixture(scope="module")
def packet(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    require_program("fluidsynth")
    tmp = tmp_path_factory.mktemp("packet")
    out, key = tmp / "packet", tmp / "secret" / "key.json"
    key.parent.mkdir()  # a key's folder must exist, as for every output file
    proc = run_cli("panel", "build", str(run_dir), "-o", str(out), "--key", str(key), "--raters", "3",
                   "--seed", "11", "--max-items", "5", "--json")
    summary = json.loads(proc.stdout)
    assert summary["items"] == 5 and summary["raters"] == 3
    return out, key


def _pdf_text(data: bytes) -> bytes:
    """The PDF with every Flate stream inflated, so compressed content is scanned too."""
    out = [data]
    for match in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        try:
            out.append(zlib.decompress(match.group(1)))
        except zlib.error:
            pass
    return b"\n".join(out)


def _wav_metadata(data: bytes) -> bytes:
    """Every RIFF chunk except the sample data."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    pos, out = 12, []
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if cid != b"data":
            out.append(cid + data[pos + 8:pos + 8 + size])
        pos += 8 + size + (size & 1)
    return b"".join(out)


def _midi_text(data: bytes) -> bytes:
    """Text carried by MIDI meta events (track names, copyright, markers, …)."""
    assert data[:4] == b"MThd"
    return b"\n".join(m.group(2) for m in re.finditer(rb"\xff([\x01-\x0f])[\x00-\x7f](.{0,127})", data, re.S))


def _scannable(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".pdf":
        data = _pdf_text(data)
    elif path.suffix == ".wav":
        data = _wav_metadata(data)
    elif path.suffix == ".mid":
        data = _midi_text(data)
    return data.decode("latin-1")


@pytest.mark.slow
def test_packet_reveals_no_condition_in_any_file_or_name(packet: tuple[Path, Path]) -> None:
    out, key_path = packet
    key = json.loads(key_path.read_text())
    secrets = [*REVEALING, *{c["key"] for c in key["candidates"].values()},
               *{c["dir"] for c in key["candidates"].values()}, *{c["task"] for c in key["candidates"].values()}]
    files = [p for p in out.rglob("*") if p.is_file()]
    suffixes = {p.suffix for p in files}
    assert {".svg", ".pdf", ".mid", ".wav", ".html", ".musicxml"} <= suffixes
    for path in files:
        text = _scannable(path).lower()
        name = str(path.relative_to(out)).lower()
        for word in secrets:
            pattern = re.compile(rf"(?<![a-z0-9]){re.escape(word.lower())}(?![a-z0-9])")
            assert not pattern.search(name), f"file name {name} reveals {word!r}"
            found = pattern.search(text)
            assert not found, f"{name} reveals {word!r}: …{text[max(0, found.start() - 60):found.end() + 60]}…"
    # colours (violations, repairs) and labels are gone from the engravings
    for svg in out.rglob("*.svg"):
        body = svg.read_text()
        assert "#d62728" not in body.lower() and "fingering" not in body


def test_key_is_outside_and_maps_every_candidate(packet: tuple[Path, Path]) -> None:
    out, key_path = packet
    assert out not in key_path.parents and not list(out.rglob("*key*"))
    key = json.loads(key_path.read_text())
    folders = {p.name for p in (out / "candidates").iterdir()}
    assert folders == set(key["candidates"])
    for item in key["items"].values():
        a, b = (key["candidates"][c] for c in item["candidates"])
        assert a["task"] == b["task"] and a["run"] == b["run"] and a["condition"] != b["condition"]
        assert [a["condition"], b["condition"]] == item["conditions"]
    runs = [c["key"] for c in key["candidates"].values()]
    assert len(runs) == len(set(runs)), "a run appears in two items"
    forms = sorted((out / "forms").glob("rater-*.html"))
    assert len(forms) == 3
    orders = {tuple(re.findall(r'data-item="(Q\d+)" data-cand="(\w+)"', f.read_text())) for f in forms}
    assert len(orders) > 1, "every rater sees the same order"
    assert all(f.read_text().count("Schedule:") == len(key["items"]) for f in forms)


def test_key_inside_the_packet_is_refused(run_dir: Path, tmp_path: Path) -> None:
    proc = run_cli("panel", "build", str(run_dir), "-o", str(tmp_path / "p"), "--key",
                   str(tmp_path / "p" / "key.json"), "--no-audio", check=False)
    assert proc.returncode == 2 and "outside" in proc.stderr
    assert not (tmp_path / "p").exists()


def test_form_exports_csv_in_a_browser_and_analysis_reads_it(packet: tuple[Path, Path], tmp_path: Path) -> None:
    """Chromium fills the real form (harness rated higher by construction) and its CSV is analysed."""
    chromium = require_program("chromium")
    out, key_path = packet
    key = json.loads(key_path.read_text())
    favoured = {cid for cid, c in key["candidates"].items() if c["condition"] == "harness"}
    form = out / "forms" / "rater-1.html"
    probe = out / "forms" / "probe.html"  # beside the form so relative paths resolve; removed below
    script = """<script>window.addEventListener('load', () => {
      const fav = FAVOURED;
      document.querySelectorAll('.cand').forEach(c => CRITERIA.forEach(k => {
        const v = fav.includes(c.dataset.cand) ? 5 : 2;
        c.querySelector('input[name="' + c.dataset.item + '-' + c.dataset.cand + '-' + k + '"][value="' + v + '"]').click();
      }));
      const text = [HEADER].concat(rows()).map(r => r.map(csvCell).join(',')).join('\\n');
      const pre = document.createElement('pre'); pre.id = 'csv-out'; pre.textContent = text;
      document.body.appendChild(pre);
    });</script>""".replace("FAVOURED", json.dumps(sorted(favoured)))
    probe.write_text(form.read_text().replace("</body>", script + "</body>"))
    try:
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              "--virtual-time-budget=5000", probe.as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
    finally:
        probe.unlink()
    match = re.search(r'<pre id="csv-out">(.*?)</pre>', dom, re.S)
    assert match, "the form did not produce CSV"
    text = html.unescape(match.group(1))
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_HEADER and len(rows) == 1 + 2 * len(key["items"])
    ratings = tmp_path / "r1.csv"
    ratings.write_text(text + "\n")
    proc = run_cli("panel", "analyze", str(ratings), "--key", str(key_path), "--json")
    result = json.loads(proc.stdout)
    for label, crits in result["comparisons"].items():
        assert label.startswith("harness vs ")
        for criterion, _ in CRITERIA:
            assert crits[criterion]["preference"]["value"] == 1.0
            assert crits[criterion]["mean_difference"]["value"] == 3.0


def test_analysis_recovers_a_simulated_preference_and_agreement(packet: tuple[Path, Path], tmp_path: Path) -> None:
    out, key_path = packet
    key = json.loads(key_path.read_text())
    rng = random.Random(5)
    files = []
    for rater in [f"R{i}" for i in range(1, 9)]:
        path = tmp_path / f"{rater}.csv"
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(CSV_HEADER)
            for item_id, item in key["items"].items():
                for cid in item["candidates"]:
                    base = 4 if key["candidates"][cid]["condition"] == "harness" else 2
                    scores = [base if rng.random() < 0.9 else rng.randint(1, 5) for _ in CRITERIA]
                    w.writerow([rater, item_id, cid, "A", *scores, ""])
        files.append(path)
    result = analyze(read_ratings(files), key, seed=1)
    for crits in result["comparisons"].values():
        for d in crits.values():
            assert d["preference"]["value"] > 0.7, d
            if d["preference"]["clusters"] >= 2:
                assert d["preference"]["low"] > 0.5, d
    for d in result["agreement"].values():
        assert 0.2 < d["fleiss_kappa"] < 1.0
    others = [c for c in result["scores"] if c != "harness"]
    for criterion, _ in CRITERIA:
        assert result["scores"]["harness"][criterion]["value"] > max(
            result["scores"][c][criterion]["value"] for c in others)
    # '-' reads the ratings from standard input, as every other command reads its input (tester 1900)
    piped = subprocess.run([*CLI, "panel", "analyze", "-", "--key", str(key_path), "--json", "--seed", "1"],
                           input=files[0].read_bytes(), capture_output=True, timeout=300)
    named = run_cli("panel", "analyze", str(files[0]), "--key", str(key_path), "--json", "--seed", "1")
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == json.loads(named.stdout)
    # ... and the key, when the ratings are files; both from standard input is refused
    keyed = subprocess.run([*CLI, "panel", "analyze", str(files[0]), "--key", "-", "--json", "--seed", "1"],
                           input=key_path.read_bytes(), capture_output=True, timeout=300)
    assert keyed.returncode == 0, keyed.stderr
    assert json.loads(keyed.stdout) == json.loads(named.stdout)
    both = subprocess.run([*CLI, "panel", "analyze", "-", "--key", "-"], input=b"", capture_output=True, timeout=300)
    assert both.returncode == 2 and b"can be given once" in both.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(CSV_HEADER) + "\nR1,Q01,XXXXX,A,9,1,1,1,\n")
    proc = run_cli("panel", "analyze", str(bad), "--key", str(key_path), check=False)
    assert proc.returncode == 2 and "bad.csv:2" in proc.stderr


def test_ratings_without_a_rating_column_are_refused(tmp_path: Path) -> None:
    """A CSV with rater, item and candidate but no criterion column rates nothing: refused, naming
    the file, rather than analysed as "0 raters" with exit 0 (outside tester)."""
    from serialkit.core.errors import SerialkitError

    bare = tmp_path / "bare.csv"
    bare.write_text("rater,item,candidate\nR1,Q01,A\n", encoding="utf-8")
    with pytest.raises(SerialkitError, match=r"bare\.csv: no rating column"):
        read_ratings([bare])
    assert read_ratings([_one_rating(tmp_path)])  # the same with one criterion column is read


def _one_rating(tmp_path: Path) -> Path:
    path = tmp_path / "one.csv"
    path.write_text(f"rater,item,candidate,{CRITERIA[0][0]}\nR1,Q01,A,4\n", encoding="utf-8")
    return path
