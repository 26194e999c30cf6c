"""Suggested corrections in ``check`` and ``annotate`` reports (text and JSON) and on the review page."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from jsonschema import Draft202012Validator

from serialkit.cli import cli
from serialkit.core.suggest import MODELS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))


def _check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def test_check_json_suggests_the_note_meant_for_each_finding(fixtures: Path) -> None:
    code, out = _check(str(fixtures / "pieces" / "demo-piece.json"), "--json")
    assert code == 1
    data = json.loads(out)
    Draft202012Validator(SCHEMA).validate(data)
    by_id = {n["event_id"]: n for n in data["suggestions"]}
    # the demo's F# tagged P0:5 (the row has F there): an added sharp
    best = by_id["uA0-5"]["candidates"][0]
    assert (best["name"], best["label"], best["model"]) == ("F4", "P0:5", "accidental")
    assert best["confidence"] >= 0.6 and best["edits"] == [
        {"event_id": "uA0-5", "before": 66, "after": 65, "before_name": "F#4", "after_name": "F4",
         "before_sounding": "F#4", "after_sounding": "F4", "at": "bar 2, beat 2"}
    ]
    # the two notes written in each other's place
    swap = by_id["uB0-4"]["candidates"][0]
    assert swap["model"] == "swap" and {e["event_id"] for e in swap["edits"]} == {"uB0-3", "uB0-4"}
    assert all(c["model"] in MODELS for n in data["suggestions"] for c in n["candidates"])
    reported = set(data["unexplained"]) | {
        e for v in data["violations"] if v["code"] in ("ROW", "ORDER") for e in v["event_ids"]
    }
    assert reported <= set(by_id)


def test_check_text_prints_the_suggestion_under_its_finding(fixtures: Path) -> None:
    _code, out = _check(str(fixtures / "pieces" / "demo-piece.json"))
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "[uA0-5]" in line)
    assert "suggest: F4 (P0:5 of S1; accidental" in lines[at + 2]


def test_no_suggest_leaves_them_out(fixtures: Path) -> None:
    _code, out = _check(str(fixtures / "pieces" / "demo-piece.json"), "--json", "--no-suggest")
    assert "suggestions" not in json.loads(out)


def test_clean_piece_has_no_suggestions(fixtures: Path) -> None:
    code, out = _check(str(fixtures / "pieces" / "clean-piece.json"), "--json")
    assert code == 0
    assert json.loads(out).get("suggestions", []) == []


def test_annotate_reports_suggestions(fixtures: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["annotate", str(fixtures / "pieces" / "demo-piece.json"), "-o", str(tmp_path / "a.musicxml"),
              "--report", str(report)], catch_exceptions=False,
    )
    assert result.exit_code == 1
    assert "Violin, bar 2, beat 2, F#4 (unexplained): suggest: F4 (P0:5 of S1; accidental" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    Draft202012Validator(SCHEMA).validate(data)
    assert data["suggestions"][0]["candidates"][0]["name"] == "F4"


def test_review_page_shows_each_suggestion_beside_its_finding(fixtures: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.html"
    result = CliRunner().invoke(
        cli, ["render", str(fixtures / "pieces" / "demo-piece.json"), "--row", "webern-op21", "-o", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    item = next(li for li in html.split("<li>") if "uA0-5" in li and "sk-finding" in li)
    assert 'class="sk-suggest">suggest: F4 (P0:5 of S1; accidental' in item


def test_check_text_does_not_call_an_untried_note_implausible() -> None:
    """A note the report's budget left untried reads "none among those tried", not "nothing
    plausible" (which says every candidate was verified and none explains more)."""
    from serialkit.cli._suggestions import suggestion_lines

    report = {"suggestions": [{"event_id": "a", "candidates": []},
                              {"event_id": "b", "candidates": [], "complete": False}]}
    assert "nothing plausible" in "".join(suggestion_lines(report, ["a"]))
    untried = "".join(suggestion_lines(report, ["b"]))
    assert "none among those tried" in untried and "nothing plausible" not in untried


def test_the_review_marks_do_not_call_an_untried_note_implausible() -> None:
    from serialkit.render.marks import _suggested

    report = {"suggestions": [{"event_id": "a", "candidates": []},
                              {"event_id": "b", "candidates": [], "complete": False}]}
    assert _suggested(report, "r.json") == {"a": "nothing plausible", "b": "none among those tried"}
