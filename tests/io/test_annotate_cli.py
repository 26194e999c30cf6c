"""``serialkit annotate``: labelled MusicXML/MEI, the report JSON, MuseScore 3, bad input."""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from lxml import etree

from serialkit.check.annotate import FORM_COLOURS, UNEXPLAINED
from serialkit.cli import cli
from serialkit.core.piece import Event, Piece, Voice
from serialkit.core.rows import Row
from serialkit.io.jsonio import save_piece
from tests.conftest import require_program

OP21_ROW = "A F# G G# E F B Bb D C# C Eb"
MEI = "{http://www.music-encoding.org/ns/mei}"


def _fingerings(path: Path) -> list[str]:
    """Every label the file carries, whatever the carrier (words by default)."""
    from serialkit.io.musicxml.annotate import read_annotations

    return [a.label for a in read_annotations(path).values() if a.label]


def _statement_piece(row: Row, forms: list[str], wrong: int | None = None) -> Piece:
    """Two voices stating forms one after another (optionally one wrong note)."""
    events = []
    for v, voice in enumerate(("v1", "v2")):
        onset = Fraction(v, 2)
        for s, form in enumerate(forms):
            for pos, pc in enumerate(row.form(form)):
                midi = 60 - 12 * v + pc
                if wrong is not None and (v, s, pos) == (0, 0, wrong):
                    midi += 6
                events.append(Event(f"{voice}-{s}-{pos}", voice, onset, Fraction(1, 2), midi))
                onset += 1
    return Piece(tuple(events), voices=(Voice("v1"), Voice("v2")))


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_annotate_json_piece_labels_every_note(tmp_path: Path) -> None:
    row = Row.parse("C B G Ab Eb Db D Bb F# F E A")
    source = save_piece(_statement_piece(row, ["P0", "RI5", "I2"]), tmp_path / "piece.json")
    out, report = tmp_path / "out.musicxml", tmp_path / "report.json"
    code, _, err = _run("annotate", str(source), "--row", str(row), "-o", str(out), "--report", str(report))
    assert code == 0, err
    data = json.loads(report.read_text())
    assert data["coverage"] == 1 and data["unexplained"] == []
    assert len(data["labels"]) == 72 and all(data["labels"].values())
    assert Counter(_fingerings(out)) == Counter(data["labels"].values())
    assert {s["form"] for s in data["statements"]} >= {"P0", "RI5", "I2"}
    colours = {n.get("color") for n in etree.parse(str(out)).getroot().iter("notehead")}
    colours |= {n.get("color") for n in etree.parse(str(out)).getroot().iter("note")}
    assert {c.upper() for c in colours if c} <= {c.upper() for c in FORM_COLOURS.values()}


def test_wrong_note_is_red_and_unlabelled_exit_1(tmp_path: Path) -> None:
    row = Row.parse("C B G Ab Eb Db D Bb F# F E A")
    source = save_piece(_statement_piece(row, ["P0", "P7"], wrong=4), tmp_path / "piece.json")
    out = tmp_path / "out.mei"
    code, stdout, _ = _run("annotate", str(source), "--row", str(row), "-o", str(out), "--json")
    assert code == 1
    data = json.loads(stdout)
    assert data["unexplained"] == ["v1-0-4"]
    root = etree.parse(str(out)).getroot()
    fings = [*root.iter(f"{MEI}fing"), *root.iter(f"{MEI}dir")]
    assert len(fings) == len(data["labels"]) - 1
    red = [n for n in root.iter(f"{MEI}note") if n.get("color") == UNEXPLAINED]
    assert len(red) == 1


def test_identify_and_lyric_labels(tmp_path: Path) -> None:
    row = Row.parse("webern-op24").transpose(3)
    source = save_piece(_statement_piece(row, ["P0", "I5"]), tmp_path / "piece.json")
    out = tmp_path / "out.musicxml"
    code, stdout, err = _run("annotate", str(source), "--identify", "-o", str(out), "--json",
                             "--labels", "lyric", "--color-by", "statement")
    assert code == 0, err
    data = json.loads(stdout)
    assert data["coverage"] == 1
    assert set(Row(tuple(data["row"])).forms().values()) == set(row.forms().values())
    lyrics = [t.text for t in etree.parse(str(out)).getroot().iter("text")]
    assert Counter(lyrics) == Counter(data["labels"].values())


def test_without_row_the_row_is_found_or_the_error_names_the_file(tmp_path: Path) -> None:
    row = Row(tuple(range(12)))
    source = save_piece(_statement_piece(row, ["P0", "I0"]), tmp_path / "piece.json")
    out = tmp_path / "out.musicxml"
    code, stdout, _ = _run("annotate", str(source), "-o", str(out), "--json")
    data = json.loads(stdout)
    assert code == 0 and out.exists() and data["identification"] and data["coverage"] == 1.0
    few = save_piece(Piece((Event("a", "v1", 0, 1, 60), Event("b", "v1", 1, 1, 62))), tmp_path / "few.json")
    code, _, err = _run("annotate", str(few), "-o", str(tmp_path / "few.musicxml"))
    assert code == 2 and f"{few}: cannot identify the row" in err and "--row" in err
    assert not (tmp_path / "few.musicxml").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--row", "C C D"], "appears twice"),
        (["--row", "0 1 2 3 4 5 6 7 8 9 10 11", "--identify"], "either --row or --identify"),
    ],
)
def test_bad_input_exits_2_without_output(tmp_path: Path, args: list[str], message: str) -> None:
    row = Row(tuple(range(12)))
    source = save_piece(_statement_piece(row, ["P0"]), tmp_path / "piece.json")
    out = tmp_path / "out.musicxml"
    code, _, err = _run("annotate", str(source), "-o", str(out), *args)
    assert code == 2 and message in err
    assert not out.exists()


def test_unknown_output_format_and_missing_file(tmp_path: Path) -> None:
    row = Row(tuple(range(12)))
    source = save_piece(_statement_piece(row, ["P0"]), tmp_path / "piece.json")
    code, _, err = _run("annotate", str(source), "--row", str(row), "-o", str(tmp_path / "out.txt"))
    assert code == 2 and "out.txt" in err and not (tmp_path / "out.txt").exists()
    code, _, err = _run("annotate", str(tmp_path / "nope.musicxml"), "--row", str(row), "-o", str(tmp_path / "o.musicxml"))
    assert code == 2 and "nope.musicxml" in err


@pytest.fixture(scope="module")
def annotated_op21(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path, Path]:
    """``annotate <Op. 21> --row … -o op21.musicxml --report op21.json``, made once for the two
    tests that read it: exit status, standard error, the annotated score, the report."""
    tmp = tmp_path_factory.mktemp("annotated-op21")
    out, report = tmp / "op21.musicxml", tmp / "op21.json"
    code, _, err = _run("annotate", str(corpus / "webern-op21-i-mm1-25.mei"), "--row", OP21_ROW,
                        "-o", str(out), "--report", str(report))
    return code, err, out, report


@pytest.mark.corpus
def test_annotate_op21(annotated_op21: tuple[int, str, Path, Path]) -> None:
    code, err, out, report = annotated_op21
    data = json.loads(report.read_text())
    assert code == (0 if not data["unexplained"] else 1), err
    labels = [v for v in data["labels"].values() if v]
    assert data["coverage"] >= 0.95 and len(labels) >= 120
    printed = Counter(_fingerings(out))
    assert sum(printed.values()) == len(labels)  # one label per labelled note (elided notes show both)


@pytest.mark.corpus
@pytest.mark.musescore
@pytest.mark.slow
def test_annotated_op21_opens_in_musescore_with_every_label(annotated_op21: tuple[int, str, Path, Path],
                                                            tmp_path: Path) -> None:
    mscore = require_program("mscore3")
    code, err, annotated, report = annotated_op21
    assert code in (0, 1), err
    saved = tmp_path / "musescore.musicxml"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    subprocess.run([mscore, "-o", str(saved), str(annotated)], env=env, check=True,
                   capture_output=True, timeout=300)
    assert saved.exists()
    ours = Counter(_fingerings(annotated))
    theirs = Counter(_fingerings(saved))
    assert theirs == ours
    labelled = [v for v in json.loads(report.read_text())["labels"].values() if v]
    assert sum(theirs.values()) == len(labelled)


@pytest.mark.corpus
def test_check_untagged_score_with_row_uses_the_analysis(corpus: Path) -> None:
    code, stdout, err = _run("check", str(corpus / "webern-op27-ii-mm1-11.mei"),
                             "--row", "Eb B Bb D C# C F# E G F A Ab", "--json")
    data = json.loads(stdout)
    assert data["coverage"] == 1 and data["unexplained"] == []
    assert len(data["statements"]) == 4 and all(s["complete"] for s in data["statements"])
    assert code == (0 if data["strict"] else 1), err


def test_never_overwrites_the_source(tmp_path: Path) -> None:
    row = Row(tuple(range(12)))
    source = save_piece(_statement_piece(row, ["P0"]), tmp_path / "piece.json")
    before = source.read_bytes()
    code, _, err = _run("annotate", str(source), "--row", str(row), "-o", str(source))
    assert code == 2 and "overwrite" in err
    assert source.read_bytes() == before


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.xdist_group("op21-identify")  # cli_once: check <score> --identify --json, shared
@pytest.mark.parametrize(
    "name, expected", [("webern-op21-i-mm1-25.mei", "webern-op21"), ("webern-op27-ii-mm1-11.mei", "webern-op27")]
)
def test_identify_on_the_webern_scores(corpus: Path, tmp_path: Path, name: str, expected: str,
                                       cli_once: Callable[..., Any]) -> None:
    """Neither score has twelve successive distinct pitch classes in one voice: the row comes
    from the catalogue, and every note is labelled against it as the catalogue stores it."""
    from serialkit.core import catalog

    out = tmp_path / "out.musicxml"
    code, stdout, err = _run("annotate", str(corpus / name), "--identify", "-o", str(out), "--json")
    assert code in (0, 1), err
    data = json.loads(stdout)
    assert tuple(data["row"]) == catalog.get(expected).row.pcs
    assert data["coverage"] >= 0.95 and out.exists()
    checked = cli_once("check", str(corpus / name), "--identify", "--json")
    assert checked.exit_code in (0, 1), checked.stderr
    report = json.loads(checked.stdout)
    assert tuple(report["row"]) == catalog.get(expected).row.pcs and report["coverage"] >= 0.95
