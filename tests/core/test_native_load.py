"""``serialkit.core.native.load``: a compiled build replaces a module's names only when it was made
from that very source, and a build that does not load leaves the module as written."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from serialkit.core import native

SOURCE = f'''VALUE = "as written"


def f() -> str:
    return "as written"


{native.MARK}
'''


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    name = f"nativetest{abs(hash(tmp_path)) % 10**8}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "m.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SERIALKIT_PURE", raising=False)
    yield root
    for key in [k for k in sys.modules if k.startswith(name)]:
        del sys.modules[key]


def _namespace(root: Path) -> dict[str, object]:
    ns: dict[str, object] = {"__file__": str(root / "m.py")}
    exec(native.source_before_mark(SOURCE), ns)
    return ns


def _build(root: Path, digest: str, body: str = 'VALUE = "compiled"\n\ndef f():\n    return "compiled"\n') -> None:
    (root / "_m_native.py").write_text(body + f'\nSOURCE_DIGEST = "{digest}"\n', encoding="utf-8")


def test_a_build_of_this_source_replaces_the_modules_names(package: Path) -> None:
    _build(package, native.digest(SOURCE))
    ns = _namespace(package)
    assert native.load(f"{package.name}.m", ns) is True
    assert ns["VALUE"] == "compiled" and ns["f"]() == "compiled"  # type: ignore[operator]
    assert native._STATUS[f"{package.name}.m"] == "compiled"


def test_a_build_of_another_source_is_not_used(package: Path) -> None:
    _build(package, native.digest(SOURCE.replace("as written", "edited since")))
    ns = _namespace(package)
    assert native.load(f"{package.name}.m", ns) is False
    assert ns["VALUE"] == "as written"
    assert "older source" in native._STATUS[f"{package.name}.m"]


def test_no_build_and_a_build_that_does_not_load_leave_the_module_as_written(package: Path) -> None:
    ns = _namespace(package)
    assert native.load(f"{package.name}.m", ns) is False
    assert "no compiled build" in native._STATUS[f"{package.name}.m"]
    _build(package, native.digest(SOURCE), body="raise ImportError('built for another interpreter')\n")
    assert native.load(f"{package.name}.m", ns) is False
    assert ns["VALUE"] == "as written"
    assert "does not load" in native._STATUS[f"{package.name}.m"]


def test_serialkit_pure_keeps_the_module_as_written(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _build(package, native.digest(SOURCE))
    monkeypatch.setenv("SERIALKIT_PURE", "1")
    ns = _namespace(package)
    assert native.load(f"{package.name}.m", ns) is False
    assert ns["VALUE"] == "as written"


def test_the_digest_is_of_the_source_before_the_mark() -> None:
    assert native.digest(SOURCE) == native.digest(SOURCE + "\nNATIVE = load()\n")
    assert native.digest(SOURCE) != native.digest("VALUE = 1\n" + SOURCE)
    with pytest.raises(ValueError):
        native.digest("no mark here\n")
