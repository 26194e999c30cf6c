"""The annotate report's ``noteheads``: one entry per written notehead, located and labelled."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator

from serialkit.check.annotate import annotate_score
from serialkit.cli import cli
from serialkit.core.piece import Piece
from serialkit.io import read_score, write_musicxml
from serialkit.io.noteheads import piece_noteheads, read_noteheads
from tests.conftest import ROOT
from tests.plugins.musescore_fixture import FIXTURE, ROW
from tests.strategies import row_statement_pieces

OP21_ROW = "A F# G G# E F B Bb D C# C Eb"
SCHEMA = json.loads((ROOT / "serialkit" / "schemas" / "report.schema.json").read_text(encoding="utf-8"))


def check_noteheads(piece: Piece, report: dict[str, Any]) -> None:
    """Every event has one head entry; tied continuations follow it; ticks and labels agree."""
    heads = [n for n in report["noteheads"] if not n["tied"]]
    events = {e.id: e for e in piece.events}
    assert [n["event_id"] for n in heads] == [e.id for e in piece.events]
    assert all(n["id"] == n["event_id"] for n in heads)
    continuations = Counter(n["event_id"] for n in report["noteheads"] if n["tied"])
    assert continuations == Counter({e.id: len(e.tied_ids) - 1 for e in piece.events if e.tied_ids})
    colour = {n["event_id"]: n["color"] for n in heads}
    for n in report["noteheads"]:
        event = events[n["event_id"]]
        assert Fraction(n["onset"]) * 480 == n["tick"] or abs(Fraction(n["onset"]) * 480 - n["tick"]) < 1
        assert n["midi"] == event.midi
        if n["tied"]:
            assert n["label"] is None and n["color"] == colour[n["event_id"]]
            assert event.onset < Fraction(n["onset"]) < event.onset + event.duration
            assert n["id"] in event.tied_ids
        else:
            assert Fraction(n["onset"]) == event.onset
            assert n["label"] in (report["labels"][event.id], None) or "/" in n["label"]
            assert (n["label"] is None) == (event.id in report["unexplained"])
    Draft202012Validator(SCHEMA).validate(report)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(piece=row_statement_pieces(max_voices=3, max_statements=2))
def test_written_musicxml_noteheads_match_the_piece(piece: Piece, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Any statement piece written as MusicXML (bar-crossing notes become ties) reads back with
    one notehead entry per written note, each on its event, labelled as the report says."""
    path = write_musicxml(piece.copy(events=tuple(e.copy(tag=None) for e in piece.events)),
                          tmp_path_factory.mktemp("nh") / "piece.musicxml")
    assert piece.row is not None
    result = annotate_score(path, piece.row)
    check_noteheads(result.piece, dict(result.report))
    assert result.report["coverage"] == 1


def test_fixture_noteheads_and_report_only_run(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["annotate", str(FIXTURE), "--row", ROW, "--report", str(report_path)])
    assert result.exit_code == 0, result.stderr
    assert list(tmp_path.iterdir()) == [report_path]  # no -o: the report only
    report = json.loads(report_path.read_text(encoding="utf-8"))
    check_noteheads(read_score(FIXTURE), report)
    assert {(n["part"], n["staff"], n["voice"]) for n in report["noteheads"]} == {
        ("P1", 1, "1"), ("P2", 1, "1"), ("P2", 2, "5")
    }


def test_neither_output_nor_report_is_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["annotate", str(FIXTURE), "--row", ROW])
    assert result.exit_code == 2 and "--json" in result.stderr


def test_check_report_has_no_noteheads() -> None:
    result = CliRunner().invoke(cli, ["check", str(FIXTURE), "--row", ROW, "--json"])
    assert "noteheads" not in json.loads(result.stdout)


def test_json_piece_falls_back_to_one_notehead_per_event(tmp_path: Path) -> None:
    from serialkit.io.jsonio import save_piece

    piece = read_score(FIXTURE)
    path = save_piece(piece, tmp_path / "piece.json")
    heads = piece_noteheads(read_score(path))
    assert [n.event_id for n in heads] == [e.id for e in piece.events]
    assert {n.part_index for n in heads} == {0, 1}
    assert [n.measure for n in heads] == [e.source.measure for e in piece.events if e.source]
    demo = read_score(ROOT / "fixtures" / "pieces" / "demo-piece.json")  # no sources: bars by time
    assert [n.measure for n in piece_noteheads(demo)] == [demo.locate(e.onset)[0] for e in demo.events]


@pytest.mark.corpus
def test_op21_noteheads_ties_and_transposing_parts(corpus: Path) -> None:
    mei = corpus / "webern-op21-i-mm1-25.mei"
    result = annotate_score(mei, OP21_ROW)
    report = dict(result.report)
    check_noteheads(result.piece, report)
    assert any(n["tied"] for n in report["noteheads"])
    offsets: dict[str, set[int]] = {}
    for n in report["noteheads"]:
        offsets.setdefault(n["part"], set()).add(n.get("written_midi", n["midi"]) - n["midi"])
    assert all(len(v) == 1 for v in offsets.values()), offsets  # one transposition per part
    trans = {-round(float(t)) for t in re.findall(r'trans\.semi="([^"]+)"', mei.read_text(encoding="utf-8"))}
    assert {v for s in offsets.values() for v in s} - {0} == trans
    # the same noteheads whether read through the report or straight from the file
    direct = read_noteheads(mei)
    assert sorted(n.id for n in direct) == sorted(n["id"] for n in report["noteheads"])
