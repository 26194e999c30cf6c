"""``serialkit row``: text and JSON output, exit codes, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from serialkit.cli import cli
from serialkit.core.rows import Row

ROOT = Path(__file__).resolve().parents[2]
OP21_NAMES = "A F# G G# E F B Bb D C# C Eb"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["row", *args], catch_exceptions=False)


def test_show_text_lists_row_48_forms_aliases_and_matrix() -> None:
    result = run("show", "webern-op21")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("webern-op21: Webern")
    assert lines[1].split()[1:] == "A F# G G# E F B A# D C# C D#".split()
    matrix_start = next(i for i, line in enumerate(lines) if line.startswith("matrix"))
    forms = [line for line in lines[:matrix_start] if re.match(r"^(P|I|R|RI)\d+ ", line)]
    assert len(forms) == 48 and len({line.split()[0] for line in forms}) == 48
    assert all(len(line.split()) >= 13 for line in forms)
    assert sum(1 for line in lines if " = " in line and line.split()[0][0] in "PIR") == 24
    assert "= P0" in next(line for line in lines if line.startswith("R6 "))
    grid = lines[matrix_start + 2 : matrix_start + 14]
    assert grid[0].split() == ["P0", *"A F# G G# E F B A# D C# C D#".split(), "R0"]
    assert lines[matrix_start + 1].split()[:3] == ["I0", "I9", "I10"]


def test_show_json_has_the_same_content() -> None:
    result = run("show", "webern-op21", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["pcs"] == list(Row.parse(OP21_NAMES).pcs)
    assert data["name"] == "webern-op21" and data["catalog"]["collection"] == "music21"
    assert len(data["forms"]) == 48 and data["distinct_forms"] == 24
    assert sum(1 for f in data["forms"] if f["canonical"] != f["label"]) == 24
    assert {f["label"]: f["aliases"] for f in data["forms"]}["P0"] == ["R6"]
    assert len(data["matrix"]["pcs"]) == 12 and data["matrix"]["rows_p"][0] == "P0"
    assert data["combinatoriality"]["all_combinatorial"] is True
    identified = {m["name"]: m["forms"] for m in data["identified"]}
    assert identified["webern-op21"] == ["P0", "R6"] and "webern-symphony-op21" in identified


def test_convention_and_flats() -> None:
    data = json.loads(run("show", OP21_NAMES, "--convention", "absolute", "--json", "--flats").output)
    assert data["convention"] == "absolute"
    assert data["forms"][0]["label"] == "P0" and data["forms"][0]["pcs"][0] == 0
    assert data["matrix"]["rows_p"][0] == "P9"
    assert data["names"][7] == "Bb" and data["names"][11] == "Eb"


def test_unquoted_numbers_and_forms_distinct() -> None:
    result = run("forms", *"0 11 7 8 3 1 2 10 6 5 4 9".split(), "--json", "--distinct")
    data = json.loads(result.output)
    assert result.exit_code == 0 and len(data["forms"]) == 48
    text = run("forms", "webern-op21", "--distinct").output
    labels = [line for line in text.splitlines() if re.match(r"^(P|I|R|RI)\d+ ", line)]
    assert len(labels) == 24 and not any(" = " in line for line in labels)


def test_matrix_json_absolute() -> None:
    data = json.loads(run("matrix", "0 1 2 3 4 5 6 7 8 9 T E", "--json").output)["matrix"]
    assert data["pcs"][1] == [11, *range(11)]
    assert data["columns_i"][:2] == ["I0", "I1"]
    assert data["rows_r"][0] == "R0" and data["columns_ri"][0] == "RI0"


def test_combinatoriality() -> None:
    data = json.loads(run("combinatoriality", "C C# D D# E F F# G G# A A# B", "--json").output)
    assert data["partners"] == {"P": ["P6"], "I": ["I11"], "R": ["R0"], "RI": ["RI5"]}
    assert data["all_combinatorial"] is True and data["types"] == ["P", "I", "R", "RI"]
    text = run("combinatoriality", "schoenberg-moses-aron").output
    assert "I-combinatorial  I3" in text and "semi-combinatorial" in text


def test_invariants() -> None:
    data = json.loads(run("invariants", "webern-op24", "--size", "3", "--json").output)
    by_label = {f["label"]: f["segments"] for f in data["forms"]}
    assert len(by_label) == 48 and len(by_label["R0"]) == 10 and len(by_label["P0"]) == 10
    row = Row.parse("webern-op24")
    for label, segments in by_label.items():
        for seg in segments:  # each segment of P0 reappears, as a set, at its place in the form
            assert seg["pcs"] == list(row.pcs[seg["start"] : seg["start"] + 3])
            j = seg["start_in_form"]
            assert set(row.form(label)[j : j + 3]) == set(seg["pcs"])
    text = run("invariants", "webern-op24", "--size", "6").output
    assert text.splitlines()[1].startswith("P0") and run(
        "invariants", "webern-op24", "--size", "13").exit_code == 2


def test_identify_names_rows_and_forms() -> None:
    result = run("identify", "F G# G F# A# A D# E C C# D B")
    assert result.exit_code == 0
    assert "I8 = RI2" in result.output and "webern-op21" in result.output
    data = json.loads(run("identify", "F G# G F# A# A D# E C C# D B", "--json").output)
    found = {m["name"]: m["forms"] for m in data["matches"]}
    assert found["webern-op21"] == ["I8", "RI2"]
    assert found["webern-symphony-op21"] == ["P0", "R6"]


def test_identify_without_a_match_exits_1() -> None:
    result = run("identify", "0 2 1 3 4 5 6 7 8 9 10 11", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["matches"] == []


def test_search() -> None:
    result = run("search", "schoenberg", "op", "33")
    assert result.exit_code == 0 and "schoenberg-op33-a" in result.output
    assert run("search", "zzzz").exit_code == 1
    data = json.loads(run("search", "webern", "op21", "--json").output)
    assert {d["name"] for d in data} == {"webern-op21", "webern-symphony-op21"}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("C C# D D# E F F# G G# A A# E", "pitch class 4 appears twice"),
        ("0 1 2 3 4 5 6 7 8 9 10", "11 pitch classes given, 12 needed"),
        ("C D E F G A B C# D# F# G# Z#", "unknown note name 'Z#'"),
        ("webern-op12x", "unknown catalog name 'webern-op12x'"),
    ],
)
@pytest.mark.parametrize("command", ["show", "forms", "matrix", "identify", "combinatoriality"])
def test_bad_input_exits_2_with_a_message(command: str, spec: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["row", command, spec])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stdout == "" and result.exception is None or isinstance(result.exception, SystemExit)


def test_usage_errors_exit_2() -> None:
    assert CliRunner().invoke(cli, ["row", "show"]).exit_code == 2
    assert CliRunner().invoke(cli, ["row", "show", "webern-op21", "--convention", "x"]).exit_code == 2


def test_console_script_runs_the_demo_step() -> None:
    exe = Path(sys.executable).parent / "serialkit"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "serialkit.cli"]
    out = subprocess.run([*command, "row", "show", "webern-op21"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "distinct forms: 24 of 48" in out.stdout
    bad = subprocess.run([*command, "row", "show", "C C D"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "pitch class 0 appears twice" in bad.stderr
    assert "Traceback" not in bad.stderr
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "serialkit row show webern-op21" in makefile
