"""``serialkit check``: exit 0 pass, 1 violations, 2 bad input with a message naming file and place."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _piece(tmp_path: Path, event: dict[str, object] | None = None, drop: str | None = None) -> Path:
    ev: dict[str, object] = {"id": "n1", "voice": "v1", "onset": 0, "duration": "1/2", "midi": 60}
    ev.update(event or {})
    if drop:
        del ev[drop]
    path = tmp_path / "piece.json"
    path.write_text(json.dumps({"format": "serialkit-piece", "version": 1, "events": [ev]}), encoding="utf-8")
    return path


def test_clean_piece_exits_0(fixtures: Path) -> None:
    code, out, _ = _run(str(fixtures / "pieces" / "clean-piece.json"))
    assert code == 0
    assert "strict: pass" in out and "relaxed: pass" in out


def test_demo_piece_exits_1_and_lists_violations(fixtures: Path) -> None:
    code, out, _ = _run(str(fixtures / "pieces" / "demo-piece.json"))
    assert code == 1
    assert "strict: FAIL" in out and "COLL" in out and "uA0-5" in out and "bar 2, beat 2" in out


def test_json_output_is_the_check_report(fixtures: Path) -> None:
    code, out, _ = _run(str(fixtures / "pieces" / "demo-piece.json"), "--json")
    data = json.loads(out)
    assert code == 1 and data["strict"] is False and data["mode"] == "strict"
    assert data["counts"]["COLL"] == 1 and len(data["labels"]) > 24
    assert {"code", "event_ids", "message", "location"} <= set(data["violations"][0])


def test_relaxed_ignores_schedule_only(tmp_path: Path, fixtures: Path) -> None:
    data = json.loads((fixtures / "pieces" / "clean-piece.json").read_text(encoding="utf-8"))
    for entry in data["blueprint"]:
        if entry["voice"] == "upper" and entry["section"] == "A":
            entry["forms"] = list(reversed(entry["forms"]))  # R0 scheduled first: SCHED fails
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _run(str(path))[0] == 1
    code, out, _ = _run(str(path), "--relaxed", "--json")
    report = json.loads(out)
    assert code == 0 and report["strict"] is False and report["relaxed"] is True
    assert set(report["counts"]) >= {"SCHED"} and report["counts"]["SCHED"] > 0


def test_tolerance_option_is_exact(fixtures: Path) -> None:
    path = str(fixtures / "pieces" / "demo-piece.json")
    counts = json.loads(_run(path, "--json", "--tolerance", "1/2")[1])["counts"]
    assert counts["COLL"] == 0  # the planted collision overlaps by exactly 1/2
    counts = json.loads(_run(path, "--json", "--tolerance", "0.499999")[1])["counts"]
    assert counts["COLL"] == 1


def test_no_row_that_fits_is_never_a_pass(tmp_path: Path) -> None:
    """One note names no row: ROW and ORDER are not checked, and that is no pass (exit 1)."""
    code, out, _ = _run(str(_piece(tmp_path)))
    assert code == 1 and "strict: not checked (ROW, ORDER)" in out
    assert "ROW and ORDER not checked" in out and "give --row ROW" in out
    code, out, _ = _run(str(_piece(tmp_path)), "--json")
    data = json.loads(out)
    assert code == 1 and data["strict"] is False and data["relaxed"] is False
    assert data["unchecked"] == ["ROW", "ORDER"] and data["violations"] == []


def test_identify_that_finds_no_row_is_an_error_naming_the_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(_piece(tmp_path)), "--identify"])
    assert result.exit_code == 2 and "piece.json: cannot identify the row" in result.stderr


def test_rules_that_need_no_row_can_pass_without_one(tmp_path: Path) -> None:
    code, out, _ = _run(str(_piece(tmp_path)), "--rules", "COLL,PC", "--json")
    assert code == 0 and json.loads(out)["unchecked"] == []


@pytest.mark.parametrize("name", ["webern-op21-i-mm1-25.mei", "webern-op27-ii-mm1-11.mei"])
def test_score_without_row_is_checked_on_the_row_its_music_shows(corpus: Path, name: str) -> None:
    """Without --row a real score is judged on ROW and ORDER too (row identified), not on PC alone."""
    code, out, _ = _run(str(corpus / name), "--json", "--no-suggest")
    data = json.loads(out)
    assert data["identification"]["name"].startswith("webern-op2")
    assert {"ROW", "ORDER"} <= set(data["checked"]) and data["unchecked"] == []
    assert {v["code"] for v in data["violations"]} <= {"ROW"}
    assert all("unexplained" in v["message"] for v in data["violations"])
    assert code == (1 if data["violations"] else 0)


def test_report_file_is_written(tmp_path: Path, fixtures: Path) -> None:
    out_file = tmp_path / "sub" / "report.json"
    code, _, err = _run(str(fixtures / "pieces" / "demo-piece.json"), "--report", str(out_file))
    assert code == 2 and err == f"error: cannot write {out_file}: no directory {out_file.parent}\n"
    assert not out_file.parent.exists()  # a missing folder is named, never made silently
    out_file.parent.mkdir()
    code, _, _ = _run(str(fixtures / "pieces" / "demo-piece.json"), "--report", str(out_file))
    assert code == 1 and json.loads(out_file.read_text(encoding="utf-8"))["strict"] is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"drop": "duration"}, "events[0]: 'duration' is missing"),
        ({"drop": "midi"}, "events[0]: 'midi' is missing"),
        ({"event": {"duration": -1}}, "events[0].duration: -1 is negative"),
        ({"event": {"duration": "-3/2"}}, "events[0].duration: '-3/2' is negative"),
        ({"event": {"midi": 128}}, "events[0].midi: MIDI pitch 128 is out of range 0..127"),
        ({"event": {"onset": 1.5}}, "events[0].onset: 1.5 is a float"),
    ],
)
def test_bad_pieces_exit_2_naming_file_and_place(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    path = _piece(tmp_path, **kwargs)  # type: ignore[arg-type]
    report = tmp_path / "report.json"
    code, out, err = _run(str(path), "--report", str(report))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and str(path) in err and message in err
    assert not report.exists()  # no partial output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--row", "C C D E F G A B Bb Ab Gb Eb"], "pitch class 0 appears twice"),
        (["--row", "C D E"], "3 pitch classes given, 12 needed"),
        (["--row", "no-such-row"], "no-such-row"),
        (["--tolerance", "-1/8"], "negative"),
        (["--tolerance", "abc"], "not a number"),
        (["--max-crossing", "3/2"], "at most 1"),
    ],
)
def test_bad_options_exit_2(fixtures: Path, args: list[str], message: str) -> None:
    code, _, err = _run(str(fixtures / "pieces" / "clean-piece.json"), *args)
    assert code == 2 and message in err


def test_missing_and_broken_files_exit_2(tmp_path: Path) -> None:
    code, _, err = _run(str(tmp_path / "absent.json"))
    assert code == 2 and "absent.json" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  \"events\": [,]\n}", encoding="utf-8")
    code, _, err = _run(str(broken))
    assert code == 2 and "broken.json: line 2" in err


def test_console_script_runs_end_to_end(fixtures: Path) -> None:
    import subprocess

    exe = shutil.which("serialkit") or str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "serialkit")
    result = subprocess.run(
        [exe, "check", str(fixtures / "pieces" / "demo-piece.json"), "--json"], capture_output=True, text=True
    )
    assert result.returncode == 1 and json.loads(result.stdout)["counts"]["COLL"] == 1


def test_scores_are_read_by_extension(corpus: Path) -> None:
    code, out, _ = _run(str(corpus / "webern-op27-ii-mm1-11.mei"), "--row", "Eb B Bb D C# C F# E G F A Ab", "--json")
    data = json.loads(out)
    assert code in (0, 1) and data["events"] == 46 and data["coverage"] is not None


def test_identify_finds_the_row_of_an_untagged_piece(tmp_path: Path, fixtures: Path) -> None:
    data = json.loads((fixtures / "pieces" / "clean-piece.json").read_text(encoding="utf-8"))
    row = data.pop("row")
    for event in data["events"]:
        event.pop("tag", None)
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _run(str(path), "--identify", "--relaxed", "--json")
    report = json.loads(out)
    assert report["row"] is not None and report["coverage"] == 1.0
    assert sorted(report["row"]) == sorted(row) and code == 0
    assert all(label is not None for label in report["labels"].values())


def test_ctrl_c_is_exit_130_with_one_line(monkeypatch: pytest.MonkeyPatch, fixtures: Path) -> None:
    """Ctrl-C anywhere in a command is 130 (as shells report it), not click's 'Aborted!' and 1."""
    import serialkit.jobs

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(serialkit.jobs, "check_job", interrupted)
    result = CliRunner().invoke(cli, ["check", str(fixtures / "pieces" / "clean-piece.json")])
    assert result.exit_code == 130 and result.stderr.strip() == "interrupted"


def test_a_closed_pipe_keeps_the_verdicts_exit_status(fixtures: Path, tmp_path: Path) -> None:
    """`serialkit check … | head -1` must not turn a FAIL into exit 0 (outside tester)."""
    import subprocess
    import sys

    demo = str(fixtures / "pieces" / "demo-piece.json")
    # --no-suggest: the verdict is made before any suggestion (the demo's suggestions are three
    # quarters of its check's time), and the first write still meets the closed pipe
    for args in ([demo, "--no-suggest"], [demo, demo, "--json", "--no-suggest"]):
        proc = subprocess.Popen([sys.executable, "-c", "from serialkit.cli import main; main()", "check", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.close()  # the reader is gone before the first line is written
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err
        assert b"Traceback" not in err


@pytest.mark.corpus
def test_text_shows_the_suggestion_for_a_note_standing_in_a_hole(corpus: Path, tmp_path: Path) -> None:
    """Webern Op. 27 with a chord's C5 written a third up (E5): the finding names the hole's
    neighbours, and the text shows the suggestion for the note standing in it, as the JSON has it."""
    text = (corpus / "webern-op27-ii-mm1-11.mei").read_text(encoding="utf-8")
    note = '<note pname="c" oct="5" accid="n"/>'
    first = text.index(note)
    src = tmp_path / "op27.mei"
    src.write_text(text[:first] + note.replace('"c"', '"e"') + text[first + len(note):], encoding="utf-8")
    row = "Eb B Bb D C# C F# E G F A Ab"
    code, out, _ = _run(str(src), "--row", row)
    data = json.loads(_run(str(src), "--row", row, "--json")[1])
    holes = [n for n in data["suggestions"] if n["finding"] == "hole"]
    # other notes near the hole may get weaker alternatives; the changed note gets the strongest
    hole = max(holes, key=lambda n: n["candidates"][0]["confidence"])
    best = hole["candidates"][0]
    assert (best["name"], best["label"], hole["event_id"]) == ("C5", "RI0:5", "P1-m3-s2-v1-n2")
    assert all(n["candidates"][0]["confidence"] < best["confidence"] / 4 for n in holes if n is not hole)
    assert code == 1 and f"suggest: {best['name']} ({best['label']} of {best['statement']}" in out, out
    assert f"the {hole['name']} at {hole['at']}" in out  # placed as a reader finds it, not by its id


def test_music_without_a_row_says_so_first_and_keeps_the_decision_in_json() -> None:
    """A Bach chorale: the note that no row was identified comes right under the verdict, its
    doublings are counted rather than listed, and the JSON keeps the identification's decision
    (the best fit, its coverage, the threshold it missed) and the verdict word ``not checked``."""
    import jsonschema
    import music21

    path = str(music21.corpus.getWork("bach/bwv66.6"))
    code, out, _ = _run(path, "--no-suggest")
    lines = out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("strict: "))
    assert code == 1 and "not checked (ROW, ORDER)" in lines[verdict]
    assert lines[verdict + 1].startswith("note: ROW and ORDER not checked: no row identified: the best fit")
    observed = next(line for line in lines if "(reported, not violations)" in line)
    assert " — COLL " in observed
    assert sum(1 for line in lines if line.startswith("  COLL ")) <= 5
    code, out, _ = _run(path, "--no-suggest", "--json")
    data = json.loads(out)
    schema = Path(__file__).parents[2] / "serialkit" / "schemas" / "report.schema.json"
    jsonschema.validate(data, json.loads(schema.read_text(encoding="utf-8")))
    assert data["verdicts"] == {"strict": "not checked", "relaxed": "not checked"} and data["strict"] is False
    found = data["identification"]
    assert found["identified"] is False and found["coverage"] < found["min_coverage"] == 0.9
    assert found["summary"].startswith("no row identified") and found["name"] in lines[verdict + 1]


def test_the_verdict_words_follow_the_booleans(fixtures: Path) -> None:
    clean = json.loads(_run(str(fixtures / "pieces" / "clean-piece.json"), "--json")[1])
    demo = json.loads(_run(str(fixtures / "pieces" / "demo-piece.json"), "--json")[1])
    assert clean["verdicts"] == {"strict": "pass", "relaxed": "pass"}
    assert demo["verdicts"]["strict"] == "fail"


def test_a_row_that_explains_little_is_questioned_first() -> None:
    import music21

    path = str(music21.corpus.getWork("bach/bwv66.6"))
    code, out, _ = _run(path, "--row", "webern-op21", "--no-suggest")
    lines = out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("strict: "))
    assert code == 1 and "is the row right?" in lines[verdict + 1] and "below the 90%" in lines[verdict + 1]
    code, out, _ = _run(path, "--rules", "ROW,ORDER")
    assert "checked (ROW,ORDER rules): nothing" in out and "of the notes" in out  # 163 notes: all tried
