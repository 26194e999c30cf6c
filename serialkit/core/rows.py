"""Tone rows, the 48 row forms, labelling conventions, matrix, symmetry and combinatoriality."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from serialkit.core.errors import RowError

Convention = Literal["relative", "absolute"]
CONVENTIONS: tuple[Convention, ...] = ("relative", "absolute")
FORM_TYPES: tuple[str, ...] = ("P", "I", "R", "RI")

PC_NAMES_SHARP = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
PC_NAMES_FLAT = ("C", "Db", "D", "Eb", "E", "F", "Gb", "G", "Ab", "A", "Bb", "B")
_STEP = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}
_ACCIDENTAL = {
    "#": 1, "♯": 1, "s": 1, "is": 1, "x": 2, "##": 2, "𝄪": 2,
    "b": -1, "♭": -1, "-": -1, "f": -1, "es": -1, "s_": -1, "bb": -2, "𝄫": -2, "♮": 0, "n": 0,
}
_NOTE_RE = re.compile(r"^([A-Ga-g])((?:##|bb|is|es|[#♯sbx♭\-f𝄪𝄫♮n])*)$")
_LABEL_RE = re.compile(r"^\s*(RI|P|I|R|T|IR)\s*(-?\d+)\s*$", re.IGNORECASE)


def pc_name(pc: int, flats: bool = False) -> str:
    """The spelling of a pitch class (sharps by default)."""
    return (PC_NAMES_FLAT if flats else PC_NAMES_SHARP)[pc % 12]


def parse_pitch_class(token: str) -> int:
    """One pitch class from an int string, a note name (C#, Db, F♯, Bes) or T/E (10/11)."""
    text = token.strip()
    if not text:
        raise RowError("empty pitch-class token")
    if text.lstrip("-").isdigit():
        value = int(text)
        if not 0 <= value <= 11:
            raise RowError(f"pitch class {value} is out of range 0..11")
        return value
    if text in ("T", "t", "A_", "X"):
        return 10
    if text in ("E_",):
        return 11
    match = _NOTE_RE.match(text)
    if not match:
        raise RowError(f"unknown note name {token!r}")
    step, accidentals = match.groups()
    alter = 0
    rest = accidentals
    while rest:
        for symbol in ("##", "bb", "is", "es", "𝄪", "𝄫", "#", "♯", "s", "b", "♭", "-", "f", "x", "♮", "n"):
            if rest.startswith(symbol):
                alter += _ACCIDENTAL[symbol]
                rest = rest[len(symbol):]
                break
        else:  # pragma: no cover - the regex admits only known symbols
            raise RowError(f"unknown note name {token!r}")
    return (_STEP[step.upper()] + alter) % 12


@dataclass(frozen=True, slots=True, order=True)
class RowForm:
    """One of the 48 row-form labels: a form type (P, I, R, RI) and a transposition index."""

    type: str
    n: int

    def __post_init__(self) -> None:
        if self.type not in FORM_TYPES:
            raise RowError(f"row form type must be one of P, I, R, RI, not {self.type!r}")
        if not 0 <= self.n <= 11:
            raise RowError(f"row form index must be in 0..11, not {self.n}")

    @property
    def label(self) -> str:
        """The printed label, e.g. ``RI5``."""
        return f"{self.type}{self.n}"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, label: str | RowForm) -> RowForm:
        """Parse ``P0``, ``I3``, ``R11``, ``RI5`` (case-insensitive; ``T`` means ``P``, ``IR`` means ``RI``)."""
        if isinstance(label, RowForm):
            return label
        match = _LABEL_RE.match(label)
        if not match:
            raise RowError(f"not a row-form label: {label!r} (expected e.g. P0, I3, R11, RI5)")
        kind = match.group(1).upper()
        kind = {"T": "P", "IR": "RI"}.get(kind, kind)
        return cls(kind, int(match.group(2)) % 12)

    @property
    def is_retrograde(self) -> bool:
        """True for R and RI forms."""
        return self.type in ("R", "RI")

    @property
    def is_inversion(self) -> bool:
        """True for I and RI forms."""
        return self.type in ("I", "RI")


ALL_FORMS: tuple[RowForm, ...] = tuple(RowForm(t, n) for t in FORM_TYPES for n in range(12))


def position_label(form: RowForm, position: int) -> str:
    """The printed label of a note: ``P0:3``."""
    return f"{form.label}:{position}"


def parse_position_label(text: str) -> tuple[RowForm, int]:
    """Parse ``RI5:11`` into a form and a 0-based order position."""
    head, sep, tail = text.partition(":")
    if not sep or not tail.strip().isdigit():
        raise RowError(f"not a note label: {text!r} (expected e.g. P0:3)")
    position = int(tail)
    if not 0 <= position <= 11:
        raise RowError(f"order position must be in 0..11, not {position}")
    return RowForm.parse(head), position


def _check_pcs(values: Sequence[int]) -> tuple[int, ...]:
    pcs = tuple(values)
    for value in pcs:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RowError(f"pitch class {value!r} is not an integer")
        if not 0 <= value <= 11:
            raise RowError(f"pitch class {value} is out of range 0..11")
    seen: dict[int, int] = {}
    for index, value in enumerate(pcs):
        if value in seen:
            raise RowError(
                f"pitch class {value} appears twice (positions {seen[value]} and {index})"
            )
        seen[value] = index
    if len(pcs) != 12:
        missing = sorted(set(range(12)) - set(pcs))
        extra = f"; missing {', '.join(map(str, missing))}" if missing else ""
        raise RowError(f"{len(pcs)} pitch classes given, 12 needed{extra}")
    return pcs


@dataclass(frozen=True, slots=True)
class Row:
    """A twelve-tone row: the 12 pitch classes of P0 in order (relative convention)."""

    pcs: tuple[int, ...]
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "pcs", _check_pcs(self.pcs))

    # construction -------------------------------------------------------
    @classmethod
    def parse(cls, spec: str | Sequence[int] | Row) -> Row:
        """A row from ints, note names (``"C B G Ab ..."``), a comma list, or a catalog name."""
        if isinstance(spec, Row):
            return spec
        if not isinstance(spec, str):
            return cls(tuple(spec))
        text = spec.strip()
        if not text:
            raise RowError("empty row")
        tokens = [t for t in re.split(r"[\s,;]+", text) if t]
        if len(tokens) == 1 and not _looks_like_pc(tokens[0]):
            if len(tokens[0]) == 12 and all(c in "0123456789TEte" for c in tokens[0]):
                return cls(tuple(_hex12(c) for c in tokens[0]))
            from serialkit.core import catalog

            return catalog.get(tokens[0]).row
        return cls(tuple(parse_pitch_class(t) for t in tokens))

    def __iter__(self) -> Iterator[int]:
        return iter(self.pcs)

    def __len__(self) -> int:
        return 12

    def __getitem__(self, index: int) -> int:
        return self.pcs[index]

    def __str__(self) -> str:
        return " ".join(pc_name(p) for p in self.pcs)

    def names(self, flats: bool = False) -> str:
        """The row spelt as note names."""
        return " ".join(pc_name(p, flats) for p in self.pcs)

    # transforms ---------------------------------------------------------
    def transpose(self, n: int) -> Row:
        """The row moved up ``n`` semitones."""
        return Row(tuple((p + n) % 12 for p in self.pcs), self.name)

    def invert(self, axis: int | None = None) -> Row:
        """The inversion about the first pitch class (or about ``axis``, mapping p to axis - p)."""
        centre = 2 * self.pcs[0] if axis is None else axis
        return Row(tuple((centre - p) % 12 for p in self.pcs), self.name)

    def retrograde(self) -> Row:
        """The row backwards."""
        return Row(tuple(reversed(self.pcs)), self.name)

    # the 48 forms -------------------------------------------------------
    def form(self, form: RowForm | str, convention: Convention = "relative") -> tuple[int, ...]:
        """The pitch classes of one form, in the order heard."""
        form = RowForm.parse(form)
        return self.forms(convention)[form]

    def forms(self, convention: Convention = "relative") -> dict[RowForm, tuple[int, ...]]:
        """All 48 labels with their pitch classes (a fresh dict; cached tables behind it)."""
        return dict(_forms_table(self.pcs, _check_convention(convention)))

    def label_of(self, pcs: Sequence[int], convention: Convention = "relative") -> list[RowForm]:
        """Every label whose form is exactly ``pcs`` (several for a symmetric row; [] if none)."""
        key = tuple(p % 12 for p in pcs)
        return list(_by_pcs(self.pcs, _check_convention(convention)).get(key, ()))

    def canonical(self, form: RowForm | str, convention: Convention = "relative") -> RowForm:
        """The canonical label (first in P, I, R, RI × 0..11 order) among a form's aliases."""
        return self.label_of(self.form(form, convention), convention)[0]

    def aliases(self, form: RowForm | str, convention: Convention = "relative") -> list[RowForm]:
        """The other labels that name the same pitch-class sequence as ``form``."""
        form = RowForm.parse(form)
        return [f for f in self.label_of(self.form(form, convention), convention) if f != form]

    def distinct_forms(self, convention: Convention = "relative") -> dict[RowForm, list[RowForm]]:
        """Canonical label → its aliases, one entry per distinct pitch-class sequence."""
        table = _by_pcs(self.pcs, _check_convention(convention))
        return {labels[0]: list(labels[1:]) for labels in table.values()}

    def is_symmetric(self) -> bool:
        """True if fewer than 48 of the forms are distinct."""
        return len(self.distinct_forms()) < 48

    def position_of(self, form: RowForm | str, pc: int, convention: Convention = "relative") -> int:
        """The order position (0..11) of ``pc`` within ``form``."""
        return self.form(form, convention).index(pc % 12)

    def convert(self, form: RowForm | str, source: Convention, target: Convention) -> RowForm:
        """The same form (same pitch classes in the same order) labelled in another convention."""
        pcs = self.form(form, source)
        labels = self.label_of(pcs, target)
        wanted = RowForm.parse(form).type
        for label in labels:
            if label.type == wanted:
                return label
        return labels[0]

    # structure ----------------------------------------------------------
    def matrix(self) -> list[list[int]]:
        """The 12×12 matrix: rows are P forms (read left to right), columns I forms (top down)."""
        inv = [(2 * self.pcs[0] - p) % 12 for p in self.pcs]
        return [[(p - self.pcs[0] + start) % 12 for p in self.pcs] for start in inv]

    def intervals(self) -> tuple[int, ...]:
        """The interval succession: 11 ascending intervals mod 12."""
        return tuple((b - a) % 12 for a, b in zip(self.pcs, self.pcs[1:], strict=False))

    def is_all_interval(self) -> bool:
        """True if the 11 successive intervals are 1..11, each once."""
        return sorted(self.intervals()) == list(range(1, 12))

    def hexachords(self) -> tuple[frozenset[int], frozenset[int]]:
        """The two hexachords of P0 as sets."""
        return frozenset(self.pcs[:6]), frozenset(self.pcs[6:])

    def combinatoriality(self) -> dict[str, list[int]]:
        """Hexachordal combinatoriality: form type → the transpositions n (relative labels) whose
        first hexachord is the complement of P0's first hexachord (for R/RI: whose first hexachord
        equals P0's first hexachord's complement read from the retrograde, i.e. the usual R/RI test).

        P: Pn's first hexachord = complement of P0's first hexachord.
        I: In's first hexachord = complement of P0's first hexachord.
        R: Rn's first hexachord = complement of P0's first hexachord (Rn's first hexachord is Pn's second).
        RI: RIn's first hexachord = complement of P0's first hexachord.
        """
        first, second = self.hexachords()
        result: dict[str, list[int]] = {t: [] for t in FORM_TYPES}
        for form, pcs in _forms_table(self.pcs, "relative"):
            if frozenset(pcs[:6]) == second:
                result[form.type].append(form.n)
        if first == second:  # pragma: no cover - impossible for a 12-note row
            return result
        return result

    def combinatorial_types(self) -> list[str]:
        """Which of P, I, R, RI combinatoriality the row has (R is trivially present: R0)."""
        table = self.combinatoriality()
        return [t for t in FORM_TYPES if table[t]]

    def is_all_combinatorial(self) -> bool:
        """True if the row is P-, I-, R- and RI-combinatorial."""
        return all(self.combinatoriality()[t] for t in FORM_TYPES)

    def invariant_segments(
        self, other: RowForm | str, size: int = 3, convention: Convention = "relative"
    ) -> list[tuple[int, int, frozenset[int]]]:
        """Segments of ``size`` consecutive pitch classes in P0 whose content reappears as a
        consecutive segment of ``other``: (start in P0, start in other, content)."""
        if not 2 <= size <= 12:
            raise RowError(f"segment size must be in 2..12, not {size}")
        target = self.form(other, convention)
        found: list[tuple[int, int, frozenset[int]]] = []
        index = {frozenset(target[j : j + size]): j for j in range(0, 13 - size)}
        for i in range(0, 13 - size):
            content = frozenset(self.pcs[i : i + size])
            if content in index:
                found.append((i, index[content], content))
        return found

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready description."""
        return {"pcs": list(self.pcs), "names": self.names(), "name": self.name}


def _looks_like_pc(token: str) -> bool:
    try:
        parse_pitch_class(token)
    except RowError:
        return False
    return True


def _hex12(char: str) -> int:
    return {"T": 10, "t": 10, "E": 11, "e": 11}.get(char, 0) if not char.isdigit() else int(char)


def _check_convention(convention: str) -> Convention:
    if convention not in CONVENTIONS:
        raise RowError(f"labelling convention must be 'relative' or 'absolute', not {convention!r}")
    return convention  # type: ignore[return-value]


_FORMS_CACHE: dict[tuple[tuple[int, ...], str], tuple[tuple[RowForm, tuple[int, ...]], ...]] = {}
_BY_PCS_CACHE: dict[tuple[tuple[int, ...], str], dict[tuple[int, ...], tuple[RowForm, ...]]] = {}


def _forms_table(
    pcs: tuple[int, ...], convention: Convention
) -> tuple[tuple[RowForm, tuple[int, ...]], ...]:
    key = (pcs, convention)
    cached = _FORMS_CACHE.get(key)
    if cached is not None:
        return cached
    first = pcs[0]
    if convention == "relative":
        p0 = pcs
        i0 = tuple((2 * first - p) % 12 for p in pcs)
    else:
        p0 = tuple((p - first) % 12 for p in pcs)
        i0 = tuple((first - p) % 12 for p in pcs)
    table: list[tuple[RowForm, tuple[int, ...]]] = []
    for kind, base in (("P", p0), ("I", i0)):
        for n in range(12):
            table.append((RowForm(kind, n), tuple((p + n) % 12 for p in base)))
    for kind, base in (("R", p0), ("RI", i0)):
        for n in range(12):
            table.append((RowForm(kind, n), tuple((p + n) % 12 for p in reversed(base))))
    result = tuple(table)
    if len(_FORMS_CACHE) > 4096:
        _FORMS_CACHE.clear()
    _FORMS_CACHE[key] = result
    return result


def _by_pcs(pcs: tuple[int, ...], convention: Convention) -> dict[tuple[int, ...], tuple[RowForm, ...]]:
    key = (pcs, convention)
    cached = _BY_PCS_CACHE.get(key)
    if cached is not None:
        return cached
    grouped: dict[tuple[int, ...], list[RowForm]] = {}
    for form, seq in _forms_table(pcs, convention):
        grouped.setdefault(seq, []).append(form)
    result = {seq: tuple(labels) for seq, labels in grouped.items()}
    if len(_BY_PCS_CACHE) > 4096:
        _BY_PCS_CACHE.clear()
    _BY_PCS_CACHE[key] = result
    return result


def normal_rotation(pcs: Iterable[int]) -> tuple[int, ...]:
    """The sequence transposed to start on 0 (a transposition-free key)."""
    seq = tuple(pcs)
    if not seq:
        return seq
    return tuple((p - seq[0]) % 12 for p in seq)
