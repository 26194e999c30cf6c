"""Bad input: each case gives a message naming the file (and line), exit code 2 and no output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from serialkit.cli import cli
from serialkit.core.errors import ScoreReadError, SerialkitError
from serialkit.io import read_score

HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
SCORE = (
    '<score-partwise version="4.0"><part-list><score-part id="P1"><part-name>x</part-name>'
    '</score-part></part-list><part id="P1"><measure number="1"><attributes><divisions>1'
    "</divisions></attributes>{body}</measure></part></score-partwise>\n"
)
NOTE = "<note><pitch><step>C</step><octave>4</octave></pitch><duration>4</duration></note>"
REST = "<note><rest/><duration>4</duration></note>"


def _xxe(tmp: Path) -> Path:
    secret = tmp / "secret.txt"
    secret.write_text("TOP-SECRET")
    p = tmp / "xxe.musicxml"
    doctype = f'<!DOCTYPE score-partwise [\n<!ENTITY xxe SYSTEM "file://{secret}">\n]>\n'
    p.write_text(HEAD + doctype + SCORE.format(body=NOTE.replace("<step>C", "<step>&xxe;C")))
    return p


def _laughs(tmp: Path) -> Path:
    ents = ['<!ENTITY lol "lol">']
    for i in range(1, 10):
        ents.append(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">')
    p = tmp / "laughs.musicxml"
    doctype = "<!DOCTYPE score-partwise [\n" + "\n".join(ents) + "\n]>\n"
    p.write_text(HEAD + doctype + SCORE.format(body=NOTE + "<!-- &lol9; -->").replace("<part-name>x", "<part-name>&lol9;"))
    return p


def _zip_bomb(tmp: Path) -> Path:
    p = tmp / "bomb.mxl"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("META-INF/container.xml", '<container><rootfiles><rootfile full-path="s.xml"/></rootfiles></container>')
        with zf.open("s.xml", "w", force_zip64=True) as fh:
            fh.write(HEAD.encode() + b"<score-partwise>")
            chunk = b" " * (1 << 20)
            for _ in range(80):  # 80 MiB of blanks, over the 64 MiB default limit
                fh.write(chunk)
            fh.write(b"</score-partwise>")
    assert p.stat().st_size < 1 << 20
    return p


def _dotdot(tmp: Path) -> Path:
    p = tmp / "escape.mxl"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("META-INF/container.xml", '<container><rootfiles><rootfile full-path="../../etc/score.xml"/></rootfiles></container>')
        zf.writestr("../../etc/score.xml", HEAD + SCORE.format(body=NOTE))
    return p


def _truncated(tmp: Path) -> Path:
    p = tmp / "truncated.musicxml"
    text = (Path(__file__).resolve().parents[2] / "fixtures" / "scores" / "features.musicxml").read_text()
    p.write_text(text[: len(text) // 2])
    return p


def _no_notes(tmp: Path) -> Path:
    p = tmp / "empty.musicxml"
    p.write_text(HEAD + SCORE.format(body=REST))
    return p


def _unknown(tmp: Path) -> Path:
    p = tmp / "notes.xml"
    p.write_text(HEAD + "<html><body>not a score</body></html>\n")
    return p


def _binary(tmp: Path) -> Path:
    p = tmp / "picture.musicxml"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    return p


CASES = {
    "xxe": (_xxe, r"xxe\.musicxml:3: .*entity"),
    "billion-laughs": (_laughs, r"laughs\.musicxml:3: .*entity"),
    "zip-bomb": (_zip_bomb, r"bomb\.mxl: .*(limit|zip bomb)"),
    "dotdot-member": (_dotdot, r"escape\.mxl: .*outside the archive"),
    "truncated": (_truncated, r"truncated\.musicxml:\d+: not well-formed XML"),
    "no-notes": (_no_notes, r"empty\.musicxml: the score contains no notes"),
    "unknown-format": (_unknown, r"notes\.xml:1: not a MusicXML, MEI, .* file \(its root element is <html>"),
    "binary": (_binary, r"picture\.musicxml:1: not a MusicXML, MEI, .* file \(binary content"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_library_raises_score_read_error(case: str, tmp_path: Path) -> None:
    make, pattern = CASES[case]
    path = make(tmp_path)
    with pytest.raises(ScoreReadError) as info:
        read_score(path)
    assert str(path) in str(info.value)
    assert re.search(pattern, str(info.value)), str(info.value)
    assert "TOP-SECRET" not in str(info.value)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("out_name", ["out.musicxml", "out.mei"])
def test_cli_exit_2_and_no_output(case: str, out_name: str, tmp_path: Path) -> None:
    make, pattern = CASES[case]
    path = make(tmp_path)
    out = tmp_path / "out" / out_name
    out.parent.mkdir()
    result = CliRunner().invoke(cli, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert re.search(pattern, result.stderr), result.stderr
    assert result.stderr.startswith("error: ")
    assert not out.exists()
    assert list((tmp_path / "out").iterdir()) == []


def test_cli_subprocess_names_file_and_line(tmp_path: Path) -> None:
    path = _truncated(tmp_path)
    out = tmp_path / "x.musicxml"
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "serialkit"), "convert", str(path), "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert re.search(rf"{re.escape(str(path))}:\d+:", proc.stderr)
    assert not out.exists()


def test_size_limit_is_configurable(fixtures: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fixtures / "scores" / "features.musicxml"
    with pytest.raises(ScoreReadError, match="over the limit of 1000 bytes"):
        read_score(path, limit=1000)
    monkeypatch.setenv("SERIALKIT_MAX_SCORE_BYTES", "2000")
    with pytest.raises(ScoreReadError, match="over the limit of 2000 bytes"):
        read_score(path)
    monkeypatch.setenv("SERIALKIT_MAX_SCORE_BYTES", "4000")
    with pytest.raises(ScoreReadError, match="limit of 4000 bytes"):
        read_score(fixtures / "scores" / "features.mxl")  # small archive, larger score inside


def test_entities_never_reach_the_network_or_disk(tmp_path: Path) -> None:
    path = _xxe(tmp_path)
    with pytest.raises(ScoreReadError):
        read_score(path, format="musicxml")


def test_utf16_scores_are_read_and_their_entities_refused(fixtures: Path, tmp_path: Path) -> None:
    """Finale writes UTF-16 MusicXML: it must read, and the entity check must still see it."""
    text = (fixtures / "scores" / "features.musicxml").read_text(encoding="utf-8")
    good = tmp_path / "utf16.musicxml"
    good.write_bytes(text.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16"))
    assert len(read_score(good).events) == len(read_score(fixtures / "scores" / "features.musicxml").events)
    bad = tmp_path / "utf16-xxe.musicxml"
    xxe = _xxe(tmp_path).read_text().replace('encoding="UTF-8"', 'encoding="UTF-16"')
    for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
        bad.write_bytes(xxe.encode(encoding))
        with pytest.raises(ScoreReadError, match=r"utf16-xxe\.musicxml:3: .*entity"):
            read_score(bad)


@pytest.mark.parametrize("tag, message", [
    ({"form": "P0", "position": 12}, "events[0].tag.position: 12 is greater than the maximum of 11"),
    ({"form": "Q3", "position": 3}, "events[0].tag.form: 'Q3' is not a row form"),
])
def test_a_bad_tag_is_named_not_reported_as_not_null(tmp_path: Path, tag: dict[str, Any], message: str) -> None:
    """A tag's own mistake is named, not 'is not of type null' (outside tester)."""
    from serialkit.io.jsonio import load_piece

    path = tmp_path / "piece.json"
    path.write_text(json.dumps({"format": "serialkit-piece", "version": 1, "events": [
        {"id": "a", "voice": "v1", "onset": 0, "duration": 1, "midi": 60, "tag": tag}]}), encoding="utf-8")
    with pytest.raises(SerialkitError) as err:
        load_piece(path)
    assert message in str(err.value)
