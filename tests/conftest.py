"""Shared fixtures: paths to the real corpus (tests skip when ../shared is absent) and to fixtures."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("SERIALKIT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"


# CI (``CI`` set, as .ci/run does) draws the same examples on every run, so a red build is
# reproducible and a green one stays green; a developer's run explores new examples each time and
# replays its failures from .hypothesis/.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real twelve-tone corpus directory; skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not found at {CORPUS} (../shared/corpus is absent)")
    return CORPUS


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """The project's own fixtures directory."""
    return FIXTURES


@pytest.fixture(scope="session")
def cli_once() -> Callable[..., Any]:
    """``serialkit ARGS`` run in-process (click's ``CliRunner``, exceptions raised) once per worker
    for each ARGS, for runs that write no file and that several tests make alike: ``check
    <Op. 21> --identify --json`` is asked in tests/check/test_profiles.py,
    tests/io/test_annotate_cli.py and tests/test_readme_figures.py, its text form (``check <Op. 21>
    --identify``) in tests/check/test_profiles.py and tests/check/test_voice_names.py. Those tests
    carry one ``xdist_group`` so that the run is made once in all. The click ``Result`` is shared:
    read it."""
    from click.testing import CliRunner

    from serialkit.cli import cli

    done: dict[tuple[str, ...], Any] = {}

    def once(*args: str) -> Any:
        if args not in done:
            done[args] = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        return done[args]

    return once


@pytest.fixture(scope="session")
def render_once(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Any]:
    """``render(source, <folder>/<stem><suffix>, **options)`` computed once per worker for each
    source, suffix and options, for tests that only read what it wrote: ``render_once(op21,
    row="webern-op21")`` is the same call in tests/check/test_profiles.py,
    tests/render/test_label_layout.py and tests/render/test_engraving.py. Those tests carry one
    ``xdist_group`` so that the render is done once in all. Never write into its folder."""
    from serialkit.render import render

    done: dict[tuple[Path, str, tuple[tuple[str, Any], ...]], Any] = {}

    def once(source: Path, suffix: str = ".svg", **options: Any) -> Any:
        key = (Path(source), suffix, tuple(sorted(options.items())))
        if key not in done:
            out = tmp_path_factory.mktemp("render-once") / f"{Path(source).stem}{suffix}"
            done[key] = render(source, out, **options)
        return done[key]

    return once


def require_program(name: str) -> str:
    """The path of a program, or skip the test naming what is missing (CI installs them all)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; `make test` should have installed it")
        pytest.skip(f"{name} is not installed")
    return path


def pytest_configure(config: pytest.Config) -> None:
    # xdist registers it too; a run without xdist (``-p no:xdist``) then does not warn of it
    config.addinivalue_line("markers", "xdist_group(name): run on the worker of the other tests of this group")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the ``xdist_group`` marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Schedule for ``make test`` (``-n 2 --dist loadgroup``), where a worker takes the next test
    as it finishes one.

    A test using a module-scoped fixture of its module is grouped with the module's other such
    tests (``xdist_group`` named after the module), so the fixture is computed once, on one worker,
    instead of once on each worker that happens to get one of them.

    Slow tests first: a long test collected late (tests/repair comes near the end) keeps one worker
    busy while the other has nothing left; started first, the long tests overlap and the short
    ones fill in behind them. The sort is stable, the order otherwise the collection's, and a group
    with a slow test moves whole (without xdist too, a module-scoped fixture is still made once)."""
    for item in items:
        fixtureinfo = getattr(item, "_fixtureinfo", None)
        if fixtureinfo is None:
            continue
        for defs in fixtureinfo.name2fixturedefs.values():
            fixturedef = defs[-1]
            if fixturedef.scope == "module" and fixturedef.baseid == item.nodeid.split("::")[0]:
                item.add_marker(pytest.mark.xdist_group(item.module.__name__))  # type: ignore[attr-defined]
                break

    def group(item: pytest.Item) -> str:
        return "_".join(sorted(str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                               for m in item.iter_markers("xdist_group"))) or item.nodeid

    slow = {group(item) for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: group(item) not in slow)  # a group with a slow test goes first whole
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        _name_the_groups(items, group)


def _name_the_groups(items: list[pytest.Item], group: Callable[[pytest.Item], str]) -> None:
    """Give a grouped test's node id its ``@group`` suffix, which is how ``--dist loadgroup`` sends
    a group to one worker. pytest-xdist 3.8 writes the suffix into ``item._nodeid``, which pytest
    9.2 no longer reads (node ids are structured, ``item._id``): without this every
    ``xdist_group`` mark is silently ignored and the tests are spread as by ``--dist load``
    (pytest-dev/pytest-xdist#1386, open). Where ``_nodeid`` still exists xdist does it itself."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # a pytest before structured node ids: xdist's own suffix works
        return
    for item in items:
        if hasattr(item, "_nodeid") or not hasattr(item, "_id") or "@" in item.nodeid.rpartition("]")[2]:
            continue
        name = group(item)
        if name != item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{name}")
