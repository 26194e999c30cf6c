"""``check`` and ``repair`` name and place notes alike: as the score writes them (a transposing
part's written pitch, the score's own spelling), ``sounding`` said where the sounding pitch is
shown; a missing note is placed after the note before it, a swapped note by bar, beat and pitch."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from serialkit.cli import cli

TESTER_ROW = "C# D F# E G Bb A Eb C B F Ab"
CLASS_ROW = "C B G Ab Eb Db D Bb F# F E A"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_check_and_repair_name_a_transposing_parts_note_alike(fixtures: Path) -> None:
    """A clarinet in Bb's written C5 (sounding A#4) that should be a written A4 (sounding G4):
    check's finding and suggestion and repair's change all say C5 and A4, and say "sounding"
    where they show A#4 and G4; in JSON every ``name`` is the written pitch, ``midi`` and
    ``sounding`` what sounds."""
    src = str(fixtures / "repair" / "clarinet-wrong.musicxml")
    code, text = _run("check", src, "--row", TESTER_ROW)
    assert "C5 (sounding A#4) is unexplained" in text, text
    assert "suggest: A4 (sounding G4) (P0:4 of S1; third" in text, text
    assert "suggest: G4" not in text
    _, text = _run("check", src, "--row", TESTER_ROW, "--json")
    report = json.loads(text)
    note = next(n for n in report["suggestions"] if n["finding"] == "unexplained")
    top = note["candidates"][0]
    assert (note["name"], note["sounding"], note["midi"]) == ("C5", "A#4", 70)
    assert (top["name"], top["sounding"], top["midi"]) == ("A4", "G4", 67)
    (edit,) = top["edits"]
    assert (edit["before_name"], edit["after_name"], edit["before_sounding"], edit["after_sounding"]) == \
        ("C5", "A4", "A#4", "G4")
    assert top["reason"].startswith("C5 → A4 reads as P0:4")
    _, text = _run("repair", src, "--row", TESTER_ROW, "--dry-run")
    assert ": C5 → A4 (sounding A#4 → G4)  P0:4 of S1" in text, text
    _, text = _run("repair", src, "--row", TESTER_ROW, "--dry-run", "--json")
    (change,) = json.loads(text)["changes"]
    assert (change["before"]["name"], change["after"]["name"]) == (note["name"], top["name"])
    assert (change["before"]["midi"], change["after"]["midi"]) == (note["midi"], top["midi"])
    assert change["why"] == top["reason"]


def test_a_missing_position_is_placed_between_notes(fixtures: Path) -> None:
    """A statement's hole is located after the note before it (bar, beat, pitch), not at the next note."""
    src = str(fixtures / "classroom" / "dev.musicxml")
    _, text = _run("check", src, "--row", CLASS_ROW, "--json")
    report = json.loads(text)
    hole = next(v for v in report["violations"] if "lacks position" in v["message"])
    before, after = hole["event_ids"]
    assert hole["location"].startswith("v1, bar 4, after the E4 at beat 4"), hole
    _, text = _run("check", src, "--row", CLASS_ROW)
    assert "v1, bar 4, after the E4 at beat 4 (line 272)" in text


def test_a_swap_names_the_other_note_by_bar_beat_and_pitch(fixtures: Path, tmp_path: Path) -> None:
    """Dev's exercise swaps an E4 and an Ab4: the suggestion and the repair name the other note
    where the reader finds it, never by its internal id."""
    src = str(fixtures / "classroom" / "dev.musicxml")
    _, text = _run("check", src, "--row", CLASS_ROW)
    assert "suggest: E4, and Ab4 for the E4 at bar 4, beat 4 (I2:7 of S2; swap" in text, text
    out = tmp_path / "dev.musicxml"
    _, text = _run("repair", src, "--row", CLASS_ROW, "-o", str(out), "--no-review")
    assert "v1, bar 4, beat 4 (line 272): E4 → Ab4  I2:8 of S2  [rewrite; swap" in text, text  # its own label
    assert not re.search(r"\bn\d+\b", text), text  # no internal note id in what the user reads
    cert = json.loads((tmp_path / "dev.certificate.json").read_text(encoding="utf-8"))
    assert not any(re.search(r"\bn\d+\b", e["label"] + e["why"]) for e in cert["events"]), cert["events"]
