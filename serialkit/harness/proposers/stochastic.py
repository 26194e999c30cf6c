"""The offline proposer: writes rows from the blueprint and makes the mistakes models make."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Any

from serialkit.core.errors import ProposerError
from serialkit.core.rows import RowForm
from serialkit.harness.prompts import estimate_tokens, messages
from serialkit.harness.proposers.base import CallUsage, Reply, Request, _t, to_time
from serialkit.harness.tasks import Task


@dataclass(frozen=True)
class ErrorProfile:
    """Mistake rates: per note, per statement, per natural collision, per voice-section, per call."""

    wrong_pc: float = 0.01
    repetition: float = 0.005
    omission: float = 0.005
    register: float = 0.005
    collision: float = 0.1
    crossing: float = 0.03
    drift: float = 0.03
    malformed: float = 0.03
    patch_error: float = 0.2
    soft_rules_factor: float = 0.7
    refine_factor: float = 0.6

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ErrorProfile:
        """A profile from rates by name; unknown names are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ProposerError(f"stochastic proposer: unknown error rates {unknown} (known: {sorted(known)})")
        return cls(**{k: float(v) for k, v in data.items()})

    def scaled(self, factor: float) -> ErrorProfile:
        """Every mistake rate multiplied by ``factor``."""
        names = ("wrong_pc", "repetition", "omission", "register", "collision", "crossing", "drift", "malformed")
        return replace(self, **{n: getattr(self, n) * factor for n in names})


PROFILES: dict[str, ErrorProfile] = {
    "clean": ErrorProfile(0, 0, 0, 0, 0, 0, 0, 0, 0),
    "default": ErrorProfile(),
    # Calibrated so that about 13 % of raw candidates pass the strict gate (bench/bench_harness.py).
    "paper-raw": ErrorProfile(
        wrong_pc=0.0035, repetition=0.002, omission=0.0015, register=0.002, collision=0.025,
        crossing=0.025, drift=0.025, malformed=0.025, patch_error=0.25,
    ),
}


class StochasticProposer:
    """Seeded, offline; every call's randomness comes from (seed, call id) only."""

    def __init__(self, seed: int = 0, profile: str | ErrorProfile = "default",
                 rates: dict[str, Any] | None = None, model: str | None = None) -> None:
        if isinstance(profile, str):
            if profile not in PROFILES:
                raise ProposerError(f"stochastic proposer: unknown profile {profile!r} (known: {', '.join(PROFILES)})")
            profile = PROFILES[profile]
        if rates:
            ErrorProfile.from_dict(rates)  # names checked
            profile = replace(profile, **{k: float(v) for k, v in rates.items()})
        self.profile = profile
        self.seed = seed
        self.name = "stochastic"
        self.model: str | None = model or "stochastic-v1"

    def propose(self, request: Request) -> Reply:
        """Answer a request with JSON text (occasionally malformed, as models do)."""
        started = time.perf_counter()
        rng = random.Random(f"{self.seed}/{request.call_id}/{request.kind}/{request.section}/{request.attempt}")
        prof = self.profile
        if request.soft_rules:
            prof = prof.scaled(prof.soft_rules_factor)
        if request.kind == "refine":
            prof = prof.scaled(prof.refine_factor ** request.attempt)
        if request.kind == "patch":
            events = _patch(request, rng, prof)
        elif request.missing:
            events = _fill(request, rng, prof)
        else:
            events = _section(request, rng, prof)
        text = json.dumps({"section": request.section, "events": events}, separators=(",", ":"))
        text = _garble(text, rng, prof)
        prompt = "".join(m["content"] for m in messages(request))
        usage = CallUsage(estimate_tokens(prompt), estimate_tokens(text), time.perf_counter() - started)
        return Reply(text, usage)


def _garble(text: str, rng: random.Random, prof: ErrorProfile) -> str:
    if rng.random() >= prof.malformed:
        if rng.random() < 0.1:
            return f"Here is the section you asked for:\n```json\n{text}\n```\nI hope it helps."
        return text
    kind = rng.randrange(3)
    if kind == 0:
        return text[: len(text) // 2]
    if kind == 1:
        return "I could not write this section within the constraints, sorry."
    return text.replace('"midi"', '"pitch"', 1 + rng.randrange(3))


def _durations(rng: random.Random, task: Task, n: int, span: Fraction) -> list[tuple[Fraction, Fraction]]:
    """(offset, duration) pairs for n notes filling at most ``span`` on the task's grid."""
    tex = task.texture
    units = int(span / tex.grid)
    lo, hi = int(tex.min_duration / tex.grid), int(tex.max_duration / tex.grid)
    lengths = [rng.randint(lo, hi) for _ in range(n)]
    while sum(lengths) > units:
        i = rng.randrange(n)
        if lengths[i] > lo:
            lengths[i] -= 1
    gaps = [0] * (n + 1)
    for _ in range(units - sum(lengths)):
        gaps[rng.randrange(n + 1)] += 1
    out = []
    cursor = 0
    for i, length in enumerate(lengths):
        cursor += gaps[i]
        out.append((cursor * tex.grid, length * tex.grid))
        cursor += length
    return out


def _place(pc: int, target: int, low: int, high: int) -> int:
    """The MIDI number of ``pc`` nearest ``target`` inside [low, high]."""
    options = [m for m in range(low, high + 1) if m % 12 == pc]
    return min(options, key=lambda m: (abs(m - target), m))


def _drift(form: RowForm, rng: random.Random) -> RowForm:
    if rng.random() < 0.5:
        return RowForm(form.type, (form.n + rng.choice((1, 11, 5, 7))) % 12)
    other = {"P": "I", "I": "P", "R": "RI", "RI": "R"}[form.type]
    return RowForm(other, form.n)


def _section(request: Request, rng: random.Random, prof: ErrorProfile) -> list[dict[str, Any]]:
    task = request.task
    sec = task.section(request.section)
    written: list[dict[str, Any]] = []
    for vi, voice in enumerate(task.voices):
        assert voice.low is not None and voice.high is not None
        forms = task.blueprint.forms_for(sec.id, voice.id)
        times = _durations(rng, task, 12 * len(forms), sec.end - sec.start)
        centre = (voice.low + voice.high) // 2
        prev = centre
        cross_at = rng.randrange(len(times)) if vi > 0 and times and rng.random() < prof.crossing else -1
        mine: list[dict[str, Any]] = []
        for k, form in enumerate(forms):
            written_form = _drift(form, rng) if rng.random() < prof.drift else form
            pcs = task.row.form(written_form, task.convention)
            for pos, pc in enumerate(pcs):
                i = 12 * k + pos
                offset, dur = times[i]
                if rng.random() < prof.omission:
                    continue
                target = max(centre - 5, min(centre + 5, prev + rng.randint(-7, 7)))
                sounding = pc
                if rng.random() < prof.wrong_pc:
                    sounding = (pc + rng.choice((1, 11))) % 12
                elif pos >= 2 and rng.random() < prof.repetition:
                    sounding = pcs[rng.randrange(pos - 1)]
                midi = _place(sounding, target, voice.low, voice.high)
                if cross_at >= 0 and cross_at <= i < cross_at + 4:
                    midi = min(127, midi + 12)
                if rng.random() < prof.register:
                    midi = voice.high + 1 + (sounding - voice.high - 1) % 12 if rng.random() < 0.5 else (
                        voice.low - 12 + (sounding - voice.low) % 12)
                    midi = max(0, min(127, midi))
                prev = midi
                mine.append({"voice": voice.id, "onset": _t(sec.start + offset), "duration": _t(dur),
                             "midi": midi, "form": written_form.label, "position": pos, "pc": pc})
        _avoid(mine, written, rng, prof, task, sec.end)
        written.extend(mine)
    return written


def _span(e: dict[str, Any]) -> tuple[Fraction, Fraction]:
    onset = to_time(e["onset"], "onset")
    return onset, onset + to_time(e["duration"], "duration")


def _avoid(mine: list[dict[str, Any]], others: list[dict[str, Any]], rng: random.Random,
           prof: ErrorProfile, task: Task, limit: Fraction) -> None:
    """Resolve most same-pitch-class overlaps and crossings against earlier voices, as a careful
    writer would: cut the note short, enter later, or (for a crossing) change octave."""
    grid = task.texture.grid
    order = {v: i for i, v in enumerate(task.voice_ids)}
    left: dict[tuple[int, int], bool] = {}
    for _ in range(4):
        _avoid_pass(mine, others, rng, prof, task, limit, grid, order, left)


def _avoid_pass(mine: list[dict[str, Any]], others: list[dict[str, Any]], rng: random.Random,
                prof: ErrorProfile, task: Task, limit: Fraction, grid: Fraction, order: dict[str, int],
                left: dict[tuple[int, int], bool]) -> None:
    for i, e in enumerate(mine):
        voice = task.voice(e["voice"])
        assert voice.low is not None and voice.high is not None
        start, end = _span(e)
        nxt = _span(mine[i + 1])[0] if i + 1 < len(mine) else limit
        for o in others:
            o_start, o_end = _span(o)
            if min(end, o_end) <= max(start, o_start):
                continue
            if o["midi"] % 12 == e["midi"] % 12:
                if left.setdefault((id(e), id(o)), rng.random() < prof.collision):
                    continue
                if o_start - start >= grid:
                    end = o_start
                elif start - o_start >= grid:
                    o["duration"] = _t(start - o_start)
                elif nxt - o_end >= grid:
                    start, end = o_end, min(max(end, o_end + grid), nxt)
                elif o_end - o_start >= 2 * grid and nxt - o_start >= 2 * grid:
                    o["duration"] = _t(grid)
                    start, end = o_start + grid, min(max(end, o_start + 2 * grid), nxt)
            elif order[o["voice"]] < order[e["voice"]] and o["midi"] < e["midi"]:
                if e["midi"] - 12 >= voice.low and rng.random() >= prof.crossing:
                    e["midi"] -= 12
            elif order[o["voice"]] > order[e["voice"]] and o["midi"] > e["midi"]:
                if e["midi"] + 12 <= voice.high and rng.random() >= prof.crossing:
                    e["midi"] += 12
        e["onset"], e["duration"] = _t(start), _t(end - start)


def _fill(request: Request, rng: random.Random, prof: ErrorProfile) -> list[dict[str, Any]]:
    """Notes for the missing slots of a replanned section, each inside its window."""
    task = request.task
    out: list[dict[str, Any]] = []
    context = list(request.context)
    for slot in request.missing:
        voice = task.voice(slot["voice"])
        assert voice.low is not None and voice.high is not None
        lo, hi = to_time(slot["window"][0], "window"), to_time(slot["window"][1], "window")
        dur = min(hi - lo, task.texture.max_duration)
        pc = int(slot["pc"])
        if rng.random() < prof.wrong_pc:
            pc = (pc + 1) % 12
        midi = _place(pc, (voice.low + voice.high) // 2, voice.low, voice.high)
        if rng.random() < prof.register:
            midi = min(127, voice.high + 1 + (pc - voice.high - 1) % 12)
        event = {"voice": voice.id, "onset": _t(lo), "duration": _t(dur), "midi": midi,
                 "form": slot["form"], "position": slot["position"], "pc": int(slot["pc"])}
        _avoid([event], context, rng, prof, task, hi)
        context.append(event)
        out.append(event)
    return out


def _patch(request: Request, rng: random.Random, prof: ErrorProfile) -> list[dict[str, Any]]:
    """Corrected versions of flagged notes (wrong again at the patch error rate)."""
    task = request.task
    out = []
    for item in request.patches:
        voice = task.voice(item["voice"])
        assert voice.low is not None and voice.high is not None
        lo, hi = to_time(item["window"][0], "window"), to_time(item["window"][1], "window")
        onset = max(lo, to_time(item["onset"], "onset"))
        end = min(hi, onset + to_time(item["duration"], "duration"))
        if end <= onset:
            onset, end = lo, hi
        pc = int(item["pc"])
        if rng.random() < prof.patch_error:
            midi = int(item["midi"])
        else:
            midi = _place(pc, int(item["midi"]), voice.low, voice.high)
            for c in item.get("conflicts", ()):
                c_start, c_end = to_time(c["onset"], "onset"), to_time(c["end"], "end")
                if c_start <= onset < c_end and c_end < end:
                    onset = c_end
                elif onset < c_start < end:
                    end = c_start
        out.append({"id": item["id"], "voice": voice.id, "onset": _t(onset), "duration": _t(end - onset),
                    "midi": midi, "form": item["form"], "position": item["position"], "pc": pc})
    return out
