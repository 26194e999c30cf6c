"""A file that is no score is one line in every command that reads scores, saying what the file
is not and what it is (outside tester: render said "not well-formed XML: Start tag expected" for
a binary file, the others "unknown score format"): ``error: FILE:1: not a … file (WHAT; …)``,
exit 2, nothing on standard output, nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from tests.conftest import FIXTURES

GARBAGE = {  # name → (bytes, what the error says the file is)
    "binary.musicxml": (bytes(range(256)) * 4, "binary content"),
    "notes.musicxml": (b"C D E F G A B\nthese are notes\n", "text, not XML"),
    "page.mei": (b"<!DOCTYPE html>\n<html><body><p>a score?</p></body></html>\n", "its root element is <html>"),
    "empty.musicxml": (b"", "the file is empty"),
}
COMMANDS = {
    "check": [],
    "convert": ["-o", "{out}/x.mei"],
    "render": ["-o", "{out}/x.svg"],
    "repair": ["--row", "webern-op21", "-o", "{out}/x.musicxml"],
    "annotate": ["--row", "webern-op21", "-o", "{out}/x.musicxml"],
}
KINDS = {"render": "MusicXML or MEI"}  # what render engraves; every other command reads every reader's


def _run(command: str, path: Path, out: Path) -> tuple[int, str, str]:
    args = [a.format(out=out) for a in COMMANDS[command]]
    result = CliRunner().invoke(cli, [command, str(path), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_a_file_that_is_no_score_is_one_line(command: str, name: str, tmp_path: Path) -> None:
    data, what = GARBAGE[name]
    path = tmp_path / name
    path.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, stderr = _run(command, path, out)
    kinds = KINDS.get(command, "MusicXML, MEI, MuseScore, MIDI, Humdrum **kern, ABC or JSON-piece")
    assert code == 2 and stdout == "" and list(out.iterdir()) == []
    assert stderr.startswith(f"error: {path}:1: not a {kinds} file ({what}; "), stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_truncated_xml_is_the_same_line_everywhere(command: str, tmp_path: Path) -> None:
    text = (FIXTURES / "classroom" / "ben.musicxml").read_text(encoding="utf-8")
    path = tmp_path / "cut.musicxml"
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    code, stdout, stderr = _run(command, path, out)
    assert code == 2 and stdout == "" and list(out.iterdir()) == []
    assert re.fullmatch(rf"error: {re.escape(str(path))}:\d+: not well-formed XML: [^\n]*\(column \d+\)\n", stderr), stderr


def test_render_names_a_score_it_cannot_engrave(tmp_path: Path) -> None:
    from serialkit.io import read_score, write_score

    midi = tmp_path / "ben.mid"
    write_score(read_score(FIXTURES / "classroom" / "ben.musicxml"), midi)
    code, _, stderr = _run("render", midi, tmp_path)
    assert code == 2 and stderr.startswith(f"error: {midi}:1: not a MusicXML or MEI file (binary content; it is "
                                           "MIDI: `serialkit convert ben.mid -o NAME.musicxml` first;")
