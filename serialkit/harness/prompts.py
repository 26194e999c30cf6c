"""Versioned prompt files: chat messages built from a request."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from string import Template

from serialkit.harness.proposers.base import Request, time_json

PROMPT_VERSION = "v1"
_TEMPLATE = {"section": "section", "replan": "replan", "patch": "patch", "refine": "refine"}


@cache
def prompt_text(name: str, version: str = PROMPT_VERSION) -> str:
    """The text of one prompt file, e.g. ``section.v1.txt``."""
    path = resources.files("serialkit.harness") / "prompts" / f"{name}.{version}.txt"
    return path.read_text(encoding="utf-8")


def template_name(request: Request) -> str:
    """Which prompt file answers this request."""
    if request.kind == "section" and request.missing:
        return "replan"
    return _TEMPLATE[request.kind]


def messages(request: Request, version: str = PROMPT_VERSION) -> list[dict[str, str]]:
    """The chat messages (system, user) for a request."""
    task = request.task
    sec = task.section(request.section)
    schedule = "\n".join(
        f"- {v.id} ({v.name or v.id}, MIDI {v.low}-{v.high}): "
        + ", ".join(f.label + " = " + " ".join(map(str, task.row.form(f, task.convention)))
                    for f in task.blueprint.forms_for(request.section, v.id))
        for v in task.voices
    )
    fields = {
        "section": request.section,
        "brief": _brief(task.description),
        "start": time_json(sec.start),
        "end": time_json(sec.end),
        "meter": f"{task.meter.numerator}/{task.meter.denominator}",
        "row": " ".join(map(str, task.row.pcs)),
        "convention": task.convention,
        "schedule": schedule,
        "min_duration": task.texture.to_dict()["min_duration"],
        "max_duration": task.texture.to_dict()["max_duration"],
        "grid": task.texture.to_dict()["grid"],
        "rules": prompt_text("rules", version) if request.soft_rules else "",
        "feedback": request.feedback,
        "payload": json.dumps(request.payload(), separators=(",", ":")),
    }
    user = Template(prompt_text(template_name(request), version)).safe_substitute(fields)
    return [
        {"role": "system", "content": prompt_text("system", version)},
        {"role": "user", "content": user},
    ]


def _brief(description: str) -> str:
    """The task's own words, quoted as the user's brief (empty when there are none)."""
    text = " ".join(description.split())
    return f"The brief (the rules below still hold): {text}\n" if text else ""


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for proposers that do not report usage."""
    return max(1, (len(text) + 3) // 4)


#: tokens a chat format may add around each message (role markers, separators): generous
MESSAGE_OVERHEAD = 8


def upper_bound_tokens(text: str, messages: int = 0) -> int:
    """At least as many tokens as ``text`` can take: one per UTF-8 byte (a token of a byte-level
    tokenizer is never shorter than a byte) plus ``MESSAGE_OVERHEAD`` for each of ``messages``
    chat messages. What a call is charged when the server's own count cannot be read."""
    return len(text.encode("utf-8")) + MESSAGE_OVERHEAD * messages
