"""The top-level API as a contract: every name in ``serialkit.__all__`` resolves and is documented,
its options are keyword-only, and each call gives what the CLI command gives."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import serialkit as sk
from serialkit.cli import cli

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "pieces" / "demo-piece.json"
DUET = ROOT / "fixtures" / "render" / "duet.musicxml"
FUNCTIONS = ("read_score", "check", "annotate", "repair", "render", "generate", "from_music21", "to_music21",
             "load_task")
POSITIONAL = {"render": 2}  # render(score, out, *, ...): the score and where it goes


@pytest.mark.parametrize("name", sk.__all__)
def test_every_public_name_resolves_and_is_documented(name: str) -> None:
    value = getattr(sk, name)
    if name == "__version__":
        assert isinstance(value, str)
        return
    assert (inspect.getdoc(value) or "").strip(), f"serialkit.{name} has no docstring"


@pytest.mark.parametrize("name", [n for n in FUNCTIONS if n != "load_task"])
def test_options_are_keyword_only(name: str) -> None:
    params = list(inspect.signature(getattr(sk, name)).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(positional) == POSITIONAL.get(name, 1), [p.name for p in positional]
    assert all(p.kind is p.KEYWORD_ONLY for p in params[len(positional):])


def test_functions_are_in_all() -> None:
    assert set(FUNCTIONS) <= set(sk.__all__)
    assert not set(sk.__all__) - set(dir(sk))


def test_import_stays_light_and_check_stays_the_function() -> None:
    code = ("import sys, serialkit, serialkit.check.report, serialkit.render.engrave\n"
            "loaded = 'serialkit.api' in sys.modules\n"
            "print(loaded, callable(serialkit.check) and callable(serialkit.render))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True"]


def _cli_json(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _same(data: dict[str, object]) -> dict[str, object]:
    """The report without what changes from run to run (identification's timing)."""
    out = json.loads(json.dumps(data, default=str))
    if isinstance(out.get("identification"), dict):
        out["identification"].pop("seconds", None)
    return dict(out)


def test_check_gives_the_cli_report() -> None:
    result = sk.check(DEMO)
    cli = _cli_json("check", str(DEMO))
    assert _same(result.to_dict()) == _same(cli)
    assert result.passed is False and result.violations
    assert isinstance(result.report, sk.CheckReport)


def test_check_options_match_the_cli() -> None:
    result = sk.check(sk.read_score(DUET), rules="ROW,ORDER", relaxed=True)
    cli = _cli_json("check", str(DUET), "--rules", "ROW,ORDER", "--relaxed")
    assert _same(result.to_dict()) == _same(cli)
    assert result.mode == "relaxed"


def test_check_reads_bytes_and_refuses_bad_rules() -> None:
    assert sk.check(DUET.read_bytes()).summary() == sk.check(DUET).summary()
    with pytest.raises(sk.SerialkitError, match="NOPE"):
        sk.check(DUET, rules="NOPE")


def test_read_score_names_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.musicxml"
    bad.write_text("<score-partwise><part")
    with pytest.raises(sk.ScoreReadError, match="bad.musicxml"):
        sk.read_score(bad)


def test_annotate_writes_a_labelled_score(tmp_path: Path) -> None:
    out = tmp_path / "labelled.musicxml"
    done = sk.annotate(DUET, out=out)
    assert isinstance(done, sk.Annotated) and out.exists()
    assert done.analysis.tags


def test_repair_dry_run_and_written(tmp_path: Path) -> None:
    dry = sk.repair(DEMO, dry_run=True)
    assert isinstance(dry, sk.RepairResult) and dry.changes
    out = tmp_path / "fixed.json"
    done = sk.repair(DEMO, out=out, review=False)
    assert out.exists() and done.certificate_path is not None and done.certificate_path.exists()
    with pytest.raises(sk.SerialkitError, match="out="):
        sk.repair(DEMO)


def test_render_svg_and_notebook_displays(tmp_path: Path) -> None:
    pytest.importorskip("verovio")
    result = sk.check(DUET)
    rendered = sk.render(DUET, tmp_path / "duet.svg", check_report=result)
    assert isinstance(rendered, sk.RenderResult) and rendered.marked_notes > 0
    page = result._repr_html_()
    assert "<svg" in page and "95.8 % explained" in page and "ROW" in page
    assert sk.read_score(DUET)._repr_svg_().lstrip().startswith(("<svg", "<?xml"))


def test_notebook_display_of_an_existing_score_speaks_the_analysis_profile() -> None:
    """As the review page does: how much the row explains, violations, observations; no
    strict/relaxed verdict, for there is no task to pass."""
    result = sk.check(DUET)
    assert not result.task_bound
    shown = result._verdict_html()
    head = "95.8 % explained, 1 unexplained note · 1 violation · 1 observation"
    assert f"{DUET}: {head}" in shown, shown
    assert "strict" not in shown and "relaxed" not in shown and "FAIL" not in shown
    assert "<code>ROW</code>" in shown and "Observations (reported, not violations)" in shown
    observed = result.data["observations"][0]
    assert f"<code>{observed['code']}</code>" in shown


def test_notebook_display_of_a_task_candidate_gives_the_gate_verdict(tmp_path: Path) -> None:
    sk.generate("trio-schoenberg", seed=3, options={"profile": "paper-raw"}, out=tmp_path / "run")
    candidate = tmp_path / "run" / "candidate.json"
    for given, relaxed, mode in ((None, False, "strict"), ("trio-schoenberg", True, "relaxed")):
        result = sk.check(candidate, task=given, relaxed=relaxed)
        assert result.task_bound  # the candidate carries its task's blueprint, given or not
        shown = result._verdict_html()
        verdict = "pass" if result.passed else "FAIL"
        assert f"{verdict} ({mode})" in shown and "explained," not in shown, shown
    released = sk.check(tmp_path / "run" / "score.musicxml")  # the released score, read as any score
    assert not released.task_bound and "% explained" in released._verdict_html()


def test_row_shows_its_matrix() -> None:
    table = sk.Row.parse("webern-op21")._repr_html_()
    assert table.count("<tr>") == 14 and "<b>P0</b>" in table and "<b>RI0</b>" in table


def test_generate_runs_a_bundled_task(tmp_path: Path) -> None:
    run = sk.generate("trio-schoenberg", seed=3, options={"profile": "paper-raw"}, out=tmp_path / "run")
    assert isinstance(run, sk.RunResult) and run.released
    assert (tmp_path / "run" / "certificate.json").exists()
    assert sk.load_task("trio-schoenberg").name == "trio-schoenberg"


def test_music21_round_trip() -> None:
    pytest.importorskip("music21")
    score = sk.read_score(DUET)
    back = sk.read_score(sk.to_music21(score))
    assert [e.midi for e in back.piece.events] == [e.midi for e in score.piece.events]
