"""A compiled build of the chain search, used when one was made for the source as it is.

The chain search (``serialkit.core.analysis.chains``) is where the analysis spends most of its
time. ``make native`` (``scripts/build_native.py``) compiles a copy of that module with mypyc into
``serialkit/core/analysis/_chains_native*.so``, stamped with a digest of the source it was made
from. When the module is imported, ``load`` puts the compiled functions and classes in place of its
own — only if the stamp matches the module's source text, so an edited source is never shadowed by
a build of older code. Without a build (no C compiler, a fresh checkout, ``SERIALKIT_PURE=1``) the
module runs as written: the same code, the same results (``tests/core/test_native.py``), slower.
Standard library only.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

MARK = "# ---- a compiled build (serialkit.core.native) stops here ----"
"""The line of a compiled module after which its source is not compiled (the ``load`` call)."""

MODULES = ("serialkit.core.analysis.chains",)
"""The modules with a compiled build."""

_STATUS: dict[str, str] = {}


def source_before_mark(text: str) -> str:
    """The part of a module's source a compiled build is made from."""
    head, found, _tail = text.partition(MARK)
    if not found:
        raise ValueError(f"no line {MARK!r} in the module")
    return head


def digest(text: str) -> str:
    """The stamp of a build made from a module's source ``text``."""
    return hashlib.sha256(source_before_mark(text).encode()).hexdigest()


def native_name(module: str) -> str:
    """The compiled build's module name: ``a.b.chains`` → ``a.b._chains_native``."""
    package, _, leaf = module.rpartition(".")
    return f"{package}._{leaf}_native"


def load(module: str, namespace: dict[str, Any]) -> bool:
    """Put the compiled build's names in ``namespace`` (the module's globals) when a build of
    this very source is there and ``SERIALKIT_PURE`` is not set; say whether it was."""
    if os.environ.get("SERIALKIT_PURE"):
        _STATUS[module] = "pure (SERIALKIT_PURE is set)"
        return False
    if importlib.util.find_spec(native_name(module)) is None:
        _STATUS[module] = "pure (no compiled build: make native)"
        return False
    try:
        fast = importlib.import_module(native_name(module))
    except Exception as exc:  # a build that does not load here (another interpreter's, a damaged file)
        _STATUS[module] = f"pure (the compiled build does not load: {exc})"
        return False
    if getattr(fast, "SOURCE_DIGEST", None) != digest(Path(namespace["__file__"]).read_text(encoding="utf-8")):
        _STATUS[module] = "pure (the compiled build is of an older source: make native)"
        return False
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
