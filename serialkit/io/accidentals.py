"""Written accidentals in MusicXML: which notes of a bar must show one, and keeping them true when
a note's pitch is rewritten in place (``serialkit repair``).

MusicXML gives every note its pitch (``<alter>``) and, apart from it, the accidental an engraver
shows (``<accidental>``). A reader of the printed page knows a note's pitch from what is shown:
an accidental holds for the rest of the bar on its staff, for that letter and octave; without one
the key signature holds. So rewriting one note's pitch can change what the notes after it in its
bar must show: a sharp that carried to a later note of that letter is gone, a natural that
cancelled it is no longer needed. :func:`needed` is that rule; :func:`bar_groups` finds a
MusicXML tree's bars, staff by staff, with each note's key; :func:`respell` puts the shown
accidentals of a bar right after some of its notes were repitched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

__all__ = [
    "ACCIDENTAL_TEXT", "Written", "bar_groups", "key_alters", "needed", "respell", "shows_unneeded", "written_of",
    "written_pitch",
]

ACCIDENTAL_TEXT = {-2: "flat-flat", -1: "flat", 0: "natural", 1: "sharp", 2: "double-sharp"}
"""The ``<accidental>`` text of an alteration in semitones."""
_SHARPS = "FCGDAEB"
"""The order sharps enter a key signature (flats: the reverse)."""
_KEEP = ("cautionary", "editorial", "parentheses", "bracket")
"""Attributes that make a shown accidental deliberate: never taken out as redundant."""


def key_alters(fifths: int) -> dict[str, int]:
    """The alteration of each letter in a key of ``fifths`` (> 0 sharps, < 0 flats)."""
    if fifths >= 0:
        return {step: 1 for step in _SHARPS[:min(fifths, 7)]}
    return {step: -1 for step in _SHARPS[::-1][:min(-fifths, 7)]}


@dataclass(frozen=True, slots=True)
class Written:
    """One notehead as the page shows it: letter, octave, alteration, whether it is the
    continuation of a tie (it shows no accidental), and its key's alteration of its letter."""

    step: str
    octave: int
    alter: int
    tied: bool = False
    key: int = 0


def needed(notes: Sequence[Written]) -> list[bool]:
    """For the notes of one bar on one staff, in the order they sound: which must show an
    accidental for a reader to hear their pitch — an alteration other than the one the bar has
    carried to this letter and octave so far (the key signature's, until a note shows another).
    A tied continuation shows none and changes nothing (the note it continues set the carry)."""
    carried: dict[tuple[str, int], int] = {}
    out = []
    for n in notes:
        if n.tied:
            out.append(False)
            continue
        here = (n.step, n.octave)
        out.append(n.alter != carried.get(here, n.key))
        carried[here] = n.alter
    return out


def shows_unneeded(bars: Iterable[tuple[Sequence[Written], Sequence[bool]]]) -> bool:
    """Whether a score's habit is to show an accidental on notes that need none (Webern's Op. 27
    writes a natural before every natural note): true when most of its notes that need no
    accidental show one. ``bars``: each bar's notes as written and whether each shows one. Such a
    score's repaired notes show their accidental, and no note loses one (its convention, kept)."""
    unneeded = shown = 0
    for written, shows in bars:
        for w, need, show in zip(written, needed(written), shows, strict=True):
            if not w.tied and not need:
                unneeded += 1
                shown += bool(show)
    return 2 * shown > unneeded > 0


def written_pitch(note: Any) -> tuple[str, int, int] | None:
    """A MusicXML ``<note>``'s written (step, alter, octave), or None for a rest or unpitched note."""
    pitch = note.find("pitch")
    if pitch is None:
        return None
    step = (pitch.findtext("step") or "C").strip().upper()
    alter = round(float((pitch.findtext("alter") or "0").strip() or 0))
    octave = int((pitch.findtext("octave") or "4").strip() or 4)
    return step, alter, octave


def _staff(note: Any) -> int:
    text = (note.findtext("staff") or "1").strip()
    return int(text) if text.isdigit() else 1


def _part_of(el: Any) -> Any:
    for anc in el.iterancestors("part"):
        return anc
    return None


def bar_groups(root: Any, onsets: Mapping[Any, Fraction]) -> dict[tuple[Any, int], list[tuple[Any, int]]]:
    """The pitched notes of a MusicXML tree by bar and staff (key: the element holding the bar's
    notes — a partwise ``<measure>``, a timewise measure's ``<part>`` — and the staff number), in
    the order they sound (``onsets``: each note element's onset; document order within one
    onset), each with the alteration its key gives it. A ``<key>`` holds for its part from where
    it stands (for one staff when it has a ``number``)."""
    keys: dict[Any, dict[int, dict[str, int]]] = {}
    groups: dict[tuple[Any, int], list[tuple[int, Any, dict[str, int]]]] = {}
    for index, el in enumerate(root.iter("key", "note")):
        part = _part_of(el)
        state = keys.setdefault(part, {})
        if el.tag == "key":
            alters = _key_element(el)
            number = (el.get("number") or "").strip()
            if number.isdigit():
                state[int(number)] = alters
            else:
                state.clear()
                state[0] = alters
            continue
        if el not in onsets or el.find("pitch") is None:
            continue
        staff = _staff(el)
        groups.setdefault((el.getparent(), staff), []).append((index, el, state.get(staff, state.get(0, {}))))
    out: dict[tuple[Any, int], list[tuple[Any, int]]] = {}
    for group, notes in groups.items():
        notes.sort(key=lambda x: (onsets[x[1]], x[0]))
        out[group] = [(el, key.get((written_pitch(el) or ("C",))[0], 0)) for _, el, key in notes]
    return out


def _key_element(key: Any) -> dict[str, int]:
    fifths = key.findtext("fifths")
    if fifths is not None and fifths.strip().lstrip("-").isdigit():
        return key_alters(int(fifths))
    alters: dict[str, int] = {}  # a non-traditional key: key-step / key-alter pairs
    steps, values = key.findall("key-step"), key.findall("key-alter")
    for step, value in zip(steps, values, strict=False):
        try:
            alters[(step.text or "").strip().upper()] = round(float((value.text or "0").strip()))
        except ValueError:
            continue
    return alters


def _written(group: Sequence[tuple[Any, int]], tied: set[Any]) -> list[Written]:
    out = []
    for el, key in group:
        step, alter, octave = written_pitch(el) or ("C", 0, 4)
        out.append(Written(step, octave, alter, el in tied, key))
    return out


def respell(group: Sequence[tuple[Any, int]], before: Sequence[Written], changed: Mapping[Any, str],
            tied: set[Any], insert: Any, every: bool = False) -> None:
    """Put the shown accidentals of one bar (``group``, from :func:`bar_groups`, read again after
    the notes of ``changed`` were repitched; ``before``: the bar as it was) right. A repitched
    note (``changed``: its element → its letter before) shows an accidental exactly when the bar
    needs one (the key signature, or an earlier note of its letter and octave, says otherwise: a
    sharp dropped from the only F# of a bar leaves a plain F, no natural sign); any other note that
    now needs one and shows none gets it, and one whose accidental only the old pitch needed loses
    it (unless marked cautionary, editorial or in parentheses). ``every``: the score shows an
    accidental on every note (:func:`shows_unneeded`): a repitched note shows its own, and none is
    taken out. ``tied``:
    the notes that continue a tie (they show none); ``insert(note, element)`` puts a new
    ``<accidental>`` where the schema wants it."""
    from lxml import etree

    after = _written(group, tied)
    was, now = needed(before), needed(after)
    for (el, _key), w, need_before, need_now in zip(group, after, was, now, strict=True):
        shown = el.find("accidental")
        show = shows(el in changed, need_before, need_now, every, w.tied)
        if show is None:
            continue
        if show and shown is None:
            acc = etree.Element("accidental")
            acc.text = ACCIDENTAL_TEXT.get(w.alter, "natural")
            insert(el, acc)
        elif show and shown is not None:
            shown.text = ACCIDENTAL_TEXT.get(w.alter, "natural")
        elif shown is not None and (el in changed or not any(shown.get(a) == "yes" for a in _KEEP)):
            remove_with_line(el, shown)


def remove_with_line(parent: Any, child: Any) -> None:
    """Take ``child`` out with its line: the whitespace before it goes, the next sibling keeps its own."""
    prev = child.getprevious()
    if prev is not None:
        prev.tail = child.tail
    else:
        parent.text = child.tail
    parent.remove(child)


def written_of(group: Sequence[tuple[Any, int]], tied: set[Any]) -> list[Written]:
    """The bar as the page writes it now (what :func:`respell` takes as ``before``)."""
    return _written(group, tied)


def shows(changed: bool, need_before: bool, need_now: bool, every: bool, tied: bool) -> bool | None:
    """Whether a note of a bar where notes changed shows its accidental (None: leave it as it is).
    A changed note shows one when it needs one, or when the score writes every accidental (a
    tied continuation never needs one); an unchanged note changes only when its need changed,
    and a score that writes every accidental keeps one it no longer needs."""
    if changed:
        return need_now or (every and not tied)
    if need_now == need_before or (every and not need_now):
        return None
    return need_now
