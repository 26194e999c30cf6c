"""serialkit's own JSON piece format: ``load_piece`` / ``save_piece``, validated by a JSON Schema."""

from __future__ import annotations

import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from serialkit.core.errors import PieceError, ScoreReadError, ScoreWriteError
from serialkit.core.piece import Piece
from serialkit.core.piece_json import piece_from_dict, piece_to_dict
from serialkit.io.files.atomic import atomic_write

__all__ = ["load_piece", "save_piece", "piece_schema", "validate_piece_data", "dumps_piece"]

MAX_BYTES = 512 * 1024 * 1024


@cache
def piece_schema() -> dict[str, Any]:
    """The piece JSON Schema shipped in the package."""
    text = resources.files("serialkit.schemas").joinpath("piece.schema.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = piece_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _json_path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _explain(error: Any) -> str:
    """One readable line for a jsonschema error, naming the JSON path."""
    where = _json_path(error.absolute_path)
    value = error.instance
    if error.validator == "required":
        return f"{where}: {error.message.replace(' is a required property', '')} is missing (required)"
    if error.validator == "additionalProperties":
        extra = sorted(set(value) - set(error.schema.get("properties", {}))) if isinstance(value, dict) else []
        if len(extra) > 3:  # a catalogue or other JSON: name a few keys, not thousands
            shown = ", ".join(repr(k) for k in extra[:3])
            return f"{where}: {len(extra)} unexpected properties ({shown}, ...); is this a serialkit piece?"
        return f"{where}: {error.message}"
    leaf = list(error.absolute_path)[-1] if error.absolute_path else ""
    if isinstance(value, float):
        return f"{where}: {value!r} is a float; write exact times as integers or fraction strings like \"3/2\""
    if leaf in ("midi", "low", "high") and isinstance(value, int) and not isinstance(value, bool):
        return f"{where}: MIDI pitch {value} is out of range 0..127"
    if leaf in ("onset", "duration", "start", "end", "pickup", "beat"):
        if isinstance(value, int) and value < 0 or isinstance(value, str) and value.strip().startswith("-"):
            return f"{where}: {value!r} is negative; times and durations must be >= 0"
        return f"{where}: {value!r} is not an exact time (an integer or a fraction string like \"3/2\")"
    if leaf in ("form", "forms") or error.validator == "pattern" and "[Rr][Ii]" in str(error.validator_value):
        return f"{where}: {value!r} is not a row form (P0..P11, I0..I11, R0..R11, RI0..RI11)"
    if error.context:  # oneOf/anyOf: the branch the value meant (not "is not null"), deepest first
        meant = [e for e in error.context if not (e.validator == "type" and e.validator_value == "null")]
        best = max(meant or error.context, key=lambda e: len(list(e.absolute_path)))
        return _explain(best) if meant else f"{where}: {best.message}"
    return f"{where}: {error.message}"


def validate_piece_data(data: Any, name: str = "piece") -> None:
    """Raise PieceError naming ``name`` and the JSON path of the first few schema violations."""
    errors = sorted(_validator().iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    lines = [_explain(e) for e in errors[:5]]
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    raise PieceError(f"{name}: " + "; ".join(lines) + more)


def load_piece(path: str | os.PathLike[str], validate: bool = True) -> Piece:
    """Read a piece JSON file; errors name the file and the JSON path (or line) of the problem."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise ScoreReadError(f"{p}: file is over the {MAX_BYTES} byte limit")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScoreReadError(f"{p}: no such file") from None
    except UnicodeDecodeError as exc:
        raise ScoreReadError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ScoreReadError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScoreReadError(f"{p}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}") from None
    if validate:
        validate_piece_data(data, str(p))
    try:
        piece = piece_from_dict(data, Piece)
    except PieceError as exc:
        raise PieceError(f"{p}: {exc}") from None
    meta = dict(piece.metadata)
    meta.setdefault("source_path", str(p))
    meta.setdefault("format", "json")
    return piece.copy(metadata=meta)


def dumps_piece(piece: Piece, indent: int | None = 1) -> str:
    """The JSON text of a piece: one top-level field, and one event, per line (compact if indent is None)."""
    data = piece_to_dict(piece)
    meta = {k: v for k, v in dict(data.get("metadata", {})).items() if k not in ("source_path", "format")}
    if meta:
        data["metadata"] = meta
    else:
        data.pop("metadata", None)
    if indent is None:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    events = data.pop("events")
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data.items()]
    body = ",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in events)
    lines.append(' "events": [\n' + body + "\n ]" if events else ' "events": []')
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save_piece(piece: Piece, path: str | os.PathLike[str]) -> Path:
    """Write a piece as JSON atomically (no partial file on failure); returns the path."""
    p = Path(path)
    try:
        text = dumps_piece(piece)
    except (TypeError, ValueError) as exc:
        raise ScoreWriteError(f"{p}: the piece cannot be written as JSON: {exc}") from exc
    atomic_write(p, text.encode("utf-8"))
    return p
