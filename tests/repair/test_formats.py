"""``serialkit repair`` reads what ``check`` reads and writes the format ``-o`` names: a MuseScore
file repaired into MusicXML or back into MuseScore, MIDI written anew, a folder's files of every
kind ``check`` takes; a format it cannot write is one line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli

ROW = "C B G Ab Eb Db D Bb F# F E A"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _pitches(path: Path) -> dict[tuple[object, ...], int]:
    """Each note's sounding pitch by where it stands (MuseScore drops note ids)."""
    from serialkit.io import read_score

    return {(e.voice, e.onset): e.midi for e in read_score(path).events}


def _mscz(fixtures: Path, tmp_path: Path, name: str = "ben") -> Path:
    from tests.conftest import require_program

    exe = require_program("mscore3")
    out = tmp_path / f"{name}.mscz"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([exe, "-o", str(out), str(fixtures / "classroom" / f"{name}.musicxml")], env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return out


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_musescore_file_is_repaired_into_musicxml_or_musescore(fixtures: Path, tmp_path: Path) -> None:
    """Ben's exercise (a sharp added to an F) saved by MuseScore: ``-o x.musicxml`` writes the
    repaired MusicXML, ``-o x.mscz`` a repaired MuseScore file; both pass check, the source is
    untouched, and a format repair cannot write is refused in one line."""
    src = _mscz(fixtures, tmp_path)
    before = src.read_bytes()
    wanted = _pitches(fixtures / "classroom" / "ben.musicxml")
    for suffix in (".musicxml", ".mscz"):
        out = tmp_path / f"fixed{suffix}"
        code, text, _ = _run("repair", str(src), "--row", ROW, "-o", str(out))
        assert code == 0 and "1 note changed" in text, text
        after = _pitches(out)
        changed = {k for k in after if after[k] != wanted[k]}
        assert len(changed) == 1 and all(wanted[k] - after[k] == 1 for k in changed)  # F#4 → F4
        assert _run("check", str(out), "--row", ROW)[0] == 0
        cert = json.loads((tmp_path / "fixed.certificate.json").read_text(encoding="utf-8"))
        assert [(e["before"]["name"], e["after"]["name"]) for e in cert["events"]] == [("F#4", "F4")]
        assert (tmp_path / "fixed.review.html").is_file()
    assert src.read_bytes() == before
    # the .mscz is the source's own XML with the one note re-pitched, every other member the source's
    import difflib
    import zipfile

    with zipfile.ZipFile(src) as a, zipfile.ZipFile(tmp_path / "fixed.mscz") as b:
        assert a.namelist() == b.namelist()
        score = next(n for n in a.namelist() if n.endswith(".mscx"))
        assert all(a.read(n) == b.read(n) for n in a.namelist() if n != score)
        old, new = a.read(score).decode().splitlines(), b.read(score).decode().splitlines()
    assert old[1] == new[1] and "<museScore version=" in old[1]
    assert sum(1 for line in difflib.ndiff(old, new) if line.startswith("- ")) <= 5
    code, _, err = _run("repair", str(src), "--row", ROW, "-o", str(tmp_path / "fixed.mei"))
    assert code == 2 and err.count("\n") == 1 and "cannot write a repaired MuseScore score as .mei" in err, err
    assert "Traceback" not in err and not (tmp_path / "fixed.mei").exists()


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_folder_gives_repair_the_files_check_takes(fixtures: Path, tmp_path: Path) -> None:
    """One vocabulary: a folder's .mscz, .mid, MusicXML and JSON pieces are repaired as check
    reads them (a JSON file that is not a piece is left out by both), each into its own format."""
    from serialkit.io import read_score, write_score

    folder = tmp_path / "class"
    folder.mkdir()
    _mscz(fixtures, folder, "ben")
    write_score(read_score(fixtures / "classroom" / "carla.musicxml"), folder / "carla.mid")
    (folder / "dev.musicxml").write_bytes((fixtures / "classroom" / "dev.musicxml").read_bytes())
    (folder / "notes.json").write_text('{"not": "a piece"}', encoding="utf-8")
    # --no-suggest: only which files check reads is compared (the repair below makes the suggestions)
    _, text, _ = _run("check", str(folder), "--row", ROW, "--json", "--no-suggest")
    checked = [json.loads(line)["source"] for line in text.splitlines()[:-1]]
    out = tmp_path / "fixed"
    code, text, _ = _run("repair", str(folder), "--row", ROW, "-o", str(out), "--json")
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and [r["source"] for r in lines[:-1]] == checked == [
        str(folder / n) for n in ("ben.mscz", "carla.mid", "dev.musicxml")]
    assert lines[-1]["summary"]["changed_notes"] == 4
    assert sorted(p.name for p in out.iterdir() if not p.name.endswith((".json", ".html"))) == \
        ["ben.mscz", "carla.mid", "dev.musicxml"]
    for name in ("ben.mscz", "carla.mid", "dev.musicxml"):
        assert _run("check", str(out / name), "--row", ROW)[0] == 0, name


def test_midi_is_repaired_anew_and_other_outputs_are_refused(fixtures: Path, tmp_path: Path) -> None:
    from serialkit.io import read_score, write_score

    src = tmp_path / "ben.mid"
    write_score(read_score(fixtures / "classroom" / "ben.musicxml"), src)
    out = tmp_path / "fixed.mid"
    code, text, _ = _run("repair", str(src), "--row", ROW, "-o", str(out), "--no-review")
    assert code == 0 and "written anew by serialkit's MIDI writer" in text, text
    assert _run("check", str(out), "--row", ROW)[0] == 0
    code, _, err = _run("repair", str(src), "--row", ROW, "-o", str(tmp_path / "fixed.musicxml"))
    assert code == 2 and err.count("\n") == 1 and "give an output ending .mid, .midi" in err, err
    assert not (tmp_path / "fixed.musicxml").exists()


def test_two_scores_with_one_certificate_name_are_refused(fixtures: Path, tmp_path: Path) -> None:
    """ben.musicxml and ben.json in one folder would share ben.certificate.json: refused, nothing written."""
    from serialkit.io import read_score

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ben.musicxml").write_bytes((fixtures / "classroom" / "ben.musicxml").read_bytes())
    (folder / "ben.json").write_text(json.dumps(read_score(folder / "ben.musicxml").to_dict()), encoding="utf-8")
    code, _, err = _run("repair", str(folder), "--row", ROW, "-o", str(tmp_path / "out"))
    assert code == 2 and "would both be certified in" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("out_name", ["fixed.mid", "-"])
def test_an_error_writing_a_repaired_midi_names_the_users_file(out_name: str, fixtures: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's error inside the staging folder (or the temporary file standing for ``-o -``)
    names OUT, never the temporary path (a MIDI repair too)."""
    import serialkit.io
    from serialkit.core.errors import ScoreWriteError
    from serialkit.io import write_score

    src = tmp_path / "ben.mid"
    write_score(serialkit.io.read_score(fixtures / "classroom" / "ben.musicxml"), src)

    def refusing(piece: object, path: object, **_kw: object) -> None:
        raise ScoreWriteError(f"{path}: cannot write a note at bar 7")

    import serialkit.io.dispatch

    monkeypatch.setattr(serialkit.io.dispatch, "write_score", refusing)
    out = tmp_path / out_name if out_name != "-" else None
    code, stdout, err = _run("repair", str(src), "--row", ROW, "-o", str(out) if out else "-")
    named = str(out) if out else "-"
    assert code == 2 and err == f"error: {named}: cannot write a note at bar 7\n", err
    assert stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == ["ben.mid"]
