"""serialkit: check, label, repair, generate and engrave twelve-tone music."""

from __future__ import annotations

__version__ = "0.1.0"

from serialkit.core.errors import (
    PieceError,
    PluginError,
    ProposerError,
    RowError,
    ScoreReadError,
    ScoreWriteError,
    SerialkitError,
    TaskError,
)

__all__ = [
    "PieceError",
    "PluginError",
    "ProposerError",
    "RowError",
    "ScoreReadError",
    "ScoreWriteError",
    "SerialkitError",
    "TaskError",
    "__version__",
]
