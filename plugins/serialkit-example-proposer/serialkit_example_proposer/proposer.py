"""The example proposer: writes every scheduled row form note by note, evenly spaced.

A proposer answers ``Request`` objects (write a section, patch flagged notes, refill missing
slots) with a ``Reply`` whose text is the proposal JSON ``{"events": [...]}``. It never raises
for a bad answer; the harness verifies, repairs and gates whatever comes back.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from typing import Any

from serialkit.harness.proposers.base import CallUsage, Reply, Request


def _t(value: Fraction) -> int | str:
    return int(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _place(pc: int, target: int, low: int, high: int) -> int:
    """The MIDI number of pitch class ``pc`` nearest ``target`` within [low, high]."""
    options = [m for m in range(low, high + 1) if m % 12 == pc] or [target - (target - pc) % 12]
    return min(options, key=lambda m: (abs(m - target), m))


def to_time(value: int | str) -> Fraction:
    """A time written by ``_t`` back to a Fraction."""
    return Fraction(value)


def _dodge(onset: Fraction, length: Fraction, pc: int,
           sounding: list[tuple[Fraction, Fraction, int]], grid: Fraction,
           shortest: Fraction) -> tuple[Fraction, Fraction]:
    """Shorten or delay a note within its step so no other voice sounds its pitch class."""
    options = [(onset + d, length - d - c) for d in _steps(length, grid) for c in _steps(length, grid)]
    for start, size in options:
        if size >= shortest and not any(
            p == pc and a < start + size and start < b for a, b, p in sounding
        ):
            return start, size
    return onset, length  # the harness's repair ladder will deal with it


def _steps(length: Fraction, grid: Fraction) -> list[Fraction]:
    return [k * grid for k in range(int(length / grid))]


class ExampleProposer:
    """Deterministic and offline: the same request always gets the same answer."""

    def __init__(self, model: str | None = None) -> None:
        self.name = "example"
        self.model: str | None = model or "example-v1"

    def propose(self, request: Request) -> Reply:
        """Answer one request with proposal JSON."""
        started = time.perf_counter()
        if request.kind == "patch":
            events = [self._patched(item, request) for item in request.patches]
        elif request.missing:
            events = [self._filled(slot, request) for slot in request.missing]
        else:
            events = self._section(request)
        text = json.dumps({"section": request.section, "events": events})
        return Reply(text, CallUsage(seconds=time.perf_counter() - started))

    def _section(self, request: Request) -> list[dict[str, Any]]:
        task = request.task
        section = task.section(request.section)
        span = section.end - section.start
        grid = task.texture.grid
        events: list[dict[str, Any]] = []
        sounding: list[tuple[Fraction, Fraction, int]] = []  # (start, end, pc) of earlier voices
        for voice in task.voices:
            slots = task.slots(section.id, voice.id)
            if not slots:
                continue
            # even steps on the grid, within the task's shortest and longest note
            step = max(grid, min(task.texture.max_duration, (span / len(slots)) // grid * grid))
            low, high = voice.low or 48, voice.high or 84
            previous = (low + high) // 2
            for k, slot in enumerate(slots):
                onset = section.start + k * step
                if onset + step > section.end:
                    break
                midi = _place(slot.pc, previous, low, high)
                previous = midi
                start, length = _dodge(onset, step, slot.pc, sounding, grid,
                                       task.texture.min_duration)
                events.append({"voice": voice.id, "onset": _t(start), "duration": _t(length),
                               "midi": midi, "form": slot.form.label, "position": slot.position,
                               "pc": slot.pc})
            sounding += [(to_time(e["onset"]), to_time(e["onset"]) + to_time(e["duration"]),
                          e["pc"]) for e in events if e["voice"] == voice.id]
        return events

    def _filled(self, slot: dict[str, Any], request: Request) -> dict[str, Any]:
        voice = request.task.voice(slot["voice"])
        low, high = voice.low or 48, voice.high or 84
        lo, hi = Fraction(str(slot["window"][0])), Fraction(str(slot["window"][1]))
        return {"voice": voice.id, "onset": _t(lo),
                "duration": _t(min(hi - lo, request.task.texture.max_duration)),
                "midi": _place(int(slot["pc"]), (low + high) // 2, low, high),
                "form": slot["form"], "position": slot["position"], "pc": int(slot["pc"])}

    def _patched(self, item: dict[str, Any], request: Request) -> dict[str, Any]:
        voice = request.task.voice(item["voice"])
        low, high = voice.low or 48, voice.high or 84
        return {"id": item["id"], "voice": voice.id, "onset": item["onset"],
                "duration": item["duration"],
                "midi": _place(int(item["pc"]), int(item["midi"]), low, high),
                "form": item["form"], "position": item["position"], "pc": int(item["pc"])}
