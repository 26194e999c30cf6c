"""The harness's JSON Schemas (task, proposal, certificate, run report), loaded lazily."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_FILES = {
    "task": "task.schema.json",
    "proposal": "proposal.schema.json",
    "certificate": "certificate.schema.json",
    "run-report": "run-report.schema.json",
}


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``name`` shipped in ``serialkit/schemas``."""
    text = (resources.files("serialkit") / "schemas" / SCHEMA_FILES[name]).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator(name: str) -> Any:
    import jsonschema

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def validation_errors(name: str, data: Any) -> list[str]:
    """Messages (``at $.path: problem``) for every way ``data`` breaks schema ``name``."""
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: list(e.absolute_path))
    out = []
    for err in errors:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        out.append(f"at ${path}: {err.message}")
    return out


def is_valid(name: str, data: Any) -> bool:
    """True if ``data`` satisfies schema ``name``."""
    return not validation_errors(name, data)
