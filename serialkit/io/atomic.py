"""Atomic output: write to a temporary file beside the target, then rename over it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from serialkit.core.errors import ScoreWriteError


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
        blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:  # mkdir says "File exists"; the trouble is a file standing as a folder
            raise ScoreWriteError(f"cannot write {target}: {blocker} is a file, not a directory") from None
        raise ScoreWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
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
