"""A compiled build of the chain search, used when one was made for the source as it is.

The chain search (``serialkit.core.analysis.chains``) is where the analysis spends most of its
time. ``make native`` (``scripts/build_native.py``) compiles a copy of that module with mypyc into
``serialkit/core/analysis/_chains_native*.so`` and writes beside it a stamp: a digest of the
sources the build was made from (the module's text before ``MARK``, and the modules whose types
the compiled code relies on, ``DEPENDS``) and a digest of each file it made. When the module is
imported, ``load`` puts the compiled functions and classes in place of its own only when the stamp
matches the sources as they are now and the files as they are on disk — an edited source is never
shadowed by a build of older code, and a damaged file is never loaded (a truncated shared object
can crash the interpreter as it loads). Without a build (a fresh checkout, an installed package, no
C compiler, ``SERIALKIT_PURE=1``) the module runs as written: the same code, the same results
(``tests/core/test_native.py``), slower. A build that is there but not used says why, once, as a
``RuntimeWarning``. Standard library only.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import warnings
from pathlib import Path
from typing import Any

MARK = "# ---- a compiled build (serialkit.core.native) stops here ----"
"""The line of a compiled module after which its source is not compiled (the ``load`` call)."""

MODULES = ("serialkit.core.analysis.chains",)
"""The modules with a compiled build."""

DEPENDS: dict[str, tuple[str, ...]] = {"serialkit.core.analysis.chains": ("index.py",)}
"""Per module, the files beside it whose types its compiled code relies on (the compiled code
checks them: an ``EventIndex`` column that became a tuple fails there, not in the source)."""

_STATUS: dict[str, str] = {}


def source_before_mark(text: str) -> str:
    """The part of a module's source a compiled build is made from."""
    head, found, _tail = text.partition(MARK)
    if not found:
        raise ValueError(f"no line {MARK!r} in the module")
    return head


def digest(text: str, depends: tuple[str, ...] = ()) -> str:
    """The stamp of a build made from a module's source ``text`` and the texts of the files it
    depends on."""
    h = hashlib.sha256(source_before_mark(text).encode())
    for other in depends:
        h.update(b"\0" + other.encode())
    return h.hexdigest()


def source_digest(module: str, path: str | Path) -> str:
    """The stamp a build of ``module`` (its file at ``path``) must carry to be used now."""
    where = Path(path)
    depends = tuple((where.parent / name).read_text(encoding="utf-8") for name in DEPENDS.get(module, ()))
    return digest(where.read_text(encoding="utf-8"), depends)


def native_name(module: str) -> str:
    """The compiled build's module name: ``a.b.chains`` → ``a.b._chains_native``."""
    package, _, leaf = module.rpartition(".")
    return f"{package}._{leaf}_native"


def stamp_path(module: str, path: str | Path) -> Path:
    """Where the build of ``module`` (its file at ``path``) keeps its stamp."""
    return Path(path).with_name(native_name(module).rpartition(".")[2] + ".stamp.json")


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _not_used(module: str, why: str, warn: bool) -> bool:
    _STATUS[module] = f"pure ({why})"
    if warn:
        warnings.warn(f"{module} runs as written, slower: {why}", RuntimeWarning, stacklevel=3)
    return False


def check_build(module: str, path: str | Path) -> tuple[str | None, str]:
    """Why the build beside ``module`` (its file at ``path``) cannot be used now (None: it is
    stamped with these very sources and its files are intact), and the sources' digest."""
    source = source_digest(module, path)
    stamp = stamp_path(module, path)
    if not stamp.exists():
        return "no compiled build: make native", source
    try:
        made = json.loads(stamp.read_text(encoding="utf-8"))
        files = {Path(path).parent / name: want for name, want in made["files"].items()}
        sound = bool(files) and all(f.exists() and file_digest(f) == want for f, want in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        sound = False
    if not sound:
        return "the compiled build's files are damaged or missing: make native", source
    if made.get("source") != source:
        return "the compiled build is of an older source: make native", source
    return None, source


def load(module: str, namespace: dict[str, Any]) -> bool:
    """Put the compiled build's names in ``namespace`` (the module's globals) when a sound build
    of these very sources is there and ``SERIALKIT_PURE`` is not set; say whether it was."""
    if os.environ.get("SERIALKIT_PURE"):
        return _not_used(module, "SERIALKIT_PURE is set", False)
    if importlib.util.find_spec(native_name(module)) is None:
        return _not_used(module, "no compiled build: make native", False)
    why, source = check_build(module, namespace["__file__"])
    if why is not None:
        return _not_used(module, why, not why.startswith("no compiled build"))
    try:
        fast = importlib.import_module(native_name(module))
    except Exception as exc:  # a build that does not load here (another interpreter's runtime)
        return _not_used(module, f"the compiled build does not load: {exc}", True)
    if getattr(fast, "SOURCE_DIGEST", None) != source:
        return _not_used(module, "the compiled build is of an older source: make native", True)
    for name, value in vars(fast).items():
        if name in namespace and not name.startswith("__") and name != "SOURCE_DIGEST":
            namespace[name] = value
    _STATUS[module] = "compiled"
    return True


def status() -> dict[str, str]:
    """Each module with a compiled build, and whether it runs compiled (imports them)."""
    for module in MODULES:
        importlib.import_module(module)
    return {m: _STATUS.get(m, "pure") for m in MODULES}
