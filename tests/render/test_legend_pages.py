"""Every page says what its colours mean: a legend on each page names the marks drawn on that page
(an olive ambiguity on page 3 is explained on page 3), and nothing that is not on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serialkit.render import render
from serialkit.render.legend import legend_items
from serialkit.render.marks import AMBIGUOUS_COLOR, Marks, NoteMark

LEGEND = re.compile(r'<g class="sk-legend">.*?</g></g>(?=</svg>)', re.S)
NOTE_CLASSES = re.compile(r'class="note ([^"]*)"')


def _legend(page: str) -> str:
    found = LEGEND.search(page)
    return found.group(0) if found else ""


def test_the_ambiguity_entry_uses_check_s_word_and_olive() -> None:
    marks = Marks({"a": NoteMark("a", "P0:3", ambiguous=True)})
    items = legend_items(marks)
    assert ("ambiguous", AMBIGUOUS_COLOR, "ambiguity (more than one reading)") in items
    assert AMBIGUOUS_COLOR == "#999933"  # olive, as the README and docs/guides/rendering.md name it


@pytest.mark.corpus
def test_op21_each_page_explains_the_marks_it_shows(corpus: Path, tmp_path: Path) -> None:
    result = render(corpus / "webern-op21-i-mm1-25.mei", tmp_path / "op21.svg")
    assert result.pages >= 3
    olive_pages = 0
    for path in result.files:
        page = path.read_text()
        legend = _legend(page)
        assert "row form : order position" in legend, path.name  # every page is labelled
        # a note's cue: a violation's outline over an unexplained note's (``NoteMark.cue``)
        notes = [set(classes.split()) for classes in NOTE_CLASSES.findall(page)]
        kinds = {"viol" if "sk-viol" in n else "unexplained" if "sk-unexplained" in n
                 else "ambiguous" if "sk-ambiguous" in n else "" for n in notes}
        assert ("sk-legend-ambiguous" in legend) == ("ambiguous" in kinds), path.name
        assert ("sk-legend-unexplained" in legend) == ("unexplained" in kinds), path.name
        assert ("sk-legend-violation" in legend) == ("viol" in kinds), path.name
        olive_pages += "ambiguous" in kinds
    assert olive_pages >= 2  # olive labels past the first page, each page with its legend


def test_a_labelled_copy_renders_with_the_legend_s_colours_only(tmp_path: Path) -> None:
    """``annotate`` colours notes by row form (blue, green, orange, pink: the rung colours too);
    a render that draws its own labels leaves them out, as it leaves out annotate's labels."""
    from click.testing import CliRunner

    from serialkit.cli import cli

    labelled = tmp_path / "anna-labelled.musicxml"
    source = Path(__file__).resolve().parents[2] / "fixtures" / "classroom" / "anna.musicxml"
    CliRunner().invoke(cli, ["annotate", str(source), "-o", str(labelled)], catch_exceptions=False)
    assert 'color="#' in labelled.read_text()
    result = render(labelled, tmp_path / "anna.svg", row="D C# A A# F D# E C G# G F# B")
    page = result.files[0].read_text()
    colours = set(re.findall(r'(?:color="|fill:|stroke:)(#[0-9A-Fa-f]{6})', page))
    assert colours <= {"#000000"}, colours  # nothing marked: black labels and notes only
