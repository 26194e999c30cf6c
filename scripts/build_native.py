"""Compile the chain search with mypyc (``make native``): see ``serialkit.core.native``.

For each module of ``native.MODULES`` the source before ``native.MARK`` is copied, with the digest
of its sources (``native.source_digest``), into a scratch copy of the package as
``_<name>_native.py`` and compiled there; the shared objects are then moved next to the module
(``serialkit/core/analysis/_chains_native*.so``, not tracked) and a stamp written beside them
(``_chains_native.stamp.json``: the sources' digest and each file's), last, so that a build cut off
half way is never used. A build already made from the current sources is kept; one that failed for
them is not tried again (``--force`` tries). Exit 0 when every module is built (or up to date), 1
when a build failed (no C compiler, mypyc missing): the analysis then runs as written, slower.
Run: ``.venv/bin/python scripts/build_native.py [--force]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serialkit.core import native  # noqa: E402


def _source(module: str) -> Path:
    return ROOT / (module.replace(".", "/") + ".py")


def up_to_date(module: str) -> bool:
    """Is the build beside ``module`` stamped with its sources' digest, its files intact?"""
    return native.check_build(module, _source(module))[0] is None


def compiler() -> str | None:
    """The C compiler Python's build uses, if there is one."""
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    return shutil.which(os.environ.get("CC", cc[0] if cc else "cc"))


def build(module: str) -> None:
    source = _source(module)
    stamp = native.source_digest(module, source)
    leaf = native.native_name(module).rpartition(".")[2]
    with tempfile.TemporaryDirectory(prefix="serialkit-native-") as d:
        tmp = Path(d)
        shutil.copytree(ROOT / "serialkit", tmp / "serialkit", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        target = tmp / source.relative_to(ROOT).with_name(f"{leaf}.py")
        text = source.read_text(encoding="utf-8")
        target.write_text(native.source_before_mark(text) + f'\nSOURCE_DIGEST = "{stamp}"\n', encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "mypyc", str(target.relative_to(tmp))], cwd=tmp,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"mypyc failed on {module}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        made = sorted(target.parent.glob(f"{leaf}*.so"))
        if not made:
            raise RuntimeError(f"mypyc made no shared object for {module}")
        stamp_file = native.stamp_path(module, source)
        stamp_file.unlink(missing_ok=True)  # no stamp, no use: the old build is out while files change
        for old in source.parent.glob(f"{leaf}*.so"):
            old.unlink()
        for so in made:  # moved in under a temporary name, then renamed: never half a file
            part = source.parent / (so.name + ".part")
            shutil.copyfile(so, part)
            os.replace(part, source.parent / so.name)
        files = {so.name: native.file_digest(source.parent / so.name) for so in made}
        part = stamp_file.with_name(stamp_file.name + ".part")
        part.write_text(json.dumps({"source": stamp, "files": files}, indent=1) + "\n", encoding="utf-8")
        os.replace(part, stamp_file)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="build even when up to date or failed before")
    args = parser.parse_args()
    failed = 0
    for module in native.MODULES:
        source = _source(module)
        failure = source.with_name(native.native_name(module).rpartition(".")[2] + ".failed")
        if not args.force and up_to_date(module):
            print(f"{module}: compiled build up to date")
            continue
        if not args.force and failure.exists() and failure.read_text().strip() == native.source_digest(module, source):
            print(f"warning: building {module} failed before for these sources (see {failure.name}; "
                  "--force tries again); it runs as written (slower)", file=sys.stderr)
            failed = 1
            continue
        try:
            if compiler() is None:
                raise RuntimeError("no C compiler (install gcc, or set CC)")
            build(module)
        except (RuntimeError, OSError) as exc:
            print(f"warning: {exc}\n{module} runs as written (slower)", file=sys.stderr)
            failure.write_text(native.source_digest(module, source) + "\n", encoding="utf-8")
            failed = 1
            continue
        failure.unlink(missing_ok=True)
        print(f"{module}: compiled ({'up to date' if up_to_date(module) else 'NOT usable'})")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
