"""Engraving with verovio: prepare the source XML (labels in, tell-tales out) and lay out pages."""

from __future__ import annotations

import re
import threading
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from serialkit.core.errors import ScoreReadError
from serialkit.io.files.safety import read_bytes
from serialkit.render.marks import RUNGS

MEI_NS = "http://www.music-encoding.org/ns/mei"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
MAX_SOURCE_BYTES = 64 * 1024 * 1024
#: Text that looks like a row label (``P0:3``, ``RI11:0``); stripped from blind renders.
LABEL_RE = re.compile(r"^\s*(?:P|I|R|RI)\d{1,2}\s*:\s*\d{1,2}\b")
#: The label ``repair`` writes by a changed note (``rewrite P0:3``, ``rewrite swap with the Bb4 at
#: bar 2, beat 3``, ``trim COLL``: ``repair.Change.text``): its rung, then a label, a swap or a code.
REPAIR_LABEL_RE = re.compile(
    r"^\s*(?:" + "|".join(RUNGS) + r")\s+(?:(?:P|I|R|RI)\d{1,2}\s*:\s*\d{1,2}\b|swap with\b|[A-Z]{3,}\b)"
)
#: Verovio options every render uses; ``scale`` and ``pageWidth`` come from the caller.
BASE_OPTIONS: dict[str, Any] = {
    "xmlIdSeed": 1,
    "svgFormatRaw": True,
    "footer": "none",
    "breaks": "auto",
    "mdivAll": True,  # every movement (<mdiv>) of an MEI file, as the readers read them all
}
_MXL_SKIP = ("META-INF/",)


@dataclass(frozen=True, slots=True)
class ParsedScore:
    """A parsed score: its kind (``musicxml`` or ``mei``), bytes, XML root and file path."""

    kind: str
    data: bytes
    root: Any
    path: Path


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True
    )


def read_source(path: str | Path) -> ParsedScore:
    """Parse a MusicXML (``.musicxml``/``.xml``/``.mxl``) or MEI file safely."""
    p = Path(path)
    data = read_bytes(p, MAX_SOURCE_BYTES)  # the readers' errors: no such file, too big, a folder
    if p.suffix.lower() == ".mxl":
        data = _mxl_member(p)
    elif not _looks_like_xml(data):
        raise _not_engravable(p, data)
    from serialkit.io.files.safety import parse_xml

    root = parse_xml(data, str(p)).getroot()  # errors as every reader's: FILE:LINE: not well-formed XML
    tag = etree.QName(root).localname
    if tag in ("score-partwise", "score-timewise"):
        return ParsedScore("musicxml", data, root, p)
    if tag in ("mei", "music") and (etree.QName(root).namespace in (MEI_NS, None)):
        return ParsedScore("mei", data, root, p)
    raise _not_engravable(p, data)


def _looks_like_xml(data: bytes) -> bool:
    """Markup at the start (after a byte-order mark and white space; UTF-16 too)."""
    from serialkit.io.files.safety import ascii_view

    return ascii_view(data[:256]).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def _not_engravable(p: Path, data: bytes) -> ScoreReadError:
    """The error for a file render cannot engrave, worded as every reader's for a file that is no
    score (``FILE:1: not a MusicXML or MEI file (…)``), naming the format it is when another
    reader knows it (convert it first)."""
    from serialkit.io.sniff import not_a_score
    from serialkit.plugins import registry

    head = data[: 1 << 16]
    other = next((e.name for e in registry("readers") if callable(sniff := e.meta.get("sniff")) and sniff(head)),
                 None)
    hint = "render reads .musicxml, .xml, .mxl, .mei, a .json piece or a `serialkit generate` run directory"
    if other is not None:
        name = {"midi": "MIDI", "musescore": "MuseScore", "kern": "Humdrum **kern", "abc": "ABC"}.get(other, other)
        hint = f"it is {name}: `serialkit convert {p.name} -o NAME.musicxml` first; " + hint
    return not_a_score(str(p), head, "MusicXML or MEI", hint)


def _mxl_member(p: Path) -> bytes:
    """The score member of a compressed MusicXML archive (size-limited, no path tricks)."""
    try:
        with zipfile.ZipFile(p) as zf:
            names = zf.namelist()
            target = None
            if "META-INF/container.xml" in names:
                container = etree.fromstring(zf.read("META-INF/container.xml"), _parser())
                for el in container.iter("{*}rootfile", "rootfile"):
                    target = el.get("full-path")
                    break
            if target is None:
                target = next(
                    (n for n in names if not n.startswith(_MXL_SKIP) and n.endswith((".xml", ".musicxml"))),
                    None,
                )
            if target is None or target not in names:
                raise ScoreReadError(f"{p}: no score inside the .mxl archive")
            info = zf.getinfo(target)
            if info.file_size > MAX_SOURCE_BYTES:
                raise ScoreReadError(f"{p}: archive member {target} is too large")
            return zf.read(target)
    except (zipfile.BadZipFile, OSError, KeyError) as exc:
        raise ScoreReadError(f"{p}: not a readable .mxl archive ({exc})") from exc
    except etree.XMLSyntaxError as exc:
        raise ScoreReadError(f"{p}: META-INF/container.xml is not well-formed ({exc.msg})") from exc


def note_ids(source: ParsedScore) -> set[str]:
    """The ids of every note in the source."""
    if source.kind == "musicxml":
        return {nid for n in source.root.iter("note") if (nid := n.get("id"))}
    return {nid for n in source.root.iter(f"{{{MEI_NS}}}note") if (nid := n.get(XML_ID))}


def prepare(source: ParsedScore, blind: bool, amended: bool = False, labelled: bool = False) -> str:
    """The XML text verovio loads: the source as is (or amended), or stripped for blind panels.

    Short staff names two instruments share are told apart (``number_abbreviations``).

    A ``labelled`` render draws its own labels, so the labels serialkit wrote into the score
    (``annotate``'s, ``repair``'s ``rewrite P0:3``) are left out: no note labelled twice, and none
    in the score's large type. So are the colours serialkit wrote on notes (``annotate``'s by row
    form or statement, ``repair``'s by rung): on the page every colour means what the legend says.
    """
    # verovio's MEI importer finds no <music> when a comment or PI precedes the root element
    prolog = source.kind == "mei" and source.root.getprevious() is not None
    if labelled and not blind:
        amended = _drop_labels(source.root, source.kind) or amended
        amended = _drop_written_colours(source.root, source.kind) or amended
    amended = number_abbreviations(source.root, source.kind) or amended
    if not blind and not amended and not prolog:
        try:
            return source.data.decode("utf-8")
        except UnicodeDecodeError:
            return str(etree.tostring(source.root, encoding="unicode"))
    if blind:
        (_blind_musicxml if source.kind == "musicxml" else _blind_mei)(source.root)
    return str(etree.tostring(source.root, encoding="unicode"))


#: A number in an instrument's name: ``Horn 2 in F`` → 2, ``Violin II`` → II.
_NAME_NUMBER = re.compile(r"(?<![\w.])(\d+|[IVX]+)(?![\w.])")


def number_abbreviations(root: Any, kind: str) -> bool:
    """Number the short staff names (shown from the second system on) that two or more
    instruments share: ``Hn.`` for Horn 1 in F and Horn 2 in F becomes ``Hn. 1`` and ``Hn. 2``.

    The numbers are those of the instruments' full names when these give each its own (``Horn 1
    in F``, ``Violin II``), else 1, 2, … in score order. An instrument is a MusicXML
    ``<score-part>`` (its ``<part-abbreviation>`` and ``<part-name>``) or an MEI ``<staffDef>`` or
    ``<staffGrp>`` (``@label.abbr`` or ``<labelAbbr>``, and ``@label`` or ``<label>``); the staves
    of one keyboard instrument (a braced group whose staves carry one and the same name) are one
    instrument, not numbered. True when a name was changed."""
    owners = _abbreviated_mei(root) if kind == "mei" else _abbreviated_musicxml(root)
    by_short: dict[str, list[tuple[str, list[Any]]]] = {}
    for short, full, elements in owners.values():
        by_short.setdefault(short, []).append((full, elements))
    changed = False
    for short, sharing in by_short.items():
        if len(sharing) < 2 or len({full for full, _ in sharing}) == 1 and _one_keyboard(sharing):
            continue
        found = [_NAME_NUMBER.findall(full) for full, _ in sharing]
        numbers = [f[-1] if f else "" for f in found]
        if "" in numbers or len(set(numbers)) < len(numbers):
            numbers = [str(i) for i in range(1, len(sharing) + 1)]
        for (_, elements), number in zip(sharing, numbers, strict=True):
            for el, attr in elements:
                if attr is None:
                    _set_text(el, f"{short} {number}")
                else:
                    el.set(attr, f"{short} {number}")
            changed = True
    return changed


def _one_keyboard(sharing: list[tuple[str, list[Any]]]) -> bool:
    """Whether staves sharing a name and a short name are one instrument: MEI staves of one braced
    group (a piano's, a harp's). ``sharing``: (full name, [(element, attribute)]) of each."""
    groups = set()
    for _, elements in sharing:
        for el, _attr in elements:
            parent = el.getparent()
            while parent is not None and etree.QName(parent).localname != "staffGrp":
                parent = parent.getparent()
            if parent is None or parent.get("symbol") != "brace":
                return False
            groups.add(id(parent))
    return len(groups) == 1


def _set_text(el: Any, text: str) -> None:
    """Replace an element's text, keeping its first child's formatting when the text is in one."""
    children = [c for c in el if isinstance(c.tag, str)]
    if children and not (el.text or "").strip():
        _set_text(children[0], text)
        for other in children[1:]:
            el.remove(other)
        return
    for child in list(el):
        el.remove(child)
    el.text = text


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split())


def _abbreviated_musicxml(root: Any) -> dict[str, tuple[str, str, list[Any]]]:
    """Score part id → (short name, full name, [(element, None)]) for each part with a short name."""
    out: dict[str, tuple[str, str, list[Any]]] = {}
    for i, part in enumerate(root.iter("score-part")):
        shorts = [el for el in part if el.tag == "part-abbreviation"]
        shown = [d for el in part if el.tag == "part-abbreviation-display" for d in el if d.tag == "display-text"]
        short = next((_text(el) for el in shorts + shown if _text(el)), "")
        if short:
            name = next((_text(el) for el in part if el.tag == "part-name"), "")
            elements: list[tuple[Any, str | None]] = [(el, None) for el in shorts + shown]
            out[part.get("id") or str(i)] = (short, name, elements)
    return out


def _abbreviated_mei(root: Any) -> dict[str, tuple[str, str, list[Any]]]:
    """Staff or group → (short name, full name, [(element, attribute or None)]) for each MEI
    staff definition or staff group with a short name (every definition of one staff together)."""
    out: dict[str, tuple[str, str, list[Any]]] = {}
    ns = f"{{{MEI_NS}}}"
    for i, el in enumerate(root.iter(f"{ns}staffDef", f"{ns}staffGrp")):
        grp = el.tag == f"{ns}staffGrp"
        key = f"group {el.get(XML_ID) or i}" if grp else f"staff {el.get('n') or i}"
        children = [c for c in el if c.tag == f"{ns}labelAbbr"]
        short = el.get("label.abbr") or next((_text(c) for c in children if _text(c)), "")
        if not short:
            continue
        full = el.get("label") or next((_text(c) for c in el if c.tag == f"{ns}label"), "")
        elements: list[tuple[Any, str | None]] = [(el, "label.abbr")] if el.get("label.abbr") else []
        elements += [(c, None) for c in children]
        if key in out:  # the same staff defined again (a later <scoreDef>)
            before = out[key]
            if before[0] == short:
                before[2].extend(elements)
            continue
        out[key] = (short, full, elements)
    return out


#: The elements a label can be written in, per kind of source.
_LABEL_TAGS = {
    "musicxml": ("fingering", "lyric", "words", "rehearsal", "other-technical"),
    "mei": tuple(f"{{{MEI_NS}}}{tag}" for tag in ("dir", "harm", "fing", "verse")),
}


def _looks_like_label(el: Any) -> bool:
    text_of = el.findall("text") if el.tag == "lyric" else [el]  # a lyric's syllabic is no part of it
    text = "".join(t for part in text_of for t in part.itertext())
    return bool(LABEL_RE.match(text) or REPAIR_LABEL_RE.match(text))


def _drop_labels(root: Any, kind: str) -> bool:
    """Drop every label-like text of the score; True if there was any."""
    found = [el for el in root.iter(*_LABEL_TAGS[kind]) if _looks_like_label(el)]
    for el in found:
        _drop(el)
    return bool(found)


def _written_colours() -> frozenset[str]:
    """The colours ``annotate`` and ``repair`` write on notes, upper case."""
    from serialkit.check.annotate import FORM_COLOURS, STATEMENT_COLOURS, UNEXPLAINED
    from serialkit.render.marks import OTHER_RUNG_COLOR, RUNG_COLORS

    colours = {*FORM_COLOURS.values(), *STATEMENT_COLOURS, UNEXPLAINED, *RUNG_COLORS.values(), OTHER_RUNG_COLOR}
    return frozenset(c.upper() for c in colours) - {"#000000"}


def _drop_written_colours(root: Any, kind: str) -> bool:
    """Drop the colours serialkit writes from notes and from the label-carrying elements the
    score keeps (``_LABEL_TAGS``); True if there was any. Other colours stay."""
    tags = ("note", "notehead") if kind == "musicxml" else (f"{{{MEI_NS}}}note",)
    written = _written_colours()
    found = False
    for el in root.iter(*tags, *_LABEL_TAGS[kind]):
        colour = el.get("color")
        if colour is not None and colour.upper() in written:
            del el.attrib["color"]
            found = True
    return found


def _drop(el: Any) -> None:
    parent = el.getparent()
    if parent is not None:
        parent.remove(el)


def _blind_musicxml(root: Any) -> None:
    for tag in ("work", "movement-number", "movement-title", "identification", "credit"):
        for el in root.findall(tag):
            _drop(el)
    _drop_labels(root, "musicxml")
    _strip_comments_and_colour(root)


def _blind_mei(root: Any) -> None:
    ns = f"{{{MEI_NS}}}"
    head = root.find(f"{ns}meiHead")
    if head is not None:
        for child in list(head):
            head.remove(child)
        file_desc = etree.SubElement(head, f"{ns}fileDesc")
        etree.SubElement(etree.SubElement(file_desc, f"{ns}titleStmt"), f"{ns}title")
        etree.SubElement(file_desc, f"{ns}pubStmt")
    for tag in ("pgHead", "pgFoot", "pgHead2", "pgFoot2", "annot"):
        for el in list(root.iter(f"{ns}{tag}")):
            _drop(el)
    _drop_labels(root, "mei")
    _strip_comments_and_colour(root)


def _strip_comments_and_colour(root: Any) -> None:
    for el in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        _drop(el)
    for el in root.iter():
        if isinstance(el.tag, str):
            for attr in ("color", "fontcolor"):
                if attr in el.attrib:
                    del el.attrib[attr]


def verovio_options(scale: int, page_width: int, blind: bool, labelled: bool) -> dict[str, Any]:
    """Verovio options for one render."""
    options = dict(BASE_OPTIONS, scale=scale, pageWidth=page_width)
    if blind:
        options["header"] = "none"
    if labelled:
        # Room between staves for the label rows laid out on the SVG (serialkit.render.labels).
        options["spacingStaff"] = 16
        options["spacingBraceGroup"] = 16
        options["spacingBracketGroup"] = 16
        options["spacingSystem"] = 10
    return options


#: Each thread's verovio toolkit, kept from one render to the next (``_toolkit``).
_TOOLKITS = threading.local()


def _toolkit() -> Any:
    """This thread's verovio toolkit, its options reset to verovio's defaults: made at the
    thread's first render and kept for the next ones (a new toolkit reads the engraving and text
    fonts again; the score a kept toolkit holds is released by the next ``loadData``)."""
    import verovio

    tk = getattr(_TOOLKITS, "toolkit", None)
    if tk is None:
        tk = _TOOLKITS.toolkit = verovio.toolkit()
    else:
        tk.resetOptions()
    return tk


def engrave(data: str, options: Mapping[str, Any], where: str) -> list[str]:
    """Load prepared score text into verovio and return one SVG string per page."""
    import verovio

    verovio.enableLog(verovio.LOG_OFF)
    tk = _toolkit()
    tk.setOptions(dict(options))
    if not tk.loadData(data):
        raise ScoreReadError(f"{where}: verovio could not load the score")
    count = tk.getPageCount()
    if count < 1:
        raise ScoreReadError(f"{where}: the score has no pages to engrave")
    return [tk.renderToSVG(page) for page in range(1, count + 1)]
