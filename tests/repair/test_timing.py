"""``serialkit repair --rules generation``: collisions put right by the timing rungs (trim, yield,
retime) on a copy — only where the profile judges COLL, each change kept only when the gate accepts
it, written in the input's format with every changed note coloured and labelled by its rung."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serialkit.cli import cli
from serialkit.io import write_musicxml
from serialkit.render.marks import RUNG_COLORS
from tests.planted import EXERCISE_ROW, held_canon

TIMING = ("trim", "yield", "retime")
WEBERN_21 = "A F# G G# E F B Bb D C# C Eb"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _notes(path: Path) -> dict[str, tuple[int, Fraction, Fraction]]:
    from serialkit.io.repitch import read_editable

    return {e.id: (e.midi, e.onset, e.duration) for e in read_editable(path).piece.events}


def _canon(folder: Path, seed: int, suffix: str = ".musicxml") -> tuple[Path, tuple[str, str]]:
    piece, _row, pair = held_canon(seed)
    path = folder / f"canon-{seed}{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(piece.to_dict()), encoding="utf-8")
    elif suffix == ".mei":
        from serialkit.io.mei.write import write_mei

        write_mei(piece, path)
    else:
        write_musicxml(piece, path)
    return path, pair


def _measures_add_up(path: Path) -> None:
    """Every voice of every measure fills the measure exactly (what a trim frees is a rest)."""
    from lxml import etree

    root = etree.parse(str(path)).getroot()
    for part in root.iter("part"):
        divisions, beats, beat_type = 1, 4, 4
        for measure in part.iter("measure"):
            if measure.findtext("attributes/divisions"):
                divisions = int(measure.findtext("attributes/divisions") or 1)
            if measure.findtext("attributes/time/beats"):
                beats = int(measure.findtext("attributes/time/beats") or 4)
                beat_type = int(measure.findtext("attributes/time/beat-type") or 4)
            want = Fraction(4 * beats, beat_type) * divisions
            filled: dict[str, int] = {}
            for note in measure.iter("note"):
                if note.find("chord") is not None or note.find("grace") is not None:
                    continue
                voice = note.findtext("voice") or "1"
                filled[voice] = filled.get(voice, 0) + int(note.findtext("duration") or 0)
            assert filled and all(v == want for v in filled.values()), (part.get("id"), measure.get("number"), filled)


def _check_certificate(cert: dict[str, object], before: dict[str, tuple[int, Fraction, Fraction]],
                       after: dict[str, tuple[int, Fraction, Fraction]]) -> None:
    """The certificate lists exactly the changed notes, each before and after as the files say."""
    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).resolve().parent.parent.parent / "schemas" / "repair-certificate.schema.json")
                        .read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(cert)
    events = {e["id"]: e for e in cert["events"]}  # type: ignore[attr-defined]
    assert set(events) == {eid for eid in after if after[eid] != before[eid]}
    for eid, entry in events.items():
        for side, (midi, onset, duration) in (("before", before[eid]), ("after", after[eid])):
            assert entry[side]["midi"] == midi
            if entry["rung"] in TIMING:
                assert (Fraction(str(entry[side]["onset"])), Fraction(str(entry[side]["duration"]))) == (onset, duration)
        assert entry["why"]


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_generation_repair_puts_a_held_collision_right(tmp_path: Path, seed: int) -> None:
    src, (held, entry) = _canon(tmp_path, seed)
    digest = _sha(src)
    code, text, _ = _run("check", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "--json")
    assert code == 1 and json.loads(text)["counts"]["COLL"] == 1
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "-o", str(out))
    assert code == 0, text
    assert "note: the score is written anew by serialkit's MusicXML writer" in text
    assert _sha(src) == digest, "the source is byte-identical afterwards"
    before, after = _notes(src), _notes(out)
    changed = {eid for eid in after if after[eid] != before[eid]}
    assert changed and changed <= {held, entry}
    assert all(after[e][0] == before[e][0] for e in changed), "a timing rung changes no pitch"
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    _check_certificate(cert, before, after)
    assert all(e["rung"] in TIMING and e["label"] == "COLL" for e in cert["events"])
    assert cert["before"]["counts"]["COLL"] == 1 and cert["after"]["counts"]["COLL"] == 0
    # the gate, as `serialkit check --rules generation` runs it, passes the output
    code, text, _ = _run("check", str(out), "--row", EXERCISE_ROW, "--rules", "generation")
    assert code == 0, text
    _measures_add_up(out)
    # a shortened note leaves silence in its voice, not a longer neighbour
    for eid in changed:
        voice = [n for n in _notes(out).items() if n[0][0] == eid[0]]
        _m, onset, duration = after[eid]
        assert not [n for n, (_, o, d) in voice if n != eid and o < onset + duration and o + d > onset]
    # changed notes carry their rung's colour and label; no other note does
    from serialkit.io.musicxml.annotate import read_annotations

    marks = read_annotations(out)
    rung = {e["id"]: e["rung"] for e in cert["events"]}
    assert {eid for eid, a in marks.items() if a.label} == changed
    assert {eid.split("-t")[0] for eid, a in marks.items() if a.color} == changed
    for eid in changed:
        assert marks[eid].label == f"{rung[eid]} COLL"
        assert (marks[eid].color or "").upper() == RUNG_COLORS[rung[eid]].upper()


@pytest.mark.parametrize("finding", ["COLL", "CROSS"])
def test_the_analysis_profile_never_changes_timing(tmp_path: Path, finding: str) -> None:
    src, _pair = _canon(tmp_path, 1)
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "-o", str(out), "--json")
    data = json.loads(text)
    assert code == 0 and data["changes"] == []  # COLL is an observation under analysis
    assert not out.exists()  # no change: no copy (only the report)
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", EXERCISE_ROW, "--only", finding,
                                      "-o", str(tmp_path / "x.musicxml")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "--rules generation" in result.stderr and not (tmp_path / "x.musicxml").exists()


def test_only_limits_what_is_touched(tmp_path: Path) -> None:
    src, _pair = _canon(tmp_path, 1)
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "--only", "ROW",
                         "--dry-run", "--json")
    data = json.loads(text)
    assert code == 1 and data["changes"] == [] and data["after"]["counts"]["COLL"] == 1
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "--only", "COLL",
                         "--dry-run", "--json")
    data = json.loads(text)
    assert code == 0 and data["changes"] and all(c["rung"] in TIMING for c in data["changes"])


def test_dry_run_prints_timing_edits_before_and_after(tmp_path: Path) -> None:
    src, (held, _entry) = _canon(tmp_path, 1)
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "--dry-run")
    assert code == 0, text
    line = next(ln for ln in text.splitlines() if "[yield]" in ln or "[trim]" in ln or "[retime]" in ln)
    assert " for 2 → at bar " in line and line.rstrip().endswith("]")
    assert "why: COLL at " in text
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]


@pytest.mark.parametrize("suffix", [".json", ".mei"])
def test_timing_repair_writes_the_inputs_format(tmp_path: Path, suffix: str) -> None:
    src, _pair = _canon(tmp_path, 1, suffix)
    digest = _sha(src)
    out = tmp_path / f"fixed{suffix}"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "-o", str(out))
    assert code == 0, text
    assert _sha(src) == digest
    before, after = _notes(src), _notes(out)
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    _check_certificate(cert, before, after)
    assert cert["events"]
    if suffix == ".json":  # a JSON piece carries the marks in its metadata
        marks = json.loads(out.read_text(encoding="utf-8"))["metadata"]["repair_marks"]
        assert set(marks) == {e["id"] for e in cert["events"]}
        assert all(m["label"].split()[0] in TIMING and m["color"] for m in marks.values())
    if suffix == ".mei":
        from lxml import etree

        coloured = {n.get("{http://www.w3.org/XML/1998/namespace}id"): n.get("color")
                    for n in etree.parse(str(out)).iter("{*}note") if n.get("color")}
        assert set(coloured) == {e["id"] for e in cert["events"]}


def test_a_class_folder_under_generation_rules(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    for seed in (0, 1):
        _canon(folder, seed)
    piece, _row, _pair = held_canon(2)
    write_musicxml(piece.with_events(e.copy(duration=Fraction(1)) for e in piece.events), folder / "clean.musicxml")
    out = tmp_path / "fixed"
    report = tmp_path / "report.json"
    code, text, _ = _run("repair", str(folder), "--row", EXERCISE_ROW, "--rules", "generation", "-o", str(out),
                         "--report", str(report))
    summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
    assert summary["scores"] == 3 and summary["scores_changed"] == 2 and summary["unreadable"] == 0
    assert code == (0 if summary["passed"] == 3 else 1), text


def test_a_change_the_gate_refuses_is_not_kept() -> None:
    """retime_findings keeps a rung's result only when the judge accepts it: with a judge that
    finds something new on every changed piece nothing changes and the finding is left."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.repair.timing import finding_keys, retime_findings

    piece, row, pair = held_canon(1)
    profile = profile_for("generation")

    def judge(p: object) -> dict[str, object]:
        return check_piece(p, row=row, profile=profile).to_dict()  # type: ignore[arg-type]

    report = judge(piece)

    def picky(p: object) -> dict[str, object]:
        got = judge(p)
        return dict(got, unexplained=[*got["unexplained"], "somewhere"])  # type: ignore[list-item]

    refused = retime_findings(piece, row, report, picky)
    assert refused.edits == () and refused.piece == piece and len(refused.left) == 1
    kept = retime_findings(piece, row, report, judge)
    assert kept.edits and not kept.left
    assert ("COLL", *sorted(pair)) in finding_keys(report) - finding_keys(kept.report)
    assert finding_keys(kept.report) <= finding_keys(report)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), statements=st.integers(1, 3))
def test_timing_repair_only_ever_removes_findings(seed: int, statements: int) -> None:
    """Property: on any held canon the timing rungs leave no finding the gate did not report
    before, remove the collision, keep every pitch and every note's voice monophonic, and the
    edits name exactly the notes whose time changed."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.repair.timing import finding_keys, retime_findings

    piece, row, pair = held_canon(seed, statements)
    profile = profile_for("generation")

    def judge(p: object) -> dict[str, object]:
        return check_piece(p, row=row, profile=profile).to_dict()  # type: ignore[arg-type]

    report = judge(piece)
    plan = retime_findings(piece, row, report, judge)
    assert finding_keys(plan.report) <= finding_keys(report)
    assert ("COLL", *sorted(pair)) not in finding_keys(plan.report)
    old = {e.id: e for e in piece.events}
    moved = {e.id for e in plan.piece.events if (e.onset, e.duration) != (old[e.id].onset, old[e.id].duration)}
    assert moved == {e.event_id for e in plan.edits}
    assert all(e.midi == old[e.id].midi for e in plan.piece.events)
    for voice in plan.piece.by_voice().values():
        assert all(a.end <= b.onset for a, b in zip(voice, voice[1:], strict=False))
    assert plan.report == judge(plan.piece)


@pytest.mark.slow
@pytest.mark.corpus
def test_webern_op21_under_generation_rules(corpus: Path, tmp_path: Path) -> None:
    """Webern's own score has collisions under the generation profile: the timing rungs put each
    right without a new finding; the analysis profile leaves it alone (tests/repair/test_cli.py)."""
    from serialkit.repair.timing import finding_keys

    src = corpus / "webern-op21-i-mm1-25.mei"
    digest = _sha(src)
    out = tmp_path / "op21.mei"
    code, text, _ = _run("repair", str(src), "--row", WEBERN_21, "--rules", "generation", "-o", str(out),
                         "--json", "--no-review")
    data = json.loads(text)
    assert _sha(src) == digest
    assert data["before"]["counts"]["COLL"] > 0 and data["after"]["counts"]["COLL"] == 0
    assert data["changes"] and all(c["rung"] in TIMING for c in data["changes"])
    cert = json.loads((tmp_path / "op21.certificate.json").read_text(encoding="utf-8"))
    _check_certificate(cert, _notes(src), _notes(out))
    # the gate's findings as `serialkit check` reports them; --no-suggest: the suggested corrections
    # (most of a check's time on Op. 21) change no finding, and only the findings are compared here
    code_before, before, _ = _run("check", str(src), "--row", WEBERN_21, "--rules", "generation", "--json",
                                  "--no-suggest")
    code_after, after, _ = _run("check", str(out), "--row", WEBERN_21, "--rules", "generation", "--json",
                                "--no-suggest")
    assert json.loads(after)["counts"]["COLL"] == 0
    assert finding_keys(json.loads(after)) <= finding_keys(json.loads(before))


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_timing_repair_opens_in_musescore(tmp_path: Path) -> None:
    import os
    import subprocess

    from serialkit.io.musicxml.annotate import notehead_annotations
    from tests.conftest import require_program

    exe = require_program("mscore3")
    src, _pair = _canon(tmp_path, 1)
    out = tmp_path / "fixed.musicxml"
    assert _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "-o", str(out))[0] == 0
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for target in (tmp_path / "fixed.pdf", tmp_path / "exported.musicxml"):
        proc = subprocess.run([exe, "-o", str(target), str(out)], env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0 and target.exists(), proc.stderr[-2000:]

    def by_place(path: Path) -> dict[tuple[object, ...], tuple[str | None, str | None]]:
        return {(raw.part, raw.onset, raw.midi): (ann.label, (ann.color or "").upper() or None)
                for raw, ann in notehead_annotations(path) if not raw.tie_stop}

    ours, theirs = by_place(out), by_place(tmp_path / "exported.musicxml")
    assert set(theirs) == set(ours)  # MuseScore drops ids: match by (part, onset, pitch)
    marked = {k: v for k, v in theirs.items() if v != (None, None)}
    assert marked and marked == {k: v for k, v in ours.items() if v != (None, None)}
    assert all(label and label.split()[0] in TIMING for label, _c in marked.values())
    # MuseScore reads the repaired timing: its export passes the generation gate too
    code, text, _ = _run("check", str(tmp_path / "exported.musicxml"), "--row", EXERCISE_ROW, "--rules", "generation")
    assert code == 0, text


def _crossed_canon(seed: int) -> tuple[object, object, tuple[str, str]]:
    """A held canon whose follower's held note is written three octaves up (its pitch class, so
    the row still reads): it sounds above the leader, a crossing as well as a collision."""
    from serialkit.core.piece import Voice

    piece, row, (held, entry) = held_canon(seed, 1)
    piece = piece.with_events(e.copy(midi=e.midi + 36) if e.id == entry else e for e in piece.events)
    return piece.copy(voices=tuple(Voice(v.id, v.name) for v in piece.voices)), row, (held, entry)


@pytest.mark.parametrize("seed", [0, 2])
def test_crossings_are_moved_all_or_none(seed: int) -> None:
    """CROSS is one finding for the whole score's share of crossed noteheads: the timing rungs
    move crossed notes off their crossings and keep the moves only if the finding is gone."""
    from serialkit.check import check_piece
    from serialkit.check.profiles import profile_for
    from serialkit.core.predicates import Rules
    from serialkit.repair.timing import finding_keys, retime_findings

    piece, row, (held, entry) = _crossed_canon(seed)
    profile = profile_for("generation", Rules(max_crossing_share=Fraction(0)))  # any crossing is a finding

    def judge(p: object) -> dict[str, object]:
        return check_piece(p, row=row, profile=profile).to_dict()  # type: ignore[arg-type]

    report = judge(piece)
    assert report["counts"]["CROSS"] == 1
    plan = retime_findings(piece, row, report, judge, codes=("CROSS",))
    assert plan.report["counts"]["CROSS"] == 0 and not plan.left
    assert finding_keys(plan.report) <= finding_keys(report)
    assert {e.event_id for e in plan.edits} >= {held} and all(e.code == "CROSS" for e in plan.edits)
    # the follower's voice listed on top: nearly every notehead crossed, and the rungs cannot
    # clear them all, so not one note is moved
    swapped = piece.copy(voices=tuple(reversed(piece.voices)))
    report = judge(swapped)
    plan = retime_findings(swapped, row, report, judge, codes=("CROSS",))
    assert plan.edits == () and plan.piece == swapped and plan.report == report
    assert len(plan.left) == 1 and plan.left[0].startswith("CROSS left as it is")


def test_a_corrected_pitch_that_collides_gets_a_timing_rung_too(tmp_path: Path) -> None:
    """The held note written a semitone off: its correction makes it collide with the follower's
    entry; under the generation rules the correction stays and the timing rungs put the collision
    right (analysis: the correction alone). One certificate entry with both rungs."""
    piece, _row, (held, _entry) = held_canon(1)
    src = tmp_path / "both.musicxml"
    original = next(e.midi for e in piece.events if e.id == held)
    write_musicxml(piece.with_events(e.copy(midi=e.midi + 1) if e.id == held else e for e in piece.events), src)
    out = tmp_path / "fixed.musicxml"
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--rules", "generation", "-o", str(out))
    assert code == 0, text
    before, after = _notes(src), _notes(out)
    cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
    _check_certificate(cert, before, after)
    (entry,) = [e for e in cert["events"] if e["id"] == held]
    assert entry["rungs"][0] == "rewrite" and entry["rungs"][1] in TIMING and entry["after"]["midi"] == original
    assert after[held][2] < before[held][2]
    from serialkit.io.musicxml.annotate import read_annotations

    mark = read_annotations(out)[held]
    assert mark.label == f"rewrite {entry['label']}, {entry['rung']}"
    assert (mark.color or "").upper() == RUNG_COLORS[entry["rung"]].upper()
    code, text, _ = _run("repair", str(src), "--row", EXERCISE_ROW, "--dry-run", "--json")
    data = json.loads(text)
    assert [(c["id"], c["rungs"]) for c in data["changes"]] == [(held, ["rewrite"])]
