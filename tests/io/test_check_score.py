"""``check_score`` refuses what ``read_score`` refuses, with the same error, and gives its Piece."""

from __future__ import annotations

from pathlib import Path

import pytest

from serialkit.core.errors import SerialkitError
from serialkit.io import check_score, read_score
from serialkit.io.files.safety import parse_xml
from tests.conftest import FIXTURES

SCORE = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<score-partwise version="4.0"><part-list><score-part id="P1"><part-name>x</part-name>'
    '</score-part></part-list><part id="P1"><measure number="1"><attributes><divisions>{div}'
    "</divisions></attributes>{body}</measure></part></score-partwise>\n"
)


def _note(step: str = "C", octave: str = "4", duration: str = "4", extra: str = "", nid: str = "") -> str:
    ident = f' id="{nid}"' if nid else ""
    return (f"<note{ident}><pitch><step>{step}</step>{extra}<octave>{octave}</octave></pitch>"
            f"<duration>{duration}</duration></note>")


CASES = {
    "good": _note() + _note("D"),
    "step_h": _note("H"),
    "negative_duration": _note(duration="-1") + _note("D"),
    "zero_duration": _note(duration="0"),
    "same_id_twice": _note(nid="a") + _note("D", nid="a"),
    "too_high": _note(octave="12"),
    "too_low": _note(octave="-2"),
    "no_octave": "<note><pitch><step>C</step></pitch><duration>4</duration></note>",
    "bad_alter": _note(extra="<alter>x</alter>"),
    "bad_duration": _note(duration="q"),
    "rest_only": "<note><rest/><duration>4</duration></note>",
    "tied": (_note(duration="2").replace("</note>", '<tie type="start"/></note>')
             + _note(duration="2").replace("</note>", '<tie type="stop"/></note>')),
    "backup_too_far": _note() + "<backup><duration>8</duration></backup>" + _note("E"),
    "negative_later": _note() + _note("D", duration="-1"),
    "transposed_out": ('<attributes><transpose><chromatic>-12</chromatic><octave-change>-1</octave-change>'
                       "</transpose></attributes>" + _note(octave="0")),
    "grace_only": "<note><grace/><pitch><step>C</step><octave>4</octave></pitch></note>",
    "bad_staff": _note().replace("</note>", "<staff>x</staff></note>"),
    "staff_transposed_out": ('<attributes><transpose number="2"><chromatic>-3</chromatic>'
                             "<octave-change>-5</octave-change></transpose></attributes>"
                             + _note().replace("</note>", "<staff>2</staff></note>") + _note("D")),
    "tuplet": "".join(_note(duration="1").replace("</note>", "<type>eighth</type><time-modification>"
                                                  "<actual-notes>3</actual-notes><normal-notes>2"
                                                  "</normal-notes></time-modification></note>")
                      for _ in range(3)),
    "chord_and_cue": (_note() + _note("E").replace("<note>", "<note><chord/>")
                      + _note("G").replace("<note>", "<note><cue/>")),
    "no_duration": "<note><pitch><step>C</step><octave>4</octave></pitch></note>",
    "forward_bad": _note() + "<forward><duration>z</duration></forward>",
    "bad_time": '<attributes><time><beats>3</beats><beat-type>q</beat-type></time></attributes>' + _note(),
    "negative_forward": _note() + "<forward><duration>-9</duration></forward>" + _note("E"),
    # texts and shapes the check's quick test (``read._plain``) leaves to the walk
    "comment_in_duration": _note(duration="<!-- d -->4"),
    "two_durations": _note().replace("</note>", "<duration>0</duration></note>") + _note("D"),
    "lower_step": _note("c"),
    "octave_nine": _note("B", octave="9", extra="<alter>2</alter>"),
    "half_alter": _note(extra="<alter>0.5</alter>"),
    "empty_alter": _note(extra="<alter/>"),
    "cue_without_duration": _note() + "<note><cue/><pitch><step>D</step><octave>4</octave></pitch></note>",
    "empty_staff": _note().replace("</note>", "<staff/></note>"),
    "spaced_staff": _note().replace("</note>", "<staff> 2 </staff></note>"),
    "no_step": _note() + "<note><pitch><octave>4</octave></pitch><duration>4</duration></note>",
    "two_octaves_then_none": (_note(extra="<octave>5</octave>")
                              + "<note><pitch><step>D</step></pitch><duration>4</duration></note>"),
    "two_steps_then_none": (_note(step="C</step><step>D")
                            + "<note><pitch><octave>4</octave></pitch><duration>4</duration></note>"),
    "backup_without_duration": _note() + "<backup/>" + _note("E"),
    "cdata_duration": _note(duration="<![CDATA[4]]>"),
    "element_in_step": _note(step="<x/>C"),
    "zero_transposition": ("<attributes><transpose><chromatic>0</chromatic></transpose></attributes>"
                           + _note()),
    "duration_elsewhere": (_note() + "<figured-bass><figure><figure-number>6</figure-number></figure>"
                           "<duration>x</duration></figured-bass>"),
}


def _outcome(fn: object) -> object:
    try:
        return fn()  # type: ignore[operator]
    except SerialkitError as exc:
        return (type(exc), str(exc))


@pytest.mark.parametrize("divisions", ["1", "0"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_check_score_agrees_with_read_score(tmp_path: Path, case: str, divisions: str) -> None:
    path = tmp_path / f"{case}.musicxml"
    path.write_text(SCORE.format(div=divisions, body=CASES[case]))
    tree = parse_xml(path.read_bytes(), str(path))
    expected = _outcome(lambda: read_score(path))
    got = _outcome(lambda: check_score(path, parsed=tree)())
    assert got == expected
    # without keeping the notes from the check (render's usual case): the same error, or Piece
    assert _outcome(lambda: check_score(path, parsed=tree, keep=False)()) == expected
    assert _outcome(lambda: check_score(path)()) == expected


@pytest.mark.parametrize("divisions", ["1", "0", "2.5"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_quick_check_agrees_with_the_walk(tmp_path: Path, case: str, divisions: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's quick test of a score's texts and shape (``read._plain``) answers only where
    the walk would: its answer (or error) is the walk's."""
    from serialkit.io.musicxml import read

    path = tmp_path / f"{case}.musicxml"
    path.write_text(SCORE.format(div=divisions, body=CASES[case]))
    tree = parse_xml(path.read_bytes(), str(path))
    quick = _outcome(lambda: read.checked(tree, str(path)))
    if read._plain(tree.getroot(), str(path)):
        assert quick is True
    monkeypatch.setattr(read, "_plain", lambda root, where: False)
    assert quick == _outcome(lambda: read.checked(tree, str(path)))


@pytest.mark.parametrize("name", ["render/duet.musicxml", "scores/features.musicxml", "scores/features.mxl",
                                  "scores/features.mei", "repair/tied-wrong.musicxml"])
def test_check_score_gives_the_piece_read_score_reads(name: str) -> None:
    path = FIXTURES / name
    tree = parse_xml(path.read_bytes(), str(path)) if path.suffix != ".mxl" else None
    root = tree.getroot() if tree is not None else None
    before = None if root is None else len(list(root.iter()))
    assert check_score(path, parsed=tree)() == read_score(path)
    assert check_score(path, parsed=tree, keep=False)() == read_score(path)
    assert root is None or len(list(root.iter())) == before  # the parse is left as it was


@pytest.mark.parametrize("nid", ["sk_C_2d_", "sk_C_zz_", "sk_C_2d", "plain"])
def test_check_score_reads_ids_serialkit_escaped(tmp_path: Path, nid: str) -> None:
    """A file serialkit wrote has its ids escaped (``encode_id``): a malformed one is refused
    alike whether or not the check keeps its notes."""
    path = tmp_path / "ours.musicxml"
    text = SCORE.format(div="1", body=_note(nid=nid) + _note("D"))
    path.write_text(text.replace("<part-list>", "<identification><encoding><software>serialkit</software>"
                                 "</encoding></identification><part-list>"))
    tree = parse_xml(path.read_bytes(), str(path))
    expected = _outcome(lambda: read_score(path))
    assert _outcome(lambda: check_score(path, parsed=tree, keep=False)()) == expected
    assert _outcome(lambda: check_score(path, parsed=tree)()) == expected
