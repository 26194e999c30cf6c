"""Blind media for one candidate: neutral piece, MusicXML, SVG and PDF engraving, MIDI and WAV."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from serialkit.core.errors import PanelError
from serialkit.core.piece import Piece, Voice

SOUNDFONTS = (
    "/usr/share/sounds/sf2/FluidR3_GM.sf2",
    "/usr/share/sounds/sf2/default-GM.sf2",
    "/usr/share/soundfonts/FluidR3_GM.sf2",
)


def neutral_piece(piece: Piece, candidate_id: str) -> Piece:
    """The candidate's notes and nothing else: new ids, no tags, sources, row, blueprint or metadata."""
    ordered = sorted(piece.events, key=lambda e: (e.onset, piece.voice_ids.index(e.voice), e.midi, e.id))
    voice_ids = {v.id: f"v{i + 1}" for i, v in enumerate(piece.voices)}
    events = tuple(
        replace(e, id=f"n{i + 1}", voice=voice_ids[e.voice], tag=None, source=None, tied_ids=(),
                claimed_pc=None, section=None)
        for i, e in enumerate(ordered)
    )
    voices = tuple(Voice(voice_ids[v.id], v.name, v.low, v.high) for v in piece.voices)
    return Piece(events=events, voices=voices, time_signatures=piece.time_signatures,
                 measures=(), pickup=piece.pickup, title=f"Candidate {candidate_id}",
                 convention=piece.convention)


def write_score(piece: Piece, out: Path) -> Path:
    """A fresh MusicXML score of the piece (the I/O engineer's writer)."""
    from serialkit.io import write_musicxml

    write_musicxml(piece, out)
    return out


def engrave_blind(score: Path, svg_out: Path, pdf_out: Path) -> list[str]:
    """Blind SVG pages and a PDF (no colours, labels or ids that tell anything); the SVG names."""
    from serialkit.render import render

    result = render(score, svg_out, blind=True)
    render(score, pdf_out, blind=True)
    return [f.name for f in result.files]


def soundfont() -> str | None:
    """The General MIDI soundfont fluidsynth uses, if installed."""
    for path in SOUNDFONTS:
        if Path(path).exists():
            return path
    return None


def write_audio(piece: Piece, midi_out: Path, wav_out: Path | None) -> bool:
    """MIDI always; WAV through fluidsynth when it and a GM soundfont are installed. True if WAV."""
    from serialkit.io import write_midi

    write_midi(piece, midi_out)
    font = soundfont()
    program = shutil.which("fluidsynth")
    if wav_out is None or font is None or program is None:
        return False
    tmp = wav_out.with_name(f".{wav_out.name}.tmp.wav")
    cmd = [program, "-ni", "-q", "-F", str(tmp), "-r", "44100", "-T", "wav", font, str(midi_out)]
    try:
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)
        tmp.replace(wav_out)
    except (subprocess.SubprocessError, OSError) as exc:
        tmp.unlink(missing_ok=True)
        raise PanelError(f"{midi_out}: fluidsynth failed to render audio ({exc})") from exc
    return True
