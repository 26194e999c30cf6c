"""Pinned results of row-form inference: every note's label on both Webern excerpts and a digest
of the whole analysis of each synthetic family, so a refactoring that changes a single label fails.

The pins are in ``tests/core/pins/analysis.json``. A change that is meant to alter results (a better
reading) rewrites them with ``SERIALKIT_REPIN=1 pytest tests/core/test_analysis_pins.py`` — and the
diff of that file is the review of what changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from serialkit.core.analysis import Analysis, analyze, identify
from serialkit.core.rows import Row
from tests.synth import FAMILIES, catalogued

PINS = Path(__file__).parent / "pins" / "analysis.json"
REPIN = os.environ.get("SERIALKIT_REPIN") == "1"
SEEDS = range(3)
WEBERN = {
    "op21": ("webern-op21-i-mm1-25.mei", "A F# G G# E F B Bb D C# C Eb"),
    "op27": ("webern-op27-ii-mm1-11.mei", "Eb B Bb D C# C F# E G F A Ab"),
}


def _digest(analysis: Analysis) -> str:
    data = analysis.to_dict()
    if data["identification"] is not None:
        data["identification"].pop("seconds", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:20]


def _pins() -> dict[str, Any]:
    return json.loads(PINS.read_text()) if PINS.exists() else {}


def _check(key: str, value: Any) -> None:
    pins = _pins()
    if REPIN:
        pins[key] = value
        PINS.parent.mkdir(exist_ok=True)
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
        return
    assert key in pins, f"no pin for {key}: run with SERIALKIT_REPIN=1"
    expected = pins[key]
    if isinstance(expected, dict) and isinstance(value, dict):
        changed = sorted(k for k in expected.keys() | value.keys() if expected.get(k) != value.get(k))
        assert not changed, f"{key}: {len(changed)} labels changed, e.g. " + ", ".join(
            f"{k}: {expected.get(k)} -> {value.get(k)}" for k in changed[:8])
    assert value == expected


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(WEBERN))
def test_webern_labels_are_pinned(corpus: Path, name: str) -> None:
    from serialkit.io import read_score

    path, row = WEBERN[name]
    piece = read_score(corpus / path)
    analysis = analyze(piece, Row.parse(row))
    _check(f"{name}/labels", analysis.labels())
    _check(f"{name}/statements", [[s.form.label, *s.event_ids] for s in analysis.statements])
    _check(f"{name}/coverage", f"{analysis.coverage.numerator}/{analysis.coverage.denominator}")


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(WEBERN))
def test_webern_identification_is_pinned(corpus: Path, name: str) -> None:
    from serialkit.io import read_score

    piece = read_score(corpus / WEBERN[name][0])
    found = identify(piece)
    _check(f"{name}/identified", [list(found.row.pcs), found.entry.name if found.entry else None,
                                  str(found.chosen.coverage),
                                  found.runner_up.name if found.runner_up else None])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_synthetic_family_results_are_pinned(family: str) -> None:
    digests = []
    for seed in SEEDS:
        synth = FAMILIES[family](seed)
        digests.append(_digest(analyze(synth.piece, synth.row)))
    _check(f"synth/{family}", digests)


def test_catalogued_identification_is_pinned() -> None:
    out = []
    for seed in SEEDS:
        synth = catalogued(seed)
        out.append(_digest(analyze(synth.piece)))
    _check("synth/catalogued", out)
