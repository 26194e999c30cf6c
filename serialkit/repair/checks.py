"""Every check a repair makes, each made once: the gate's report on each piece the repair reads
(with the check's own suggestions when asked), all sharing one ``Readings``.

A repair asks for the same report several times: the one-at-a-time judgement
(``policy.Keeper``) asks for the report, with and without the check's suggestions, on the
pieces the planning rounds make. ``Checks`` keeps each report by the piece's notes, so that each
is computed once, and every analysis (the check's, the plan's, the verifications of the plan's and the check's
suggestions) once, in one ``Readings``: the check's suggestions of a piece the plan has suggested
for find most of their analyses made."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from serialkit.check.report import bare_notes
from serialkit.core.analysis import Analysis
from serialkit.core.piece import Piece
from serialkit.core.rows import Row
from serialkit.core.suggest import Readings
from serialkit.core.suggest.readings import notes_key

if TYPE_CHECKING:
    from serialkit.check.profiles import Profile
    from serialkit.check.report import CheckReport

__all__ = ["Checks"]


class Checks:
    """The gate's report on each piece a repair reads, each computed once (by its notes: id,
    voice, onset, duration, pitch), on one ``Readings``. ``piece``: the score as read (its own
    tags, sources and names: every report is made on it, with other pitches); ``source``: what
    the reports name as their source."""

    def __init__(self, piece: Piece, row: Row, convention: str, profile: Profile, source: str) -> None:
        self.piece, self.row, self.convention = piece, row, convention
        self.profile, self.source = profile, source
        self.readings = Readings()
        self._reports: dict[tuple[Hashable, bool], CheckReport] = {}

    def analysis(self, piece: Piece) -> Analysis:
        """The analysis of ``piece``'s bare notes (found, or made once)."""
        return self.readings.read(bare_notes(piece), self.row, self.convention).analysis

    def check(self, piece: Piece, suggest: bool = False) -> CheckReport:
        """The gate's report on ``piece`` (``suggest``: with the check's suggestions)."""
        key = (notes_key(piece), suggest)
        found = self._reports.get(key)
        if found is None:
            from serialkit.check import check_piece

            found = self._reports[key] = check_piece(
                piece, row=self.row, convention=self.convention, source=self.source, profile=self.profile,
                suggest=suggest, analysis=self.analysis(piece), readings=self.readings)
        return found

    def report(self, piece: Piece, suggest: bool = False) -> dict[str, Any]:
        """``check(piece, suggest)`` as its JSON form (a fresh copy: the caller may change it)."""
        return self.check(piece, suggest).to_dict()
