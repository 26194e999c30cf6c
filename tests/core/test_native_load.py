"""``serialkit.core.native.load``: a compiled build replaces a module's names only when its stamp
says it was made from the module's sources as they are now and its files are intact; otherwise the
module runs as written (with a warning when a build is there but not used)."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from serialkit.core import native

SOURCE = f'''VALUE = "as written"


def f() -> str:
    return "as written"


{native.MARK}
'''
COMPILED = 'VALUE = "compiled"\n\n\ndef f():\n    return "compiled"\n'


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    name = f"nativetest{abs(hash(tmp_path)) % 10**8}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "m.py").write_text(SOURCE, encoding="utf-8")
    (root / "dep.py").write_text("X = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SERIALKIT_PURE", raising=False)
    monkeypatch.setitem(native.DEPENDS, f"{name}.m", ("dep.py",))
    yield root
    for key in [k for k in sys.modules if k.startswith(name)]:
        del sys.modules[key]


def _module(root: Path) -> str:
    return f"{root.name}.m"


def _load(root: Path) -> tuple[bool, dict[str, object], list[str]]:
    ns: dict[str, object] = {"__file__": str(root / "m.py")}
    exec(native.source_before_mark(SOURCE), ns)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = native.load(_module(root), ns)
    return used, ns, [str(w.message) for w in caught]


def _build(root: Path, body: str = COMPILED, source: str | None = None) -> None:
    """A stand-in build (a Python module where mypyc puts a shared object) and its stamp."""
    stamp = source or native.source_digest(_module(root), root / "m.py")
    built = root / "_m_native.py"
    built.write_text(body + f'\nSOURCE_DIGEST = "{stamp}"\n', encoding="utf-8")
    (root / "_m_native.stamp.json").write_text(
        json.dumps({"source": stamp, "files": {built.name: native.file_digest(built)}}), encoding="utf-8")


def test_a_build_of_these_sources_replaces_the_modules_names(package: Path) -> None:
    _build(package)
    used, ns, warned = _load(package)
    assert used and ns["VALUE"] == "compiled" and ns["f"]() == "compiled"  # type: ignore[operator]
    assert native._STATUS[_module(package)] == "compiled" and warned == []


def test_no_build_leaves_the_module_as_written_without_a_warning(package: Path) -> None:
    used, ns, warned = _load(package)
    assert not used and ns["VALUE"] == "as written" and warned == []
    assert "no compiled build" in native._STATUS[_module(package)]


def test_a_build_of_an_older_source_or_dependency_is_not_used(package: Path) -> None:
    _build(package)
    (package / "dep.py").write_text("X = 2\n", encoding="utf-8")  # a file the compiled code relies on
    used, ns, warned = _load(package)
    assert not used and ns["VALUE"] == "as written"
    assert "older source" in native._STATUS[_module(package)] and len(warned) == 1


def test_a_damaged_build_is_never_loaded(package: Path) -> None:
    _build(package, body=COMPILED)
    built = package / "_m_native.py"
    built.write_text("raise SystemExit('a damaged build was loaded')\n", encoding="utf-8")  # not its stamp's bytes
    used, ns, warned = _load(package)
    assert not used and ns["VALUE"] == "as written"
    assert "damaged" in native._STATUS[_module(package)] and len(warned) == 1


def test_a_build_that_does_not_load_leaves_the_module_as_written(package: Path) -> None:
    _build(package, body="raise ImportError('built for another interpreter')\n")
    used, ns, warned = _load(package)
    assert not used and ns["VALUE"] == "as written"
    assert "does not load" in native._STATUS[_module(package)] and len(warned) == 1


def test_serialkit_pure_keeps_the_module_as_written(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _build(package)
    monkeypatch.setenv("SERIALKIT_PURE", "1")
    used, ns, warned = _load(package)
    assert not used and ns["VALUE"] == "as written" and warned == []


def test_the_digest_is_of_the_source_before_the_mark_and_the_dependencies() -> None:
    assert native.digest(SOURCE) == native.digest(SOURCE + "\nNATIVE = load()\n")
    assert native.digest(SOURCE) != native.digest("VALUE = 1\n" + SOURCE)
    assert native.digest(SOURCE, ("X = 1\n",)) != native.digest(SOURCE, ("X = 2\n",))
    with pytest.raises(ValueError):
        native.digest("no mark here\n")
