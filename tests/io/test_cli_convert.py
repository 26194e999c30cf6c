"""``serialkit convert IN OUT``: every supported format in and out, by extension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.io import read_score
from serialkit.io.musicxml.validate import musicxml_errors


def _summary(piece) -> list[tuple]:  # noqa: ANN001
    return sorted((e.onset, e.duration, e.midi, e.grace) for e in piece.events)


@pytest.mark.parametrize("out_name", ["a.musicxml", "a.xml", "a.mxl", "a.mei"])
@pytest.mark.parametrize("src_name", ["features.musicxml", "features.mxl", "features.mei"])
def test_convert_scores(fixtures: Path, tmp_path: Path, src_name: str, out_name: str) -> None:
    src = fixtures / "scores" / src_name
    out = tmp_path / out_name
    result = CliRunner().invoke(cli, ["convert", str(src), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output + result.stderr
    data = json.loads(result.stdout)
    piece = read_score(src)
    assert data["events"] == len(piece.events) and data["output"] == str(out)
    assert _summary(read_score(out)) == _summary(piece)
    if out_name != "a.mei":
        assert musicxml_errors(out) == []


def test_convert_to_midi_and_json(fixtures: Path, tmp_path: Path) -> None:
    src = fixtures / "scores" / "features.mei"
    runner = CliRunner()
    mid = tmp_path / "a.mid"
    result = runner.invoke(cli, ["convert", str(src), "-o", str(mid)])
    assert result.exit_code == 0, result.stderr
    assert mid.read_bytes()[:4] == b"MThd"
    assert "wrote" in result.stdout and "28 notes" in result.stdout
    js = tmp_path / "a.json"
    result = runner.invoke(cli, ["convert", str(src), "-o", str(js)])
    assert result.exit_code == 0, result.stderr
    back = tmp_path / "b.musicxml"
    assert runner.invoke(cli, ["convert", str(js), "-o", str(back)]).exit_code == 0
    assert _summary(read_score(back)) == _summary(read_score(src))


def test_unknown_output_extension_is_bad_input(fixtures: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.pdf"
    result = CliRunner().invoke(cli, ["convert", str(fixtures / "scores" / "features.mei"), "-o", str(out)])
    assert result.exit_code == 2
    assert "unknown output format '.pdf'" in result.stderr
    assert not out.exists()


def test_forced_formats(fixtures: Path, tmp_path: Path) -> None:
    src = tmp_path / "score.txt"
    src.write_bytes((fixtures / "scores" / "features.mei").read_bytes())
    out = tmp_path / "out.bin"
    result = CliRunner().invoke(cli, ["convert", str(src), "-o", str(out), "--from", "mei", "--to", "musicxml"])
    assert result.exit_code == 0, result.stderr
    assert musicxml_errors(out) == []
    bad = CliRunner().invoke(cli, ["convert", str(src), "-o", str(out), "--from", "nosuchformat"])
    assert bad.exit_code == 2 and "unknown reader 'nosuchformat'" in bad.stderr


def test_readers_and_writers_are_registered_as_plugins() -> None:
    from serialkit.plugins import registry

    readers, writers = registry("readers"), registry("writers")
    assert {"musicxml", "mei", "json"} <= set(readers.names())
    assert {"musicxml", "mei", "midi", "json"} <= set(writers.names())
    assert readers.get("mei").plugin == "serialkit.plugins.builtins"
    assert ".mxl" in readers.get("musicxml").meta["extensions"]


@pytest.mark.parametrize("via_stdin", [False, True])
def test_cli_convert_is_the_library_conversion(corpus: Path, tmp_path: Path, via_stdin: bool) -> None:
    """`serialkit convert` (a file or `-`) writes what `convert_score` writes: MEI → MusicXML keeps
    the engraving (Op. 27's dynamics and slurs), not a rebuild from the piece model."""
    from serialkit.io import convert_score

    src = corpus / "webern-op27-ii-mm1-11.mei"
    convert_score(src, tmp_path / "lib.musicxml")
    out = tmp_path / "cli.musicxml"
    args = ["convert", "-" if via_stdin else str(src), "-o", str(out)]
    result = CliRunner().invoke(cli, args, input=src.read_bytes() if via_stdin else None)
    assert result.exit_code == 0, result.stderr

    def body(path: Path) -> list[str]:
        return [line for line in path.read_text().splitlines() if "encoding-date" not in line]

    assert body(out) == body(tmp_path / "lib.musicxml")
    assert "<dynamics" in out.read_text() and "<slur" in out.read_text()


@pytest.mark.parametrize("command", [["convert"], ["annotate", "--row", "0 1 2 3 4 5 6 7 8 9 10 11"]])
def test_musicxml_built_from_mei_is_one_element_a_line(command: list[str], fixtures: Path, tmp_path: Path) -> None:
    """MusicXML serialkit builds (here from MEI) is indented, an element a line, so that an
    error later found in it names the note's own line (outside tester: it was written on one
    line, and every location was "line 2"); it still validates against the MusicXML XSD."""
    import re

    out = tmp_path / "a.musicxml"
    result = CliRunner().invoke(cli, [command[0], str(fixtures / "scores" / "features.mei"), *command[1:],
                                      "-o", str(out)])
    assert result.exit_code in (0, 1), result.stderr
    text = out.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert all(line.count("<") <= 2 for line in lines)  # at most one element (open and close) a line
    assert lines[1].startswith("<score-partwise") and lines[2].startswith("  <")
    assert musicxml_errors(out) == []
    at = text.rfind("<step>")  # the last note's step, spoilt
    step_line = text.count("\n", 0, at) + 1
    bad = tmp_path / "bad.musicxml"
    bad.write_text(text[:at] + "<step>H</step>" + text[at + len("<step>C</step>"):], encoding="utf-8")
    check = CliRunner().invoke(cli, ["check", str(bad)])
    found = re.match(rf"error: {re.escape(str(bad))}:(\d+): pitch step 'H'", check.stderr)
    assert check.exit_code == 2 and found, check.stderr
    line = int(found.group(1))
    assert "<note" in lines[line - 1] and 0 <= step_line - line < 15  # the spoilt note's own line


@pytest.mark.parametrize(("out_name", "to", "written"), [("x.mei", None, "mei"), ("x.xml", "musicxml", "musicxml"),
                                                         ("x.mid", None, "midi")])
def test_convert_json_names_the_format_read_and_the_format_written(
        fixtures: Path, tmp_path: Path, out_name: str, to: str | None, written: str) -> None:
    """`format` is the input's (it said "mei" for an MEI → MusicXML conversion, read as the output's)."""
    src = next((fixtures / "scores").glob("*.musicxml"))
    args = ["convert", str(src), "-o", str(tmp_path / out_name), "--json", *(["--to", to] if to else [])]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert (record["format"], record["to"]) == ("musicxml", written)
