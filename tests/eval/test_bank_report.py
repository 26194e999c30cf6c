"""The shipped bank (schema-valid, reproducible) and the report from a real run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from serialkit.eval.bank import BANK_DIR, load_bank
from serialkit.eval.report import write_report
from serialkit.eval.store import RunStore
from serialkit.eval.summary import summarize
from serialkit.harness.schemas import validation_errors
from serialkit.harness.tasks import load_task
from tests.conftest import ROOT
from tests.eval.helpers import real_run_dir, run_cli


def test_bank_has_40_schema_valid_tasks_in_families() -> None:
    tasks = load_bank("builtin", validate=True)
    assert len(tasks) == 40
    families = Counter(t.family for t in tasks)
    assert len(families) == 8 and set(families.values()) == {5}
    for t in tasks:
        data = json.loads(t.path.read_text())
        assert validation_errors("task", data) == [], t.path
        task = load_task(str(t.path))
        assert task.name == t.name and task.bars == t.bars
    long = [load_task(str(t.path)) for t in tasks if t.family == "long-form"]
    assert all(t.bars >= 48 for t in long)
    pairs = [load_task(str(t.path)) for t in tasks if t.family == "hexachordal-pairs"]
    for task in pairs:  # the paired forms' first hexachords make the aggregate
        for section in task.sections:
            forms = [task.blueprint.forms_for(section.id, v)[0] for v in task.voice_ids]
            heads = [set(task.row.form(f, task.convention)[:6]) for f in forms]
            assert heads[0] | heads[1] == set(range(12)), (task.name, section.id)


def test_bank_is_reproducible_from_the_catalog() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_bank.py"), "--check",
                           "--out", str(BANK_DIR)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_bank_command_lists_tasks() -> None:
    data = json.loads(run_cli("eval", "bank", "--json").stdout)
    assert len(data) == 40 and {"name", "family", "bars", "path"} <= set(data[0])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_run_dir(tmp_path_factory.mktemp("reportrun"))


def test_summary_matches_the_records(run_dir: Path) -> None:
    records = RunStore(run_dir).records()
    s = summarize(records)
    for variant in s["variants"]:
        rs = [r for r in records if r["variant"] == variant]
        assert s["delivery"][variant]["strict"]["value"] == pytest.approx(sum(r["strict"] for r in rs) / len(rs))
        coll = sum(r["metrics"]["collisions"] for r in rs)
        opp = sum(r["metrics"]["opportunities"] for r in rs)
        assert s["collisions"][variant]["value"] == pytest.approx(coll / opp if opp else 0.0)
        calls = sum(r["usage"]["calls"] for r in rs) / len(rs)
        assert s["cost"][variant]["calls"]["value"] == pytest.approx(calls)


def test_html_report_is_self_contained(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    run_cli("eval", "report", str(run_dir), "-o", str(out))
    text = out.read_text()
    assert text.count('src="data:image/png;base64,') == 3
    assert not re.search(r'(src|href)="(?!data:)', text)
    for heading in ("Delivery", "Predicate pass rates", "Collisions", "Degeneracy", "Cost"):
        assert heading in text


def test_markdown_report_with_corpus_reference(run_dir: Path, tmp_path: Path, corpus: Path) -> None:
    out = tmp_path / "r" / "report.md"
    summary = write_report(run_dir, out, reference=[corpus / "webern-op27-ii-mm1-11.mei"])
    text = out.read_text()
    assert "Corpus distance" in text
    for name in ("delivery", "predicates", "cost"):
        assert (out.parent / "report_files" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    for v in summary["variants"]:
        assert summary["corpus"][v]["mmd"] >= 0 and summary["corpus"][v]["kl"] >= 0


def test_report_of_a_missing_run_dir_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = run_cli("eval", "report", str(tmp_path / "empty"), "-o", str(tmp_path / "x.html"), check=False)
    assert proc.returncode == 2 and "runs.jsonl" in proc.stderr
    assert not (tmp_path / "x.html").exists()
