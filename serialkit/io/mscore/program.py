"""The MuseScore program, run headless: found on PATH, exporting a MuseScore file as MusicXML,
and saving a MusicXML file as a MuseScore file."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from serialkit.core.errors import ScoreReadError, ScoreWriteError
from serialkit.io.files.atomic import atomic_path
from serialkit.io.files.safety import read_bytes

__all__ = ["MUSESCORE_PROGRAMS", "musescore_musicxml", "musescore_program", "save_with_musescore"]

MUSESCORE_PROGRAMS = ("mscore3", "musescore3", "mscore", "musescore", "mscore4portable")


def musescore_program() -> str | None:
    """The MuseScore executable on PATH (``SERIALKIT_MUSESCORE`` overrides), or None."""
    env = os.environ.get("SERIALKIT_MUSESCORE")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    for name in MUSESCORE_PROGRAMS:
        found = shutil.which(name)
        if found:
            return found
    return None


def musescore_musicxml(path: Path) -> bytes:
    """The MusicXML MuseScore exports a .mscz/.mscx file as (MuseScore 3 run headless)."""
    head = read_bytes(path)[:4]  # size limit and a clear error for a missing file
    exe = musescore_program()
    if exe is None:
        raise ScoreReadError(
            f"{path}: reading MuseScore files needs MuseScore 3 (Debian package musescore3; "
            "none of mscore3, musescore3, mscore found on PATH)"
        )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    with tempfile.TemporaryDirectory(prefix="serialkit-mscore-") as tmp:
        src = Path(tmp) / ("score.mscz" if head == b"PK\x03\x04" else "score.mscx")
        shutil.copyfile(path, src)
        out = Path(tmp) / "score.musicxml"
        try:
            proc = subprocess.run(
                [exe, "-o", str(out), str(src)], env=env, capture_output=True, text=True,
                timeout=300, stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise ScoreReadError(f"{path}: MuseScore did not finish converting it within 300 s") from None
        except OSError as exc:
            raise ScoreReadError(f"{path}: cannot run MuseScore ({exe}): {exc}") from None
        if proc.returncode != 0 or not out.is_file():
            message = "\n".join(part.strip() for part in (proc.stdout, proc.stderr) if part and part.strip())
            why = message or f"exit status {proc.returncode}"
            raise ScoreReadError(f"{path}: MuseScore could not read it (exit status {proc.returncode}):\n{why}")
        return out.read_bytes()


def save_with_musescore(xml: Path, out: Path) -> Path:
    """Save the MusicXML file ``xml`` as the MuseScore file ``out`` (.mscz or .mscx) with MuseScore 3,
    atomically; a missing or failing MuseScore is one ``ScoreWriteError``."""
    exe = musescore_program()
    if exe is None:
        raise ScoreWriteError(
            f"{out}: writing MuseScore files needs MuseScore 3 (Debian package musescore3; "
            "none of mscore3, musescore3, mscore found on PATH)"
        )
    with tempfile.TemporaryDirectory(prefix="serialkit-mscore-") as tmp:
        made = Path(tmp) / f"saved{out.suffix.lower()}"
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        try:
            proc = subprocess.run([exe, "-o", str(made), str(xml)], env=env, capture_output=True,
                                  text=True, timeout=300, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ScoreWriteError(f"{out}: MuseScore could not write it: {exc}") from None
        if proc.returncode != 0 or not made.is_file():
            lines = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
            raise ScoreWriteError(f"{out}: MuseScore could not write it: {lines[-1] if lines else proc.returncode}")
        with atomic_path(out) as target:
            shutil.copyfile(made, target)
    return out
