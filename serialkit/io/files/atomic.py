"""Atomic output: write to a temporary file beside the target, then rename over it."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from serialkit.core.errors import ScoreWriteError, SerialkitError


@contextlib.contextmanager
def named_as(names: Mapping[Path, str | os.PathLike[str]]) -> Iterator[None]:
    """Errors raised in the block name the user's files, never the temporary files standing in for
    them: each temporary path in a ``SerialkitError``'s message becomes the path (or ``-``) it
    stands for, the error's kind kept (a repaired MIDI file read back from its staging folder is
    named as OUT)."""
    try:
        yield
    except SerialkitError as exc:
        text = renamed = str(exc)
        for tmp in sorted(names, key=lambda p: len(str(p)), reverse=True):
            renamed = renamed.replace(str(tmp), os.fspath(names[tmp]))
        if renamed == text:
            raise
        named = copy.copy(exc)
        named.args = (renamed,)
        raise named from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the target's directory; on success rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched, so a failed
    run never leaves a partial output behind.
    """
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
        os.close(fd)
    except OSError as exc:
        raise _cannot(target, parent, exc) from None
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        with named_as({tmp: target}):
            yield tmp
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise ScoreWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.filename is not None and Path(exc.filename) == tmp:
            raise ScoreWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
        raise


def _cannot(target: Path, parent: Path, exc: OSError) -> ScoreWriteError:
    blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:  # mkdir says "File exists"; the trouble is a file standing as a folder
        return ScoreWriteError(f"cannot write {target}: {blocker} is a file, not a directory")
    return ScoreWriteError(f"cannot write {target}: {exc.strerror or exc}")


@contextlib.contextmanager
def atomic_paths(*paths: str | os.PathLike[str]) -> Iterator[list[Path]]:
    """Several outputs in one folder written together: yield a temporary path for each (the same
    file name, in a private folder beside them); on success each one written is renamed over its
    target, on any exception none is, and the temporary folder goes.

    For a score and the files that describe it (a repair's certificate and review page): either
    all of them are written or none is, never a score without its certificate."""
    targets = [Path(p) for p in paths]
    parent = targets[0].parent if str(targets[0].parent) else Path(".")
    if any((t.parent if str(t.parent) else Path(".")) != parent for t in targets):
        raise ValueError("atomic_paths: the outputs must share one folder")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{targets[0].name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise _cannot(targets[0], parent, exc) from None
    try:
        staged = [stage / t.name for t in targets]
        with named_as(dict(zip(staged, targets, strict=True))):
            yield staged
        mode = 0o666 & ~_umask()
        pairs = [(tmp, target) for tmp, target in zip(staged, targets, strict=True) if tmp.exists()]
        for _tmp, target in pairs:  # refused before any is renamed: none written
            if target.is_dir() and not target.is_symlink():
                raise ScoreWriteError(f"cannot write {target}: Is a directory")
        done: list[tuple[Path, Path | None]] = []
        try:
            for tmp, target in pairs:
                backup = None
                if target.exists() or target.is_symlink():  # kept until every one is in place
                    backup = stage / f".previous.{len(done)}"
                    os.replace(target, backup)
                try:
                    os.chmod(tmp, mode)
                    os.replace(tmp, target)
                except OSError:
                    if backup is not None:
                        os.replace(backup, target)
                    raise
                done.append((target, backup))
        except OSError as exc:
            for target, backup in reversed(done):  # the earlier ones back as they were
                with contextlib.suppress(OSError):
                    if backup is not None:
                        os.replace(backup, target)
                    else:
                        target.unlink()
            failed = pairs[len(done)][1] if len(done) < len(pairs) else targets[0]
            raise ScoreWriteError(f"cannot write {failed}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write text (UTF-8) or bytes to ``path`` atomically."""
    with atomic_path(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
