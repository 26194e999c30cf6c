"""The example proposer plugin: pip-installable, listed by ``serialkit plugins``, used by generate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import ROOT

PLUGIN_DIR = ROOT / "plugins" / "serialkit-example-proposer"
BIN = Path(sys.executable).parent
DIST = "serialkit-example-proposer"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SERIALKIT_LOAD_PLUGINS"}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def installed() -> metadata.Distribution:
    """The example plugin as installed in the project's environment (``make venv`` installs it)."""
    try:
        return metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        message = f"{DIST} is not installed; run `make venv` or `pip install -e {PLUGIN_DIR}`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_installed_with_its_entry_point(installed: metadata.Distribution) -> None:
    eps = [ep for ep in installed.entry_points if ep.group == "serialkit"]
    assert [(ep.name, ep.value) for ep in eps] == [("example", "serialkit_example_proposer")]


def test_listed_by_serialkit_plugins(installed: metadata.Distribution) -> None:
    proc = subprocess.run([str(BIN / "serialkit"), "plugins", "--json"], env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    plugin = next(p for p in json.loads(proc.stdout)["plugins"] if p["name"] == "example")
    assert plugin["dist"] == DIST and plugin["version"] == installed.version
    assert [e["name"] for e in plugin["registered"]["proposers"]] == ["example"]
    assert plugin["registered"]["proposers"][0]["object"] == (
        "serialkit_example_proposer.proposer:ExampleProposer"
    )


def test_generate_uses_the_example_proposer(installed: metadata.Distribution, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from serialkit.cli import cli

    assert "generate" in cli.commands
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli, ["generate", "duo-berg", "--proposer", "example", "-o", str(out)]
    )
    assert result.exit_code in (0, 1), result.output
    certificate = json.loads((out / "certificate.json").read_text())
    assert certificate["run"]["proposer"] == "example"
    assert certificate["run"]["model"] == "example-v1"
    transcript = (out / "transcript.jsonl").read_text().splitlines()
    assert json.loads(transcript[0])["proposer"] == "example"
    assert (out / "score.musicxml").exists() == (result.exit_code == 0)


def test_harness_run_with_the_example_proposer(installed: metadata.Distribution, tmp_path: Path) -> None:
    import serialkit.harness.runner as runner
    result = runner.run("duo-berg", proposer="example", seed=0, out_dir=tmp_path)
    assert result.certificate["run"]["proposer"] == "example"
    assert result.usage.calls >= 2  # one call per section at least
    assert json.loads((tmp_path / "certificate.json").read_text())["run"]["proposer"] == "example"


@pytest.mark.slow
def test_pip_installs_the_plugin_into_a_fresh_target(tmp_path: Path) -> None:
    target = tmp_path / "target"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(PLUGIN_DIR)],
        capture_output=True, text=True, timeout=300,
    )
    assert pip.returncode == 0, pip.stderr
    code = (
        "import json, serialkit_example_proposer as m\n"
        "from serialkit.plugins import plugin_infos, registry\n"
        "info = next(p for p in plugin_infos() if p.name == 'example')\n"
        "print(json.dumps([m.__file__, info.dist, registry('proposers').get('example').plugin]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(PYTHONPATH=str(target)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    module_file, dist, plugin = json.loads(proc.stdout)
    assert Path(module_file).is_relative_to(target)
    assert (dist, plugin) == (DIST, "example")


@pytest.mark.slow
def test_the_plugin_packages_own_tests_pass(installed: metadata.Distribution) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         str(PLUGIN_DIR / "tests")],
        cwd=PLUGIN_DIR, env=_env(), capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout
