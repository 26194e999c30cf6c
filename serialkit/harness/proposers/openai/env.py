"""The ``openai`` proposer's configuration: the API key and base URL from the environment, the
defaults, and the redaction that keeps the key out of every message.

The API key is read from the environment only (``SERIALKIT_API_KEY`` or ``OPENAI_API_KEY``) and is
never logged, recorded in a transcript, written to an output file or put in an error message.
"""

from __future__ import annotations

import os
import re

from serialkit.core.errors import ProposerError

KEY_VARIABLES = ("SERIALKIT_API_KEY", "OPENAI_API_KEY")
DEFAULT_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
#: expected completion tokens of a call before any reply was seen (the TPM limit's first guess)
COMPLETION_GUESS = 600
#: the largest reply body read (``max_reply_bytes``): the bank's longest section answer is under 9 kB,
#: so this leaves a verbose model a hundredfold room; a reply over it is an error of the server's
DEFAULT_MAX_REPLY_BYTES = 1_000_000


def api_key() -> str | None:
    """The API key from the environment (None when unset: local servers often need none)."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


def base_url_from_env() -> str | None:
    """``SERIALKIT_BASE_URL`` or ``OPENAI_BASE_URL``."""
    return os.environ.get("SERIALKIT_BASE_URL") or os.environ.get("OPENAI_BASE_URL")


def configured() -> bool:
    """True when an endpoint or key is configured in the environment."""
    return bool(api_key() or base_url_from_env())


def redact(text: str) -> str:
    """``text`` without the API key or anything shaped like one."""
    key = api_key()
    if key:
        text = text.replace(key, "[key]")
    return re.sub(r"\bsk-[A-Za-z0-9_*.\-]{6,}", "[key]", text)


def endpoint_url(base_url: str | None) -> str:
    """The base URL to use: ``base_url``, else the environment's, else :data:`DEFAULT_URL`
    (without a trailing slash); one that is no http(s) URL is a :class:`ProposerError`."""
    url = (base_url or base_url_from_env() or DEFAULT_URL).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ProposerError(f"openai proposer: base URL {url!r} must start with http:// or https://")
    return url
