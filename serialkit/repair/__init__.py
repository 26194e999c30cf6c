"""Score repair: the suggested corrections the gate accepts, applied to a copy of a score.

``run``: ``repair_score``, read once, corrected, written and certified; ``policy``: what may change
and what is kept; ``changes``: one entry per changed note; ``timing``: the ladder's timing rungs on
a score's collisions and crossings; ``result``: ``Change`` and ``RepairResult``; ``formats``: the
formats a repaired score is written in. The writing itself is ``serialkit.io.repitch``.
"""

from serialkit.repair.formats import WRITES, check_output, companion_paths, output_suffix
from serialkit.repair.policy import FIXABLE, TIMING_FIXABLE, validate_only
from serialkit.repair.result import REWRITE_RUNG, Change, RepairResult
from serialkit.repair.run import repair_score

__all__ = [
    "FIXABLE",
    "REWRITE_RUNG",
    "TIMING_FIXABLE",
    "WRITES",
    "Change",
    "RepairResult",
    "check_output",
    "companion_paths",
    "output_suffix",
    "repair_score",
    "validate_only",
]
