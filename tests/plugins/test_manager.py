"""Entry-point loading, SERIALKIT_LOAD_PLUGINS, and ``serialkit plugins``, run as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
SERIALKIT = str(BIN / "serialkit")

GOOD = '''
from serialkit.plugins import hookimpl


@hookimpl
def register_proposers(register):
    register("fake-proposer", "fakeplug_mod.impl:Fake", description="a fake")


@hookimpl
def register_repair_rungs(register):
    register("fake_rung", "fakeplug_mod.impl:rung", rank=15)
'''

IMPL = '''
class Fake:
    def __init__(self, **options):
        self.name, self.model = "fake-proposer", None


def rung(*args):
    return None
'''


def _dist(site: Path, dist: str, ep_name: str, module: str, files: dict[str, str]) -> None:
    info = site / f"{dist.replace('-', '_')}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[serialkit]\n{ep_name} = {module}\n")
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A directory on PYTHONPATH holding two installed (dist-info) plugins."""
    site = tmp_path / "site"
    _dist(site, "fakeplug", "fake", "fakeplug_mod",
          {"fakeplug_mod/__init__.py": GOOD, "fakeplug_mod/impl.py": IMPL})
    return site


def _run(args: list[str], site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SERIALKIT_LOAD_PLUGINS"}
    environ.update(PYTHONPATH=str(site), **env)
    return subprocess.run([SERIALKIT, *args], env=environ, capture_output=True, text=True,
                          timeout=120)


def _listing(site: Path, **env: str) -> dict[str, object]:
    proc = _run(["plugins", "--json"], site, **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _names(report: dict[str, object]) -> list[str]:
    return [p["name"] for p in report["plugins"]]  # type: ignore[index,union-attr]


def test_entry_point_plugin_is_listed_with_dist_and_registrations(site: Path) -> None:
    report = _listing(site)
    fake = next(p for p in report["plugins"] if p["name"] == "fake")  # type: ignore[union-attr]
    assert fake["dist"] == "fakeplug" and fake["version"] == "0.3"
    assert fake["module"] == "fakeplug_mod" and fake["builtin"] is False
    assert fake["hooks"] == ["register_proposers", "register_repair_rungs"]
    assert [e["name"] for e in fake["registered"]["proposers"]] == ["fake-proposer"]
    assert fake["registered"]["repair_rungs"][0]["meta"]["rank"] == 15
    assert fake["registered"]["proposers"][0]["object"] == "fakeplug_mod.impl:Fake"


def test_text_listing(site: Path) -> None:
    proc = _run(["plugins"], site)
    assert proc.returncode == 0, proc.stderr
    assert "fake  fakeplug_mod (fakeplug 0.3)" in proc.stdout
    assert "fake-proposer — a fake" in proc.stdout
    assert "fake_rung (rank 15)" in proc.stdout


@pytest.mark.parametrize("value,loaded", [("", False), ("fake", True), ("fakeplug", True),
                                          ("FakePlug, other", True), ("other", False)])
def test_load_plugins_env_limits_outside_plugins(site: Path, value: str, loaded: bool) -> None:
    report = _listing(site, SERIALKIT_LOAD_PLUGINS=value)
    assert ("fake" in _names(report)) is loaded
    assert report["load_plugins"] == value
    skipped = {s["name"]: s["reason"] for s in report["skipped"]}  # type: ignore[union-attr]
    if not loaded:
        assert "not listed in SERIALKIT_LOAD_PLUGINS" in skipped["fake"]
    if "other" in value:  # a name that matches nothing is reported, not ignored
        assert skipped["other"] == "named in SERIALKIT_LOAD_PLUGINS but not installed"
    # built-ins always load
    assert any(p["builtin"] for p in report["plugins"])  # type: ignore[union-attr]


def test_broken_plugin_names_itself_and_the_way_out(site: Path) -> None:
    _dist(site, "brokenplug", "broken", "brokenplug_mod",
          {"brokenplug_mod.py": "raise ImportError('needs libfoo')\n"})
    proc = _run(["plugins"], site)
    assert proc.returncode == 2
    assert "plugin 'broken' (brokenplug_mod, from brokenplug) failed to load" in proc.stderr
    assert "needs libfoo" in proc.stderr and "SERIALKIT_LOAD_PLUGINS" in proc.stderr
    assert _run(["plugins"], site, SERIALKIT_LOAD_PLUGINS="fake").returncode == 0


def test_broken_hook_is_reported_but_the_listing_still_shows(site: Path) -> None:
    _dist(site, "halfplug", "half", "halfplug_mod", {"halfplug_mod.py": '''
        from serialkit.plugins import hookimpl

        @hookimpl
        def register_writers(register):
            register("half", print)  # no extensions
        '''})
    proc = _run(["plugins"], site)
    assert proc.returncode == 2
    assert "fake-proposer" in proc.stdout
    assert "writer 'half' (plugin half) needs extensions" in proc.stderr


def test_help_does_not_import_plugin_implementations(site: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from serialkit.cli import cli\n"
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0\n"
        "heavy = ['fakeplug_mod.impl', 'music21', 'verovio', 'openai', 'matplotlib', 'numpy',"
        " 'serialkit.harness.proposers.stochastic', 'serialkit_example_proposer.proposer']\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "assert 'fakeplug_mod' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("SERIALKIT_LOAD_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_lazy_plugin_objects_load_when_used(site: Path) -> None:
    code = (
        "import sys\n"
        "from serialkit.plugins import ordered, registry\n"
        "entry = registry('proposers').get('fake-proposer')\n"
        "assert 'fakeplug_mod.impl' not in sys.modules\n"
        "assert entry.obj().name == 'fake-proposer'\n"
        "assert 'fakeplug_mod.impl' in sys.modules\n"
        "print([e.name for e in ordered()])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("SERIALKIT_LOAD_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    ladder = json.loads(proc.stdout.replace("'", '"'))
    assert "fake_rung" in ladder
    if "trim_tail" in ladder:  # the built-in ladder: rank 15 sits between 10 and 20
        assert ladder.index("trim_tail") < ladder.index("fake_rung") < ladder.index("yield")
