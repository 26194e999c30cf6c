"""Suggested corrections: for every note the analysis cannot explain, the note most likely meant.

``suggest(piece, analysis)`` ranks candidate pitches for each unexplained note by an explicit
model of engraving and copying errors; ``plan_repairs`` turns confident suggestions into edits.

- ``engine``: verifies and ranks candidates and plans repairs;
- ``trouble``: finds the trouble and proposes the candidates a statement wants;
- ``partners``: the notes a wrong note may have been written with (swaps, two wrong notes side by
  side) and the check that a change takes no correct note off its place;
- ``readings``: the analyses made, kept for reuse;
- ``windows``: the window of a long piece a candidate is verified on;
- ``swap``: the piece's register habit for swapped notes;
- ``model``: the error models and the returned values.
"""

from serialkit.core.suggest.engine import suggest
from serialkit.core.suggest.model import (
    DEFAULT_THRESHOLD,
    MODELS,
    Edit,
    NoteSuggestions,
    Suggestion,
    describe,
    error_model,
)
from serialkit.core.suggest.plan import Applied, RepairPlan, plan_repairs
from serialkit.core.suggest.readings import Readings

__all__ = [
    "DEFAULT_THRESHOLD",
    "MODELS",
    "Applied",
    "describe",
    "Edit",
    "NoteSuggestions",
    "Readings",
    "RepairPlan",
    "Suggestion",
    "error_model",
    "plan_repairs",
    "suggest",
]
