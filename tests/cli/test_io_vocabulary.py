"""One vocabulary for inputs and outputs across commands (outside tester, 2026-12-02):

- a score written to ``-o -`` without ``--to`` is in the input's format, for standard input
  judged from its content, as for the same file given by name (``annotate - -o -`` wrote MusicXML
  for MEI);
- ``--to`` takes the same names in every command (``convert --to mxl`` was "unknown writer");
- ``-`` is standard input wherever an input file is (``generate -``, ``check --task -``);
- ``render`` refuses what every other command refuses, with the reader's one line, exit 2 and
  nothing written (it engraved a pitch step 'H' and a score with no parts)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.io import read_score

ROOT = Path(__file__).resolve().parents[2]
ANNA = ROOT / "fixtures" / "classroom" / "anna.musicxml"
MEI = ROOT / "fixtures" / "scores" / "features.mei"
TASK = ROOT / "serialkit" / "harness" / "tasks" / "duo-berg.json"
ROW = "C B G Ab Eb Db D Bb F# F E A"


def _invoke(*args: str, stdin: bytes | None = None) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout_bytes, result.stderr


def _root(data: bytes) -> str:
    from lxml import etree

    return etree.QName(etree.fromstring(data)).localname


BEN = ROOT / "fixtures" / "classroom" / "ben.musicxml"  # a sharp added to an F: repair writes


@pytest.mark.parametrize(("command", "source", "root"), [
    ("annotate", MEI, "mei"), ("annotate", ANNA, "score-partwise"), ("repair", BEN, "score-partwise"),
])
def test_standard_output_gets_the_inputs_format_from_a_file_or_standard_input(
    command: str, source: Path, root: str
) -> None:
    by_name = _invoke(command, str(source), "--row", ROW, "-o", "-")
    by_stdin = _invoke(command, "-", "--row", ROW, "-o", "-", stdin=source.read_bytes())
    assert by_name[0] in (0, 1) and by_stdin[0] == by_name[0], (by_name[2], by_stdin[2])
    assert _root(by_name[1]) == root and _root(by_stdin[1]) == root


def _mxl_events(data: bytes, tmp_path: Path) -> list[tuple[object, int]]:
    assert zipfile.is_zipfile(io.BytesIO(data))
    path = tmp_path / "read.mxl"
    path.write_bytes(data)
    return [(e.onset, e.midi) for e in read_score(path).events]


@pytest.mark.parametrize("source", [ANNA, MEI])
def test_convert_takes_to_mxl_into_a_folder_and_to_standard_output(source: Path, tmp_path: Path) -> None:
    wanted = [(e.onset, e.midi) for e in read_score(source).events]
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = _invoke("convert", str(source), "--to", "mxl", "-o", str(folder))
    assert code == 0, err
    assert _mxl_events((folder / f"{source.stem}.mxl").read_bytes(), tmp_path) == wanted
    code, out, err = _invoke("convert", str(source), "--to", "mxl", "-o", "-")
    assert code == 0, err
    assert _mxl_events(out, tmp_path) == wanted


@pytest.mark.parametrize("command", ["convert", "annotate"])
def test_to_names_the_same_formats_in_every_command(command: str, tmp_path: Path) -> None:
    """``mxl`` and ``musicxml`` both write a .mxl name; an unknown name is one line listing the
    vocabulary, exit 2, nothing written."""
    row = ["--row", ROW] if command == "annotate" else []
    for to in ("mxl", "musicxml"):
        out = tmp_path / f"{to}.mxl"
        code, _, err = _invoke(command, str(ANNA), *row, "--to", to, "-o", str(out))
        assert code == 0 and zipfile.is_zipfile(out), err
    bad = tmp_path / "bad"
    code, _, err = _invoke(command, str(ANNA), *row, "--to", "lilypond", "-o", str(bad))
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "mxl" in lines[0] and "musicxml" in lines[0], err
    assert not bad.exists()


def test_generate_reads_its_task_from_standard_input(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = _invoke("generate", "-", "-o", str(out), "--no-review", stdin=TASK.read_bytes())
    assert code == 0, err
    assert (out / "score.musicxml").is_file() and (out / "certificate.json").is_file()
    code, _, err = _invoke("generate", "-", "-o", str(tmp_path / "bad"), stdin=b"{ not json")
    assert code == 2 and err.strip().startswith("error: -: line 1: invalid JSON"), err
    assert not (tmp_path / "bad").exists()


def test_check_reads_its_task_from_standard_input(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert _invoke("generate", str(TASK), "-o", str(run), "--no-review")[0] == 0
    score = run / "score.musicxml"
    by_name = _invoke("check", str(score), "--task", str(TASK), "--json")
    by_stdin = _invoke("check", str(score), "--task", "-", "--json", stdin=TASK.read_bytes())
    assert by_name[0] == by_stdin[0] == 0 and by_stdin[1] == by_name[1], by_stdin[2]
    code, _, err = _invoke("check", "-", "--task", "-", stdin=score.read_bytes())
    assert code == 2 and "not both" in err


BAD = {
    "step H": ("<step>H</step>", "<step>C</step>"),
    "negative duration": ("<duration>-1</duration>", "<duration>1</duration>"),
}


def _score(pitch: str = "<step>C</step>", duration: str = "<duration>1</duration>", parts: bool = True) -> str:
    note = f"<note><pitch>{pitch}<octave>4</octave></pitch>{duration}<voice>1</voice><type>quarter</type></note>"
    part = ('<part id="P1"><measure number="1"><attributes><divisions>1</divisions><time><beats>1</beats>'
            f'<beat-type>4</beat-type></time></attributes>{note}</measure></part>') if parts else ""
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<score-partwise version="4.0"><part-list>'
            + ('<score-part id="P1"><part-name>Flute</part-name></score-part>' if parts else "")
            + f"</part-list>{part}</score-partwise>\n")


@pytest.mark.parametrize("case", ["step H", "negative duration", "no parts"])
def test_render_refuses_what_check_refuses_with_the_same_line(case: str, tmp_path: Path) -> None:
    if case == "no parts":
        text = _score(parts=False)
    else:
        bad, good = BAD[case]
        text = _score().replace(good, bad)
    src = tmp_path / "bad.musicxml"
    src.write_text(text)
    code, _, check_err = _invoke("check", str(src), "--row", ROW)
    assert code == 2
    for out in ("bad.svg", "bad.html"):
        code, _, err = _invoke("render", str(src), "-o", str(tmp_path / out))
        lines = [x for x in err.splitlines() if x.strip()]
        assert code == 2 and len(lines) == 1 and lines[0] == check_err.strip(), err
        assert not (tmp_path / out).exists()
    code, _, err = _invoke("render", "-", "-o", str(tmp_path / "stdin.svg"), stdin=text.encode())
    assert code == 2 and err.strip() == check_err.strip().replace(str(src), "-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.musicxml"]
