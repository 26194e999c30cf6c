"""Compile the chain search with mypyc (``make native``): see ``serialkit.core.native``.

For each module of ``native.MODULES`` the source before ``native.MARK`` is copied, with its digest,
into a scratch copy of the package as ``_<name>_native.py`` and compiled there; the shared objects
are then moved next to the module (``serialkit/core/analysis/_chains_native*.so``, not tracked).
A build already made from the current source is kept. Exit 0 when every module is built (or up to
date), 1 when a build failed (no C compiler, mypyc missing): the analysis then runs as written,
slower. Run: ``.venv/bin/python scripts/build_native.py [--force]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.core import native  # noqa: E402


def built_digest(module: str) -> str | None:
    """The digest the build next to ``module`` was made from (a fresh interpreter reads it)."""
    code = (f"import importlib; m = importlib.import_module({native.native_name(module)!r}); "
            "print(m.SOURCE_DIGEST)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return out.stdout.strip() if out.returncode == 0 else None


def build(module: str) -> None:
    source = ROOT / (module.replace(".", "/") + ".py")
    text = source.read_text(encoding="utf-8")
    stamp = native.digest(text)
    leaf = native.native_name(module).rpartition(".")[2]
    with tempfile.TemporaryDirectory(prefix="serialkit-native-") as d:
        tmp = Path(d)
        shutil.copytree(ROOT / "serialkit", tmp / "serialkit", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        target = tmp / source.relative_to(ROOT).with_name(f"{leaf}.py")
        target.write_text(native.source_before_mark(text) + f'\nSOURCE_DIGEST = "{stamp}"\n', encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "mypyc", str(target.relative_to(tmp))], cwd=tmp,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mypyc failed on {module}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        made = sorted(target.parent.glob(f"{leaf}*.so"))
        if not made:
            raise RuntimeError(f"mypyc made no shared object for {module}")
        for old in source.parent.glob(f"{leaf}*.so"):
            old.unlink()
        for so in made:  # moved in under a temporary name, then renamed: never half a file
            part = source.parent / (so.name + ".part")
            shutil.copyfile(so, part)
            os.replace(part, source.parent / so.name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="build even when the build is up to date")
    args = parser.parse_args()
    failed = 0
    for module in native.MODULES:
        source = ROOT / (module.replace(".", "/") + ".py")
        if not args.force and built_digest(module) == native.digest(source.read_text(encoding="utf-8")):
            print(f"{module}: compiled build up to date")
            continue
        try:
            build(module)
        except (RuntimeError, OSError) as exc:
            print(f"warning: {exc}\n{module} runs as written (slower)", file=sys.stderr)
            failed = 1
            continue
        print(f"{module}: compiled ({'up to date' if built_digest(module) else 'NOT loadable'})")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
