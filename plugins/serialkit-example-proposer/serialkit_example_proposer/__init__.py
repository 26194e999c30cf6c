"""serialkit plugin: registers the ``example`` proposer (the template for new plugins).

This module is imported whenever serialkit starts (even for ``serialkit --help``), so it only
registers names; the proposer itself is a ``"module:attribute"`` string imported on first use.
"""

from __future__ import annotations

from serialkit.plugins import hookimpl
from serialkit.plugins.hookspecs import Register

__version__ = "0.1.0"


@hookimpl
def register_proposers(register: Register) -> None:
    """Add ``example``: ``serialkit generate --proposer example``."""
    register(
        "example",
        "serialkit_example_proposer.proposer:ExampleProposer",
        description="deterministic: each voice states its scheduled row forms in even notes",
    )
