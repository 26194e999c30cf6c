"""Annotated scores in any format: a copy of a source with per-note labels and colours, in the
format the output's name asks for, keeping as much of the source as each path can. MusicXML
and MEI sources are edited in place; MEI → MusicXML goes through the engraving-faithful
converter; MuseScore sources written as MuseScore are edited in place too; MuseScore written as
MusicXML, **kern and ABC go through the MusicXML their reader read."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lxml import etree

from serialkit.core.errors import ScoreWriteError
from serialkit.io.annotation import DEFAULT_LABELS, LABEL_STYLES, Annotations
from serialkit.io.dispatch import read_score, score_format
from serialkit.io.external import VIA_MUSICXML, via_musicxml
from serialkit.io.files.atomic import atomic_path
from serialkit.io.files.safety import parse_xml
from serialkit.io.mei.annotate import write_annotated_mei
from serialkit.io.mei.convert import mei_to_musicxml
from serialkit.io.mei.write import write_mei
from serialkit.io.mscore.program import save_with_musescore
from serialkit.io.mscore.write import write_annotated_mscore
from serialkit.io.musicxml.annotate import annotate_tree, serialize
from serialkit.io.musicxml.read import Scan, take_scan
from serialkit.io.musicxml.write import musicxml_bytes, mxl_bytes

__all__ = ["ANNOTATED_SUFFIXES", "MUSESCORE_SUFFIXES", "write_annotated_musicxml", "write_annotated_score"]

MUSICXML_SUFFIXES = (".musicxml", ".xml", ".mxl")
MUSESCORE_SUFFIXES = (".mscz", ".mscx")
ANNOTATED_SUFFIXES = (*MUSICXML_SUFFIXES, ".mei", *MUSESCORE_SUFFIXES)


def write_annotated_score(
    source: str | os.PathLike[str],
    annotations: Annotations,
    out_path: str | os.PathLike[str],
    labels: str = DEFAULT_LABELS,
) -> Path:
    """Copy ``source`` to ``out_path`` with per-note labels (carried as ``labels``: ``words``,
    ``lyric`` or ``fingering``) and colours; the output format is the extension's.

    - ``.musicxml``/``.xml``/``.mxl``: a MusicXML source edited in place; an MEI source converted
      with everything an engraver sees (``serialkit.io.mei.convert``); MuseScore/**kern/ABC
      through their MusicXML; a JSON piece or MIDI file written fresh.
    - ``.mei``: an MEI source edited in place (``write_annotated_mei``); others written as MEI.
    - ``.mscz``/``.mscx``: a MuseScore source edited in place, in its own format version
      (``serialkit.io.mscore.write``); any other source's annotated MusicXML saved by MuseScore 3.
    Nothing is written when anything fails.
    """
    if labels not in LABEL_STYLES:
        raise ScoreWriteError(f"label carrier {labels!r} is not one of {', '.join(LABEL_STYLES)}")
    src, out = Path(source), Path(out_path)
    suffix = out.suffix.lower()
    if suffix in MUSICXML_SUFFIXES:
        return write_annotated_musicxml(src, annotations, out, label_style=labels)
    if suffix == ".mei":
        if score_format(src) == "mei":
            return write_annotated_mei(src, annotations, out, labels)
        return write_mei(read_score(src), out, annotations=annotations, label_style=labels)
    if suffix in MUSESCORE_SUFFIXES:
        if score_format(src) == "musescore":  # the source's own XML, edited in place
            return write_annotated_mscore(src, annotations, out, labels)
        return _via_musescore(src, annotations, out, labels)
    raise ScoreWriteError(
        f"{out}: cannot write {suffix or 'a file without an extension'}; "
        "use .musicxml, .xml, .mxl, .mei, .mscz or .mscx"
    )


def _via_musescore(src: Path, annotations: Annotations, out: Path, labels: str) -> Path:
    """A score of another format as a MuseScore file: its labelled MusicXML saved by MuseScore 3."""
    with tempfile.TemporaryDirectory(prefix="serialkit-mscore-") as tmp:
        xml = write_annotated_musicxml(src, annotations, Path(tmp) / "annotated.musicxml", label_style=labels)
        return save_with_musescore(xml, out)


def write_annotated_musicxml(
    source_path: str | os.PathLike[str],
    annotations: Annotations,
    out_path: str | os.PathLike[str],
    label_style: str = DEFAULT_LABELS,
) -> Path:
    """Copy a MusicXML/.mxl score to ``out_path`` with per-note labels and colours added.

    ``annotations`` maps event ids (note ids, as ``read_score`` reports them) to an Annotation;
    a tied event's colour goes on every tied notehead, its label on the first. Notes that had no
    id get the deterministic id ``read_score`` gave them. The output is ``.mxl`` when
    ``out_path`` ends so, else plain MusicXML. A source in another format (MEI, JSON piece) is
    first written as MusicXML with ``write_musicxml`` (note ids = event ids). Nothing is written
    when anything fails.
    """
    source, out = Path(source_path), Path(out_path)
    tree, where, member, scan = _source_tree(source)
    root = annotate_tree(tree, where, annotations, label_style, scan)
    data = serialize(root, tree, scan.ends if scan is not None else None)
    if out.suffix.lower() == ".mxl":
        payload = mxl_bytes(source if member else None, member, data)
    else:
        payload = data
    with atomic_path(out) as tmp:
        tmp.write_bytes(payload)
    return out


def _source_tree(source: Path) -> tuple[etree._ElementTree, str, str | None, Scan | None]:
    """The MusicXML tree to annotate; other formats (MEI, JSON) are first written as MusicXML."""
    fmt = score_format(source)
    if fmt == "musicxml":
        return take_scan(source)
    if fmt == "mei":  # everything an engraver sees, not only the notes (see mei.convert)
        tree, _ = mei_to_musicxml(source)
        return tree, str(source), None, None
    if fmt in VIA_MUSICXML:  # MuseScore, **kern, ABC: the MusicXML their reader read
        where = f"{source} (as MusicXML)"
        return parse_xml(via_musicxml(source, fmt), where), where, None, None
    data = musicxml_bytes(read_score(source))
    return parse_xml(data, str(source)), str(source), None, None
