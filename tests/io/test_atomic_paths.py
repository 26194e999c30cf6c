"""A score and the files that describe it are written together or not at all (outside tester:
a repair whose certificate could not be written left the repaired score behind)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core.errors import ScoreWriteError
from serialkit.io.files.atomic import atomic_paths
from tests.conftest import FIXTURES
from tests.planted import EXERCISE_ROW


@pytest.mark.parametrize("blocked", [0, 1, 2])
def test_one_output_that_cannot_be_written_leaves_every_one_as_it_was(tmp_path: Path, blocked: int) -> None:
    targets = [tmp_path / "a.musicxml", tmp_path / "a.certificate.json", tmp_path / "a.review.html"]
    targets[0].write_text("old score")  # an earlier output is kept as it was, not half replaced
    targets[blocked].unlink(missing_ok=True)
    targets[blocked].mkdir()
    with pytest.raises(ScoreWriteError, match=f"cannot write {targets[blocked]}"):
        with atomic_paths(*targets) as staged:
            for path in staged:
                path.write_text("new")
    for k, target in enumerate(targets):
        if k == blocked:
            assert target.is_dir()
        elif k == 0:
            assert target.read_text() == "old score"
        else:
            assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(t.name for t in targets if t.exists())


def test_every_output_is_replaced_when_all_can_be(tmp_path: Path) -> None:
    targets = [tmp_path / "a.musicxml", tmp_path / "a.certificate.json"]
    targets[0].write_text("old")
    with atomic_paths(*targets) as staged:
        for k, path in enumerate(staged):
            path.write_text(f"new {k}")
    assert [t.read_text() for t in targets] == ["new 0", "new 1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(t.name for t in targets)


@pytest.mark.parametrize("companion", ["out.certificate.json", "out.review.html"])
def test_repair_refuses_before_any_work_when_a_companion_cannot_be_written(tmp_path: Path, companion: str) -> None:
    (tmp_path / companion).mkdir()
    result = CliRunner().invoke(cli, ["repair", str(FIXTURES / "classroom" / "ben.musicxml"), "--row", EXERCISE_ROW,
                                      "-o", str(tmp_path / "out.musicxml")])
    assert result.exit_code == 2
    assert result.stderr == f"error: cannot write {tmp_path / companion}: is a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [companion]


def test_a_dry_run_says_the_output_it_was_given_is_not_written(tmp_path: Path) -> None:
    out = tmp_path / "fixed.musicxml"
    result = CliRunner().invoke(cli, ["repair", str(FIXTURES / "classroom" / "ben.musicxml"), "--row", EXERCISE_ROW,
                                      "--dry-run", "-o", str(out)])
    assert result.exit_code in (0, 1) and "dry run" in result.stdout
    assert f"note: --dry-run writes nothing: {out} is not written" in result.stderr
    assert not out.exists()
