"""What annotating adds to a note, whatever the format: an ``Annotation`` (label and colour) per
event id, and the label carriers a writer can put it in.

>>> Annotation("P0:1", "red")
Annotation(label='P0:1', color='red')
>>> musicxml_color("red")
'#FF0000'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from serialkit.core.errors import ScoreWriteError

__all__ = ["DEFAULT_LABELS", "LABEL_STYLES", "Annotation", "Annotations", "lyric_lines", "musicxml_color"]

LABEL_STYLES = ("lyric", "fingering", "words")
DEFAULT_LABELS = "words"
"""The label carrier that survives the most programs tested (see the README's table)."""
_Staff = TypeVar("_Staff", bound=Hashable)  # how a writer names a staff (lyric_lines)

_NAMED = {
    "red": "#FF0000", "blue": "#0000FF", "green": "#008000", "black": "#000000",
    "orange": "#FF8C00", "purple": "#800080", "gray": "#808080", "grey": "#808080",
    "magenta": "#FF00FF", "teal": "#008080", "brown": "#8B4513",
}
_HEX = re.compile(r"^#?([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8}|[0-9A-Fa-f]{3})$")


@dataclass(frozen=True, slots=True)
class Annotation:
    """What to add to one note: a label (``P0:3``) and a colour (``#RRGGBB`` or a name)."""

    label: str | None = None
    color: str | None = None


def musicxml_color(value: str) -> str:
    """A colour as MusicXML wants it (``#RRGGBB`` / ``#AARRGGBB``, upper case)."""
    text = value.strip()
    if text.lower() in _NAMED:
        return _NAMED[text.lower()]
    match = _HEX.match(text)
    if match is None:
        raise ScoreWriteError(f"colour {value!r} is not #RRGGBB, #AARRGGBB or a known name")
    digits = match.group(1).upper()
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return "#" + digits


Annotations = Mapping[str, Annotation]
"""What to add to a score: event id (as ``read_score`` reports it) → Annotation."""


def lyric_lines(
    labelled: Iterable[tuple[_Staff, str, int]], taken: Mapping[_Staff, Collection[int]] | None = None
) -> dict[tuple[_Staff, str, int], int]:
    """The lyric line (``number``, MEI ``verse@n``) of each label carried as a lyric, so that no
    two voices of a staff share a line (MuseScore 3 prints them on top of each other) and the
    score's own lyrics keep theirs. ``labelled``: (staff, voice, k) per label, k the note's index
    in its chord (a chord's k-th note gets a line of its own); ``taken[staff]``: the numbers the
    score's own lyrics use there. Each voice of a staff gets one line per chord index it needs,
    numbered up from 1 past the taken numbers, voice 1 first."""
    need: dict[_Staff, dict[str, int]] = {}
    for staff, voice, k in labelled:
        voices = need.setdefault(staff, {})
        voices[voice] = max(voices.get(voice, 0), k + 1)
    out: dict[tuple[_Staff, str, int], int] = {}
    for staff, voices in need.items():
        used = set((taken or {}).get(staff, ()))
        number = 0
        for voice in sorted(voices, key=lambda v: (0, int(v), v) if v.isdigit() else (1, 0, v)):
            for k in range(voices[voice]):
                number += 1
                while number in used:
                    number += 1
                out[(staff, voice, k)] = number
    return out
