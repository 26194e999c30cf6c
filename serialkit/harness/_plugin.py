"""Built-in proposers and repair rungs, registered through the same hooks as outside plugins."""

from __future__ import annotations

from serialkit.plugins.hookspecs import Register, hookimpl


@hookimpl
def register_proposers(register: Register) -> None:
    """``stochastic`` (offline, default), ``openai`` (any compatible endpoint), ``replay``: lazy
    references (imported on first use; ``inspect.signature`` sees the class's options through them)."""
    register("stochastic", "serialkit.harness.proposers.stochastic:StochasticProposer", offline=True, description="seeded offline proposer with model-like mistakes")
    register("openai", "serialkit.harness.proposers.openai:OpenAIProposer", offline=False, description="OpenAI-compatible chat-completions endpoint")
    register("replay", "serialkit.harness.proposers.replay:ReplayProposer", offline=True, description="replays a recorded transcript exactly")


@hookimpl
def register_repair_rungs(register: Register) -> None:
    """The ladder, in explicit rank order: the deterministic timing rungs (on each note as it
    arrives), the model's batched patch, then the paper's model row-segment rewrite or serialkit's
    deterministic rewrite and reflow (on the notes still pending after a section call), and last
    serialkit's completion of the slots still empty after the attempts. ``ladders`` names the
    ladders a rung belongs to (``--ladder serialkit|paper``); ``scope`` says what it works on
    (``note``, the default; ``batch``: a section call's pending notes at once; ``holes``)."""
    from serialkit.harness.ladder import patch, reflow, rewrite, timing

    both = "serialkit paper"
    register("trim", timing.trim_tail, rank=10, ladders=both)
    register("yield", timing.yield_, rank=20, ladders=both)
    register("retime", timing.retime, rank=30, ladders=both)
    register("patch", patch.model_patch, rank=40, scope="batch", ladders=both)
    register("segment", patch.model_segment, rank=45, scope="batch", ladders="paper")
    register("rewrite", rewrite.rewrite_segment, rank=50, ladders="serialkit")
    register("reflow", reflow.reflow_note, rank=60, ladders="serialkit")
    register("complete", reflow.complete_holes, rank=70, scope="holes", ladders="serialkit")
