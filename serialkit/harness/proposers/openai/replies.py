"""Reading what the server sent: a chat completion into a :class:`Reply` with its usage, and an
SDK exception into the :class:`~serialkit.core.errors.EndpointError` that says in
plain words what failed (never the parser's exception, never the API key)."""

from __future__ import annotations

import json
import time
from typing import Any

from serialkit.core.errors import (
    EndpointAuthError,
    EndpointError,
    EndpointNotFound,
    EndpointRateLimited,
    EndpointRefused,
    EndpointRequestError,
    EndpointResponseError,
    EndpointServerError,
    EndpointTimeout,
    EndpointUnreachable,
)
from serialkit.harness.prompts import estimate_tokens, messages, upper_bound_tokens
from serialkit.harness.proposers.base import CallUsage, Reply, Request
from serialkit.harness.proposers.limits import RateLimiter
from serialkit.harness.proposers.openai.env import COMPLETION_GUESS, KEY_VARIABLES, api_key, redact
from serialkit.harness.proposers.openai.transport import CallState, ReplyTooLarge, refused


def endpoint_error(exc: Exception, where: str, model: str | None, timeout: float, tries: int,
                   state: CallState | None = None) -> EndpointError:
    """The serialkit error for an SDK exception (the message names endpoint and status, and
    says in plain words what a reply that is no chat completion was)."""
    import openai

    if isinstance(exc, ReplyTooLarge):
        return EndpointResponseError(where, str(exc), 200, tries, model)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = redact(server_message(exc))
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            source = "no API key set" if api_key() is None else "the API key was refused"
            return EndpointAuthError(where, f"{source} ({text}); the key is read from "
                                            f"{' or '.join(KEY_VARIABLES)}", status, tries, model)
        if isinstance(exc, openai.NotFoundError):
            return EndpointNotFound(where, f"no such model or URL ({text})", status, tries, model)
        if isinstance(exc, openai.RateLimitError):
            return EndpointRateLimited(where, f"rate limited until the retries ran out ({text})",
                                       status, tries, model)
        if status >= 500 or status in (408, 409):
            return EndpointServerError(where, f"server error until the retries ran out ({text})",
                                       status, tries, model)
        return EndpointRequestError(where, f"request refused ({text})", status, tries, model)
    if isinstance(exc, openai.APITimeoutError):
        return EndpointTimeout(where, f"no answer within {timeout:g} s", None, tries, model)
    if isinstance(exc, openai.APIConnectionError) and refused(exc):
        url = exc.request.url  # the SDK's request: where the connection was refused
        port = url.port or (443 if url.scheme == "https" else 80)
        return EndpointRefused(where, f"nothing listens at {url.host}:{port} (is the server running?)",
                               None, tries, model)
    if isinstance(exc, openai.APIConnectionError):
        return EndpointUnreachable(where, f"cannot connect ({redact(_cause(exc))})", None, tries, model)
    if isinstance(exc, ValueError):  # a 200 whose body is not JSON, though it says it is
        ctype = state.content_type if state is not None else None
        doc = exc.doc if isinstance(exc, json.JSONDecodeError) else None
        return EndpointResponseError(where, _not_a_completion(ctype, doc, exc), 200, tries, model)
    # nothing the SDK or serialkit expects: say what failed, as it is (a bug to report)
    return EndpointResponseError(where, redact(f"the reply could not be read ({type(exc).__name__}: {exc})"),
                                 None, tries, model)


def read_reply(response: Any, request: Request, usage: CallUsage, started: float, state: CallState, *,
               where: str, model: str | None, max_tokens: int | None, limiter: RateLimiter | None) -> Reply:
    """The :class:`Reply` of a chat completion, its usage filled in (the server's counts where it
    gave readable ones) and its tokens given back to ``limiter``; a reply that is no chat
    completion is an :class:`EndpointResponseError`."""
    usage.seconds = time.perf_counter() - started

    def refuse(detail: str) -> EndpointResponseError:
        return EndpointResponseError(where, detail, 200, usage.tries, model)

    if isinstance(response, str | bytes):  # the SDK hands back the text of a body that is no JSON
        body = response.decode("utf-8", "replace") if isinstance(response, bytes) else response
        raise refuse(_not_a_completion(state.content_type, body)) from None
    choices: Any = getattr(response, "choices", None)
    if choices is None or isinstance(choices, list) and not choices:
        raise refuse("not a chat completion (the reply has no choices)") from None
    if not isinstance(choices, list):
        raise refuse(f"not a chat completion (its choices are {_kind(choices)}, not a list)") from None
    choice = choices[0]
    message = _field(choice, "message")
    if message is None:
        raise refuse("not a chat completion (its first choice has no message)")
    text = _field(message, "content")
    asked = messages(request)
    prompt = "".join(m["content"] for m in asked)
    reported, unreadable = _token_counts(getattr(response, "usage", None))
    # a count the server did not give is estimated; one it gave but that cannot be read is
    # charged at its upper bound (a budget stops early rather than late), and the call says so
    if "prompt_tokens" in unreadable:
        usage.prompt_tokens = upper_bound_tokens(prompt, len(asked))
    else:
        usage.prompt_tokens = reported.get("prompt_tokens") or estimate_tokens(prompt)
    if "completion_tokens" in unreadable:
        usage.completion_tokens = (upper_bound_tokens(text) if isinstance(text, str)
                                   else max_tokens or COMPLETION_GUESS)
    else:
        usage.completion_tokens = reported.get("completion_tokens") or estimate_tokens(text or "")
    if unreadable:
        usage.unreadable = ", ".join(f"{k} {v}" for k, v in unreadable.items())
    if limiter is not None and state.reservations:
        limiter.finish(state.reservations[-1], usage.prompt_tokens + usage.completion_tokens)
    if not isinstance(text, str):
        usage.status = "error"
        return Reply(None, usage, "the response has no message content")
    return Reply(text, usage, cut_off=getattr(choice, "finish_reason", None) == "length")


def _token_counts(counts: Any) -> tuple[dict[str, int], dict[str, str]]:
    """The server's ``usage`` block read: ({field: count} of the counts it gave as whole numbers of
    0 or more, {field: what it gave} of those it gave otherwise). A count left out (or null) is in
    neither; a block that is no object makes both counts unreadable."""
    fields = ("prompt_tokens", "completion_tokens")
    if counts is None:
        return {}, {}
    if isinstance(counts, str | int | float | list | bool):
        shown = _shown(counts)
        return {}, {name: f"(usage {shown})" for name in fields}
    good: dict[str, int] = {}
    bad: dict[str, str] = {}
    for name in fields:
        value = counts.get(name) if isinstance(counts, dict) else getattr(counts, name, None)
        if value is None:
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            good[name] = value
        else:
            bad[name] = _shown(value)
    return good, bad


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]`` (the SDK builds what it can of a reply that does not fit its
    model: an object, or the plain value the server sent); None when there is none."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _kind(value: Any) -> str:
    """What a JSON value is, in words (for a reply of the wrong shape)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), "an object")


def _not_a_completion(content_type: str | None, body: str | None, exc: Exception | None = None) -> str:
    """What a 200 reply that is no chat completion is, in plain words: a streamed reply, a page of
    another type, JSON that breaks off — never the parser's exception."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    text = (body or "").lstrip()
    if ctype == "text/event-stream" or text.startswith(("data:", "event:")):
        return ("a streamed (text/event-stream) reply; serialkit asks for stream=false and reads one chat "
                "completion (does the server honour stream=false?)")
    start = f", beginning {_shown(redact(' '.join(text[:60].split())))}" if text else ", empty"
    if ctype and not ctype.endswith("json"):
        return f"the reply is {ctype}, not a chat completion{start}"
    if isinstance(exc, json.JSONDecodeError):
        cut = exc.msg.startswith("Unterminated") or exc.pos >= len(exc.doc.rstrip())
        where = f"breaks off after {len(exc.doc):,} characters" if cut else (
            f"is malformed at character {exc.pos + 1:,} of {len(exc.doc):,}")
        return f"the reply is not valid JSON: it {where}{start}"
    if body is not None:
        return f"the reply is not JSON{' (' + ctype + ')' if ctype else ''}, not a chat completion{start}"
    return "the reply is not JSON, not a chat completion"


def _shown(value: Any) -> str:
    """A value the server sent, quoted for a message (shortened)."""
    text = json.dumps(value) if isinstance(value, str | int | float | bool | list | dict) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def server_message(exc: Any) -> str:
    """The message of an error body, shortened to one line."""
    body = getattr(exc, "body", None)
    msg: Any = None
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
    if msg is None:
        response = getattr(exc, "response", None)
        try:
            data = json.loads(response.text) if response is not None else None
            err = data.get("error") if isinstance(data, dict) else None
            msg = err.get("message") if isinstance(err, dict) else err
        except (ValueError, AttributeError):
            msg = getattr(response, "text", None)
    text = str(msg or getattr(exc, "message", "") or "no message")
    return " ".join(text.split())[:200]


def _cause(exc: BaseException) -> str:
    """The innermost cause's message (e.g. 'Connection refused')."""
    inner: BaseException = exc
    seen = {id(exc)}
    while (nxt := inner.__cause__ or inner.__context__) is not None and id(nxt) not in seen:  # never a cycle
        seen.add(id(nxt))
        inner = nxt
    text = str(inner) or type(inner).__name__
    return " ".join(text.split())[:200]
