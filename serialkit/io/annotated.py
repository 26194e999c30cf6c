"""Write an annotated score in the format its name asks for, keeping as much of the source as
each path can: MusicXML and MEI sources are edited in place; MEI → MusicXML goes through the
engraving-faithful converter; MuseScore, **kern and ABC through the MusicXML their reader read."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

from serialkit.core.errors import ScoreWriteError
from serialkit.core.piece import Event
from serialkit.io.annotate import DEFAULT_LABELS, LABEL_STYLES, Annotation

__all__ = ["ANNOTATED_SUFFIXES", "MUSESCORE_SUFFIXES", "save_with_musescore", "write_annotated_score"]

MUSICXML_SUFFIXES = (".musicxml", ".xml", ".mxl")
MUSESCORE_SUFFIXES = (".mscz", ".mscx")
ANNOTATED_SUFFIXES = (*MUSICXML_SUFFIXES, ".mei", *MUSESCORE_SUFFIXES)


def write_annotated_score(
    source: str | os.PathLike[str],
    annotations: Mapping[str, Annotation],
    out_path: str | os.PathLike[str],
    labels: str = DEFAULT_LABELS,
) -> Path:
    """Copy ``source`` to ``out_path`` with per-note labels (carried as ``labels``: ``words``,
    ``lyric`` or ``fingering``) and colours; the output format is the extension's.

    - ``.musicxml``/``.xml``/``.mxl``: a MusicXML source edited in place; an MEI source converted
      with everything an engraver sees (``serialkit.io.mei_musicxml``); MuseScore/**kern/ABC
      through their MusicXML; a JSON piece or MIDI file written fresh.
    - ``.mei``: an MEI source edited in place (``write_annotated_mei``); others written as MEI.
    - ``.mscz``/``.mscx``: the annotated MusicXML saved by MuseScore 3.
    Nothing is written when anything fails.
    """
    if labels not in LABEL_STYLES:
        raise ScoreWriteError(f"label carrier {labels!r} is not one of {', '.join(LABEL_STYLES)}")
    src, out = Path(source), Path(out_path)
    suffix = out.suffix.lower()
    if suffix in MUSICXML_SUFFIXES:
        from serialkit.io.annotate import write_annotated_musicxml

        return write_annotated_musicxml(src, annotations, out, label_style=labels)
    if suffix == ".mei":
        from serialkit.io import read_score, score_format

        if score_format(src) == "mei":
            from serialkit.io.mei_annotate import write_annotated_mei

            return write_annotated_mei(src, annotations, out, labels)
        from serialkit.io.mei_write import write_mei

        return write_mei(read_score(src), out, annotations=annotations, label_style=labels)
    if suffix in (".mscz", ".mscx"):
        return _via_musescore(src, annotations, out, labels)
    raise ScoreWriteError(
        f"{out}: cannot write {suffix or 'a file without an extension'}; "
        "use .musicxml, .xml, .mxl, .mei, .mscz or .mscx"
    )


def _via_musescore(src: Path, annotations: Mapping[str, Annotation], out: Path, labels: str) -> Path:
    from serialkit.io.annotate import write_annotated_musicxml
    from serialkit.io.external import _read_via
    from serialkit.io.mscore_read import read_mscore

    # the labels name notes of the native reading; MuseScore's export names them its own way:
    # the n-th note at an onset and pitch of one is the n-th of the other
    def keyed(events: Sequence[Event]) -> dict[tuple[Fraction, int, int], str]:
        seen: dict[tuple[Fraction, int], int] = {}
        out: dict[tuple[Fraction, int, int], str] = {}
        for e in events:
            k = seen[(e.onset, e.midi)] = seen.get((e.onset, e.midi), 0) + 1
            out[(e.onset, e.midi, k)] = e.id
        return out

    native = keyed(read_mscore(src).events)
    exported = keyed(_read_via(src, "musescore").events)
    rename = {nid: exported[k] for k, nid in native.items() if k in exported}
    lost = [k for k, nid in native.items() if nid not in rename]  # notes MuseScore's own export leaves out
    if lost:
        onset, midi, _ = lost[0]
        raise ScoreWriteError(
            f"{out}: MuseScore's export of {src} leaves out {len(lost)} of its notes (the first: MIDI "
            f"{midi} at quarter {onset}); writing the labelled score through it would lose them, so "
            "nothing is written; write .musicxml or .mei instead"
        )
    annotations = {rename.get(k, k): v for k, v in annotations.items()}
    with tempfile.TemporaryDirectory(prefix="serialkit-mscore-") as tmp:
        xml = write_annotated_musicxml(src, annotations, Path(tmp) / "annotated.musicxml", label_style=labels)
        return save_with_musescore(xml, out)


def save_with_musescore(xml: Path, out: Path) -> Path:
    """Save the MusicXML file ``xml`` as the MuseScore file ``out`` (.mscz or .mscx) with MuseScore 3,
    atomically; a missing or failing MuseScore is one ``ScoreWriteError``."""
    from serialkit.io.atomic import atomic_path
    from serialkit.io.external import musescore_program

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
