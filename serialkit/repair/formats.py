"""Which formats a repaired score can be written in, and the files written beside it."""

from __future__ import annotations

from pathlib import Path

from serialkit.core.errors import SerialkitError

__all__ = ["WRITES", "check_output", "companion_paths", "output_suffix"]

_MUSICXML_OUT = (".musicxml", ".xml", ".mxl", ".mscz", ".mscx")
WRITES = {
    "musicxml": _MUSICXML_OUT,
    "musescore": _MUSICXML_OUT,
    "kern": _MUSICXML_OUT,
    "abc": _MUSICXML_OUT,
    "mei": (".mei",),
    "json": (".json",),
    "midi": (".mid", ".midi"),
}
"""What a repaired score of each format (its reader's name) can be written as (``-o``'s extension
chooses): MusicXML edited in place — also the MusicXML a MuseScore, **kern or ABC score is read
through —, as MusicXML or compressed MusicXML, or as .mscz/.mscx (a MuseScore file's own XML re-pitched
in place; another score's MusicXML saved by MuseScore 3); MEI edited
in place; a JSON piece; MIDI written anew. A folder gives every file ``check`` reads."""


def _format(path: Path) -> str:
    """The name of the reader of ``path`` (``json`` for a JSON piece)."""
    if path.suffix.lower() == ".json":
        return "json"
    from serialkit.io import score_format

    return score_format(path)


_FORMAT_NAMES = {"musicxml": "MusicXML", "musescore": "MuseScore", "kern": "**kern", "abc": "ABC",
                 "mei": "MEI", "json": "JSON piece", "midi": "MIDI"}


def output_suffix(path: Path) -> str:
    """The extension a repaired copy of ``path`` gets in an output folder: its own when repair
    writes that format, else ``.musicxml`` (a **kern or ABC score: the MusicXML it is read through)."""
    own = path.suffix.lower()
    try:
        writes = WRITES.get(_format(path), ())
    except SerialkitError:  # unreadable: named as it is (the repair says why)
        return path.suffix
    return path.suffix if own in writes else writes[0] if writes else path.suffix


def check_output(source: Path, target: Path) -> None:
    """Refuse, in one line, an output whose extension names a format the source cannot be repaired into."""
    fmt = _format(source)
    writes = WRITES.get(fmt, ())
    suffix = target.suffix.lower()
    if suffix not in writes:
        what = f"as {suffix}" if suffix else "without an extension"
        raise SerialkitError(
            f"{target}: cannot write a repaired {_FORMAT_NAMES.get(fmt, fmt)} score {what}; "
            + (f"give an output ending {', '.join(writes)}" if writes else "repair can only --dry-run it"))


def companion_paths(out: Path, review: bool = True) -> tuple[Path, Path | None]:
    """The certificate and (``review``) review page written beside a repaired score ``out``:
    ``OUT-stem.certificate.json``, ``OUT-stem.review.html``."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(stem + ".certificate.json"), out.with_name(stem + ".review.html") if review else None
