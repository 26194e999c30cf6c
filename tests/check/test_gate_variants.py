"""One gate for every variant: raw candidates with one wrong claim, a missing section or a
transposed statement are never released and the failure is named; exported labels are the gate's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from serialkit.core.rows import RowForm
from serialkit.harness import load_task, run
from serialkit.harness.proposers.base import Reply, Request, extract_json
from serialkit.harness.proposers.stochastic import StochasticProposer

Mutation = Callable[[Request, list[dict[str, Any]]], list[dict[str, Any]] | None]


class Mutating:
    """A clean writer whose answers one mutation spoils (None: the call fails)."""

    name = "mutating"
    model: str | None = "clean-then-spoiled"

    def __init__(self, mutate: Mutation, seed: int = 1) -> None:
        self.inner = StochasticProposer(seed=seed, profile="clean")
        self.mutate = mutate

    def propose(self, request: Request) -> Reply:
        reply = self.inner.propose(request)
        assert reply.text is not None
        events = self.mutate(request, extract_json(reply.text)["events"])
        if events is None:
            return Reply(None, reply.usage, error="HTTP 500 from the server")
        return Reply(json.dumps({"section": request.section, "events": events}), reply.usage)


def clean(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return events


def mislabel(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The writer's habit from the issue: RI1:7's pitch claimed as position 8 (one note)."""
    if request.section == "B":
        target = next(e for e in events if e["voice"] == "vc" and e["position"] == 7)
        target["position"] = 8
    return events


def lose_section_b(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    return None if request.section == "B" else events


def transpose_vn_in_a(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The violin's statement in A written a minor third up and labelled accordingly."""
    if request.section == "A":
        for e in events:
            if e["voice"] == "vn":
                form = RowForm.parse(e["form"])
                e["form"] = RowForm(form.type, (form.n + 3) % 12).label
                e["midi"] += 3
                e["pc"] = e["midi"] % 12
    return events


def test_the_clean_writer_is_released_by_every_variant() -> None:
    for variant in ("raw", "soft-rules", "self-refine"):
        result = run("duo-berg", variant=variant, proposer=Mutating(clean))
        assert result.released, (variant, result.verdict.violations)
        assert result.verdict.complete and result.verdict.delivered == result.verdict.scheduled == 48


@pytest.mark.parametrize("variant", ["raw", "soft-rules", "self-refine"])
def test_one_mislabelled_position_is_not_released(variant: str) -> None:
    result = run("duo-berg", variant=variant, proposer=Mutating(mislabel))
    assert not result.released and not result.verdict.relaxed
    failures = result.report["failures"]
    row = [f for f in failures if f["code"] == "ROW" and f["tags"] == "claims"]
    assert len(row) == 1 and "tagged RI8:8" in row[0]["message"], failures
    # the wrong claim is not exported as a label: the certificate keeps it only as a claim
    record = next(r for r in result.certificate["events"] if r["id"] in row[0]["event_ids"])
    assert record["claimed"] == "RI8:8" and record["form"] is None and record["position"] is None


@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_a_missing_section_is_never_released(mode: str) -> None:
    result = run("duo-berg", variant="raw", proposer=Mutating(lose_section_b), mode=mode)
    assert not result.released and not result.verdict.strict and not result.verdict.relaxed
    messages = [f["message"] for f in result.report["failures"] if f["code"] == "SECTION"]
    assert messages == ["section B: the reply could not be read (HTTP 500 from the server)"]  # and why
    assert result.verdict.delivered == 24 and result.verdict.scheduled == 48
    assert {s["section"] for s in result.verdict.short} == {"B"}


def stray_voice(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One extra note in a voice the task does not have (the parser must skip it)."""
    if request.section == "A":
        events = [*events, dict(events[0], voice="va")]
    return events


@pytest.mark.parametrize("variant", ["raw", "soft-rules"])
def test_a_baseline_is_judged_on_everything_the_model_wrote(variant: str) -> None:
    """A note the parser has to skip (a voice the task lacks) is not quietly cleaned away for a
    baseline: no repair may mend its reply, so the section counts as unreadable (outside tester)."""
    result = run("duo-berg", variant=variant, proposer=Mutating(stray_voice))
    assert not result.released and not result.verdict.relaxed
    (said,) = [f["message"] for f in result.report["failures"] if f["code"] == "SECTION"]
    assert said.startswith("section A: the reply could not be read (1 note unreadable: events[")
    assert said.endswith("]: unknown voice 'va')")
    assert any("unknown voice 'va'" in e for e in result.report["errors"])


def test_a_transposed_statement_fails_strict_and_names_the_schedule() -> None:
    result = run("duo-berg", variant="raw", proposer=Mutating(transpose_vn_in_a))
    assert not result.released
    sched = [f for f in result.report["failures"] if f["code"] == "SCHED"]
    assert sched and all("schedules P0" in f["message"] for f in sched)
    # the transposed statement is complete (its claims are right), so nothing else is short
    assert result.verdict.delivered == result.verdict.scheduled


def test_run_report_says_delivered_of_scheduled_and_which_statements_are_short() -> None:
    def drop_two(request: Request, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if request.section == "A":
            return [e for e in events if not (e["voice"] == "vc" and e["position"] in (3, 4))]
        return events

    strict = run("duo-berg", variant="raw", proposer=Mutating(drop_two))
    relaxed = run("duo-berg", variant="raw", proposer=Mutating(drop_two), mode="relaxed")
    assert not strict.released and relaxed.released
    verdict = strict.report["verdict"]
    assert (verdict["delivered"], verdict["scheduled"], verdict["complete"]) == (46, 48, False)
    assert verdict["short"] == [{"section": "A", "voice": "vc", "statement": 1, "form": "I5", "missing": [3, 4]}]
    assert [f["code"] for f in strict.report["failures"]] == ["COMPLETE"]
    from serialkit.harness.schemas import validation_errors

    assert validation_errors("run-report", strict.report) == []


def _annotated_labels(path: Path) -> list[str]:
    """Every label the annotated score carries, whatever the carrier (words by default)."""
    from serialkit.io import read_annotations

    return [a.label for a in read_annotations(path).values() if a.label]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(variant=st.sampled_from(["harness", "raw", "self-refine", "soft-rules"]), seed=st.integers(0, 40),
       mode=st.sampled_from(["strict", "relaxed"]))
def test_released_runs_export_only_the_gates_labels(variant: str, seed: int, mode: str,
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    from serialkit.render.runreview import write_run_review

    out = tmp_path_factory.mktemp("run")
    result = run("duo-berg", variant=variant, seed=seed, out_dir=out, mode=mode)
    labels = dict(result.verdict.labels)
    exported = {r["id"]: (None if r["form"] is None else f"{r['form']}:{r['position']}")
                for r in result.certificate["events"]}
    # the certificate's labels are the gate's, released or not
    assert exported == {k: labels.get(k) for k in exported}
    if not result.released:
        assert not (out / "score.musicxml").exists()
        return
    assert all(v is not None for v in labels.values())
    written = write_run_review(out, result.certificate, result.released, result.verdict.labels).written
    assert "annotated" in written
    assert sorted(_annotated_labels(out / "annotated.musicxml")) == sorted(v for v in labels.values() if v)


def test_a_raw_candidate_claiming_the_wrong_position_is_caught_on_every_task() -> None:
    for name in ("trio-schoenberg", "quartet-webern"):
        task = load_task(name)
        first = task.sections[0].id
        voice = task.voice_ids[0]

        def spoil(request: Request, events: list[dict[str, Any]], first: str = first,
                  voice: str = voice) -> list[dict[str, Any]]:
            if request.section == first:
                e = next(x for x in events if x["voice"] == voice and x["position"] == 5)
                e["position"] = 6
            return events

        result = run(task, variant="raw", proposer=Mutating(spoil))
        assert not result.released
        assert any(f["code"] == "ROW" and f["tags"] == "claims" for f in result.report["failures"])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(variant=st.sampled_from(["harness", "raw", "self-refine", "soft-rules"]), seed=st.integers(0, 40))
def test_serialkit_check_on_a_candidate_gives_the_runs_verdict(variant: str, seed: int,
                                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    from click.testing import CliRunner

    from serialkit.cli import cli

    out = tmp_path_factory.mktemp("run")
    result = run("duo-berg", variant=variant, seed=seed, out_dir=out)
    # the candidate carries its blueprint: task-bound either way; the second run --no-suggest (the
    # verdict, delivered count and labels are made before any suggestion; the first run's suggestions
    # are schema-checked)
    for extra in (["--task", "duo-berg"], ["--no-suggest"]):
        done = CliRunner().invoke(cli, ["check", str(out / "candidate.json"), "--json", *extra])
        assert done.exit_code == (0 if result.verdict.strict else 1), done.stderr
        data = json.loads(done.stdout)
        Draft202012Validator(json.loads((Path(__file__).parents[2] / "schemas" / "report.schema.json")
                                        .read_text("utf-8"))).validate(data)
        assert (data["strict"], data["relaxed"]) == (result.verdict.strict, result.verdict.relaxed)
        assert data["gate"]["delivered"] == result.verdict.delivered
        assert data["labels"] == dict(result.verdict.labels)


def test_generate_prints_delivered_of_scheduled_and_names_short_statements(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from serialkit.cli import cli

    for variant in ("raw", "harness"):
        done = CliRunner().invoke(cli, ["generate", "duo-berg", "-o", str(tmp_path / variant), "--variant", variant,
                                        "-O", "rates.omission=0.2", "--seed", "2", "--no-review"])
        run_report = json.loads((tmp_path / variant / "report.json").read_text("utf-8"))
        verdict = run_report["verdict"]
        assert f"delivered {verdict['delivered']} of 48 scheduled" in done.stdout
        if variant == "raw":  # a fifth of the notes omitted: never complete, never strict
            assert done.exit_code == 1 and not verdict["complete"] and verdict["short"]
            assert "COMPLETE" in done.stdout


def test_check_judges_a_candidate_against_the_task_it_names_not_its_own_blueprint(tmp_path: Path) -> None:
    """A wrong candidate whose blueprint was edited to match it, an empty candidate, and a released
    score.musicxml (voices named by instrument) are judged as with --task (outside tester)."""
    from click.testing import CliRunner

    from serialkit.cli import cli

    runner = CliRunner()
    good = run("duo-berg", variant="raw", proposer=Mutating(clean))
    assert good.released

    def forged(n: int, title: str) -> Path:
        """The violin's statement in A transposed by n semitones, and the blueprint edited to match."""
        data = good.piece.to_dict()
        data["title"] = title
        for e in data["events"]:
            if e["voice"] == "vn" and e["section"] == "A":
                e["midi"] += n  # and its claims with it: the form transposed, the pitch class true
                form = RowForm.parse(e["tag"]["form"])
                e["tag"]["form"] = RowForm(form.type, (form.n + n) % 12).label
                e["pc"] = e["midi"] % 12
        for entry in data["blueprint"]:
            if entry["voice"] == "vn" and entry["section"] == "A":
                entry["forms"] = [RowForm(RowForm.parse(f).type, (RowForm.parse(f).n + n) % 12).label
                                  for f in entry["forms"]]
        path = tmp_path / f"forged-{n}-{title}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def code(path: Path) -> int:
        return runner.invoke(cli, ["check", str(path), "--no-suggest"]).exit_code

    # a transposition the forged blueprint makes pass when the candidate is judged on its own
    n = next(n for n in range(1, 12) if code(forged(n, "custom")) == 0)
    out = runner.invoke(cli, ["check", str(forged(n, "duo-berg")), "--json", "--no-suggest"])
    data = json.loads(out.stdout)
    assert out.exit_code == 1 and data["counts"]["SCHED"] > 0, data["violations"]
    assert any("judged against task duo-berg" in note for note in data["notes"])
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(dict(good.piece.to_dict(), events=[])), encoding="utf-8")
    out = runner.invoke(cli, ["check", str(empty), "--json", "--no-suggest"])
    assert out.exit_code == 1 and {"SECTION", "COMPLETE"} <= {v["code"] for v in json.loads(out.stdout)["violations"]}
    score = tmp_path / "score.musicxml"
    from serialkit.io import write_score

    write_score(good.piece, score)
    out = runner.invoke(cli, ["check", str(score), "--task", "duo-berg", "--json", "--no-suggest"])
    assert out.exit_code == 0, out.stdout + out.stderr
    out = runner.invoke(cli, ["check", str(score), "--task", "trio-schoenberg"])
    assert out.exit_code == 2 and "not those of task trio-schoenberg" in out.stderr
