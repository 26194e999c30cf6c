"""The ``openai`` proposer: any OpenAI-compatible chat-completions endpoint, on the official SDK.

``OpenAIProposer`` asks one chat completion per call: JSON-schema structured output where the
server offers it (prose with JSON extraction where it answers 400 to ``response_format``), seed
and temperature forwarded, usage from the response. The SDK retries 408/409/429/5xx, timeouts and
connection errors itself (``max_retries``, honouring ``Retry-After``), but not a refused
connection, which its transport turns into an error at once; an event hook on its HTTP client
counts every try and passes it through the endpoint's limits. What the server cannot answer ends
the call with an :class:`~serialkit.core.errors.EndpointError` (an error of the
environment, never a verdict about the candidate).

Alone (``generate``) a proposer uses the synchronous client. In an experiment the runner gives
every run's proposer the same :class:`Endpoint`: one asyncio loop and ``AsyncOpenAI`` client per
endpoint, at most ``concurrency`` requests in flight across runs, one rate limiter.

The modules, in import order: ``env`` (API key, base URL, defaults, redaction), ``transport`` (the
per-call state, the HTTP hooks, the refusing transport and the client), ``endpoint``
(:class:`Endpoint`), ``replies`` (a chat completion read into a Reply, an SDK exception into an
EndpointError) and ``proposer`` (:class:`OpenAIProposer`, one retry loop for both clients). The SDK
is imported lazily (``import openai`` inside the functions that use it), so importing this package
does not load it.

The API key is read from the environment only (``SERIALKIT_API_KEY`` or ``OPENAI_API_KEY``) and is
never logged, recorded in a transcript, written to an output file or put in an error message.
"""

from __future__ import annotations

from serialkit.harness.proposers.openai.endpoint import Endpoint
from serialkit.harness.proposers.openai.env import (
    COMPLETION_GUESS,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MODEL,
    DEFAULT_URL,
    KEY_VARIABLES,
    api_key,
    base_url_from_env,
    configured,
    redact,
)
from serialkit.harness.proposers.openai.proposer import OpenAIProposer
from serialkit.harness.proposers.openai.transport import EndpointStats, ReplyTooLarge, refused

__all__ = [
    "COMPLETION_GUESS", "DEFAULT_MAX_REPLY_BYTES", "DEFAULT_MODEL", "DEFAULT_URL", "KEY_VARIABLES", "Endpoint",
    "EndpointStats", "OpenAIProposer", "ReplyTooLarge", "api_key", "base_url_from_env", "configured", "redact",
    "refused",
]
