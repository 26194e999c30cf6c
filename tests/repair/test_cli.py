"""``serialkit repair``: planted errors put right in a copy, certificate, review page, batches."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.cli import cli
from serialkit.io import read_score, write_musicxml
from serialkit.render.marks import RUNG_COLORS
from tests.planted import EXERCISE_ROW, Plant, exercise, plant_errors

TESTER_ROW = "C# D F# E G Bb A Eb C B F Ab"
REWRITE_COLOUR = RUNG_COLORS["rewrite"].upper()
"""The one colour of the rewrite rung: the review page's, the written score's, MuseScore's."""


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _planted(tmp_path: Path, kind: str, seed: int = 2, suffix: str = ".musicxml") -> tuple[Path, Plant]:
    piece, row = exercise(seed)
    plant = next(p for p in plant_errors(piece, row, "exercise", 3, seed) if p.kind == kind)
    path = tmp_path / f"{kind}{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(plant.piece.to_dict()), encoding="utf-8")
    elif suffix == ".mei":
        from serialkit.io.mei.write import write_mei

        write_mei(plant.piece, path)
    else:
        write_musicxml(plant.piece, path)
    return path, plant


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pitches(path: Path) -> dict[str, int]:
    from serialkit.io.repitch import read_editable

    return {e.id: e.midi for e in read_editable(path).piece.events}


@pytest.mark.parametrize("kind", ["accidental", "third", "swap"])
def test_repair_puts_the_planted_error_right(tmp_path: Path, kind: str) -> None:
    src, plant = _planted(tmp_path, kind)
    digest = _sha(src)
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))
    assert code == 0, text
    assert _sha(src) == digest, "the source is byte-identical afterwards"
    before, after = _pitches(src), _pitches(out)
    changed = {eid: m for eid, m in after.items() if before[eid] != m}
    assert changed == plant.original
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    assert {e["id"]: e["after"]["midi"] for e in cert["events"]} == changed
    assert {e["id"]: e["before"]["midi"] for e in cert["events"]} == {e: before[e] for e in changed}
    assert all(e["rung"] == "rewrite" and e["why"] and e["label"] for e in cert["events"])
    assert cert["source_sha256"] == digest and cert["after"]["relaxed"] is True
    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).resolve().parent.parent.parent / "schemas" / "repair-certificate.schema.json")
                        .read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(cert)
    # the output passes the gate, as `serialkit check` runs it
    code, text, _ = _run("check", str(out), "--row", EXERCISE_ROW)
    assert code == 0, text
    # changed notes carry the rung's colour and label; no other note does
    from serialkit.io.musicxml.annotate import read_annotations

    marks = read_annotations(out)
    labelled = {eid for eid, a in marks.items() if a.label}
    coloured = {eid for eid, a in marks.items() if a.color}
    assert labelled == set(changed)
    assert {eid.split("-t")[0] for eid in coloured} == set(changed)  # tied continuations too
    assert all(marks[e].label.startswith("rewrite ") for e in labelled)  # type: ignore[union-attr]
    assert all(marks[e].color == REWRITE_COLOUR for e in coloured)
    html = (tmp_path / "fixed.review.html").read_text(encoding="utf-8")
    assert "sk-rung-rewrite" in html or "rewrite" in html


def test_repair_spells_a_dropped_accidental_with_the_same_letter(tmp_path: Path) -> None:
    from lxml import etree

    src, plant = _planted(tmp_path, "accidental")
    out = tmp_path / "fixed.musicxml"
    assert _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))[0] == 0
    (eid,) = plant.original
    steps = {}
    for path in (src, out):
        root = etree.parse(str(path)).getroot()
        note = next(n for n in root.iter("note") if n.get("id") == eid)
        steps[path] = (note.findtext("pitch/step"), note.findtext("pitch/alter"), note.findtext("accidental"))
    assert steps[out][0] == steps[src][0], steps  # same letter: only the accidental changes
    assert steps[out][2] in ("sharp", "flat", "natural")


@pytest.mark.parametrize("suffix", [".json", ".mei"])
def test_repair_writes_the_inputs_format(tmp_path: Path, suffix: str) -> None:
    src, plant = _planted(tmp_path, "accidental", suffix=suffix)
    digest = _sha(src)
    out = tmp_path / f"fixed{suffix}"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))
    assert code == 0, text
    assert _sha(src) == digest
    before, after = _pitches(src), _pitches(out)
    assert {e: m for e, m in after.items() if before[e] != m} == plant.original


def test_dry_run_prints_the_edits_and_writes_nothing(tmp_path: Path) -> None:
    src, plant = _planted(tmp_path, "third")
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run")
    assert code == 0
    assert "dry run: 1 note changed" in text and "[rewrite; third" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["third.musicxml"]


def test_only_order_leaves_unexplained_notes_alone(tmp_path: Path) -> None:
    src, _plant = _planted(tmp_path, "accidental")
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--only", "ORDER", "--dry-run", "--json")
    assert code == 1
    assert json.loads(text)["changes"] == []


def _class(tmp_path: Path) -> Path:
    """A class's exercises: three with a planted error, one correct."""
    folder = tmp_path / "class"
    folder.mkdir()
    for kind in ("accidental", "third", "swap"):
        _planted(folder, kind)
    piece, _row = exercise(2)
    write_musicxml(piece, folder / "correct.musicxml")
    return folder


def test_a_classroom_folder_gets_one_report_per_score_and_a_summary(tmp_path: Path) -> None:
    folder = _class(tmp_path)
    out = tmp_path / "fixed"
    report = tmp_path / "report.json"
    code, text, _ = _run("repair", str(folder), "--row", EXERCISE_ROW, "-o", str(out), "--report", str(report))
    assert code == 0, text
    names = sorted(p.name for p in out.iterdir())
    for stem in ("accidental", "swap", "third"):
        assert {f"{stem}.musicxml", f"{stem}.certificate.json", f"{stem}.review.html"} <= set(names)
    assert not [n for n in names if n.startswith("correct.")]  # nothing to improve: nothing written
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"] == {"scores": 4, "passed": 4, "failed": 0, "unreadable": 0,
                               "changed_notes": 4, "scores_changed": 3}
    assert "4 scores: 4 passed, 0 failed, 0 unreadable; 3 changed (4 notes)" in text
    correct = next(r for r in data["scores"] if r["source"].endswith("correct.musicxml"))
    assert correct["changes"] == [] and correct["output"] is None and correct["certificate"] is None
    assert correct["status"] == "passed"
    for entry in data["scores"]:  # one report per score, in the text too
        assert f"{entry['source']} " in text


def test_repair_and_check_share_the_batch_options() -> None:
    """-r/--recursive, -j/--jobs, --report, --json and -o mean in repair what they mean in check."""
    from serialkit.cli.check import check
    from serialkit.cli.repair import repair

    def opts(cmd: object) -> dict[str, tuple[list[str], bool]]:
        return {p.name: (p.opts, p.is_flag) for p in cmd.params  # type: ignore[attr-defined]
                if p.name in ("recursive", "jobs", "report_path", "as_json", "output")}

    assert opts(repair) == opts(check) and len(opts(repair)) == 5


def test_a_folder_as_json_lines_is_checks_format(tmp_path: Path) -> None:
    """``--json`` on a folder: one JSON object per score (source, status, then what was done),
    then a summary line — the lines ``check --json`` prints for a folder."""
    folder = _class(tmp_path)
    code, text, _ = _run("repair", str(folder), "--row", EXERCISE_ROW, "--dry-run", "--json")
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and len(lines) == 5
    *scores, last = lines
    assert sorted(Path(r["source"]).name for r in scores) == sorted(p.name for p in folder.iterdir())
    assert all(r["status"] == "passed" and r["passed"] and r["dry_run"] for r in scores)
    assert sum(len(r["changes"]) for r in scores) == last["summary"]["changed_notes"] == 4
    # --no-suggest: only the sources and the summary's keys of check's lines are compared
    _code, checked, _ = _run("check", str(folder), "--row", EXERCISE_ROW, "--json", "--no-suggest")
    check_lines = [json.loads(line) for line in checked.splitlines()]
    assert [r["source"] for r in check_lines[:-1]] == [r["source"] for r in scores]
    # (repair always has a row, so no score of it is ever ``unchecked``: check alone counts those)
    assert set(check_lines[-1]["summary"]) - {"unchecked"} <= set(last["summary"])
    assert not list(tmp_path.glob("*/*.certificate.json"))  # a dry run writes nothing


def test_recursive_and_jobs_as_check_takes_them(tmp_path: Path) -> None:
    """Sub-folders only with -r, their scores repaired under the same sub-folder of -o DIR; the
    same entries in 2 processes as in one."""
    folder = tmp_path / "class"
    (folder / "week2").mkdir(parents=True)
    _planted(folder, "accidental")
    _planted(folder / "week2", "third")
    code, text, _ = _run("repair", str(folder), "--row", EXERCISE_ROW, "--dry-run", "--json")
    assert [Path(json.loads(line).get("source", "")).name for line in text.splitlines()[:-1]] == ["accidental.musicxml"]
    out = tmp_path / "fixed"
    code, text, _ = _run("repair", str(folder), "-r", "--row", EXERCISE_ROW, "-o", str(out), "--json")
    assert code == 0, text
    assert (out / "accidental.musicxml").exists() and (out / "week2" / "third.musicxml").exists()
    assert (out / "week2" / "third.certificate.json").exists()
    one = [json.loads(line) for line in text.splitlines()]
    code, text, _ = _run("repair", str(folder), "--recursive", "--row", EXERCISE_ROW, "--dry-run", "--json",
                         "--jobs", "2")
    two = [json.loads(line) for line in text.splitlines()]
    assert [(r.get("source"), [c["id"] for c in r.get("changes", [])]) for r in two] == \
        [(r.get("source"), [c["id"] for c in r.get("changes", [])]) for r in one]


def test_an_unreadable_score_in_a_folder_is_one_line_and_the_rest_are_repaired(tmp_path: Path) -> None:
    folder = _class(tmp_path)
    (folder / "broken.musicxml").write_text("<score-partwise><part-list>", encoding="utf-8")
    out = tmp_path / "fixed"
    result = CliRunner().invoke(cli, ["repair", str(folder), "--row", EXERCISE_ROW, "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "broken.musicxml" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "5 scores: 4 passed, 0 failed, 1 unreadable; 3 changed (4 notes)" in result.stdout
    assert not (out / "broken.musicxml").exists() and (out / "third.musicxml").exists()


def test_score_certificate_and_review_are_written_together_or_not_at_all(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A review page that cannot be made leaves no score and no certificate: one line, exit 2."""
    import importlib

    from serialkit.core.errors import SerialkitError

    def broken(*_args: object, **_kwargs: object) -> None:
        raise SerialkitError("the engraver failed")

    monkeypatch.setattr(importlib.import_module("serialkit.render"), "render", broken)
    src, _plant = _planted(tmp_path, "accidental")
    out = tmp_path / "out" / "fixed.musicxml"
    out.parent.mkdir()
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", EXERCISE_ROW, "-o", str(out)])
    assert result.exit_code == 2 and result.stderr == "error: the engraver failed\n"
    assert list(out.parent.iterdir()) == []


def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.musicxml"
    bad.write_text("<score-partwise><part-list>", encoding="utf-8")
    out = tmp_path / "out.musicxml"
    result = CliRunner().invoke(cli, ["repair", str(bad), "--row", EXERCISE_ROW, "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "bad.musicxml" in result.stderr
    assert not out.exists()


def test_the_output_may_not_be_the_source(tmp_path: Path) -> None:
    src, _plant = _planted(tmp_path, "accidental")
    digest = _sha(src)
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", EXERCISE_ROW, "-o", str(src)])
    assert result.exit_code == 2 and "overwrite the source" in result.stderr
    assert _sha(src) == digest


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_certificate_lists_exactly_the_changed_notes(tmp_path: Path, seed: int, kind: str) -> None:
    """Property: whatever is repaired, the certificate names exactly the notes whose pitch differs
    between source and output, the source is untouched, and the output passes the gate."""
    folder = tmp_path / f"{kind}-{seed}"
    folder.mkdir(exist_ok=True)
    src, _plant = _planted(folder, kind, seed)
    digest = _sha(src)
    out = folder / "out.musicxml"
    out.unlink(missing_ok=True)
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))
    assert _sha(src) == digest
    if not out.exists():  # no correction improved the score: nothing written, and the report says so
        assert "0 notes changed" in text and "nothing written" in text and code in (0, 1)
        assert not (folder / "out.certificate.json").exists()
        return
    before, after = _pitches(src), _pitches(out)
    cert = json.loads((folder / "out.certificate.json").read_text(encoding="utf-8"))
    assert {e["id"] for e in cert["events"]} == {e for e in after if after[e] != before[e]}
    assert (code == 0) == cert["after"]["relaxed"]
    piece = read_score(out)
    assert len(piece.events) == len(read_score(src).events)


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_repaired_score_opens_in_musescore_with_colours_and_labels(tmp_path: Path) -> None:
    import os
    import subprocess

    from serialkit.io.musicxml.annotate import notehead_annotations
    from tests.conftest import require_program

    exe = require_program("mscore3")
    src, plant = _planted(tmp_path, "swap")
    out = tmp_path / "fixed.musicxml"
    assert _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))[0] == 0
    exported = tmp_path / "exported.musicxml"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, "-o", str(exported), str(out)], env=env, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]

    def by_place(path: Path) -> dict[tuple[object, ...], tuple[str | None, str | None]]:
        return {(raw.part, raw.onset, raw.midi): (ann.label, ann.color) for raw, ann in notehead_annotations(path)
                if not raw.tie_stop}

    ours, theirs = by_place(out), by_place(exported)
    assert set(theirs) == set(ours)  # MuseScore drops ids: match by (part, onset, pitch)
    marked = {k: v for k, v in theirs.items() if v != (None, None)}
    assert marked == {k: v for k, v in ours.items() if v != (None, None)}
    assert len(marked) == len(plant.original)
    assert all(label and label.startswith("rewrite ") and (colour or "").upper() == REWRITE_COLOUR
               for label, colour in marked.values())
    # MuseScore reads the corrected pitches: the exported score passes the gate too
    code, text, _ = _run("check", str(exported), "--row", EXERCISE_ROW)
    assert code == 0, text


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("name,row", [
    ("webern-op21-i-mm1-25.mei", "A F# G G# E F B Bb D C# C Eb"),
    ("webern-op27-ii-mm1-11.mei", "Eb B Bb D C# C F# E G F A Ab"),
])
def test_unmodified_webern_is_left_alone(corpus: Path, tmp_path: Path, name: str, row: str) -> None:
    """Correct notes are never "corrected": 0 edits on the real excerpts (analysis profile)."""
    src = corpus / name
    digest = _sha(src)
    out = tmp_path / name
    code, text, _ = _run("repair", str(src), "--row", row, "-o", str(out), "--json", "--no-review")
    data = json.loads(text)
    assert data["changes"] == [] and data["withdrawn"] == []
    assert _sha(src) == digest
    assert not out.exists() and data["output"] is None  # nothing improves: nothing is written
    assert code == (0 if data["after"]["relaxed"] else 1)


def test_repair_says_why_nothing_changed_below_the_threshold(tmp_path: Path) -> None:
    src, plant = _planted(tmp_path, "third")
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out), "--threshold", "1")
    assert code == 1, text
    assert "0 notes changed: 1 suggestion below --threshold 1; use --dry-run to see them" in text
    assert "nothing written" in text and not out.exists()
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run", "--threshold", "1")
    (eid, original), = plant.original.items()
    held = [line for line in text.splitlines() if line.strip().startswith("held:")]
    assert len(held) == 1 and "< 1]" in held[0], text
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run", "--threshold", "1", "--json")
    data = json.loads(text)
    assert [(h["id"], h["after"]["midi"]) for h in data["held"]] == [(eid, original)]
    assert data["threshold"] == 1 and data["changes"] == []


def test_a_change_that_does_not_improve_the_score_is_not_kept(tmp_path: Path, fixtures: Path) -> None:
    """Two adjacent wrong notes (G -> G#4, E -> Eb5): the correct F4 beside them, which only a
    statement's hole finding is located by, is never "corrected" to fill the hole; the two wrong
    notes are put right, each kept because the gate is better with it."""
    src = fixtures / "repair" / "twin-adjacent.musicxml"
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", TESTER_ROW, "-o", str(out), "--json", "--no-review")
    data = json.loads(text)
    assert {c["id"]: (c["before"]["midi"], c["after"]["midi"]) for c in data["changes"]} == {
        "p1n16": (68, 67), "p1n17": (75, 76)}
    assert code == 0  # p1n18 (F4) unchanged, whether or not a suggestion proposed filling the hole with it
    assert _pitches(out)["p1n18"] == _pitches(src)["p1n18"] == 65


def test_a_hole_neighbour_in_a_chord_may_be_the_wrong_note(tmp_path: Path, fixtures: Path) -> None:
    """A hexachord as one chord: the wrong B4 (for Bb4) is read elsewhere and only located by a
    hole; changing it explains the unexplained note too, so it is kept."""
    src = fixtures / "repair" / "hexachord-chord.musicxml"
    code, text, _ = _run("repair", str(src), "--row", TESTER_ROW, "--dry-run", "--json")
    data = json.loads(text)
    assert [(c["id"], c["after"]["midi"]) for c in data["changes"]] == [("p1n5", 70)] and code == 0


def test_nothing_is_written_when_no_change_improves_the_score(tmp_path: Path) -> None:
    """The gate is the judge: with every suggestion refused, no copy and no certificate, only the
    report saying why (exit 1: the findings remain)."""
    src, _plant = _planted(tmp_path, "third")
    out = tmp_path / "out" / "fixed.musicxml"
    out.parent.mkdir()
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out), "--only", "ORDER")
    assert code == 1 and "not written" in text and "nothing written" in text
    assert list(out.parent.iterdir()) == []


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_a_repair_never_makes_the_gate_worse(tmp_path: Path, seed: int, kind: str) -> None:
    """Property: a written repair has no more findings and unexplained notes than its source,
    fewer of one of them, and only notes the check named (or their swap partners) changed."""
    folder = tmp_path / f"{kind}-{seed}"
    folder.mkdir(exist_ok=True)
    src, _plant = _planted(folder, kind, seed)
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run", "--json")
    data = json.loads(text)
    if not data["changes"]:
        return
    before, after = data["before"], data["after"]
    assert after["unexplained"] <= before["unexplained"]
    assert sum(after["counts"].values()) <= sum(before["counts"].values())
    assert (after["unexplained"], sum(after["counts"].values())) != (before["unexplained"],
                                                                      sum(before["counts"].values()))


def _only_the_note_and_its_label_differ(original: str, repaired: str) -> list[str]:
    """The lines of ``repaired`` that are not in ``original``, the source's other lines all kept."""
    import difflib

    diff = list(difflib.ndiff(original.splitlines(keepends=True), repaired.splitlines(keepends=True)))
    assert not [d for d in diff if d.startswith("- ")][1:], "at most one line of the source changes"
    return [d[2:] for d in diff if d.startswith("+ ")]


@pytest.mark.corpus
def test_repair_edits_mei_in_place(corpus: Path, tmp_path: Path) -> None:
    """Webern Op. 27 with an added sharp (F5 -> F#5): the repair changes that note's accidental and
    adds its colour and label; every other byte (meiHead, articulations, slurs, spelling of the
    other notes, meiversion) is the source's."""
    original = (corpus / "webern-op27-ii-mm1-11.mei").read_text(encoding="utf-8")
    right = '<note pname="f" oct="5" dur="4" accid="n" artic="ten"/>'
    src = tmp_path / "op27.mei"
    src.write_text(original.replace(right, right.replace('accid="n"', 'accid="s"')), encoding="utf-8")
    out = tmp_path / "fixed.mei"
    code, text, _ = _run("repair", str(src), "--row", "Eb B Bb D C# C F# E G F A Ab", "-o", str(out), "--no-review")
    assert code == 0, text
    added = _only_the_note_and_its_label_differ(original, out.read_text(encoding="utf-8"))
    assert len(added) == 2, added
    note, = (a for a in added if "<note " in a)
    assert 'pname="f" oct="5" dur="4" accid="n" artic="ten"' in note and f'color="{REWRITE_COLOUR}"' in note
    assert "<fing " in next(a for a in added if a is not note) and "rewrite" in added[1]
    assert _pitches(out) == _pitches(corpus / "webern-op27-ii-mm1-11.mei")


@pytest.mark.corpus
@pytest.mark.slow
def test_repair_writes_a_transposing_part_at_written_pitch_in_place(corpus: Path, tmp_path: Path) -> None:
    """Webern Op. 21, Horn 2 in F (trans.semi -7): its written Eb4 with the flat dropped (sounding
    A3 for G#3) is put back as written Eb4 — the <accid> child's flat — not at sounding pitch."""
    import re

    original = (corpus / "webern-op21-i-mm1-25.mei").read_text(encoding="utf-8")
    at = original.index('<note xml:id="note-000000087804319"')
    accid = re.compile(r'accid="f"').search(original, at)
    assert accid is not None and original[at:accid.start()].count("<note ") == 1
    src = tmp_path / "op21.mei"
    src.write_text(original[:accid.start()] + 'accid="n"' + original[accid.end():], encoding="utf-8")
    out = tmp_path / "fixed.mei"
    _run("repair", str(src), "--row", "A F# G G# E F B Bb D C# C Eb", "-o", str(out), "--no-review")
    added = _only_the_note_and_its_label_differ(original, out.read_text(encoding="utf-8"))
    assert len(added) == 2 and 'xml:id="note-000000087804319"' in added[0] and "<fing " in added[1], added
    assert _pitches(out) == _pitches(corpus / "webern-op21-i-mm1-25.mei")
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    (entry,) = cert["events"]
    assert (entry["before"]["name"], entry["after"]["name"]) == ("E4", "Eb4")  # as the horn reads it
    assert (entry["before"]["midi"], entry["after"]["midi"]) == (57, 56)  # as it sounds


def test_two_scores_with_one_output_name_are_refused(tmp_path: Path) -> None:
    """As check and annotate refuse them: exit 2, one line naming both, nothing written."""
    for sub in ("x", "y"):
        (tmp_path / sub).mkdir()
        _planted(tmp_path / sub, "accidental")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["repair", str(tmp_path / "x" / "accidental.musicxml"),
                                      str(tmp_path / "y" / "accidental.musicxml"), "--row", EXERCISE_ROW,
                                      "-o", str(out)])
    assert result.exit_code == 2 and "would both be written to" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_the_certificate_lists_every_notehead_a_tied_note_rewrote(tmp_path: Path, fixtures: Path) -> None:
    """A wrong note tied over the bar (Eb4 for E4): both noteheads are rewritten, and the
    certificate lists exactly those noteheads — the changed ones in the written score."""
    from serialkit.io.musicxml.annotate import notehead_annotations

    src = fixtures / "repair" / "tied-wrong.musicxml"
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", TESTER_ROW, "-o", str(out), "--no-review")
    assert code == 0, text
    before = {raw.id: raw.midi for raw, _ in notehead_annotations(src)}
    changed = sorted(raw.id for raw, _ in notehead_annotations(out) if raw.midi != before[raw.id])
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    assert sorted(h for e in cert["events"] for h in e["noteheads"]) == changed == ["p1n3", "p1n4"]


def test_dash_reads_standard_input_and_writes_standard_output(tmp_path: Path) -> None:
    """``repair - -o -`` as check and annotate take ``-``: the repaired score on standard output,
    the report on standard error; ``-`` with a file output names the source ``-``."""
    src, plant = _planted(tmp_path, "accidental")
    result = CliRunner().invoke(cli, ["repair", "-", "--row", EXERCISE_ROW, "-o", "-"], input=src.read_bytes())
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("- → -: 1 note changed")
    piped = tmp_path / "piped.musicxml"
    piped.write_bytes(result.stdout_bytes)
    before, after = _pitches(src), _pitches(piped)
    assert {e: m for e, m in after.items() if before[e] != m} == plant.original
    out = tmp_path / "fixed.musicxml"
    result = CliRunner().invoke(cli, ["repair", "-", "--row", EXERCISE_ROW, "-o", str(out)], input=src.read_bytes())
    assert result.exit_code == 0 and _pitches(out) == after
    assert json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))["source"] == "-"
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", EXERCISE_ROW, "-o", "-", "--json"])
    assert result.exit_code == 2 and "standard output" in result.stderr


def test_messages_name_notes_as_the_score_writes_them(tmp_path: Path, fixtures: Path) -> None:
    """A clarinet in Bb's written C5 for A4 (sounding A#4 for G4): the report names the written
    pitches and says what sounds; the JSON's ``name`` is the written pitch, ``sounding`` and
    ``midi`` what sounds."""
    src = fixtures / "repair" / "clarinet-wrong.musicxml"
    code, text, _ = _run("repair", str(src), "--row", TESTER_ROW, "--dry-run")
    assert code == 0 and ": C5 → A4 (sounding A#4 → G4)  " in text, text
    code, text, _ = _run("repair", str(src), "--row", TESTER_ROW, "--dry-run", "--json")
    (change,) = json.loads(text)["changes"]
    assert change["before"] == {"midi": 70, "name": "C5", "sounding": "A#4"}
    assert change["after"] == {"midi": 67, "name": "A4", "sounding": "G4"}


def test_small_messages_name_the_trouble_once(tmp_path: Path) -> None:
    """A bad --row names the option; a file standing where -o needs a folder is named as such;
    lxml's place is not repeated after the file:line; plurals agree."""
    src, _plant = _planted(tmp_path, "accidental")
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", "C D", "-o", str(tmp_path / "x.musicxml")])
    assert result.exit_code == 2 and result.stderr.startswith("error: --row 'C D': 2 pitch classes given")
    (tmp_path / "plain").write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", EXERCISE_ROW,
                                      "-o", str(tmp_path / "plain" / "x.musicxml")])
    assert result.exit_code == 2 and "plain is a file, not a directory" in result.stderr
    broken = tmp_path / "broken.musicxml"
    broken.write_text(src.read_text(encoding="utf-8").replace("<type>", "<typ", 1), encoding="utf-8")
    result = CliRunner().invoke(cli, ["repair", str(broken), "--row", EXERCISE_ROW, "--dry-run"])
    assert result.exit_code == 2 and result.stderr.count(", line ") == 0, result.stderr
    folder = tmp_path / "one"
    folder.mkdir()
    src.rename(folder / src.name)
    code, text, _ = _run("repair", str(folder), "--row", EXERCISE_ROW, "-o", str(tmp_path / "out"))
    assert "1 score: 1 passed, 0 failed, 0 unreadable; 1 changed (1 note)" in text, text


def test_only_takes_codes_in_any_case_as_rules_does(tmp_path: Path) -> None:
    src, _plant = _planted(tmp_path, "accidental")
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--only", "order", "--dry-run", "--json")
    assert code == 1 and json.loads(text)["changes"] == []


def _note_spans(text: str) -> dict[str, tuple[int, int]]:
    """Each ``<note id=…>``'s first and last line (0-based) in a pretty-printed MusicXML file."""
    import re

    spans: dict[str, tuple[int, int]] = {}
    current, start = None, 0
    for i, line in enumerate(text.splitlines()):
        if (m := re.search(r'<note\b[^>]*\bid="([^"]+)"', line)) is not None:
            current, start = m.group(1), i
        if current is not None and "</note>" in line:
            spans[current] = (start, i)
            current = None
    return spans


@pytest.mark.parametrize("name,row,changed", [
    ("twin-adjacent.musicxml", TESTER_ROW, {"p1n16", "p1n17"}),
    ("tied-wrong.musicxml", TESTER_ROW, {"p1n3", "p1n4"}),
    ("clarinet-wrong.musicxml", TESTER_ROW, None),
])
def test_a_pitch_repair_of_musicxml_changes_only_the_changed_notes(tmp_path: Path, fixtures: Path, name: str,
                                                                   row: str, changed: set[str] | None) -> None:
    """The diff between a MusicXML source and its pitch repair lies inside the changed notes'
    elements (pitch, accidental, colour, label): the XML declaration, DOCTYPE, part list (no
    instrument added) and final newline are the source's, byte for byte."""
    import difflib

    src = fixtures / "repair" / name
    out = tmp_path / name
    code, text, _ = _run("repair", str(src), "--row", row, "-o", str(out), "--no-review", "--json")
    assert code == 0, text
    cert = json.loads((tmp_path / name.replace(".musicxml", ".certificate.json")).read_text(encoding="utf-8"))
    heads = {h for e in cert["events"] for h in e["noteheads"]}
    assert changed is None or heads == changed
    original, repaired = src.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    assert repaired.endswith("</score-partwise>\n") and original.endswith("</score-partwise>\n")
    assert repaired.splitlines()[:2] == original.splitlines()[:2]  # declaration and DOCTYPE
    assert repaired.count("<score-instrument") == original.count("<score-instrument")
    spans = [span for nid, span in _note_spans(original).items() if nid in heads]
    old, new = original.splitlines(), repaired.splitlines()
    edits = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    assert edits
    for _tag, i1, i2, j1, j2 in edits:  # every changed or added line is inside a changed note
        assert any(first <= i1 and max(i1, i2 - 1) <= last for first, last in spans), \
            (old[i1 - 1:i2 + 1], new[j1:j2])
    assert _pitches(out) == {**_pitches(src), **{e["id"]: e["after"]["midi"] for e in cert["events"]}}


def test_one_colour_per_rung_in_the_score_and_on_the_review_page(tmp_path: Path) -> None:
    """The rewrite rung's colour in the repaired score is the review page's (RUNG_COLORS), and no
    other rung's: one table, one colour per rung."""
    from serialkit.repair.run import _colour

    assert len({_colour(r) for r in RUNG_COLORS}) == len(RUNG_COLORS)
    assert all(_colour(r) == c.upper() for r, c in RUNG_COLORS.items())
    src, _plant = _planted(tmp_path, "accidental")
    out = tmp_path / "fixed.musicxml"
    assert _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))[0] == 0
    html = (tmp_path / "fixed.review.html").read_text(encoding="utf-8").lower()
    score = out.read_text(encoding="utf-8")
    assert f'color="{REWRITE_COLOUR}"' in score and REWRITE_COLOUR.lower() in html
    others = {c.upper() for r, c in RUNG_COLORS.items() if r != "rewrite"}
    assert not [c for c in others if c in score]


@pytest.mark.parametrize("suffix", [".musicxml", ".mei"])
def test_a_repair_parses_its_source_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    """One reading of the source feeds the piece, the written names, the spelling habit and the
    in-place edit; the written score is read back once, which also gives its tied noteheads."""
    import sys

    import serialkit.io.files.safety as safety

    real = safety.parse_xml
    parsed: list[str] = []

    def counting(data: bytes, where: str, *args: object, **kwargs: object) -> object:
        parsed.append(str(where))
        return real(data, where, *args, **kwargs)  # type: ignore[arg-type]

    for module in list(sys.modules.values()):  # every module that took the name
        if getattr(module, "parse_xml", None) is real:
            monkeypatch.setattr(module, "parse_xml", counting)
    src, plant = _planted(tmp_path, "accidental", suffix=suffix)
    out = tmp_path / f"fixed{suffix}"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out), "--no-review")
    assert code == 0, text
    assert parsed.count(str(src)) == 1, parsed
    assert [Path(w).name for w in parsed if w != str(src)] == [out.name], parsed  # the read-back
    assert {e: m for e, m in _pitches(out).items() if _pitches(src)[e] != m} == plant.original


@pytest.mark.slow
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["accidental", "third", "swap"]))
def test_musicxml_and_mei_of_one_piece_spell_a_repair_alike(tmp_path: Path, seed: int, kind: str) -> None:
    """Property: the spelling habit comes from the reader's written alterations in either format,
    so one piece written as MusicXML and as MEI gets one habit and the same written names for
    every change and held suggestion."""
    from serialkit.io.repitch import read_editable

    folder = tmp_path / f"{kind}-{seed}"
    folder.mkdir(exist_ok=True)
    names = {}
    for suffix in (".musicxml", ".mei"):
        src, _plant = _planted(folder, kind, seed, suffix=suffix)
        score = read_editable(src)
        raws = score.mei.parts.notes if score.mei else score.scan.parts.notes
        firsts = {e.id for e in score.piece.events}  # one vote per note (a tie's first notehead)
        assert score.habit == sum((n.alter > 0) - (n.alter < 0) for n in raws if n.id in firsts)
        code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run", "--json", "--threshold", "0")
        data = json.loads(text)
        names[suffix] = (score.habit, [(c["id"], c["before"]["name"], c["after"]["name"])
                                       for c in [*data["changes"], *data["held"]]])
    assert names[".musicxml"] == names[".mei"]


def test_the_readme_classroom_folder(fixtures: Path, tmp_path: Path) -> None:
    """The README's example on the fixture folder: one entry per exercise, then the summary; the
    same with --report as on standard output."""
    report = tmp_path / "class.json"
    code, text, _ = _run("repair", str(fixtures / "classroom"), "--row", "C B G Ab Eb Db D Bb F# F E A",
                         "--dry-run", "--json", "--report", str(report))
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and [Path(r["source"]).stem for r in lines[:-1]] == ["anna", "ben", "carla", "dev", "emma"]
    assert lines[-1] == {"summary": {"scores": 5, "passed": 5, "failed": 0, "unreadable": 0,
                                     "changed_notes": 6, "scores_changed": 4}}
    assert json.loads(report.read_text(encoding="utf-8")) == {"scores": lines[:-1], **lines[-1]}


def test_a_source_without_note_ids_gets_ids_only_on_the_changed_notes(tmp_path: Path, fixtures: Path) -> None:
    """A MusicXML source whose notes carry no ids (most do not): the repaired copy names only the
    changed notes (the id the certificate gives them), so a diff against the source shows only
    them."""
    import difflib
    import re

    src = tmp_path / "ben.musicxml"
    src.write_text(re.sub(r'(<note\b[^>]*?) id="[^"]*"', r"\1", (fixtures / "classroom" / "ben.musicxml")
                          .read_text(encoding="utf-8")), encoding="utf-8")
    original = src.read_text(encoding="utf-8")
    assert not re.search(r'<note\b[^>]*\bid=', original)
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out), "--no-review", "--json")
    assert code == 0, text
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    heads = {h for e in cert["events"] for h in e["noteheads"]}
    repaired = out.read_text(encoding="utf-8")
    assert set(re.findall(r'<note\b[^>]*\bid="([^"]+)"', repaired)) == heads  # ids on the changed notes only
    old, new = original.splitlines(), repaired.splitlines()
    starts = [i for i, line in enumerate(old) if "<note" in line]
    ends = [i for i, line in enumerate(old) if "</note>" in line]
    edits = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    touched = {next(k for k, (a, b) in enumerate(zip(starts, ends, strict=True)) if a <= i1 <= b)
               for _tag, i1, _i2, _j1, _j2 in edits}  # every edit inside a note: which ones
    assert len(touched) == len(heads)
    assert _pitches(out) == {**_pitches(src), **{e["id"]: e["after"]["midi"] for e in cert["events"]}}


def _review_svgs(html: str) -> list[object]:
    """The engraved pages of a review page, parsed as SVG."""
    import re

    from tests.render.conftest import parse_svg

    return [parse_svg(svg) for svg in re.findall(r'<div class="sk-page" id="sk-page-\d+">(.*?)</div>', html, re.S)]


@pytest.mark.parametrize("kind", ["accidental", "swap"])
def test_the_review_page_labels_and_outlines_every_repaired_note(tmp_path: Path, kind: str) -> None:
    """Outside tester 0405, #7: the repaired note was coloured only — no outline, no label — and the
    repair's own label in the score ("rewrite P0:3") was engraved in large bold type. Colour is never
    the only cue: the changed notes get the rewrite outline and their row label in the page's own
    small type; the written score keeps its colour and label for notation software."""
    import re

    from serialkit.render.marks import CUE_SHAPES
    from tests.render.conftest import SVG, labels, notes_by_id

    src, plant = _planted(tmp_path, kind)
    out = tmp_path / "fixed.musicxml"
    assert _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out))[0] == 0
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    changed = {e["id"] for e in cert["events"]}
    assert changed == set(plant.original)
    from serialkit.io.musicxml.annotate import read_annotations

    assert all(a.label and a.label.startswith("rewrite ") for e, a in read_annotations(out).items() if e in changed)
    pages = _review_svgs((tmp_path / "fixed.review.html").read_text(encoding="utf-8"))
    notes = {nid: g for root in pages for nid, g in notes_by_id(root).items()}
    printed = {el.get("data-for"): "".join(el.itertext()) for root in pages for el in labels(root)}
    events = read_score(out).events
    assert set(printed) == {e.id for e in events}, "every note of the exercise has its label"
    cues = {p.get("data-for"): p.get("data-shape") for root in pages for p in root.iter(f"{SVG}path")
            if "sk-cue" in (p.get("class") or "") and p.get("data-for")}
    assert {e: cues.get(e) for e in changed} == {e: CUE_SHAPES["rewrite"] for e in changed}
    for eid in changed:  # its row label (a swap's other note: its own, not "swap with …")
        label = cert_label(cert, eid)
        assert printed[eid] == label if label[0] in "PIR" else re.fullmatch(r"(RI|[PIR])\d+:\d+", printed[eid])
        assert "sk-rung-rewrite" in notes[eid].get("class").split()
    # the score's "rewrite …" labels are not engraved: only the legend names the rung
    engraved = [t for root in pages for t in root.iter(f"{SVG}text")
                if "rewrite" in "".join(t.itertext()).lower()
                and not any("sk-legend" in (a.get("class") or "") for a in t.iterancestors())]
    assert engraved == []


def cert_label(cert: dict[str, object], eid: str) -> str:
    """The row label the certificate gives a changed note (a swap's other note: its own label)."""
    entry = next(e for e in cert["events"] if e["id"] == eid)  # type: ignore[attr-defined]
    return str(entry["label"])
