"""Output places: writability checked before work starts, run directories never silently replaced.

Every command that writes calls these first, so an unwritable output is one line
(``cannot write PATH: reason``) before any work is done and nothing partial is left behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from serialkit.core.errors import ScoreWriteError

STDOUT = "-"


def cannot_write(path: str | os.PathLike[str], exc: BaseException | str) -> ScoreWriteError:
    """The one error for an output that cannot be written: ``cannot write PATH: reason``."""
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
    else:
        reason = str(exc)
    return ScoreWriteError(f"cannot write {os.fspath(path)}: {reason}")


def _probe_dir(directory: Path, target: Path) -> None:
    """Create ``directory`` if needed (its parent must exist) and prove a file can be created in
    it (root ignores modes)."""
    try:
        directory.mkdir(exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".serialkit-probe.", dir=directory)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        blocker = next((p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:  # mkdir says "File exists"; the trouble is a file standing as a folder
            raise cannot_write(target, f"{blocker} is a file, not a directory") from None
        raise cannot_write(target, exc) from None


def _created_dirs(directory: Path) -> list[Path]:
    """The missing ancestors of ``directory`` (outermost last), so a failed run can remove them."""
    missing = []
    for d in (directory, *directory.parents):
        if d.exists():
            break
        missing.append(d)
    return missing


def _refuse_missing(directory: Path, target: Path) -> None:
    """The one rule for every output: the directory it goes in must exist (``-o x/y.svg`` with no
    folder ``x`` is an error naming ``x``, never a folder made silently by a typo); a folder
    ``-o DIR`` itself is made, one level, like ``mkdir``."""
    if directory.is_dir():
        return
    blocker = next((p for p in (directory, *directory.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise cannot_write(target, f"{blocker} is a file, not a directory")
    raise cannot_write(target, f"no directory {directory}")


def ensure_writable_file(path: str | os.PathLike[str]) -> Path:
    """Check that ``path`` can be written as a file in an existing directory (``-`` is standard
    output, always fine)."""
    target = Path(path)
    if os.fspath(path) == STDOUT:
        return target
    if target.is_dir():
        raise cannot_write(target, "is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    _refuse_missing(parent, target)
    _probe_dir(parent, target)
    return target


def refuse_sources(sources: Iterable[str | os.PathLike[str] | None], *outputs: str | os.PathLike[str] | None) -> None:
    """The one rule that no output is written over an input: an output (``-o``, ``--report``)
    naming a file the command reads is refused before any work (``PATH: refusing to overwrite
    the source score NAME; give another path``). ``-`` and None are skipped."""
    read = {}
    for src in sources:
        if src is not None and os.fspath(src) != STDOUT:
            with contextlib.suppress(OSError):
                read[Path(src).resolve()] = os.fspath(src)
    for out in outputs:
        if out is None or os.fspath(out) == STDOUT:
            continue
        with contextlib.suppress(OSError):
            name = read.get(Path(out).resolve())
            if name is not None:
                raise ScoreWriteError(f"{os.fspath(out)}: refusing to overwrite the source score {name}; "
                                      "give another path")


def ensure_output_dir(path: str | os.PathLike[str]) -> Path:
    """Create (if needed: one level, its parent must exist) a directory that receives several
    outputs, and check it is writable."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise cannot_write(target, "is not a directory")
    parent = target.parent if str(target.parent) else Path(".")
    _refuse_missing(parent, target)
    _probe_dir(target, target)
    return target


def check_run_dir(path: str | os.PathLike[str], *, force: bool = False, resume: bool = False,
                  hint: str = "use --force to write over it") -> Path:
    """Refuse a run directory that exists with files in it unless ``force`` (or ``resume``)."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise cannot_write(target, "is not a directory")
    if target.is_dir() and not (force or resume) and any(target.iterdir()):
        raise ScoreWriteError(f"{target}: already exists and is not empty; {hint}")
    return target


@contextlib.contextmanager
def run_dir(path: str | os.PathLike[str], *, force: bool = False, resume: bool = False,
            hint: str = "use --force to write over it") -> Iterator[Path]:
    """A run directory for the ``with`` block: refused when it holds files (unless ``force`` or
    ``resume``), created and proven writable first, and removed again if the block fails
    having created it and written nothing into it (a failed run that kept its transcript keeps
    its directory)."""
    target = check_run_dir(path, force=force, resume=resume, hint=hint)
    missing = _created_dirs(target)
    ensure_output_dir(target)
    try:
        yield target
    except BaseException:
        for d in missing:  # innermost first; a directory something was written into stays
            try:
                d.rmdir()
            except OSError:
                break
        raise


def clear_outputs(directory: str | os.PathLike[str], names: tuple[str, ...]) -> None:
    """Remove the named files and folders a previous run wrote into ``directory`` (for ``--force``)."""
    import shutil

    root = Path(directory)
    for name in names:
        target = root / name
        try:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        except OSError as exc:
            raise cannot_write(target, exc) from None
