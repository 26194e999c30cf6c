"""``serialkit repair`` keeps a bar's written accidentals true: after a note is repitched, every
note of its bar (same staff, letter and octave) still shows what it sounds — read by serialkit,
by music21 and by the eye (the accidentals shown, carried through the bar, and the key)."""

from __future__ import annotations

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
    respell,
    written_of,
)

ROW = "C B G Ab Eb Db D Bb F# F E A"
_TEXT_ALTER = {"flat-flat": -2, "flat": -1, "natural": 0, "sharp": 1, "double-sharp": 2}
_NATURAL = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def _repair(src: Path, out: Path) -> None:
    result = CliRunner().invoke(cli, ["repair", str(src), "--row", ROW, "-o", str(out), "--no-review"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stdout


def _as_read(path: Path) -> list[int]:
    """Each note's MIDI pitch as a player reads the page: the accidental shown, else the one
    shown earlier in the bar for that letter and octave, else the key signature (music21's)."""
    import music21

    root = etree.parse(str(path)).getroot()
    out: list[int] = []
    for part in root.iter("part"):
        fifths = 0
        for measure in part.iter("measure"):
            key = measure.find("attributes/key/fifths")
            if key is not None:
                fifths = int(key.text or 0)
            signature = music21.key.KeySignature(fifths)
            carried: dict[tuple[str, str], int] = {}
            for note in measure.iter("note"):
                step, octave = note.findtext("pitch/step"), note.findtext("pitch/octave")
                if step is None or octave is None:
                    continue
                shown = note.findtext("accidental")
                if shown is not None:
                    alter = _TEXT_ALTER[shown]
                else:
                    acc = signature.accidentalByStep(step)
                    alter = carried.get((step, octave), int(acc.alter) if acc is not None else 0)
                carried[(step, octave)] = alter
                out.append(12 * (int(octave) + 1) + _NATURAL[step] + alter)
    return out


def _music21(path: Path) -> list[int]:
    import music21

    return [int(n.pitch.midi) for n in music21.converter.parse(str(path)).flatten().notes]


def _serialkit(path: Path) -> dict[str, int]:
    from serialkit.io import read_score

    return {e.id: e.midi for e in read_score(path).events}


@pytest.mark.parametrize("name,note,meant,neighbour", [
    # I0's D4 written as F#4 (a third off): the true F#4 after it showed no sharp (carried); with
    # the F#4 put back to D4 the F natural earlier in the bar would carry to it — it needs its sharp
    ("carried-sharp", "n19", 62, "n20"),
    # P0's F4 written F#4 (an added sharp): the next statement's F4 showed a natural to cancel it;
    # with the F#4 put back to F4 that natural cancels nothing and goes
    ("cancelled-natural", "n9", 65, "n14"),
])
def test_a_repair_keeps_the_bars_accidentals_true(fixtures: Path, tmp_path: Path, name: str, note: str,
                                                  meant: int, neighbour: str) -> None:
    src = fixtures / "repair" / f"{name}.musicxml"
    out = tmp_path / "fixed.musicxml"
    _repair(src, out)
    wanted = dict(_serialkit(src), **{note: meant})
    assert _serialkit(out) == wanted  # serialkit reads <alter>
    assert _music21(out) == list(wanted.values())  # so does music21
    assert _as_read(out) == list(wanted.values())  # and the page shows the same pitches
    assert _as_read(src) == list(_serialkit(src).values())  # the source was engraved right
    shown = {n.get("id"): n.findtext("accidental") for n in etree.parse(str(out)).getroot().iter("note")}
    was = {n.get("id"): n.findtext("accidental") for n in etree.parse(str(src)).getroot().iter("note")}
    changed = {k for k in shown if shown[k] != was[k]}
    assert neighbour in changed and changed <= {note, neighbour}  # only the notes that had to change


@pytest.mark.musescore
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_bar_respelt_by_a_repair_opens_in_musescore(fixtures: Path, tmp_path: Path) -> None:
    """MuseScore 3 opens the repaired score and engraves it; its own export reads the intended pitches."""
    import os
    import subprocess

    from tests.conftest import require_program

    exe = require_program("mscore3")
    out = tmp_path / "fixed.musicxml"
    _repair(fixtures / "repair" / "carried-sharp.musicxml", out)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    for made in (tmp_path / "fixed.pdf", tmp_path / "exported.musicxml"):
        proc = subprocess.run([exe, "-o", str(made), str(out)], env=env, capture_output=True, text=True,
                              timeout=180)
        assert proc.returncode == 0 and made.stat().st_size > 0, proc.stderr[-2000:]
    wanted = list(_serialkit(out).values())
    assert _music21(tmp_path / "exported.musicxml") == wanted
    assert _as_read(tmp_path / "exported.musicxml") == wanted  # as MuseScore engraves it


# -- the rule itself, on made-up bars ---------------------------------------------------------------

_note = st.tuples(st.sampled_from("CDEFGAB"), st.integers(3, 5), st.integers(-1, 1), st.booleans())


def _bar(notes: list[tuple[str, int, int, bool]], fifths: int) -> etree._Element:
    """A partwise part of one bar on one staff, engraved right (accidentals where needed; some
    courtesy ones where not)."""
    part = etree.fromstring(f'<part id="P1"><measure number="1"><attributes><key><fifths>{fifths}</fifths>'
                            "</key></attributes></measure></part>")
    measure = part[0]
    from serialkit.io.accidentals import key_alters

    key = key_alters(fifths)
    need = needed([Written(s, o, a, False, key.get(s, 0)) for s, o, a, _ in notes])
    for i, ((step, octave, alter, courtesy), show) in enumerate(zip(notes, need, strict=True)):
        note = etree.SubElement(measure, "note", id=f"n{i}")
        pitch = etree.SubElement(note, "pitch")
        etree.SubElement(pitch, "step").text = step
        if alter:
            etree.SubElement(pitch, "alter").text = str(alter)
        etree.SubElement(pitch, "octave").text = str(octave)
        etree.SubElement(note, "duration").text = "1"
        if show or courtesy:
            etree.SubElement(note, "accidental").text = ACCIDENTAL_TEXT[alter]
    return part


def _page(part: etree._Element, fifths: int) -> list[int]:
    from serialkit.io.accidentals import key_alters

    key, carried, out = key_alters(fifths), {}, []
    for note in part.iter("note"):
        step, octave = note.findtext("pitch/step") or "C", int(note.findtext("pitch/octave") or 4)
        shown = note.findtext("accidental")
        alter = _TEXT_ALTER[shown] if shown is not None else carried.get((step, octave), key.get(step, 0))
        carried[(step, octave)] = alter
        out.append(12 * (octave + 1) + _NATURAL[step] + alter)
    return out


def _sounding(part: etree._Element) -> list[int]:
    return [12 * (int(n.findtext("pitch/octave") or 4) + 1) + _NATURAL[n.findtext("pitch/step") or "C"]
            + int(n.findtext("pitch/alter") or 0) for n in part.iter("note")]


@settings(max_examples=150, deadline=None)
@given(notes=st.lists(_note, min_size=1, max_size=10), fifths=st.integers(-7, 7), data=st.data())
def test_after_any_repitching_the_page_shows_what_sounds(notes: list[tuple[str, int, int, bool]], fifths: int,
                                                         data: st.DataObject) -> None:
    """Invariant: a bar engraved right, some of its notes repitched (letter, octave and alteration
    anything), respelt: every note shows what it sounds; a note whose need did not change keeps
    what it showed."""
    from serialkit.io.musicxml.annotate import insert_in_order

    part = _bar(notes, fifths)
    assert _page(part, fifths) == _sounding(part)
    elements = list(part.iter("note"))
    (group,) = bar_groups(part, {el: i for i, el in enumerate(elements)}).values()
    before = written_of(group, set())
    was_needed = needed(before)
    shown_before = [el.findtext("accidental") for el in elements]
    picks = data.draw(st.sets(st.integers(0, len(notes) - 1), min_size=1))
    letters = {}
    for i in picks:
        el = elements[i]
        letters[el] = el.findtext("pitch/step")
        step, octave, alter, _ = data.draw(_note)
        pitch = el.find("pitch")
        for child in list(pitch):
            pitch.remove(child)
        etree.SubElement(pitch, "step").text = step
        if alter:
            etree.SubElement(pitch, "alter").text = str(alter)
        etree.SubElement(pitch, "octave").text = str(octave)
    (group,) = bar_groups(part, {el: i for i, el in enumerate(elements)}).values()
    respell(group, before, letters, set(), insert_in_order)
    assert _page(part, fifths) == _sounding(part)
    now_needed = needed(written_of(group, set()))
    for i, el in enumerate(elements):
        if i not in picks and now_needed[i] == was_needed[i]:
            assert el.findtext("accidental") == shown_before[i]


# -- MEI: the same rule, on @accid ------------------------------------------------------------------

_MEI_ALTER = {"ff": -2, "f": -1, "n": 0, "s": 1, "x": 2, "ss": 2}


def _mei_as_read(path: Path) -> dict[str, int]:
    """Each MEI note's MIDI pitch as the page shows it (@accid or an <accid> child's, else the one
    shown earlier in the bar on that staff for that letter and octave, else the key signature),
    ignoring @accid.ges: what the eye reads."""
    from serialkit.io.mei.defs import key_signature

    ns = "{http://www.music-encoding.org/ns/mei}"
    root = etree.parse(str(path)).getroot()
    key: dict[str, int] = {}
    out: dict[str, int] = {}
    for el in root.iter(f"{ns}scoreDef", f"{ns}staffDef", f"{ns}measure"):
        if el.tag != f"{ns}measure":
            sig = key_signature(el, str(path))
            if sig is not None:
                key = sig
            continue
        for staff in el.iter(f"{ns}staff"):
            carried: dict[tuple[str, str], int] = {}
            for note in staff.iter(f"{ns}note"):
                step, octave = (note.get("pname") or "c").upper(), note.get("oct") or "4"
                child = note.find(f"{ns}accid")
                shown = note.get("accid") or (child.get("accid") if child is not None else None)
                alter = _MEI_ALTER[shown] if shown else carried.get((step, octave), key.get(step, 0))
                carried[(step, octave)] = alter
                out[note.get("{http://www.w3.org/XML/1998/namespace}id") or ""] = \
                    12 * (int(octave) + 1) + _NATURAL[step] + alter
    return out


def _verovio(path: Path) -> dict[str, int]:
    """Each note's MIDI pitch as verovio plays it."""
    import verovio

    tk = verovio.toolkit()
    assert tk.loadData(path.read_text(encoding="utf-8"))
    tk.renderToMIDI()
    ids = [n.get("{http://www.w3.org/XML/1998/namespace}id") for n in etree.parse(str(path)).getroot().iter(
        "{http://www.music-encoding.org/ns/mei}note")]
    return {i: int(tk.getMIDIValuesForElement(i)["pitch"]) for i in ids if i}


@pytest.mark.parametrize("gestural", [True, False], ids=["with-accid.ges", "without-accid.ges"])
@pytest.mark.parametrize("name,note,meant,neighbour", [
    ("carried-sharp", "n19", 62, "n20"),
    ("cancelled-natural", "n9", 65, "n14"),
])
def test_an_mei_repair_keeps_the_bars_accidentals_true(fixtures: Path, tmp_path: Path, name: str, note: str,
                                                       meant: int, neighbour: str, gestural: bool) -> None:
    """MEI as MusicXML, the later notes' @accid put right too: after the
    repair every note of the bar shows what it sounds — read by serialkit, by verovio and by the
    eye — with an MEI that says what each note sounds (@accid.ges, serialkit's) and one that does
    not (the bar's accidentals carried); only the repaired note and the neighbour change."""
    import re

    from serialkit.io import read_score
    from serialkit.io.mei.write import write_mei

    src = tmp_path / f"{name}.mei"
    write_mei(read_score(fixtures / "repair" / f"{name}.musicxml"), src)
    if not gestural:
        src.write_text(re.sub(r' accid\.ges="\w+"', "", src.read_text(encoding="utf-8")), encoding="utf-8")
    wanted = dict(_serialkit(src), **{note: meant})
    assert _mei_as_read(src) == _serialkit(src)  # the source was engraved right
    out = tmp_path / "fixed.mei"
    _repair(src, out)
    assert _serialkit(out) == wanted
    assert _mei_as_read(out) == wanted  # the page shows the same pitches
    assert _verovio(out) == wanted  # and verovio plays them
    import difflib

    old, new = src.read_text(encoding="utf-8").splitlines(), out.read_text(encoding="utf-8").splitlines()
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    changed = {m.group(1) for tag, i1, i2, _j1, _j2 in ops if tag != "equal" for line in old[i1:i2]
               if (m := re.search(r'xml:id="([^"]+)"', line))}
    assert neighbour in changed and changed <= {note, neighbour}  # (and the label added)


@pytest.mark.parametrize("name,note,meant", [("carried-sharp", "n19", 62), ("cancelled-natural", "n9", 65)])
def test_an_mei_repair_leaves_no_accid_child_that_says_nothing(fixtures: Path, tmp_path: Path, name: str, note: str,
                                                               meant: int) -> None:
    """An MEI that shows accidentals as ``<accid>`` children, as Webern's excerpts do (outside
    tester: a repair that took an accidental away left ``<accid xml:id="…"/>`` saying nothing):
    the child goes with its accidental, the page still shows what each note sounds."""
    from serialkit.io import read_score
    from serialkit.io.mei.write import write_mei

    mei = "{http://www.music-encoding.org/ns/mei}"
    src = tmp_path / f"{name}.mei"
    write_mei(read_score(fixtures / "repair" / f"{name}.musicxml"), src)
    tree = etree.parse(str(src))
    for k, el in enumerate(tree.getroot().iter(f"{mei}note")):
        if el.get("accid") is not None:  # @accid → an <accid> child with an id of its own
            child = etree.SubElement(el, f"{mei}accid", {"accid": el.attrib.pop("accid")})
            child.set("{http://www.w3.org/XML/1998/namespace}id", f"accid-{k}")
    tree.write(str(src), xml_declaration=True, encoding="UTF-8")
    wanted = dict(_serialkit(src), **{note: meant})
    out = tmp_path / "fixed.mei"
    _repair(src, out)
    assert _serialkit(out) == wanted
    assert _mei_as_read(out) == wanted
    assert _verovio(out) == wanted
    said = [a.attrib for a in etree.parse(str(out)).getroot().iter(f"{mei}accid")]
    assert said and all(a.get("accid") or a.get("accid.ges") for a in said), said
    etree.parse(str(out))  # well-formed
