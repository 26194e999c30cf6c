"""Models of an experiment: which endpoint, which model, its limits and its price.

``--model A --model B`` gives one entry per name on the command line's endpoint; ``--models
FILE.toml`` gives entries with their own endpoint, limits and price::

    # models.toml
    [[model]]
    name = "gpt-4o-mini"                 # the model name the endpoint knows
    base_url = "https://api.openai.com/v1"
    rpm = 500                            # requests per minute (optional)
    tpm = 200000                         # tokens per minute (optional)
    concurrency = 16                     # requests in flight (optional; else --concurrency)
    input_price = 0.15                   # USD per million prompt tokens (optional)
    output_price = 0.60                  # USD per million completion tokens
    options = { temperature = 0.7 }      # passed to the proposer

    [[model]]
    name = "qwen2.5-7b-instruct"
    base_url = "http://gpu-box:8000/v1"

Prices not given in the file come from ``serialkit/eval/prices.toml`` (a small table the user can
edit, or replace with ``SERIALKIT_PRICES=FILE``).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from serialkit.core.errors import TaskError

KNOWN_KEYS = {"name", "proposer", "base_url", "rpm", "tpm", "concurrency", "input_price", "output_price",
              "options"}


@dataclass(frozen=True)
class ModelSpec:
    """One model of an experiment (``name`` None: the proposer's default model)."""

    name: str | None = None
    proposer: str = "stochastic"
    base_url: str | None = None
    rpm: int | None = None
    tpm: int | None = None
    concurrency: int | None = None
    input_price: float | None = None  # USD per million prompt tokens
    output_price: float | None = None  # USD per million completion tokens
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def priced(self) -> bool:
        """True when both prices are known."""
        return self.input_price is not None and self.output_price is not None

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float | None:
        """USD for these tokens (None without a price)."""
        if not self.priced:
            return None
        assert self.input_price is not None and self.output_price is not None
        return (prompt_tokens * self.input_price + completion_tokens * self.output_price) / 1e6


def price_table(path: str | os.PathLike[str] | None = None) -> dict[str, tuple[float, float]]:
    """Model name → (input, output) USD per million tokens."""
    source = path or os.environ.get("SERIALKIT_PRICES")
    try:
        if source:
            text = Path(source).read_text(encoding="utf-8")
            where = str(source)
        else:
            text = (resources.files("serialkit.eval") / "prices.toml").read_text(encoding="utf-8")
            where = "serialkit/eval/prices.toml"
        data = tomllib.loads(text)
    except OSError as exc:
        raise TaskError(f"{source}: cannot read price table ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{source or 'prices.toml'}: not TOML ({exc})") from exc
    out = {}
    for name, entry in (data.get("prices") or {}).items():
        try:
            out[name] = (float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskError(f"{where}: prices.{name}: needs numbers 'input' and 'output'") from exc
    return out


def with_prices(models: tuple[ModelSpec, ...], table: dict[str, tuple[float, float]] | None = None
                ) -> tuple[ModelSpec, ...]:
    """Entries with the table's price where they give none."""
    table = price_table() if table is None else table
    out = []
    for m in models:
        if not m.priced and m.name in table:
            inp, outp = table[m.name]
            m = replace(m, input_price=inp if m.input_price is None else m.input_price,
                        output_price=outp if m.output_price is None else m.output_price)
        out.append(m)
    return tuple(out)


def load_models(path: str | os.PathLike[str], proposer: str = "openai") -> tuple[ModelSpec, ...]:
    """The ``[[model]]`` entries of a models TOML file (errors name the file and the entry)."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskError(f"{p}: cannot read models file ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{p}: not TOML ({exc})") from exc
    entries = data.get("model")
    if not isinstance(entries, list) or not entries:
        raise TaskError(f"{p}: no [[model]] entries")
    out = []
    for i, entry in enumerate(entries):
        where = f"{p}: model[{i}]"
        unknown = sorted(set(entry) - KNOWN_KEYS)
        if unknown:
            raise TaskError(f"{where}: unknown keys {unknown} (known: {sorted(KNOWN_KEYS)})")
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise TaskError(f"{where}: needs a 'name'")
        try:
            spec = ModelSpec(
                name=entry["name"], proposer=str(entry.get("proposer", proposer)),
                base_url=entry.get("base_url"),
                rpm=None if entry.get("rpm") is None else int(entry["rpm"]),
                tpm=None if entry.get("tpm") is None else int(entry["tpm"]),
                concurrency=None if entry.get("concurrency") is None else int(entry["concurrency"]),
                input_price=None if entry.get("input_price") is None else float(entry["input_price"]),
                output_price=None if entry.get("output_price") is None else float(entry["output_price"]),
                options=dict(entry.get("options") or {}),
            )
        except (TypeError, ValueError) as exc:
            raise TaskError(f"{where}: {exc}") from exc
        for name in ("rpm", "tpm", "concurrency"):
            value = getattr(spec, name)
            if value is not None and value < 1:
                raise TaskError(f"{where}: {name} must be at least 1, not {value}")
        out.append(spec)
    names = [(m.proposer, m.name) for m in out]
    if len(set(names)) != len(names):
        raise TaskError(f"{p}: a model is listed twice")
    return tuple(out)
