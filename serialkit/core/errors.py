"""The error hierarchy: one base class, one subclass per kind of failure."""

from __future__ import annotations


class SerialkitError(Exception):
    """Base class of every error serialkit raises on purpose; the CLI maps it to exit code 2."""

    exit_code = 2


class RowError(SerialkitError, ValueError):
    """A tone row, row form label or catalog name is invalid."""


class PieceError(SerialkitError, ValueError):
    """A piece (events, voices, sections, blueprint) is malformed."""


class ScoreReadError(SerialkitError):
    """A score file cannot be read safely or correctly."""


class ScoreWriteError(SerialkitError):
    """A score or report cannot be written."""


class TaskError(SerialkitError, ValueError):
    """A harness task is malformed."""


class ProposerError(SerialkitError):
    """A proposer failed in a way the harness cannot absorb."""


class PluginError(SerialkitError):
    """A plugin failed to load or registered something invalid."""
