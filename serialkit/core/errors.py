"""The error hierarchy, every class of it in one place: one base class, one subclass per kind of failure.

The CLI maps :class:`SerialkitError` to exit code 2. The model-endpoint errors
(:class:`EndpointError` and its subclasses) are errors of the environment, never verdicts about
the music. A proposer raises one of these when its server cannot answer (bad key, unknown model or URL,
refused connection, retries used up). A failure the proposer's own retries could not outlast
(:attr:`EndpointError.reaskable`: a 5xx, timeout, rate limit or dropped connection) is asked once
more by the harness in a changed form, a new attempt number, when the section's budget K has room.
Otherwise, or when that re-ask fails too, the harness stops the run, keeps the transcript so far and
re-raises; ``generate`` exits 2 with one line naming the endpoint and the status; ``eval run``
records the run as *errored* (not undelivered) and ``--resume`` runs it again. Messages never hold
the API key.
"""

from __future__ import annotations

from typing import Any


class SerialkitError(Exception):
    """Base class of every error serialkit raises on purpose; the CLI maps it to exit code 2."""

    exit_code = 2


class RowError(SerialkitError, ValueError):
    """A tone row, row form label or catalog name is invalid."""


class RowNotIdentified(RowError):
    """No candidate row explains the music well enough to be named; ``record`` is the decision as
    JSON (the best fit and the runner-up with their coverage, and the thresholds they missed)."""

    def __init__(self, message: str, record: dict[str, Any]) -> None:
        super().__init__(message)
        self.record = record


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


class RulesError(SerialkitError):
    """A --rules value that names no profile and no predicate."""


class RenderInputError(SerialkitError):
    """A check report or certificate given to the renderer cannot be used."""


class RunDirError(SerialkitError):
    """A run directory that cannot be read or written."""


class PanelError(SerialkitError):
    """A panel packet that cannot be built or analysed."""



ENDPOINT_KINDS = ("auth", "not-found", "rate-limit", "timeout", "connection", "server", "request", "response")


class EndpointError(ProposerError):
    """The model server failed; ``kind`` is one of :data:`ENDPOINT_KINDS`, ``status`` the HTTP status (or None)."""

    kind = "server"
    #: the experiment cannot go on against this endpoint (every run would fail the same way)
    fatal = False
    #: what the message says went wrong where no HTTP status says it (default: the kind)
    what = ""
    #: the proposer retried this failure until its retries ran out: the same request may keep
    #: failing while a changed one goes through, so the harness asks once more in a changed form
    reaskable = False

    def __init__(self, endpoint: str, detail: str, status: int | None = None, tries: int = 1,
                 model: str | None = None) -> None:
        self.endpoint = endpoint
        self.detail = detail
        self.status = status
        self.tries = tries
        self.model = model
        self.run_dir: str | None = None
        super().__init__(self._text())

    def _text(self) -> str:
        status = f"HTTP {self.status}" if self.status else self.what or self.kind
        model = f" (model {self.model})" if self.model else ""
        tries = f" after {self.tries} tries" if self.tries > 1 else ""
        return f"{self.endpoint}{model}: {status}{tries}: {self.detail}"

    def with_run_dir(self, run_dir: str) -> EndpointError:
        """Name the run directory that keeps the transcript so far in the message."""
        self.run_dir = run_dir
        self.args = (f"{self._text()} (transcript so far in {run_dir})",)
        return self

    def to_dict(self) -> dict[str, object]:
        """JSON form for error logs."""
        return {"kind": self.kind, "status": self.status, "endpoint": self.endpoint, "model": self.model,
                "tries": self.tries, "fatal": self.fatal, "message": str(self)}


class EndpointAuthError(EndpointError):
    """401/403: the key was refused (or none was given)."""

    kind = "auth"
    fatal = True


class EndpointNotFound(EndpointError):
    """404: no such model or URL."""

    kind = "not-found"
    fatal = True


class EndpointRateLimited(EndpointError):
    """429 until the retries were used up."""

    kind = "rate-limit"
    reaskable = True


class EndpointTimeout(EndpointError):
    """No answer within the timeout, every try."""

    kind = "timeout"
    reaskable = True


class EndpointUnreachable(EndpointError):
    """The connection failed (refused, reset, name not resolved)."""

    kind = "connection"
    reaskable = True
    fatal = True


class EndpointRefused(EndpointUnreachable):
    """The connection was refused: nothing listens at the endpoint's host and port. Not retried
    (a refusal is an answer, and the same one each time)."""

    what = "connection refused"
    reaskable = False


class EndpointServerError(EndpointError):
    """5xx (or 408/409) until the retries were used up."""

    kind = "server"
    reaskable = True


class EndpointRequestError(EndpointError):
    """4xx other than the above: the server refused the request itself."""

    kind = "request"
    fatal = True


class EndpointResponseError(EndpointError):
    """A 200 whose body is not a chat completion."""

    kind = "response"
