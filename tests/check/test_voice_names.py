"""Voices are named alike everywhere a reader sees them (check text and JSON, annotate, repair's
lines, certificate and review page): the part's name, ``staff k`` only when the part has several
staves (k counted within the part), ``voice j`` only when the staff holds several voices — never
a reader's internal ``part/staff/voice`` key."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from serialkit.check import check_piece
from serialkit.cli import cli
from serialkit.core.piece import Piece, Voice, voice_names
from serialkit.core.rows import Row, RowForm
from serialkit.io import read_score, write_score
from tests.swept import _build

ROW = "C B G Ab Eb Db D Bb F# F E A"
OP21 = "webern-op21-i-mm1-25.mei"
OP27 = "webern-op27-ii-mm1-11.mei"
KEY = re.compile(r"\b[A-Z]\w*/\d+/\w+")


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_two_voices_on_one_staff_are_told_apart() -> None:
    names = voice_names([Voice("P1/1/1", "Piano"), Voice("P1/1/2", "Piano")])
    assert names == {"P1/1/1": "Piano, voice 1", "P1/1/2": "Piano, voice 2"}


def test_a_part_of_several_staves_counts_them_within_the_part() -> None:
    # as MEI numbers staves: across the score (the harp's are 5 and 6), each with one voice
    voices = [Voice("P4/4/1", "Horn 2 in F"), Voice("P5/5/1", "Harp"), Voice("P5/6/2", "Harp")]
    assert voice_names(voices) == {"P4/4/1": "Horn 2 in F", "P5/5/1": "Harp, staff 1", "P5/6/2": "Harp, staff 2"}
    piano = [Voice("P1/1/1", "Piano"), Voice("P1/1/2", "Piano"), Voice("P1/2/1", "Piano")]
    assert list(voice_names(piano).values()) == ["Piano, staff 1, voice 1", "Piano, staff 1, voice 2",
                                                 "Piano, staff 2"]


def test_parts_without_a_name_or_of_one_name() -> None:
    assert voice_names([Voice("P1/1/1"), Voice("P1/2/1")]) == {"P1/1/1": "staff 1", "P1/2/1": "staff 2"}
    assert list(voice_names([Voice("P1/1/1"), Voice("P2/1/1")]).values()) == ["part 1", "part 2"]
    assert list(voice_names([Voice("P1/1/1")]).values()) == ["part 1"]
    twins = [Voice("P1/1/1", "Violin"), Voice("P2/1/1", "Violin")]
    assert list(voice_names(twins).values()) == ["Violin (part 1)", "Violin (part 2)"]
    # a JSON piece's own ids are the user's words: its name when unique, else the id
    assert voice_names([Voice("v1"), Voice("fl", "Flute")]) == {"v1": "voice v1", "fl": "Flute"}


@st.composite
def _scores(draw: st.DrawFn) -> list[Voice]:
    voices = []
    for p in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from([None, "Piano", "Harp", "Organ"]))
        staves = draw(st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
        for staff in staves:
            for v in draw(st.lists(st.integers(1, 8), min_size=1, max_size=3, unique=True)):
                voices.append(Voice(f"Q{p}x/{staff}/{v}", name))
    return voices


@given(_scores())
def test_every_voice_has_its_own_name_and_no_key(voices: list[Voice]) -> None:
    names = voice_names(voices)
    assert len(set(names.values())) == len(voices)
    for v in voices:
        part, staff, _ = v.id.split("/")
        assert "/" not in names[v.id] and "Q" not in names[v.id]
        staves = {w.id.split("/")[1] for w in voices if w.id.startswith(f"{part}/")}
        on_staff = [w for w in voices if w.id.startswith(f"{part}/{staff}/")]
        assert ("staff " in names[v.id]) == (len(staves) > 1)
        assert (", voice " in names[v.id] or names[v.id].startswith("voice ")) == (len(on_staff) > 1)


def _duo(tmp: Path) -> Path:
    """A piano exercise, two voices on one staff (P0 R0 over I0 RI0: both start on C, a collision),
    the lower voice's sixth note a semitone high; written as MusicXML."""
    row = Row.parse(ROW)
    quarters = [Fraction(1)] * 24
    piece = _build(row, [(Voice("P1/1/1", "Piano"), 65, [RowForm.parse("P0"), RowForm.parse("R0")], quarters),
                         (Voice("P1/1/2", "Piano"), 53, [RowForm.parse("I0"), RowForm.parse("RI0")], quarters)])
    wrong = [e for e in piece.events if e.voice == "P1/1/2"][5]
    piece = piece.with_events(e.copy(midi=e.midi + 1) if e is wrong else e for e in piece.events)
    return write_score(piece, tmp / "duo.musicxml")


@pytest.mark.slow
def test_every_command_names_the_voice_of_a_duo_on_one_staff(tmp_path: Path) -> None:
    src = str(_duo(tmp_path))
    # --no-suggest: the text lines and the report's fields asserted are findings, made before any
    # suggestion (the report's voice names, violations and observations are the same with them);
    # the suggestions, and where they say a note is, are the repair's below
    code, text = _run("check", src, "--row", ROW, "--no-suggest")
    assert code == 1 and "2 voices (Piano, voice 1; Piano, voice 2)" in text, text
    assert "ROW    Piano, voice 2, bar 2, beat 2" in text
    assert "C sounds in Piano, voice 1 and Piano, voice 2 at once" in text
    _, text = _run("check", src, "--row", ROW, "--json", "--no-suggest")
    report = json.loads(text)
    assert report["voice_names"] == {"P1/1/1": "Piano, voice 1", "P1/1/2": "Piano, voice 2"}
    assert [v["location"].split(", bar")[0] for v in report["violations"]] == ["Piano, voice 2"]
    _, text = _run("annotate", src, "--row", ROW, "--json", "-o", str(tmp_path / "labelled.musicxml"))
    assert json.loads(text)["voice_names"] == report["voice_names"]
    code, text = _run("repair", src, "--row", ROW, "-o", str(tmp_path / "fixed.musicxml"))
    assert code == 0 and "Piano, voice 2, bar 2, beat 2 (line" in text, text
    (change,) = json.loads((tmp_path / "fixed.certificate.json").read_text("utf-8"))["events"]
    assert change["location"].startswith("Piano, voice 2, bar 2, beat 2")
    page = (tmp_path / "fixed.review.html").read_text("utf-8")
    assert "Piano, voice 2, bar 2, beat 2" in page and "Piano, staff" not in page
    assert all(not KEY.search(v["location"] + v["message"]) for v in report["violations"] + report["observations"])


@pytest.mark.slow
@pytest.mark.xdist_group("op21-identify")  # cli_once: check <Op. 21> --identify, shared
def test_op21_names_the_harps_staves_within_the_harp(corpus: Path, cli_once: Callable[..., Any]) -> None:
    # --identify is what check does without --row on a score that gives no row (the same text);
    # the run is tests/check/test_profiles.py's, made once
    text = cli_once("check", str(corpus / OP21), "--identify").stdout
    assert "Horn 2 in F; Harp, staff 1; Harp, staff 2; Violin I" in text, text
    assert "Harp, staff 2, bar 10, beat 2" in text and "staff 6" not in text and "P5/" not in text


def test_op27_is_placed_by_staff_not_by_key(corpus: Path) -> None:
    piece = read_score(corpus / OP27)
    assert piece.voice_names() == {"P1/1/1": "staff 1", "P1/2/1": "staff 2"}
    low = next(e for e in piece.events if e.voice == "P1/2/1" and e.onset > 2)
    wrong: Piece = piece.with_events(e.copy(midi=e.midi - 1) if e is low else e for e in piece.events)
    report = check_piece(wrong, Row.parse("Eb B Bb D C# C F# E G F A Ab"))
    assert report.violations
    for v in (*report.violations, *report.observations):
        assert not KEY.search(f"{v.location} {v.message}"), v
    assert any(v.location.startswith("staff 2, bar") for v in report.violations), report.violations
