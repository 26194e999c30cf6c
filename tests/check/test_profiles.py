"""Rule profiles: ``analysis`` for existing scores, ``generation`` for candidates, or chosen codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from serialkit.check import check_piece
from serialkit.check.profiles import OBSERVED, profile_for
from serialkit.cli import cli
from serialkit.core.errors import RulesError
from serialkit.core.piece import Event, Piece, Tag, Voice
from serialkit.core.predicates import Rules, check_order
from serialkit.core.rows import Row, RowForm
from tests.strategies import row_statement_pieces

OP21 = "webern-op21-i-mm1-25.mei"
OP27 = "webern-op27-ii-mm1-11.mei"


def _check(*args: str, once: Callable[..., Any] | None = None) -> tuple[int, dict[str, object], str]:
    """``check ARGS --json``: exit status, the report (schema-checked), standard error (``once``:
    the shared ``cli_once`` run of the same command)."""
    if once is not None:
        result = once("check", *args, "--json")
    else:
        result = CliRunner().invoke(cli, ["check", *args, "--json"], catch_exceptions=False)
    data = json.loads(result.stdout) if result.stdout.strip() else {}
    if data:
        schema = json.loads((Path(__file__).parents[2] / "schemas" / "report.schema.json").read_text("utf-8"))
        Draft202012Validator(schema).validate(data)
    return result.exit_code, data, result.stderr


@pytest.mark.xdist_group("op21-identify")  # cli_once: check <Op. 21> --identify --json, shared
def test_op21_under_analysis_names_only_the_unexplained_note(corpus: Path, cli_once: Callable[..., Any]) -> None:
    code, data, _ = _check(str(corpus / OP21), "--identify", once=cli_once)
    assert code == 1 and data["profile"]["name"] == "analysis"  # type: ignore[index]
    violations = data["violations"]
    assert isinstance(violations, list)
    assert [(v["code"], v["location"]) for v in violations] == [("ROW", "Horn 2 in F, bar 25, beat 2 (line 1837)")]
    assert "unexplained" in violations[0]["message"]
    observed = {o["code"] for o in data["observations"]}  # type: ignore[union-attr]
    assert observed == {"COLL", "CROSS", "COMPLETE"} and data["relaxed"] is False
    # the excerpt ends (bar 25) before two statements complete: observed, never a violation
    short = [o["message"] for o in data["observations"] if o["code"] == "COMPLETE"]  # type: ignore[union-attr]
    assert len(short) == 2 and all("positions 10" in m and "never sound" in m for m in short), short


def test_op21_under_generation_keeps_todays_findings(corpus: Path) -> None:
    # --no-suggest: the findings asserted are made before any suggestion and do not depend on them;
    # the suggestions (most of a check's time on Op. 21) are schema-checked in the analysis run above
    code, data, _ = _check(str(corpus / OP21), "--identify", "--rules", "generation", "--no-suggest")
    assert code == 1 and data["profile"]["name"] == "generation"  # type: ignore[index]
    counts = data["counts"]
    assert counts == {"ROW": 1, "ORDER": 3, "COLL": 4, "PC": 0, "RANGE": 0, "CROSS": 1, "SCHED": 0, "COMPLETE": 2}
    assert data["observations"] == []
    # each location names the instrument as the score does, and each thing once
    for v in data["violations"]:  # type: ignore[union-attr]
        said = v["location"].split(" (")[0]  # "(written in bar 23, …)" when a bar of the file runs past its end
        assert said.count("bar ") == 1 and "P4/4/1" not in v["location"]
        assert "/" not in v["message"].split(":")[-1] or v["code"] != "COLL"


@pytest.mark.parametrize("rules", [None, "generation"])
def test_op27_passes_both_profiles(corpus: Path, rules: str | None) -> None:
    args = [str(corpus / OP27), "--identify"] + (["--rules", rules] if rules else [])
    code, data, _ = _check(*args)
    assert code == 0 and data["strict"] is True and data["violations"] == []


def test_chosen_codes_run_only_those(corpus: Path) -> None:
    # --no-suggest: which codes run does not depend on the suggestions (most of a check's time here)
    code, data, _ = _check(str(corpus / OP21), "--identify", "--rules", "ROW,order", "--no-suggest")
    assert code == 1 and set(data["counts"]) == {"ROW", "ORDER"}  # type: ignore[arg-type]
    assert data["counts"] == {"ROW": 1, "ORDER": 3}


@pytest.mark.parametrize("spec", ["nonsense", "ROW,BOGUS", ","])
def test_unknown_rules_are_bad_input(fixtures: Path, spec: str) -> None:
    result = CliRunner().invoke(cli, ["check", str(fixtures / "pieces" / "clean-piece.json"), "--rules", spec])
    assert result.exit_code == 2
    assert "--rules" in result.stderr and "Traceback" not in result.stderr


def test_a_task_bound_candidate_refuses_the_analysis_profile(fixtures: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(fixtures / "pieces" / "demo-piece.json"), "--rules", "analysis"])
    assert result.exit_code == 2 and "task-bound" in result.stderr


@pytest.mark.slow
def test_annotate_follows_the_profile(corpus: Path, tmp_path: Path) -> None:
    for rules, codes in ((None, {"ROW"}), ("generation", {"ROW", "ORDER", "COLL", "CROSS", "COMPLETE"})):
        report = tmp_path / f"{rules}.json"
        args = ["annotate", str(corpus / OP21), "--identify", "--report", str(report)]
        result = CliRunner().invoke(cli, args + (["--rules", rules] if rules else []), catch_exceptions=False)
        assert result.exit_code in (0, 1), result.stderr
        data = json.loads(report.read_text(encoding="utf-8"))
        assert {v["code"] for v in data["violations"]} == codes


@pytest.mark.slow
@pytest.mark.xdist_group("op21-render")  # render_once(op21, row=...) is shared with tests/render
def test_render_paints_only_the_profiles_violations(corpus: Path, tmp_path: Path,
                                                    render_once: Callable[..., Any]) -> None:
    from serialkit.render import render

    analysis = render_once(corpus / OP21, row="webern-op21")
    generation = render(corpus / OP21, tmp_path / "g.svg", row="webern-op21", rules="generation")
    painted = {f.code for f in analysis.findings if f.kind == "violation"}
    assert painted == {"ROW"}  # the one unexplained note; no collision or crossing painted red
    assert {f.code for f in generation.findings if f.kind == "violation"} == {"ROW", "ORDER", "COLL", "CROSS", "COMPLETE"}


def test_profile_for_defaults_and_errors() -> None:
    assert profile_for(None).name == "analysis"
    assert profile_for(None, task_bound=True).name == "generation"
    analysis = profile_for("analysis", Rules(oscillation_window=2))
    assert analysis.rules.immediate_repeats and analysis.rules.octave_repeats
    assert analysis.rules.oscillation_window >= 2 and analysis.observed == OBSERVED
    assert not analysis.judges("COLL") and analysis.judges("ROW") and analysis.runs("CROSS")
    picked = profile_for(" row, Sched ")
    assert picked.codes == ("ROW", "SCHED") and not picked.judges("ORDER")
    with pytest.raises(RulesError, match="unknown predicate BOGUS"):
        profile_for("ROW,BOGUS")


def test_an_octave_doubling_is_a_repeat_only_when_octaves_are_allowed() -> None:
    row = Row.parse("0 1 2 3 4 5 6 7 8 9 10 11")
    p0 = RowForm("P", 0)
    events = [Event(f"n{k}", "v", k, 1, 60 + k, tag=Tag(p0, k)) for k in range(4)]
    events.append(Event("dbl", "v", 3, 1, 75, tag=Tag(p0, 3)))  # E-flat doubled an octave up
    piece = Piece(tuple(events), voices=(Voice("v"),), row=row)
    assert check_order(piece, Rules(immediate_repeats=True))
    assert not check_order(piece, Rules(immediate_repeats=True, octave_repeats=True))
    assert check_order(piece, Rules(octave_repeats=True))  # octaves widen repeats, never allow them alone


@settings(max_examples=40, deadline=None)
@given(piece=row_statement_pieces(max_voices=3, max_statements=2), shift=st.integers(-3, 3))
def test_analysis_never_finds_more_than_generation(piece: Piece, shift: int) -> None:
    # the analysis profile only widens allowances and moves COLL/CROSS/RANGE to observations
    events = [e.copy(midi=e.midi + shift) if k % 7 == 3 else e for k, e in enumerate(piece.events)]
    piece = piece.with_events(events)
    analysis = check_piece(piece, profile=profile_for("analysis"), plugins=False)
    generation = check_piece(piece, profile=profile_for("generation"), plugins=False)
    keys = {(v.code, v.event_ids) for v in generation.violations}
    assert {(v.code, v.event_ids) for v in analysis.violations} <= keys
    assert {(v.code, v.event_ids) for v in analysis.observations} <= keys
    assert all(v.code in OBSERVED for v in analysis.observations)
    if generation.strict:
        assert analysis.strict


@pytest.mark.xdist_group("op21-identify")  # cli_once: check <Op. 21> --identify, shared
def test_the_text_output_names_the_instruments(corpus: Path, cli_once: Callable[..., Any]) -> None:
    result = cli_once("check", str(corpus / OP21), "--identify")
    assert "Horn 2 in F; Harp, staff 1; Harp, staff 2" in result.stdout and "P4/4/1" not in result.stdout
    assert "Horn 2 in F, bar 25, beat 2" in result.stdout and result.exit_code == 1
