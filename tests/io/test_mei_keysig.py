"""MEI key signatures in every form MEI 3, 4 and 5 write them: ``@keysig`` (MEI 5), ``@key.sig``
(MEI 3–4) with ``@key.sig.mixed``, ``<keySig @sig>`` (also ``@sig.mixed`` and ``<keyAccid>``
children), on the scoreDef or the staffDef, changed between bars or inside one. A note showing
no accidental sounds as its key says; the MusicXML conversion writes the same key; ``repair``
changes no correct note and leaves the key as the source wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from serialkit.cli import cli
from serialkit.core.errors import ScoreReadError
from serialkit.io import read_score
from serialkit.io.build import midi_of
from serialkit.io.mei.convert import mei_musicxml_bytes

HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<mei xmlns="http://www.music-encoding.org/ns/mei" '
        'meiversion="{version}"><meiHead><fileDesc><titleStmt><title>k</title></titleStmt><pubStmt/>'
        '</fileDesc></meiHead><music><body><mdiv><score>\n')
TAIL = "</score></mdiv></body></music></mei>\n"
SHARPS, FLATS = "FCGDAEB", "BEADGCF"


def _mei(score_def: str, staff_def: str, bars: list[str], version: str = "5.0") -> str:
    """A one-staff MEI document: ``score_def``/``staff_def`` are the attributes or children that
    state the key (``<keySig…/>`` children when they start with ``<``); ``bars``: each bar's
    layer content."""
    sd_attrs, sd_kids = ("", score_def) if score_def.startswith("<") else (score_def, "")
    st_attrs, st_kids = ("", staff_def) if staff_def.startswith("<") else (staff_def, "")
    measures = "".join(f'<measure n="{i + 1}"><staff n="1"><layer n="1">{b}</layer></staff></measure>\n'
                       for i, b in enumerate(bars))
    return (HEAD.format(version=version)
            + f'<scoreDef meter.count="4" meter.unit="4" {sd_attrs}>{sd_kids}<staffGrp>'
            + f'<staffDef n="1" lines="5" clef.shape="G" clef.line="2" label="Oboe" {st_attrs}>{st_kids}'
            + "</staffDef></staffGrp></scoreDef>\n<section>\n" + measures + "</section>" + TAIL)


def _notes(letters: str, octave: int = 4) -> str:
    return "".join(f'<note pname="{c.lower()}" oct="{octave}" dur="4"/>'
                   for c in letters)


def _midis(tmp_path: Path, text: str, name: str = "k.mei") -> list[int]:
    path = tmp_path / name
    path.write_text(text)
    return [e.midi for e in sorted(read_score(path).events, key=lambda e: e.onset)]


FORMS = {
    "scoreDef @keysig (MEI 5)": ('keysig="{sig}"', ""),
    "staffDef @keysig (MEI 5)": ("", 'keysig="{sig}"'),
    "scoreDef @key.sig (MEI 4)": ('key.sig="{sig}"', ""),
    "staffDef @key.sig (MEI 4)": ("", 'key.sig="{sig}"'),
    "scoreDef <keySig sig>": ('<keySig sig="{sig}"/>', ""),
    "staffDef <keySig sig>": ("", '<keySig sig="{sig}"/>'),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_of_three_sharps_sharpens_f_c_and_g(form: str, tmp_path: Path) -> None:
    """The tester's piece: an F, C and G written under three sharps sound F#, C#, G#; D and A stay."""
    score_def, staff_def = FORMS[form]
    text = _mei(score_def.format(sig="3s"), staff_def.format(sig="3s"), [_notes("FCGD"), _notes("A")])
    assert _midis(tmp_path, text) == [66, 61, 68, 62, 69]


@settings(max_examples=40, deadline=None)
@given(count=st.integers(0, 7), sign=st.sampled_from("sf"), form=st.sampled_from(sorted(FORMS)))
def test_a_key_of_any_size_alters_exactly_its_letters(count: int, sign: str, form: str) -> None:
    """Invariant: under a key of N sharps (flats) the first N letters of the order of sharps
    (flats) sound a semitone up (down), every other letter as written — in every form."""
    import tempfile

    sig = f"{count}{sign}" if count else "0"
    score_def, staff_def = FORMS[form]
    text = _mei(score_def.format(sig=sig), staff_def.format(sig=sig), [_notes("CDEF"), _notes("GAB")])
    order = SHARPS if sign == "s" else FLATS
    wanted = [midi_of(c, (1 if sign == "s" else -1) if c in order[:count] else 0, 4, "-") for c in "CDEFGAB"]
    with tempfile.TemporaryDirectory() as tmp:
        assert _midis(Path(tmp), text) == wanted


@pytest.mark.parametrize("score_def", [
    'key.sig="mixed" key.sig.mixed="f4s b4f"',  # MEI 3–4
    '<keySig sig="mixed" sig.mixed="f5s b4f"/>',  # MEI 4
    '<keySig><keyAccid pname="f" accid="s"/><keyAccid pname="b" accid="f"/></keySig>',  # MEI 5
    'keysig="mixed"><keySig sig="mixed"><keyAccid pname="f" accid="s" oct="5"/>'
    '<keyAccid pname="b" accid="f"/></keySig',  # @keysig="mixed" and its accidentals apart
])
def test_a_mixed_key_signature_alters_its_own_letters(score_def: str, tmp_path: Path) -> None:
    if score_def.startswith("keysig="):  # attribute and child both
        attrs, kids = score_def.split(">", 1)
        text = _mei("", "", [_notes("FBC")]).replace('meter.unit="4" ', f'meter.unit="4" {attrs} ', 1)
        text = text.replace("<staffGrp>", kids + "><staffGrp>", 1).replace("</keySig>>", "</keySig>", 1)
    else:
        text = _mei(score_def, "", [_notes("FBC")])
    assert _midis(tmp_path, text) == [66, 70, 60]


def test_key_changes_between_bars_and_inside_a_bar(tmp_path: Path) -> None:
    """A scoreDef between bars (``@keysig``) and a ``<keySig>`` in the layer change the key from
    where they stand; the accidental-free F is read each time by the key then in force."""
    bars = [_notes("F"), _notes("F"), _notes("F") + '<keySig sig="2f"/>' + _notes("B")]
    text = _mei('keysig="1s"', "", bars)
    text = text.replace('<measure n="2">', '<scoreDef keysig="0"/><measure n="2">', 1)
    text = text.replace('<measure n="3">', '<staffDef n="1" keysig="4s"/><measure n="3">', 1)
    assert _midis(tmp_path, text) == [66, 65, 66, 70]


def test_a_staff_key_outranks_the_score_key(tmp_path: Path) -> None:
    assert _midis(tmp_path, _mei('keysig="3f"', 'keysig="1s"', [_notes("FBE")])) == [66, 71, 64]


@pytest.mark.parametrize("bad", ['keysig="9s"', 'key.sig="3x"', 'key.sig="mixed" key.sig.mixed="h4s"',
                                 '<keySig><keyAccid pname="f" accid="zz"/></keySig>'])
def test_a_malformed_key_signature_is_one_error_naming_the_line(bad: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.mei"
    path.write_text(_mei(bad, "", [_notes("F")]))
    with pytest.raises(ScoreReadError) as info:
        read_score(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}:") and "key" in message.lower()


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_musicxml_conversion_keeps_the_key_and_the_pitches(form: str, tmp_path: Path) -> None:
    score_def, staff_def = FORMS[form]
    src = tmp_path / "k.mei"
    src.write_text(_mei(score_def.format(sig="3s"), staff_def.format(sig="3s"), [_notes("FCGD")]))
    data = mei_musicxml_bytes(src)
    root = etree.fromstring(data)
    assert [k.findtext("fifths") for k in root.iter("key")] == ["3"]
    out = tmp_path / "k.musicxml"
    out.write_bytes(data)
    assert [e.midi for e in read_score(out).events] == [e.midi for e in read_score(src).events]


def test_a_mixed_key_converts_to_a_non_traditional_musicxml_key(tmp_path: Path) -> None:
    src = tmp_path / "k.mei"
    src.write_text(_mei('<keySig><keyAccid pname="f" accid="s"/><keyAccid pname="b" accid="f"/></keySig>',
                        "", [_notes("FB")]))
    key = next(etree.fromstring(mei_musicxml_bytes(src)).iter("key"))
    assert [(c.tag, c.text) for c in key] == [("key-step", "F"), ("key-alter", "1"),
                                              ("key-step", "B"), ("key-alter", "-1")]


ROW = "A F# G G# E F B A# D C# C D#"  # webern-op21, as the tester's piece states it


@pytest.mark.parametrize(("version", "form"), [("5.0", 'keysig="3s"'), ("4.0.1", 'key.sig="3s"')])
def test_repair_changes_no_correct_note_under_a_key_and_keeps_its_form(
    version: str, form: str, tmp_path: Path
) -> None:
    """The row written under three sharps, F, C and G without accidentals (the key sharpens
    them): check passes and repair writes nothing. With one wrong note (A# written with a
    natural sign as A) repair mends only that one; the key stays written as the source wrote it."""
    right = ['<note xml:id="a" pname="a" oct="4" dur="4"/><note xml:id="fs" pname="f" oct="4" dur="4"/>'
             '<note xml:id="g" pname="g" oct="4" dur="4" accid="n"/>'
             '<note xml:id="gs" pname="g" oct="4" dur="4" accid="s"/>',
             '<note xml:id="e" pname="e" oct="4" dur="4"/><note xml:id="f" pname="f" oct="4" dur="4" accid="n"/>'
             '<note xml:id="b" pname="b" oct="4" dur="4"/><note xml:id="bf" pname="b" oct="4" dur="4" accid="f"/>',
             '<note xml:id="d" pname="d" oct="5" dur="4"/><note xml:id="c" pname="c" oct="5" dur="4"/>'
             '<note xml:id="cn" pname="c" oct="5" dur="4" accid="n"/>'
             '<note xml:id="ef" pname="e" oct="5" dur="4" accid="f"/>']
    src = tmp_path / "row.mei"
    src.write_text(_mei(form, "", right, version))
    assert [e.midi for e in sorted(read_score(src).events, key=lambda e: e.onset)] == \
        [69, 66, 67, 68, 64, 65, 71, 70, 74, 73, 72, 75]
    runner = CliRunner()
    result = runner.invoke(cli, ["check", str(src), "--row", ROW])
    assert result.exit_code == 0, result.output
    out = tmp_path / "fixed.mei"
    result = runner.invoke(cli, ["repair", str(src), "--row", ROW, "-o", str(out), "--no-review"])
    assert result.exit_code == 0 and "0 notes changed" in result.output, result.output
    wrong = src.read_text().replace('pname="b" oct="4" dur="4" accid="f"', 'pname="a" oct="4" dur="4" accid="n"')
    bad = tmp_path / "wrong.mei"
    bad.write_text(wrong)
    result = runner.invoke(cli, ["repair", str(bad), "--row", ROW, "-o", str(out), "--no-review"])
    assert result.exit_code == 0 and "1 note changed" in result.output, result.output
    fixed = out.read_text()
    assert form in fixed and fixed.count("keysig") + fixed.count("key.sig") == 1
    assert [e.midi for e in sorted(read_score(out).events, key=lambda e: e.onset)] == \
        [e.midi for e in sorted(read_score(src).events, key=lambda e: e.onset)]
