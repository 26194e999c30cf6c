"""``serialkit repair`` writes a copy faithful to its source: a
corrected accidental leaves no needless natural sign, a swap moves the written notes with their
spelling, a rewritten note is spelt as the notes around it are, and every byte outside the changed
notes is the source's — ``<chord />`` stays ``<chord />``."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.cli import cli
from serialkit.io.accidentals import (
    ACCIDENTAL_TEXT,
    Written,
    bar_groups,
    needed,
    shows_unneeded,
    written_of,
)

ROW = "C B G Ab Eb Db D Bb F# F E A"  # the row of fixtures/classroom
_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_LETTERS = "CDEFGAB"


def _repair(src: Path, out: Path) -> dict:
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", ROW, "-o", str(out), "--no-review", "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stdout
    return json.loads(result.stdout)


def _changed_ids(out: Path) -> set[str]:
    cert = json.loads(out.with_name(out.stem + ".certificate.json").read_text(encoding="utf-8"))
    return {str(head) for event in cert["events"] for head in event["noteheads"]}


def _minimal_bars(root: etree._Element) -> dict[str, list[tuple[bool, bool]]]:
    """For every bar (by the ids of its notes): each note's (needs an accidental, shows one)."""
    notes = list(root.iter("note"))
    tied = {n for n in notes if n.find("tie[@type='stop']") is not None}
    out = {}
    for group in bar_groups(root, {n: i for i, n in enumerate(notes)}).values():
        key = " ".join(el.get("id") or "" for el, _ in group)
        out[key] = [(need, el.find("accidental") is not None)
                    for (el, _), need in zip(group, needed(written_of(group, tied)), strict=True)]
    return out


def _engrave(root: etree._Element) -> None:
    """Show exactly the accidentals each bar needs (none where the bar's carry or key says it)."""
    from serialkit.io.musicxml.annotate import insert_in_order

    notes = list(root.iter("note"))
    for group in bar_groups(root, {n: i for i, n in enumerate(notes)}).values():
        for (el, _), need in zip(group, needed(written_of(group, set())), strict=True):
            for acc in el.findall("accidental"):
                el.remove(acc)
            if need:
                acc = etree.Element("accidental")
                acc.text = ACCIDENTAL_TEXT[int(el.findtext("pitch/alter") or 0)]
                insert_in_order(el, acc)


# -- 7: no needless natural ---------------------------------------------------------------------------


def test_a_corrected_accidental_leaves_no_needless_natural(fixtures: Path, tmp_path: Path) -> None:
    """Ben's F#4 put right to F4, with no F earlier in its bar and no key signature: the F4 shows
    no natural (it showed one before the fix); every bar of the copy shows an accidental exactly
    where one is needed, as the source's bars did."""
    src = fixtures / "classroom" / "ben.musicxml"
    out = tmp_path / "ben.musicxml"
    _repair(src, out)
    (changed,) = _changed_ids(out)
    note = next(n for n in etree.parse(str(out)).getroot().iter("note") if n.get("id") == changed)
    assert note.findtext("pitch/step") == "F" and note.find("pitch/alter") is None
    assert note.find("accidental") is None
    before, after = _minimal_bars(etree.parse(str(src)).getroot()), _minimal_bars(etree.parse(str(out)).getroot())
    assert before.keys() == after.keys()
    for bar, notes in before.items():
        if all(need == shown for need, shown in notes):  # a bar engraved minimally stays so
            assert all(need == shown for need, shown in after[bar]), bar


def test_a_score_that_shows_every_accidental_keeps_showing_them(fixtures: Path, tmp_path: Path) -> None:
    """A score that writes a natural before every natural note (Webern's habit, Op. 27): the
    repaired F4 shows its natural too, and no note loses one."""
    root = etree.parse(str(fixtures / "classroom" / "ben.musicxml")).getroot()
    from serialkit.io.musicxml.annotate import insert_in_order

    for note in root.iter("note"):
        if note.find("pitch") is not None and note.find("accidental") is None:
            acc = etree.Element("accidental")
            acc.text = ACCIDENTAL_TEXT[int(note.findtext("pitch/alter") or 0)]
            insert_in_order(note, acc)
    src = tmp_path / "src" / "ben.musicxml"
    src.parent.mkdir()
    src.write_bytes(etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8"))
    out = tmp_path / "ben.musicxml"
    _repair(src, out)
    (changed,) = _changed_ids(out)
    notes = list(etree.parse(str(out)).getroot().iter("note"))
    assert next(n for n in notes if n.get("id") == changed).findtext("accidental") == "natural"
    assert all(n.find("accidental") is not None for n in notes if n.find("pitch") is not None)


@settings(max_examples=60, deadline=None)
@given(bars=st.lists(st.lists(st.tuples(st.sampled_from("CDEFGAB"), st.integers(3, 5), st.integers(-1, 1),
                                        st.booleans()), min_size=1, max_size=8), min_size=1, max_size=4))
def test_a_score_shows_unneeded_accidentals_when_most_notes_that_need_none_show_one(
        bars: list[list[tuple[str, int, int, bool]]]) -> None:
    """Invariant of the habit: it counts the notes that need no accidental, and says yes exactly
    when more than half of them show one."""
    made = []
    unneeded = shown = 0
    for bar in bars:
        written = [Written(s, o, a) for s, o, a, _ in bar]
        made.append((written, [show for *_, show in bar]))
        for need, (*_, show) in zip(needed(written), bar, strict=True):
            if not need:
                unneeded += 1
                shown += show
    assert shows_unneeded(made) == (unneeded > 0 and shown * 2 > unneeded)


# -- 8: a swap keeps its spelling ----------------------------------------------------------------------


def _flat_to_sharp(pitch: etree._Element, to_flat: bool) -> None:
    step, alter = pitch.findtext("step") or "C", int(pitch.findtext("alter") or 0)
    if alter == (1 if to_flat else -1):  # G#4 <-> Ab4: the next letter up (down), the other way
        index = _LETTERS.index(step) + (1 if to_flat else -1)
        octave = int(pitch.findtext("octave") or 4) + (index // 7)
        pitch.find("step").text = _LETTERS[index % 7]  # type: ignore[union-attr]
        pitch.find("alter").text = str(-alter)  # type: ignore[union-attr]
        pitch.find("octave").text = str(octave)  # type: ignore[union-attr]


def test_a_swap_moves_the_written_notes_with_their_spelling(fixtures: Path, tmp_path: Path) -> None:
    """Anna's exercise spelt with sharps but for one bar in flats, where two neighbouring black
    keys of a statement are swapped (a Db and an Eb written in each other's place): the repair puts
    them back as the student wrote them, flats, not as the score's sharps would spell them."""
    root = etree.parse(str(fixtures / "classroom" / "anna.musicxml")).getroot()
    measures = list(root.iter("measure"))
    for note in root.iter("note"):
        if note.find("pitch") is not None:
            _flat_to_sharp(note.find("pitch"), to_flat=False)  # type: ignore[arg-type]
    pair = None
    for measure in measures[1:]:
        notes = [n for n in measure.iter("note") if n.find("pitch") is not None]
        for a, b in zip(notes, notes[1:], strict=False):
            if (a.findtext("pitch/alter") and b.findtext("pitch/alter") and b.find("chord") is None
                    and a.findtext("pitch/step") != b.findtext("pitch/step")):
                pair = (measure, a, b)
                break
        if pair:
            break
    assert pair is not None
    measure, a, b = pair
    for note in measure.iter("note"):
        if note.find("pitch") is not None:
            _flat_to_sharp(note.find("pitch"), to_flat=True)
    meant = [(n.findtext("pitch/step"), n.findtext("pitch/alter"), n.findtext("pitch/octave")) for n in (a, b)]
    assert all(alter == "-1" for _, alter, _ in meant)
    pa, pb = a.find("pitch"), b.find("pitch")
    pa.addnext(pb)  # type: ignore[union-attr]
    b.insert(0 if b.find("chord") is None else 1, pa)  # type: ignore[arg-type]
    _engrave(root)
    src = tmp_path / "src" / "anna.musicxml"
    src.parent.mkdir()
    src.write_bytes(etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8"))
    out = tmp_path / "anna.musicxml"
    _repair(src, out)
    assert _changed_ids(out) == {a.get("id"), b.get("id")}
    got = {n.get("id"): (n.findtext("pitch/step"), n.findtext("pitch/alter"), n.findtext("pitch/octave"))
           for n in etree.parse(str(out)).getroot().iter("note")}
    assert [got[a.get("id")], got[b.get("id")]] == meant


def test_a_rewritten_note_is_spelt_as_the_notes_around_it() -> None:
    """``spell``: a note rewritten to a black key takes the spelling the notes around it give that
    pitch class, else their habit; a swap's note keeps its partner's spelling even when odd."""
    from serialkit.core.notenames import spell

    assert spell(61, "D", "step", habit=5) == ("C", 1, 4)  # the score writes sharps
    assert spell(61, "D", "step", habit=5, near={1: ("D", -1)}) == ("D", -1, 4)  # but here, Db
    assert spell(61, "E", "step", habit=-1) == ("D", -1, 4)
    assert spell(65, "G", "swap", habit=0, near={5: ("E", 1)}) == ("E", 1, 4)  # an E#4 swapped stays E#4
    assert spell(65, "G", "step", habit=0, near={5: ("E", 1)}) == ("F", 0, 4)  # else a plain F
    assert spell(61, "C", "accidental", habit=-3, near={1: ("D", -1)}) == ("C", 1, 4)  # a sharp dropped: C#


# -- 9: every byte outside the changed notes is the source's ---------------------------------------------


def _styled(text: str) -> str:
    """The MusicXML as other programs write it: ``<chord />`` with a space, attributes in single
    quotes, a comment, character references, no final newline."""
    text = text.replace("/>", " />")
    text = re.sub(r'<measure number="(\d+)"', r"<measure number='\1'", text)
    text = text.replace("<part-list>", "<!-- the parts -->\n  <part-list>", 1)
    text = re.sub(r"<part-name>[^<]*</part-name>", "<part-name>Fl&#251;te &amp; voix</part-name>", text, count=1)
    return text.rstrip("\n")


def _note_lines(text: str, ids: set[str], tag: str = "note") -> set[int]:
    """The (0-based) lines of the notes whose id is in ``ids``, start tag to end tag."""
    lines = text.split("\n")
    out: set[int] = set()
    for i, line in enumerate(lines):
        m = re.search(rf'<{tag}\b[^>]*\b(?:xml:)?id="([^"]+)"', line)
        if m and m.group(1) in ids:
            end = i
            while not re.search(rf"</{tag}>|/>\s*$", lines[end]):
                end += 1
            out.update(range(i, end + 1))
    return out


def _outside_changes_identical(src: Path, out: Path, ids: set[str]) -> None:
    old, new = src.read_bytes(), out.read_bytes()
    old_lines, new_lines = old.decode().split("\n"), new.decode().split("\n")
    assert all(line.endswith("\r") for line in new_lines[:-1]) or b"\r" not in old  # CRLF kept throughout
    allowed = _note_lines(old.decode(), ids)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        assert set(range(i1, i2)) <= allowed, (old_lines[i1:i2], new_lines[j1:j2])
        if tag == "insert":  # added lines (notehead, label) go inside a changed note
            assert i1 - 1 in allowed or i1 in allowed, new_lines[j1:j2]
    assert old[:old.index(b"<score-partwise")] == new[:new.index(b"<score-partwise")]
    assert old[old.rindex(b">"):] == new[new.rindex(b">"):]  # the end, final newline or none, as it was


@pytest.mark.parametrize("name,crlf", [("ben", False), ("dev", False), ("emma", False), ("ben", True)])
def test_a_repaired_copy_differs_from_its_source_only_in_the_changed_notes(fixtures: Path, tmp_path: Path,
                                                                            name: str, crlf: bool) -> None:
    """Byte for byte: the XML declaration, DOCTYPE, comment, ``<chord />``/``<rest />`` with their
    space, single-quoted attributes, character references, CRLF line ends and the missing final
    newline are kept; only the changed notes' lines differ (their pitch, accidental, colour,
    label and id)."""
    src = tmp_path / "src" / f"{name}.musicxml"
    src.parent.mkdir()
    text = _styled((fixtures / "classroom" / f"{name}.musicxml").read_text(encoding="utf-8"))
    src.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode())
    assert " />" in src.read_text(encoding="utf-8")
    out = tmp_path / f"{name}.musicxml"
    _repair(src, out)
    _outside_changes_identical(src, out, _changed_ids(out))


def test_a_repaired_mxl_keeps_its_archive_and_its_bytes(fixtures: Path, tmp_path: Path) -> None:
    """An .mxl: the same members as the source (no mimetype added when it had none), the score
    member differing only in the changed note."""
    import zipfile

    text = _styled((fixtures / "classroom" / "ben.musicxml").read_text(encoding="utf-8"))
    container = ('<?xml version="1.0" encoding="UTF-8"?>\n<container><rootfiles><rootfile full-path="ben.xml"/>'
                 "</rootfiles></container>\n")
    src = tmp_path / "src" / "ben.mxl"
    src.parent.mkdir()
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("META-INF/container.xml", container)
        z.writestr("ben.xml", text)
    out = tmp_path / "ben.mxl"
    _repair(src, out)
    with zipfile.ZipFile(out) as z:
        assert z.namelist() == ["META-INF/container.xml", "ben.xml"]
        (tmp_path / "a.xml").write_bytes(z.read("ben.xml"))
    (tmp_path / "b.xml").write_text(text, encoding="utf-8")
    _outside_changes_identical(tmp_path / "b.xml", tmp_path / "a.xml", _changed_ids(out))


def test_a_repaired_mei_differs_from_its_source_only_in_the_changed_notes(fixtures: Path,
                                                                          tmp_path: Path) -> None:
    """MEI, spaced before ``/>`` as some programs write it: the changed note's line and its label
    (one ``<fing>`` line added in its bar) are the only differences."""
    from serialkit.io import read_score
    from serialkit.io.mei.write import write_mei

    made = tmp_path / "made.mei"
    write_mei(read_score(fixtures / "classroom" / "ben.musicxml"), made)
    src = tmp_path / "src" / "ben.mei"
    src.parent.mkdir()
    src.write_text(made.read_text(encoding="utf-8").replace("/>", " />"), encoding="utf-8")
    out = tmp_path / "ben.mei"
    _repair(src, out)
    ids = _changed_ids(out)
    old, new = src.read_text(encoding="utf-8").split("\n"), out.read_text(encoding="utf-8").split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        assert tag == "insert" or all(any(f'"{i}"' in line for i in ids) for line in old[i1:i2]), old[i1:i2]
        assert all(any(i in line for i in ids) for line in new[j1:j2]), new[j1:j2]  # its note, its <fing>


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_musescore_opens_the_spliced_copy_and_shows_no_needless_natural(fixtures: Path, tmp_path: Path) -> None:
    """MuseScore 3 opens the repaired copy of a styled source (made of the source's own bytes) and
    engraves it; its own export writes the corrected F4 with no accidental, the pitches intended."""
    import os
    import subprocess

    from serialkit.io import read_score
    from tests.conftest import require_program

    exe = require_program("mscore3")
    src = tmp_path / "src" / "ben.musicxml"
    src.parent.mkdir()
    src.write_text(_styled((fixtures / "classroom" / "ben.musicxml").read_text(encoding="utf-8")), encoding="utf-8")
    out = tmp_path / "ben.musicxml"
    _repair(src, out)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    exported = tmp_path / "exported.musicxml"
    for made in (tmp_path / "fixed.pdf", exported):
        proc = subprocess.run([exe, "-o", str(made), str(out)], env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0 and made.stat().st_size > 0, proc.stderr[-2000:]
    assert [e.midi for e in read_score(exported).events] == [e.midi for e in read_score(out).events]
    (changed,) = _changed_ids(out)
    index = [n.get("id") for n in etree.parse(str(out)).getroot().iter("note")].index(changed)
    shown = list(etree.parse(str(exported)).getroot().iter("note"))[index]
    assert shown.findtext("pitch/step") == "F" and shown.find("accidental") is None
