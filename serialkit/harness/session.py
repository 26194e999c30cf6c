"""A run's conversation with its proposer: call ids, usage totals and the replayable transcript."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from serialkit import __version__
from serialkit.core.errors import EndpointError, ProposerError
from serialkit.harness.prompts import PROMPT_VERSION
from serialkit.harness.proposers.base import CallUsage, Proposer, Reply, Request
from serialkit.harness.tasks import Task


@dataclass
class Usage:
    """Totals over a run's proposer calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    http_tries: int = 0
    failed_calls: int = 0
    #: calls whose token counts the server gave but could not be read (charged at their upper bound)
    unreadable_calls: int = 0

    def add(self, usage: CallUsage) -> None:
        """Count one call."""
        self.calls += 1
        if usage.unreadable is not None:
            self.unreadable_calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.seconds += usage.seconds
        self.http_tries += usage.tries
        if usage.status != "ok":
            self.failed_calls += 1

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": round(self.seconds, 6),
            "http_tries": self.http_tries,
            "failed_calls": self.failed_calls,
            "unreadable_usage": self.unreadable_calls,
        }


# Options that belong to the environment a proposer runs in, not to the proposer: every proposer
# accepts them, and one that has no use for them (an offline proposer sends no request that could
# time out) ignores them. ``--timeout`` is one of them, so it means the same with every proposer.
ENVIRONMENT_OPTIONS = frozenset({"timeout"})


def factory_options(name: str, factory: Any, options: Mapping[str, Any] | None, seed: int) -> dict[str, Any]:
    """The keyword arguments ``factory`` (proposer ``name``) is called with: ``options`` less the
    environment's options it does not take, plus ``seed`` when it takes one and none was given.
    An option it does not take is a :class:`ProposerError` naming the proposer and the option."""
    opts = dict(options or {})
    params: Mapping[str, inspect.Parameter] | None
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = None  # cannot tell: pass everything and let the call say
    if params is None:
        return opts
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = [k for k, p in params.items()
             if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    if not takes_any:
        for key in ENVIRONMENT_OPTIONS - set(named):
            opts.pop(key, None)
        unknown = sorted(k for k in opts if k not in named)
        if unknown:
            which = ", ".join(repr(k) for k in unknown)
            takes = ", ".join(sorted(named)) or "none"
            raise ProposerError(f"proposer {name!r} takes no option {which} (its options: {takes})")
    if ("seed" in named or takes_any) and "seed" not in opts:
        opts["seed"] = seed
    return opts


def check_proposer_options(name: str, options: Mapping[str, Any] | None) -> None:
    """Refuse, before anything runs, an option proposer ``name`` does not take."""
    from serialkit.plugins import registry

    factory_options(name, registry("proposers").get(name).load(), options, 0)


def make_proposer(name: str | Proposer, options: dict[str, Any] | None, seed: int) -> Proposer:
    """A proposer from the registry by name, called with :func:`factory_options`."""
    if not isinstance(name, str):
        return name
    from serialkit.plugins import registry

    factory = registry("proposers").get(name).load()
    opts = factory_options(name, factory, options, seed)
    try:
        proposer: Proposer = factory(**opts)
    except TypeError as exc:
        raise ProposerError(f"proposer {name!r}: bad options {sorted(opts)} ({exc})") from exc
    return proposer


@dataclass
class Session:
    """Numbers calls, records each request and reply, and totals usage."""

    task: Task
    proposer: Proposer
    variant: str
    seed: int
    usage: Usage = field(default_factory=Usage)
    lines: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def identity(self) -> tuple[str, str | None]:
        """(proposer name, model) as certificates record them (a replay reports the original)."""
        ident = getattr(self.proposer, "identity", None)
        if ident is not None:
            return str(ident[0]), ident[1]
        return self.proposer.name, self.proposer.model

    def header(self) -> dict[str, Any]:
        """The transcript's first line."""
        name, model = self.identity
        return {
            "type": "header", "format": "serialkit-transcript", "version": 1,
            "task": self.task.name, "task_digest": self.task.digest(), "variant": self.variant,
            "proposer": name, "model": model, "seed": self.seed, "prompt_version": PROMPT_VERSION,
            "serialkit": __version__,
        }

    def call(self, kind: str, section: str, attempt: int, **fields: Any) -> tuple[Reply, str]:
        """Send one request; failures come back as a Reply with ``error`` set, never raised, except
        an :class:`EndpointError` (the server failed), which is recorded as an errored call and
        raised for the harness to re-ask or to end the run."""
        call_id = f"c{len(self.lines) + 1:03d}"
        request = Request(call_id, kind, self.task, section, attempt, self.variant, **fields)
        # A snapshot of what was asked: the loop goes on editing the events the request points to.
        asked = copy.deepcopy(request.payload())
        try:
            reply = self.proposer.propose(request)
        except EndpointError as exc:  # the server failed: keep what was asked and count the call
            usage = CallUsage(tries=exc.tries, status="errored")
            self.usage.add(usage)
            self.lines.append({
                "type": "call", "call_id": call_id, "kind": kind, "section": section, "attempt": attempt,
                "request": asked, "response": None, "error": str(exc), "usage": usage.to_dict(),
                "endpoint": {"kind": exc.kind, "status": exc.status, "reaskable": exc.reaskable},
            })
            self.calls.append({"call_id": call_id, "kind": kind, "section": section, "attempt": attempt,
                               "error": str(exc), **usage.to_dict()})
            raise
        except ProposerError:
            raise
        except Exception as exc:  # a proposer bug must not crash the run
            reply = Reply(None, CallUsage(status="error"), f"{type(exc).__name__}: {exc}")
        reply.usage.seconds = round(reply.usage.seconds, 6)  # as the transcript records it (replay)
        self.usage.add(reply.usage)
        record = {
            "type": "call", "call_id": call_id, "kind": kind, "section": section, "attempt": attempt,
            "request": asked, "response": reply.text, "error": reply.error,
            "usage": reply.usage.to_dict(),
        }
        if reply.cut_off:
            record["cut_off"] = True
        self.lines.append(record)
        self.calls.append({"call_id": call_id, "kind": kind, "section": section, "attempt": attempt,
                           "error": reply.error, **reply.usage.to_dict()})
        return reply, call_id
