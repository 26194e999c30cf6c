"""The MuseScore plugin labels every note of the open score from ``serialkit annotate``'s
report; run headless in MuseScore 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import etree

from serialkit.check.annotate import FORM_COLOURS
from serialkit.cli import cli
from serialkit.core.rows import RowForm
from tests.conftest import ROOT, require_program
from tests.plugins.musescore_fixture import FIXTURE, ROW, build, plan

PLUGIN = ROOT / "plugins" / "musescore" / "serialkit.qml"
BIN = Path(sys.executable).parent

Key = tuple[int, int, Fraction, int]


def _expected() -> dict[Key, str]:
    return {(n["part_index"], n["staff"], n["onset"], n["midi"]): str(n["label"]) for n in plan()}


def _color_of(label: str) -> str:
    return FORM_COLOURS[RowForm.parse(label.split(":")[0]).type].lower()


def annotate_report(score: Path, row: str, *extra: str) -> dict[str, Any]:
    """The report ``serialkit annotate SCORE --row ROW --json -`` prints (what the plugin reads)."""
    result = CliRunner().invoke(cli, ["annotate", str(score), "--row", row, "--json", *extra])
    assert result.exit_code in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _heads_by_key(report: dict[str, Any], tied: bool = False) -> dict[Key, dict[str, Any]]:
    """Report noteheads by (part index, staff, onset, MIDI as written: what a saved MusicXML file's
    <pitch> says, a transposing part's written pitch); tied continuations only if asked."""
    heads = [n for n in report["noteheads"] if tied or not n["tied"]]
    keyed = {(n["part_index"], n["staff"], Fraction(n["onset"]), n.get("written_midi", n["midi"])): n
             for n in heads}
    assert len(keyed) == len(heads)
    return keyed


def _midi(pitch: etree._Element) -> int:
    steps = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
    alter = round(float(pitch.findtext("alter") or 0))
    return 12 * (int(pitch.findtext("octave") or 0) + 1) + steps[pitch.findtext("step") or "C"] + alter


Chord = list[tuple[Key, etree._Element]]


def _record(chord: Chord, lyric_base: int, lyrics: dict[int, str],
            notes: dict[Key, dict[str, object]]) -> int:
    """Record one chord's noteheads; lyric line ``lyric_base + k`` labels its k-th note up."""
    for i, (key, el) in enumerate(sorted(chord, key=lambda item: item[0][3])):
        labels = [f.text for f in el.iterfind("notations/technical/fingering")]
        if lyric_base + i + 1 in lyrics:
            labels.append(lyrics[lyric_base + i + 1])
        head = el.find("notehead")
        color = (head.get("color") if head is not None else None) or el.get("color")
        assert key not in notes, f"two noteheads at {key}"
        notes[key] = {"labels": labels, "color": (color or "").lower()}
    return len(chord)


def _flush(chord: Chord, graces: list[Chord], lyrics: dict[int, str],
           notes: dict[Key, dict[str, object]]) -> None:
    """Record a main chord, then its grace chords (their lyric lines follow the chord's)."""
    base = _record(chord, 0, lyrics, notes)
    for grace in graces:
        base += _record(grace, base, lyrics, notes)
    chord.clear()
    graces.clear()
    lyrics.clear()


def saved_notes(path: Path) -> dict[Key, dict[str, object]]:
    """Every notehead of a MusicXML file MuseScore saved: its labels and notehead colour.

    Labels are fingerings, or (MuseScore < 3.3.3) lyric lines of the main chord: one per note
    from the bottom, then one per grace note of the grace chords before it.
    """
    root = etree.parse(str(path)).getroot()
    notes: dict[Key, dict[str, object]] = {}
    for p_index, part in enumerate(root.iterfind("part")):
        start, divisions = Fraction(0), Fraction(1)
        for measure in part.iterfind("measure"):
            pos = longest = onset = Fraction(0)
            chord: Chord = []
            graces: list[Chord] = []  # grace chords waiting for their main chord
            chord_graces: list[Chord] = []
            lyrics: dict[int, str] = {}
            for el in measure:
                if el.tag == "attributes" and el.findtext("divisions"):
                    divisions = Fraction(el.findtext("divisions") or 1)
                elif el.tag in ("backup", "forward"):
                    step = Fraction(el.findtext("duration") or 0) / divisions
                    pos += step if el.tag == "forward" else -step
                elif el.tag == "note":
                    pitch = el.find("pitch")
                    staff = int(el.findtext("staff") or 1)
                    if el.find("grace") is not None:
                        if el.find("chord") is None or not graces:
                            graces.append([])
                        if pitch is not None:
                            graces[-1].append(((p_index, staff, start + pos, _midi(pitch)), el))
                        continue
                    if el.find("chord") is None:
                        _flush(chord, chord_graces, lyrics, notes)
                        chord_graces.extend(graces)
                        graces.clear()
                        onset = pos
                        pos += Fraction(el.findtext("duration") or 0) / divisions
                        longest = max(longest, pos)
                    if pitch is None:
                        continue
                    chord.append(((p_index, staff, start + onset, _midi(pitch)), el))
                    for lyric in el.iterfind("lyric"):
                        lyrics[int(lyric.get("number") or 1)] = lyric.findtext("text") or ""
            _flush(chord, chord_graces, lyrics, notes)
            start += longest
    return notes


def test_fixture_is_what_the_plan_composes() -> None:
    assert FIXTURE.read_text(encoding="utf-8") == build()


def test_report_locates_and_labels_every_fixture_note() -> None:
    expected = _expected()
    report = annotate_report(FIXTURE, ROW)
    got = _heads_by_key(report)
    assert set(got) == set(expected)
    assert len(report["noteheads"]) == report["events"] == len(expected)
    for key, label in expected.items():
        note = got[key]
        assert note["label"] == label == report["labels"][note["event_id"]], key
        assert note["color"].lower() == _color_of(label)
        assert note["tick"] == key[2] * 480
        assert note["part"] == f"P{key[0] + 1}" and note["measure"] == str(1 + int(key[2] // 4))
        assert "written_midi" not in note  # nothing transposes in this fixture


def test_report_absolute_convention_renames_forms_only() -> None:
    from serialkit.core.rows import Row, parse_position_label

    row = Row.parse(ROW)
    relative = annotate_report(FIXTURE, ROW)["noteheads"]
    absolute = annotate_report(FIXTURE, ROW, "--convention", "absolute")["noteheads"]
    assert [n["id"] for n in relative] == [n["id"] for n in absolute]
    for rel, ab in zip(relative, absolute, strict=True):
        assert rel["label"] is not None and ab["label"] is not None
        form, pos = parse_position_label(rel["label"])
        assert parse_position_label(ab["label"]) == (row.convert(form, "relative", "absolute"), pos)


def test_the_separate_musescore_command_is_gone() -> None:
    result = CliRunner().invoke(cli, ["plugins", "musescore", str(FIXTURE)])
    assert result.exit_code == 2 and "no such command 'musescore'" in result.stderr
    assert "plugins musescore" not in PLUGIN.read_text(encoding="utf-8")
    assert "annotate" in PLUGIN.read_text(encoding="utf-8")


def _run_musescore(
    score: Path, save: Path, path_dirs: list[Path], row: str = ROW
) -> subprocess.CompletedProcess[str]:
    mscore = require_program("mscore3")
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "SERIALKIT_ROW": row,
        "SERIALKIT_MUSESCORE_SAVE": str(save),
        "PATH": os.pathsep.join([str(d) for d in path_dirs] + ["/usr/bin", "/bin"]),
        "XDG_RUNTIME_DIR": str(score.parent),
        "HOME": str(score.parent),
    }
    return subprocess.run(
        [mscore, "-p", str(PLUGIN), str(score)],
        env=env, capture_output=True, text=True, timeout=180,
    )


@pytest.mark.musescore
def test_headless_musescore_labels_every_note(tmp_path: Path) -> None:
    score = tmp_path / "score.musicxml"
    score.write_bytes(FIXTURE.read_bytes())
    save = tmp_path / "labelled.musicxml"
    proc = _run_musescore(score, save, [BIN])
    assert save.exists(), proc.stdout + proc.stderr
    assert "labelled 36 of 36 notes" in proc.stdout + proc.stderr
    expected = _expected()
    saved = saved_notes(save)
    assert set(saved) == set(expected)
    for key, label in expected.items():
        assert saved[key]["labels"] == [label], key
        assert saved[key]["color"] == _color_of(label), key

    # Running again on the labelled score replaces the labels instead of stacking them.
    again = tmp_path / "again.musicxml"
    _run_musescore(save, again, [BIN])
    relabelled = saved_notes(again)
    assert {k: v["labels"] for k, v in relabelled.items()} == {k: [v] for k, v in expected.items()}


@pytest.mark.musescore
def test_headless_musescore_without_serialkit_saves_nothing(tmp_path: Path) -> None:
    score = tmp_path / "score.musicxml"
    score.write_bytes(FIXTURE.read_bytes())
    save = tmp_path / "labelled.musicxml"
    proc = _run_musescore(score, save, [tmp_path / "empty"])
    assert not save.exists()
    assert "could not run serialkit" in proc.stdout + proc.stderr


@pytest.mark.musescore
def test_headless_musescore_shows_serialkits_error(tmp_path: Path) -> None:
    score = tmp_path / "score.musicxml"
    score.write_bytes(FIXTURE.read_bytes())
    save = tmp_path / "labelled.musicxml"
    proc = _run_musescore(score, save, [BIN], row="C C D")
    assert not save.exists()
    assert "appears twice" in proc.stdout + proc.stderr


CORPUS_ROWS = {
    "webern-op21-i-mm1-25.mei": "A F# G G# E F B Bb D C# C Eb",
    "webern-op27-ii-mm1-11.mei": "Eb B Bb D C# C F# E G F A Ab",
}


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.musescore
@pytest.mark.parametrize("name", sorted(CORPUS_ROWS))
def test_headless_musescore_on_real_webern(corpus: Path, tmp_path: Path, name: str) -> None:
    """Real scores (ties, grace notes, chords, ten staves): every notehead gets serialkit's mark."""
    from serialkit.io import read_score, write_score

    score = tmp_path / "score.musicxml"
    write_score(read_score(corpus / name), score)
    save = tmp_path / "labelled.musicxml"
    row = CORPUS_ROWS[name]
    proc = _run_musescore(score, save, [BIN], row=row)
    assert save.exists(), proc.stdout + proc.stderr
    assert "0 not found in the score" in proc.stdout + proc.stderr
    report = annotate_report(score, row)
    expected = _heads_by_key(report, tied=True)
    saved = saved_notes(save)
    assert set(saved) == set(expected)
    assert any(n["tied"] for n in report["noteheads"]) or "op27" in name
    for key, note in expected.items():
        assert saved[key]["labels"] == ([note["label"]] if note["label"] else []), key
        assert saved[key]["color"] == note["color"].lower(), key
