"""Tone rows, the 48 row forms, labelling conventions, matrix, symmetry and combinatoriality."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from serialkit.core.errors import RowError
from serialkit.core.spelling import (
    PC_NAMES_FLAT,
    PC_NAMES_SHARP,
    is_german_spelling,
    is_integer_token,
    parse_note_name,
    parse_numeral,
    parse_pitch_class,
    pc_name,
)

__all__ = [
    "ALL_FORMS", "CONVENTIONS", "FORM_TYPES", "PC_NAMES_FLAT", "PC_NAMES_SHARP", "Convention",
    "Row", "RowForm", "normal_rotation", "parse_pitch_class", "parse_position_label", "pc_name",
    "position_label",
]

Convention = Literal["relative", "absolute"]
CONVENTIONS: tuple[Convention, ...] = ("relative", "absolute")
FORM_TYPES: tuple[str, ...] = ("P", "I", "R", "RI")

_LABEL_RE = re.compile(r"^\s*(RI|IR|P|T|I|R)\s*(-?\d+)\s*$", re.IGNORECASE)
_COMPACT_RE = re.compile(r"^[0-9TEABteab]{12}$")


@dataclass(frozen=True, slots=True, order=True)
class RowForm:
    """One of the 48 row-form labels: a form type (P, I, R, RI) and a transposition index."""

    type: str
    n: int

    def __post_init__(self) -> None:
        if self.type not in FORM_TYPES:
            raise RowError(f"row form type must be one of P, I, R, RI, not {self.type!r}")
        if isinstance(self.n, bool) or not isinstance(self.n, int) or not 0 <= self.n <= 11:
            raise RowError(f"row form index must be in 0..11, not {self.n!r}")

    @property
    def label(self) -> str:
        """The printed label, e.g. ``RI5``."""
        return f"{self.type}{self.n}"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, label: str | RowForm) -> RowForm:
        """Parse ``P0``, ``I3``, ``R11``, ``RI5`` (any case; ``T`` means ``P``, ``IR`` means ``RI``)."""
        if isinstance(label, RowForm):
            return label
        match = _LABEL_RE.match(label)
        if not match:
            raise RowError(f"not a row-form label: {label!r} (expected e.g. P0, I3, R11, RI5)")
        kind = match.group(1).upper()
        kind = {"T": "P", "IR": "RI"}.get(kind, kind)
        return cls(kind, int(match.group(2)))

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


def _check_pcs(values: Iterable[object]) -> tuple[int, ...]:
    pcs = tuple(values)
    for value in pcs:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RowError(f"pitch class {value!r} is not an integer")
        if not 0 <= value <= 11:
            raise RowError(f"pitch class {value} is out of range 0..11")
    seen: dict[int, int] = {}
    for index, value in enumerate(pcs):
        assert isinstance(value, int)
        if value in seen:
            raise RowError(
                f"pitch class {value} appears twice (positions {seen[value]} and {index})"
            )
        seen[value] = index
    if len(pcs) != 12:
        missing = sorted(set(range(12)) - set(seen))
        names = ", ".join(f"{m} ({pc_name(m)})" for m in missing)
        given = "1 pitch class" if len(pcs) == 1 else f"{len(pcs)} pitch classes"
        raise RowError(f"{given} given, 12 needed; missing {names}")
    return tuple(seen)


@dataclass(frozen=True, slots=True)
class Row:
    """A twelve-tone row: the 12 pitch classes of P0 in order (P0 of the relative convention)."""

    pcs: tuple[int, ...]
    name: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pcs", _check_pcs(self.pcs))

    # construction -------------------------------------------------------
    @classmethod
    def parse(cls, spec: str | Sequence[int] | Row) -> Row:
        """A row from ints, note names (``"C B G Ab ..."``), numbers with T/E, or a catalog name."""
        if isinstance(spec, Row):
            return spec
        if not isinstance(spec, str):
            items = tuple(spec)
            if any(isinstance(item, str) for item in items):
                return cls(tuple(parse_pitch_class(str(item)) for item in items))
            return cls(items)
        text = spec.strip().strip("[](){}").strip()
        if not text:
            raise RowError("empty row: give 12 pitch classes (numbers or note names) or a catalog name")
        tokens = [t for t in re.split(r"[\s,;]+", text) if t]
        if len(tokens) == 1:
            token = tokens[0]
            if _COMPACT_RE.match(token) and any(c.isdigit() for c in token):
                return cls(tuple(parse_numeral(c) for c in token))
            if not is_integer_token(token) and not _is_note_name(token):
                return _catalog_row(token)
        try:
            if any(is_integer_token(t) for t in tokens):
                return cls(tuple(_numeral_at(t, i) for i, t in enumerate(tokens)))
            german = is_german_spelling(tokens)
            return cls(tuple(_note_at(t, i, german) for i, t in enumerate(tokens)))
        except RowError as exc:
            if _is_note_name(tokens[0]) or is_integer_token(tokens[0]):
                raise
            try:  # several words that are not pitch classes: perhaps "Webern Op. 21"
                return _catalog_row(text)
            except RowError:
                raise exc from None

    def __iter__(self) -> Iterator[int]:
        return iter(self.pcs)

    def __len__(self) -> int:
        return 12

    def __getitem__(self, index: int) -> int:
        return self.pcs[index]

    def __str__(self) -> str:
        return self.names()

    def names(self, flats: bool = False) -> str:
        """The row spelt as note names."""
        return " ".join(pc_name(p, flats) for p in self.pcs)

    # transforms (verbs returning new, unnamed rows) ------------------------
    def transpose(self, n: int) -> Row:
        """The row moved up ``n`` semitones."""
        return Row(tuple((p + n) % 12 for p in self.pcs))

    def invert(self, axis: int | None = None) -> Row:
        """The inversion about the first pitch class (or mapping p to ``axis - p``)."""
        centre = 2 * self.pcs[0] if axis is None else axis
        return Row(tuple((centre - p) % 12 for p in self.pcs))

    def retrograde(self) -> Row:
        """The row backwards."""
        return Row(tuple(reversed(self.pcs)))

    # the 48 forms -------------------------------------------------------
    def form(self, form: RowForm | str, convention: Convention = "relative") -> tuple[int, ...]:
        """The pitch classes of one form, in the order heard."""
        wanted = RowForm.parse(form)
        table = _forms_table(self.pcs, _check_convention(convention))
        return table[FORM_TYPES.index(wanted.type) * 12 + wanted.n][1]

    def forms(self, convention: Convention = "relative") -> dict[RowForm, tuple[int, ...]]:
        """All 48 labels with their pitch classes, in P, I, R, RI × 0..11 order."""
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
        wanted = RowForm.parse(form)
        return [f for f in self.label_of(self.form(wanted, convention), convention) if f != wanted]

    def distinct_forms(self, convention: Convention = "relative") -> dict[RowForm, list[RowForm]]:
        """Canonical label → its aliases, one entry per distinct pitch-class sequence."""
        table = _by_pcs(self.pcs, _check_convention(convention))
        return {labels[0]: list(labels[1:]) for labels in table.values()}

    def is_symmetric(self) -> bool:
        """True if fewer than 48 of the forms are distinct."""
        return len(_by_pcs(self.pcs, "relative")) < 48

    def position_of(self, form: RowForm | str, pc: int, convention: Convention = "relative") -> int:
        """The order position (0..11) of ``pc`` within ``form``."""
        return self.form(form, convention).index(pc % 12)

    def convert(self, form: RowForm | str, source: Convention, target: Convention) -> RowForm:
        """The same form (same pitch classes in the same order) labelled in another convention."""
        wanted = RowForm.parse(form)
        labels = self.label_of(self.form(wanted, source), target)
        return next((label for label in labels if label.type == wanted.type), labels[0])

    # structure ----------------------------------------------------------
    def matrix(self) -> list[list[int]]:
        """The 12×12 matrix: row 0 is the row as given; rows read as P forms, columns as I forms."""
        first = self.pcs[0]
        return [[(p - first + start) % 12 for p in self.pcs] for start in _inversion(self.pcs)]

    def matrix_labels(
        self, convention: Convention = "relative"
    ) -> tuple[list[RowForm], list[RowForm], list[RowForm], list[RowForm]]:
        """Labels of the matrix: (P per row, R per row, I per column, RI per column)."""
        conv = _check_convention(convention)
        grid = self.matrix()
        columns = [tuple(line[j] for line in grid) for j in range(12)]
        rows_p = [_label_of_type(self.pcs, conv, tuple(line), "P") for line in grid]
        rows_r = [_label_of_type(self.pcs, conv, tuple(reversed(line)), "R") for line in grid]
        cols_i = [_label_of_type(self.pcs, conv, col, "I") for col in columns]
        cols_ri = [_label_of_type(self.pcs, conv, tuple(reversed(col)), "RI") for col in columns]
        return rows_p, rows_r, cols_i, cols_ri

    def _repr_html_(self) -> str:
        """The 12×12 matrix as an HTML table, P labels left, R right, I above, RI below."""
        rows_p, rows_r, cols_i, cols_ri = self.matrix_labels()
        cell = "<td style='text-align:center;padding:2px 6px'>{}</td>"
        head = "<tr><td></td>" + "".join(cell.format(f"<b>{f}</b>") for f in cols_i) + "<td></td></tr>"
        body = "".join("<tr>" + cell.format(f"<b>{p}</b>") + "".join(cell.format(pc) for pc in line)
                       + cell.format(f"<b>{r}</b>") + "</tr>"
                       for p, line, r in zip(rows_p, self.matrix(), rows_r, strict=True))
        foot = "<tr><td></td>" + "".join(cell.format(f"<b>{f}</b>") for f in cols_ri) + "<td></td></tr>"
        return f"<table class='serialkit-row'><caption>{self.names()}</caption>{head}{body}{foot}</table>"

    def intervals(self) -> tuple[int, ...]:
        """The interval succession: 11 ascending intervals mod 12."""
        return tuple((b - a) % 12 for a, b in zip(self.pcs, self.pcs[1:], strict=False))

    def is_all_interval(self) -> bool:
        """True if the 11 successive intervals are 1..11, each once."""
        return sorted(self.intervals()) == list(range(1, 12))

    def hexachords(self) -> tuple[frozenset[int], frozenset[int]]:
        """The two hexachords of P0 as sets."""
        return frozenset(self.pcs[:6]), frozenset(self.pcs[6:])

    def are_combinatorial(
        self, a: RowForm | str, b: RowForm | str, convention: Convention = "relative"
    ) -> bool:
        """True if the first hexachords of forms ``a`` and ``b`` together make the aggregate."""
        return not set(self.form(a, convention)[:6]) & set(self.form(b, convention)[:6])

    def combinatorial_partners(
        self, form: RowForm | str = "P0", convention: Convention = "relative"
    ) -> list[RowForm]:
        """Every label whose first hexachord is the complement of ``form``'s first hexachord."""
        head = set(self.form(form, convention)[:6])
        table = _forms_table(self.pcs, _check_convention(convention))
        return [label for label, pcs in table if not head & set(pcs[:6])]

    def combinatoriality(self) -> dict[str, list[int]]:
        """Hexachordal combinatoriality with P0: form type → the indices n of its partners.

        A partner ``Xn`` is combinatorial with P0 when its first hexachord is the complement of
        P0's first hexachord (music21's ``areCombinatorial('P', 0, X, n)``). Pairing a form
        with its partner is invariant under transposing both, so the indices are the same in
        the relative and absolute conventions. R0 is always a partner (trivial R-combinatoriality).
        """
        result: dict[str, list[int]] = {t: [] for t in FORM_TYPES}
        for label in self.combinatorial_partners("P0", "relative"):
            result[label.type].append(label.n)
        return result

    def combinatorial_types(self) -> list[str]:
        """Which of P, I, R, RI combinatoriality the row has (R always, through R0)."""
        table = self.combinatoriality()
        return [t for t in FORM_TYPES if table[t]]

    def is_all_combinatorial(self) -> bool:
        """True if the row is P-, I-, R- and RI-combinatorial (Babbitt's all-combinatorial)."""
        return all(self.combinatoriality()[t] for t in FORM_TYPES)

    def invariant_segments(
        self,
        other: RowForm | str,
        size: int = 3,
        convention: Convention = "relative",
        of: RowForm | str = "P0",
    ) -> list[tuple[int, int, frozenset[int]]]:
        """Segments of ``size`` consecutive pitch classes of form ``of`` (P0 by default) whose
        content is also a segment of ``other``: (start in ``of``, start in ``other``, content)."""
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 12:
            raise RowError(f"segment size must be in 1..12, not {size!r}")
        source = self.form(of, convention)
        target = self.form(other, convention)
        index = {frozenset(target[j : j + size]): j for j in range(13 - size)}
        found: list[tuple[int, int, frozenset[int]]] = []
        for i in range(13 - size):
            content = frozenset(source[i : i + size])
            if content in index:
                found.append((i, index[content], content))
        return found

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready description."""
        return {"pcs": list(self.pcs), "names": self.names(), "name": self.name}


def _is_note_name(token: str) -> bool:
    try:
        parse_note_name(token)
    except RowError:
        return False
    return True


def _numeral_at(token: str, index: int) -> int:
    try:
        return parse_numeral(token)
    except RowError as exc:
        raise RowError(f"{exc} (token {index + 1})") from None


def _note_at(token: str, index: int, german: bool = False) -> int:
    try:
        return parse_note_name(token, german)
    except RowError as exc:
        raise RowError(f"{exc} (token {index + 1})") from None


# Row names (``webern-op21``) are looked up in the catalogue, which builds on this module: it
# registers its lookup here when imported (``serialkit.core`` imports it), so this module never
# imports it back.
NAMED_ROWS: list[Callable[[str], Row]] = []


def _catalog_row(name: str) -> Row:
    if not NAMED_ROWS:
        raise RowError(f"{name!r} is not a row, and no row catalogue is loaded to look it up")
    return NAMED_ROWS[-1](name)


def _inversion(pcs: Sequence[int]) -> tuple[int, ...]:
    return tuple((2 * pcs[0] - p) % 12 for p in pcs)


def _label_of_type(
    pcs: tuple[int, ...], convention: Convention, seq: tuple[int, ...], kind: str
) -> RowForm:
    labels = _by_pcs(pcs, convention)[seq]
    return next(label for label in labels if label.type == kind)


def _check_convention(convention: str) -> Convention:
    if convention == "relative":
        return "relative"
    if convention == "absolute":
        return "absolute"
    raise RowError(f"labelling convention must be 'relative' or 'absolute', not {convention!r}")


_ADD = tuple(tuple((p + n) % 12 for p in range(12)) for n in range(12))
_FormsTable = tuple[tuple[RowForm, tuple[int, ...]], ...]
_FORMS_CACHE: dict[tuple[tuple[int, ...], str], _FormsTable] = {}
_BY_PCS_CACHE: dict[tuple[tuple[int, ...], str], dict[tuple[int, ...], tuple[RowForm, ...]]] = {}
_CACHE_LIMIT = 4096


def _forms_table(pcs: tuple[int, ...], convention: Convention) -> _FormsTable:
    key = (pcs, convention)
    cached = _FORMS_CACHE.get(key)
    if cached is not None:
        return cached
    first = pcs[0]
    if convention == "relative":  # P0 = the row; I0 = its inversion starting on the same pc
        p0 = pcs
        i0 = _inversion(pcs)
    else:  # P0 and I0 start on C
        p0 = tuple((p - first) % 12 for p in pcs)
        i0 = tuple((first - p) % 12 for p in pcs)
    bases = (p0, i0, p0[::-1], i0[::-1])  # Rn/RIn: retrogrades of Pn/In
    result = tuple(
        (label, tuple([_ADD[label.n][p] for p in bases[index // 12]]))
        for index, label in enumerate(ALL_FORMS)
    )
    if len(_FORMS_CACHE) >= _CACHE_LIMIT:
        _FORMS_CACHE.clear()
    _FORMS_CACHE[key] = result
    return result


def _by_pcs(
    pcs: tuple[int, ...], convention: Convention
) -> dict[tuple[int, ...], tuple[RowForm, ...]]:
    key = (pcs, convention)
    cached = _BY_PCS_CACHE.get(key)
    if cached is not None:
        return cached
    grouped: dict[tuple[int, ...], list[RowForm]] = {}
    for form, seq in _forms_table(pcs, convention):
        grouped.setdefault(seq, []).append(form)
    result = {seq: tuple(labels) for seq, labels in grouped.items()}
    if len(_BY_PCS_CACHE) >= _CACHE_LIMIT:
        _BY_PCS_CACHE.clear()
    _BY_PCS_CACHE[key] = result
    return result


def normal_rotation(pcs: Iterable[int]) -> tuple[int, ...]:
    """The sequence transposed to start on 0 (a transposition-free key)."""
    seq = tuple(pcs)
    if not seq:
        return seq
    return tuple((p - seq[0]) % 12 for p in seq)
