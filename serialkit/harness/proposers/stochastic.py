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
from serialkit.harness.proposers.base import CallUsage, Reply, Request, time_json, to_time
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
    # habits of real models (all 0 outside ``hostile``; drawn from their own random stream, so a
    # profile without them answers exactly as before). Per statement:
    transpose: float = 0.0  # the whole statement a semitone off
    invert: float = 0.0  # the inversion written where the prime (or the prime where the inversion) was asked
    lost_place: float = 0.0  # a note omitted, the following positions claimed one too low
    swap: float = 0.0  # two neighbouring notes swapped
    # per note:
    off_by_one: float = 0.0  # claimed position off by one, right pitch
    overlap: float = 0.0  # the note runs into the next one of its own voice
    off_grid: float = 0.0  # onset off the task's grid
    # per voice-section:
    past_end: float = 0.0  # the last notes run past the section's end
    # per call (the answer's form):
    fence: float = 0.0  # JSON in a markdown fence
    prose: float = 0.0  # prose before and after the JSON
    truncate: float = 0.0  # cut off mid-JSON
    strings: float = 0.0  # numbers written as strings
    empty: float = 0.0  # an empty answer
    # model patches and replans:
    patch_repeat: float = 0.0  # a patch that repeats the flagged note exactly
    replan_ignore: float = 0.0  # a replanned note placed without regard to its window
    # the endpoint:
    transient: float = 0.0  # 429/500 that clear on retry (the reply records the extra tries)
    persistent: float = 0.0  # a failure that persists for the same request (every retry fails)

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
        names = ("wrong_pc", "repetition", "omission", "register", "collision", "crossing", "drift", "malformed",
                 "transpose", "invert", "lost_place", "swap", "off_by_one", "overlap", "off_grid", "past_end")
        return replace(self, **{n: getattr(self, n) * factor for n in names})


PROFILES: dict[str, ErrorProfile] = {
    "clean": ErrorProfile(0, 0, 0, 0, 0, 0, 0, 0, 0),
    "default": ErrorProfile(),
    # Calibrated so that about 13 % of raw candidates passed the strict gate when it judged inferred
    # tags only; under the one gate (claims and completeness checked) 9.2 % pass (bench/bench_harness.py).
    "paper-raw": ErrorProfile(
        wrong_pc=0.0035, repetition=0.002, omission=0.0015, register=0.002, collision=0.025,
        crossing=0.025, drift=0.025, malformed=0.025, patch_error=0.25,
    ),
    # Every habit of a model's mistakes, each at a rate at least as high as seems plausible for a current
    # model on this task; the harness was not tuned on it (bench/bench_harness.py measures it).
    "hostile": ErrorProfile(
        wrong_pc=0.02, repetition=0.01, omission=0.01, register=0.02, collision=0.2, crossing=0.05,
        drift=0.05, malformed=0.04, patch_error=0.3,
        transpose=0.06, invert=0.06, lost_place=0.05, swap=0.06, off_by_one=0.03, overlap=0.05,
        off_grid=0.03, past_end=0.15, fence=0.2, prose=0.15, truncate=0.05, strings=0.1, empty=0.03,
        patch_repeat=0.2, replan_ignore=0.25, transient=0.1, persistent=0.06,
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
        key = f"{self.seed}/{request.call_id}/{request.kind}/{request.section}/{request.attempt}"
        rng = random.Random(key)
        hrng = random.Random(f"{key}/habits")  # the habits' own stream: other profiles are unchanged
        prof = self.profile
        if request.soft_rules:
            prof = prof.scaled(prof.soft_rules_factor)
        if request.kind == "refine":
            prof = prof.scaled(prof.refine_factor ** request.attempt)
        prompt = "".join(m["content"] for m in messages(request))
        tries = 1
        if prof.transient and hrng.random() < prof.transient:
            tries += 1 + hrng.randrange(2)
        if prof.persistent and random.Random(f"{self.seed}/{request_identity(request)}").random() < prof.persistent:
            usage = CallUsage(estimate_tokens(prompt), 0, time.perf_counter() - started, tries=5, status="exhausted")
            return Reply(None, usage, "HTTP 500: internal error (gave up after 5 tries)")
        if request.kind == "patch":
            events = _patch(request, rng, prof, hrng)
        elif request.missing:
            events = _fill(request, rng, prof, hrng)
        else:
            events = _section(request, rng, prof, hrng)
        text = json.dumps({"section": request.section, "events": _strings(events, hrng, prof)}, separators=(",", ":"))
        text = _habit_form(_garble(text, rng, prof), hrng, prof)
        usage = CallUsage(estimate_tokens(prompt), estimate_tokens(text), time.perf_counter() - started, tries=tries)
        return Reply(text, usage)


def request_identity(request: Request) -> str:
    """What makes two requests "the same" for a persistent failure: kind, section, attempt and the
    notes asked about (not the call id), so asking again unchanged fails again."""
    ids = [f"{m.get('voice')}:{m.get('slot')}" for m in request.missing] + [str(p.get("id")) for p in request.patches]
    return f"{request.kind}/{request.section}/{request.attempt}/{request.feedback[:40]}/{','.join(ids)}"


def _strings(events: list[dict[str, Any]], hrng: random.Random, prof: ErrorProfile) -> list[dict[str, Any]]:
    """Numbers written as strings (the whole answer), a habit of some models."""
    if not prof.strings or hrng.random() >= prof.strings:
        return events
    return [{k: str(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in e.items()} for e in events]


def _habit_form(text: str, hrng: random.Random, prof: ErrorProfile) -> str:
    """The answer's form: empty, truncated mid-JSON, fenced, with prose around it."""
    if prof.empty and hrng.random() < prof.empty:
        return ""
    if prof.truncate and hrng.random() < prof.truncate:
        text = text[: max(1, int(len(text) * (0.3 + 0.6 * hrng.random())))]
    if prof.fence and hrng.random() < prof.fence:
        text = f"```json\n{text}\n```"
    if prof.prose and hrng.random() < prof.prose:
        text = f"Certainly. Here is my answer, following the row and the windows.\n\n{text}\n\nEach note is labelled."
    return text


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


def _section(request: Request, rng: random.Random, prof: ErrorProfile,
             hrng: random.Random | None = None) -> list[dict[str, Any]]:
    task = request.task
    sec = task.section(request.section)
    hrng = hrng or random.Random(0)
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
            sung, claims, lost = _statement_habits(pcs, written_form, task, hrng, prof)
            for pos, pc in enumerate(pcs):
                i = 12 * k + pos
                offset, dur = times[i]
                if rng.random() < prof.omission:
                    continue
                target = max(centre - 5, min(centre + 5, prev + rng.randint(-7, 7)))
                sounding = sung[pos]
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
                if pos == lost:
                    continue
                claim_pos, claim_pc = claims[pos]
                mine.append({"voice": voice.id, "onset": time_json(sec.start + offset), "duration": time_json(dur),
                             "midi": midi, "form": written_form.label, "position": claim_pos, "pc": claim_pc})
        _avoid(mine, written, rng, prof, task, sec.end)
        _timing_habits(mine, task, sec.end, hrng, prof)
        written.extend(mine)
    return written


def _statement_habits(pcs: tuple[int, ...], form: RowForm, task: Task, hrng: random.Random,
                      prof: ErrorProfile) -> tuple[list[int], list[tuple[int, int]], int]:
    """The pitch classes a model sings for one statement, the (position, pc) it claims for each, and
    the position it loses (-1 for none): transposition, inversion, swapped neighbours, lost place."""
    sung = list(pcs)
    claims = [(pos, pc) for pos, pc in enumerate(pcs)]
    lost = -1
    if prof.transpose and hrng.random() < prof.transpose:
        step = hrng.choice((1, 11))
        sung = [(pc + step) % 12 for pc in sung]
        claims = [(pos, pc) for pos, pc in enumerate(sung)]  # the model believes it wrote the form
    if prof.invert and hrng.random() < prof.invert:
        other = {"P": "I", "I": "P", "R": "RI", "RI": "R"}[form.type]
        sung = list(task.row.form(RowForm(other, form.n), task.convention))
        claims = [(pos, pc) for pos, pc in enumerate(sung)]
    if prof.swap and hrng.random() < prof.swap:
        p = hrng.randrange(11)
        sung[p], sung[p + 1] = sung[p + 1], sung[p]
        claims = [(pos, pc) for pos, pc in enumerate(sung)]
    if prof.lost_place and hrng.random() < prof.lost_place:
        lost = 1 + hrng.randrange(10)
        claims = [(pos - 1 if pos > lost else pos, pc) for pos, pc in enumerate(sung)]
    if prof.off_by_one:
        for pos in range(12):
            if hrng.random() < prof.off_by_one:
                claims[pos] = (max(0, min(11, claims[pos][0] + hrng.choice((-1, 1)))), claims[pos][1])
    return sung, claims, lost


def _timing_habits(mine: list[dict[str, Any]], task: Task, limit: Fraction, hrng: random.Random,
                   prof: ErrorProfile) -> None:
    """Notes that run into their successor, off-grid onsets, and a tail past the section's end."""
    grid = task.texture.grid
    for i, e in enumerate(mine):
        if prof.overlap and i + 1 < len(mine) and hrng.random() < prof.overlap:
            start, end = _span(e)
            e["duration"] = time_json(end - start + grid * (1 + hrng.randrange(2)))
        if prof.off_grid and hrng.random() < prof.off_grid:
            e["onset"] = time_json(to_time(e["onset"], "onset") + grid / hrng.choice((3, 4, 5)))
    if mine and prof.past_end and hrng.random() < prof.past_end:
        tail = mine[-(1 + hrng.randrange(min(3, len(mine)))):]
        shift = limit - _span(tail[0])[0] + grid * hrng.randrange(3) - grid
        for e in tail:
            e["onset"] = time_json(to_time(e["onset"], "onset") + max(shift, grid))


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
                    o["duration"] = time_json(start - o_start)
                elif nxt - o_end >= grid:
                    start, end = o_end, min(max(end, o_end + grid), nxt)
                elif o_end - o_start >= 2 * grid and nxt - o_start >= 2 * grid:
                    o["duration"] = time_json(grid)
                    start, end = o_start + grid, min(max(end, o_start + 2 * grid), nxt)
            elif order[o["voice"]] < order[e["voice"]] and o["midi"] < e["midi"]:
                if e["midi"] - 12 >= voice.low and rng.random() >= prof.crossing:
                    e["midi"] -= 12
            elif order[o["voice"]] > order[e["voice"]] and o["midi"] > e["midi"]:
                if e["midi"] + 12 <= voice.high and rng.random() >= prof.crossing:
                    e["midi"] += 12
        e["onset"], e["duration"] = time_json(start), time_json(end - start)


def _fill(request: Request, rng: random.Random, prof: ErrorProfile,
          hrng: random.Random | None = None) -> list[dict[str, Any]]:
    """Notes for the missing slots of a replanned section, each inside its window (unless the model
    ignores the window: ``replan_ignore``)."""
    task = request.task
    hrng = hrng or random.Random(0)
    sec = task.section(request.section)
    out: list[dict[str, Any]] = []
    context = list(request.context)
    for slot in request.missing:
        voice = task.voice(slot["voice"])
        assert voice.low is not None and voice.high is not None
        lo, hi = to_time(slot["window"][0], "window"), to_time(slot["window"][1], "window")
        if prof.replan_ignore and hrng.random() < prof.replan_ignore:
            grid = task.texture.grid
            lo = sec.start + grid * hrng.randrange(max(1, int((sec.end - sec.start) / grid) - 1))
            hi = lo + grid * (1 + hrng.randrange(4))
        dur = min(hi - lo, task.texture.max_duration)
        if dur <= 0:  # asked for a note in an empty window: the only answer is a zero-length note
            dur = Fraction(0)
        pc = int(slot["pc"])
        if rng.random() < prof.wrong_pc:
            pc = (pc + 1) % 12
        midi = _place(pc, (voice.low + voice.high) // 2, voice.low, voice.high)
        if rng.random() < prof.register:
            midi = min(127, voice.high + 1 + (pc - voice.high - 1) % 12)
        event = {"voice": voice.id, "onset": time_json(lo), "duration": time_json(dur), "midi": midi,
                 "form": slot["form"], "position": slot["position"], "pc": int(slot["pc"])}
        _avoid([event], context, rng, prof, task, hi)
        context.append(event)
        out.append(event)
    return out


def _patch(request: Request, rng: random.Random, prof: ErrorProfile,
           hrng: random.Random | None = None) -> list[dict[str, Any]]:
    """Corrected versions of flagged notes (wrong again at the patch error rate; repeated exactly at
    the ``patch_repeat`` rate)."""
    task = request.task
    hrng = hrng or random.Random(0)
    out = []
    for item in request.patches:
        voice = task.voice(item["voice"])
        assert voice.low is not None and voice.high is not None
        if prof.patch_repeat and hrng.random() < prof.patch_repeat:
            out.append({"id": item["id"], "voice": voice.id, "onset": item["onset"], "duration": item["duration"],
                        "midi": int(item["midi"]), "form": item["form"], "position": item["position"],
                        "pc": int(item["midi"]) % 12})
            continue
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
        out.append({"id": item["id"], "voice": voice.id, "onset": time_json(onset), "duration": time_json(end - onset),
                    "midi": midi, "form": item["form"], "position": item["position"], "pc": pc})
    return out
