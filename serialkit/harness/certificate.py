"""Trace certificates, run reports and the files a run writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from serialkit import __version__
from serialkit.check.gate import GateVerdict
from serialkit.core.errors import ScoreWriteError
from serialkit.core.piece import Piece, fraction_str
from serialkit.harness.authorship import author_of, authorship
from serialkit.harness.prompts import PROMPT_VERSION
from serialkit.harness.session import Session
from serialkit.harness.verify import Verifier
from serialkit.io.files.atomic import atomic_write


def versions() -> dict[str, str]:
    """Versions that decide a run's outputs."""
    return {"serialkit": __version__, "prompts": PROMPT_VERSION, "certificate": "1"}


def certificates(ver: Verifier) -> list[dict[str, Any]]:
    """One certificate record per kept note, in voice and slot order."""
    out = []
    for event in ver.events():
        cand = ver.kept[event.id].cand
        out.append({
            "id": cand.id, "voice": cand.voice, "section": cand.slot.section,
            "onset": fraction_str(cand.onset), "duration": fraction_str(cand.duration), "midi": cand.midi,
            "pc": cand.midi % 12, "form": cand.slot.form.label, "position": cand.slot.position,
            "statement": cand.slot.statement, "claimed": cand.claimed,
            "rung": cand.rungs[-1] if cand.rungs else None, "rungs": list(cand.rungs),
            "author": author_of(cand.rungs), "attempts": cand.attempt, "calls": list(cand.calls),
        })
    return out


def build_certificate(session: Session, records: list[dict[str, Any]], released: bool, mode: str) -> dict[str, Any]:
    """The certificate: run metadata and one record per kept event."""
    name, model = session.identity
    usage = session.usage
    return {
        "format": "serialkit-certificate",
        "version": 1,
        "run": {
            "task": session.task.name,
            "task_digest": session.task.digest(),
            "variant": session.variant,
            "proposer": name,
            "model": model,
            "seed": session.seed,
            "versions": versions(),
            "calls": usage.calls,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "seconds": round(usage.seconds, 6),
            "released": released,
            "mode": mode,
        },
        "events": records,
    }


#: how many dropped notes and reply errors a report lists one by one (the rest are counted)
LISTED = 20


def drop_counts(drops: list[dict[str, Any]]) -> dict[str, Any]:
    """The dropped notes counted: in all, by problem code and by section (a reply of thousands of
    stray notes is a few lines in the report, not thousands)."""
    problems: dict[str, int] = {}
    sections: dict[str, int] = {}
    for drop in drops:
        for code in drop.get("problems") or ():
            problems[code] = problems.get(code, 0) + 1
        section = str(drop.get("section"))
        sections[section] = sections.get(section, 0) + 1
    return {"total": len(drops), "listed": min(len(drops), LISTED), "problems": dict(sorted(problems.items())),
            "sections": sections}


def build_report(session: Session, verdict: GateVerdict, released: bool, mode: str, outcome: Any) -> dict[str, Any]:
    """The run report: verdicts, failures (when nothing is released), repairs, drops, usage. Drops
    and reply errors are counted; only the first :data:`LISTED` of each are listed."""
    name, model = session.identity
    repairs: dict[str, int] = {}
    for record in outcome.certificates:
        for rung in record.get("rungs", ()):
            repairs[rung] = repairs.get(rung, 0) + 1
    failures = [] if released else [
        {k: v.get(k) for k in ("code", "event_ids", "message", "location", "tags")} for v in verdict.violations
    ]
    if outcome.trace:
        authors = authorship(r.get("author", "model") for r in outcome.certificates)
    else:  # a variant without repairs: every note as the model wrote it
        authors = authorship("model" for _ in outcome.events)
    notes = []
    if not released and not failures:
        notes.append(f"the {mode} gate failed without a listed violation")
    if not released and mode == "strict" and verdict.relaxed:
        notes.append("the candidate passes the relaxed gate (only the schedule fails)")
    return {
        "format": "serialkit-run-report",
        "version": 1,
        "task": session.task.name,
        "variant": session.variant,
        "proposer": name,
        "model": model,
        "seed": session.seed,
        "released": released,
        "mode": mode,
        "verdict": verdict.to_dict(),
        "failures": failures,
        "sections": outcome.sections,
        "ladder": getattr(outcome, "ladder", None),
        "repairs": dict(sorted(repairs.items())),
        "authorship": authors,
        "drops": outcome.drops[:LISTED],
        "drop_counts": drop_counts(outcome.drops),
        "calls": session.calls,
        "usage": session.usage.to_dict(),
        "errors": outcome.errors[:LISTED],
        "error_count": len(outcome.errors),
        "notes": notes,
    }


def dumps(data: Any) -> str:
    """Stable JSON text for output files."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def transcript_text(session: Session) -> str:
    """The replayable transcript, one JSON object a line."""
    lines = [session.header(), *session.lines]
    return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)


def write_outputs(out_dir: Path, piece: Piece, certificate: dict[str, Any], report: dict[str, Any],
                  transcript: str, released: bool) -> dict[str, str]:
    """Write the run directory; returns output name → path. Each file is written atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    stale = out_dir / "score.musicxml"
    if released:
        from serialkit.io import write_musicxml

        write_musicxml(piece, stale)
        written["score"] = str(stale)
    elif stale.exists():
        stale.unlink()  # an earlier run's score must not pass for this run's
    files = {
        "candidate": ("candidate.json", dumps(piece.to_dict())),
        "certificate": ("certificate.json", dumps(certificate)),
        "report": ("report.json", dumps(report)),
        "transcript": ("transcript.jsonl", transcript),
    }
    for key, (name, text) in files.items():
        try:
            atomic_write(out_dir / name, text)
        except OSError as exc:
            raise ScoreWriteError(f"{out_dir / name}: cannot write ({exc})") from exc
        written[key] = str(out_dir / name)
    return written


#: what a finished run writes; an errored run leaves none of them behind
RUN_FILES = ("score.musicxml", "candidate.json", "certificate.json", "report.json", "annotated.musicxml",
             "review.html")


def write_errored(out_dir: Path, transcript: str) -> Path:
    """A run the model server broke off: only ``transcript.jsonl`` (the calls so far, the failed
    one last) is kept; outputs of an earlier run in the directory are removed. Returns the file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        (out_dir / name).unlink(missing_ok=True)
    path = out_dir / "transcript.jsonl"
    try:
        atomic_write(path, transcript)
    except OSError as exc:
        raise ScoreWriteError(f"{path}: cannot write ({exc})") from exc
    return path
