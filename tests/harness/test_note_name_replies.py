"""Replies that name their notes (``"pitch": "Bb4"``, ``"midi": "B♭4"``) are read as the MIDI numbers
they mean, and a reply that cannot be read is said to be so, with why, in the same words for every
variant (outside tester, round 1900, #6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialkit.core.errors import RowError
from serialkit.core.spelling import PC_NAMES_FLAT, PC_NAMES_SHARP, parse_pitch
from serialkit.harness import run
from serialkit.harness.proposers.base import CallUsage, Reply, Request, extract_json
from serialkit.harness.proposers.stochastic import StochasticProposer

UNICODE = {"#": "♯", "b": "♭"}


def _spelt(midi: int, flats: bool, unicode: bool) -> str:
    name = (PC_NAMES_FLAT if flats else PC_NAMES_SHARP)[midi % 12]
    if unicode:
        name = name[0] + "".join(UNICODE.get(c, c) for c in name[1:])
    return f"{name}{midi // 12 - 1}"


@given(st.integers(0, 127), st.booleans(), st.booleans())
def test_a_spelt_pitch_reads_back_as_its_midi_number(midi: int, flats: bool, unicode: bool) -> None:
    assert parse_pitch(_spelt(midi, flats, unicode)) == midi


def test_enharmonic_spellings_keep_their_octave() -> None:
    assert [parse_pitch(t) for t in ("B#3", "Cb4", "C4", "H4", "Fis4", "B-4", "C-1")] == [60, 59, 60, 71, 66, 70, 0]
    for bad in ("Bb", "X4", "4", ""):
        with pytest.raises(RowError):
            parse_pitch(bad)


class _Naming:
    """The clean stochastic proposer whose replies spell every note (as a language model may)."""

    def __init__(self, style: str) -> None:
        self.inner = StochasticProposer(seed=4, profile="clean")
        self.name, self.model = "stochastic", f"names-{style}"
        self.style = style

    def propose(self, request: Request) -> Reply:
        reply = self.inner.propose(request)
        if reply.text is None:
            return reply
        data: Any = extract_json(reply.text)
        for event in data["events"] if isinstance(data, dict) else data:
            name = _spelt(int(event["midi"]), flats=True, unicode=self.style == "unicode")
            if self.style == "pitch":
                del event["midi"]
                event["pitch"] = name
            else:
                event["midi"] = name
        return Reply(json.dumps(data, ensure_ascii=False), reply.usage, reply.error)


@pytest.mark.parametrize("variant", ["raw", "harness"])
@pytest.mark.parametrize("style", ["pitch", "unicode"])
def test_note_names_are_read_as_the_numbers_they_mean(variant: str, style: str) -> None:
    numbers = run("duo-berg", variant, proposer=StochasticProposer(seed=4, profile="clean"), seed=4)
    names = run("duo-berg", variant, proposer=_Naming(style), seed=4)
    assert numbers.released and names.released, names.report["failures"]
    assert [(e.voice, e.onset, e.midi) for e in names.piece.events] == \
        [(e.voice, e.onset, e.midi) for e in numbers.piece.events]
    assert names.report["errors"] == []


class _Silent:
    """A model server that answers every call with no message content."""

    name, model = "stochastic", "silent"

    def propose(self, request: Request) -> Reply:
        return Reply(None, CallUsage(), "the response has no message content")


def test_an_unreadable_reply_is_said_the_same_way_by_every_variant() -> None:
    said = {}
    for variant in ("raw", "harness", "self-refine", "soft-rules"):
        result = run("duo-berg", variant, proposer=_Silent(), seed=0)
        assert not result.released
        said[variant] = sorted(f["message"] for f in result.report["failures"] if f["code"] == "SECTION")
    assert said["raw"] == ["section A: the reply could not be read (the response has no message content)",
                           "section B: the reply could not be read (the response has no message content)"]
    assert all(messages == said["raw"] for messages in said.values()), said
