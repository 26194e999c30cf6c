"""The generator's ladder: the rungs that mend a proposed note the verifier rejects, tried in
rank order, each kept only when the note is then clean (``Ladder.settle``).

``context``: the registered rungs (``ladder_rungs``) and ``Ladder``, the ladder at work; ``timing``:
trim, yield, retime; ``patch``: the model's batched rungs; ``rewrite``: a note given its scheduled
pitch class; ``reflow``: a voice's run re-placed, and the completion of holes; ``room``: room made
in a voice for a missing note."""

from serialkit.harness.ladder.context import (
           LADDERS,
           SCOPES,
           Ladder,
           Problems,
           Rung,
           RungSpec,
           Try,
           ladder_rungs,
)
from serialkit.harness.ladder.room import make_room, shift_run

__all__ = ["LADDERS", "SCOPES", "Ladder", "Problems", "Rung", "RungSpec", "Try", "ladder_rungs", "make_room",
           "shift_run"]
