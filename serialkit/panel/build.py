"""``serialkit panel build``: a blinded rating packet from a run directory, and its key kept outside."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialkit.core.errors import PanelError
from serialkit.core.piece import Piece
from serialkit.eval.store import load_records
from serialkit.eval.summary import variants_in, with_conditions
from serialkit.io.files.atomic import atomic_write
from serialkit.panel.form import rating_form, start_page
from serialkit.panel.media import engrave_blind, neutral_piece, write_audio, write_score

FIXED_TIME = 1_700_000_000  # packet files all carry this modification time
ID_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ23456789"  # no vowels: ids never spell words


@dataclass(frozen=True, slots=True)
class Item:
    """One comparison: two candidates of the same task (and run index) under two conditions."""

    id: str
    task: str
    conditions: tuple[str, str]
    records: tuple[dict[str, Any], dict[str, Any]]


def default_pairs(conditions: Sequence[str]) -> list[tuple[str, str]]:
    """The harness against each baseline of the same model when present, else every pair."""
    def split(c: str) -> tuple[str, str]:
        variant, _, model = c.partition("@")
        return variant, model

    pairs = [(h, c) for h in conditions if split(h)[0] == "harness"
             for c in conditions if c != h and split(c)[1] == split(h)[1]]
    return pairs or list(itertools.combinations(conditions, 2))


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """``harness:raw,harness:self-refine`` → pairs."""
    pairs = []
    for item in text.split(","):
        a, sep, b = item.strip().partition(":")
        if not sep or not a or not b or a == b:
            raise PanelError(f"--pairs: {item!r} is not CONDITION:CONDITION")
        pairs.append((a, b))
    return pairs


def _has_notes(run_dir: Path, record: dict[str, Any]) -> bool:
    return bool(record.get("piece")) and bool((record.get("metrics") or {}).get("events"))


def choose_items(run_dir: Path, records: Sequence[dict[str, Any]], pairs: Sequence[tuple[str, str]],
                 rng: random.Random, max_items: int) -> list[Item]:
    """Per pair of conditions and task, one run index where both conditions produced notes.

    No run is used twice: a candidate seen in two items would reveal the condition they share.
    """
    index = {(r["task"], r["condition"], r["run"]): r for r in records if _has_notes(run_dir, r)}
    tasks = sorted({r["task"] for r in records})
    slots = [(task, pair) for pair in pairs for task in tasks]
    rng.shuffle(slots)
    used: set[str] = set()
    chosen: list[tuple[str, tuple[str, str], tuple[dict[str, Any], dict[str, Any]]]] = []
    for task, (a, b) in slots:
        if len(chosen) >= max_items:
            break
        runs = sorted(run for (t, v, run) in index if t == task and v == a
                      and (task, b, run) in index
                      and index[(task, a, run)]["key"] not in used
                      and index[(task, b, run)]["key"] not in used)
        if runs:
            run = rng.choice(runs)
            pair = (index[(task, a, run)], index[(task, b, run)])
            used.update(r["key"] for r in pair)
            chosen.append((task, (a, b), pair))
    return [Item(f"Q{i + 1:02d}", t, conds, recs) for i, (t, conds, recs) in enumerate(chosen)]


def _new_id(rng: random.Random, used: set[str]) -> str:
    while True:
        cid = "".join(rng.choice(ID_ALPHABET) for _ in range(5))
        if cid not in used:
            used.add(cid)
            return cid


def _task_brief(run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    """What the rater is told about the task: row, voices, meter, bars and the form schedule."""
    from serialkit.core.rows import Row

    path = run_dir / "tasks" / f"{record['task']}.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        "row": Row(tuple(data["row"])).names() if isinstance(data["row"], list) else str(data["row"]),
        "convention": data.get("convention", "relative"),
        "voices": [v.get("name", v["id"]) for v in data["voices"]],
        "meter": data.get("meter", "4/4"), "bars": data["bars"],
        "schedule": [f"{e['section']} · {next((v.get('name', v['id']) for v in data['voices'] if v['id'] == e['voice']), e['voice'])}: "
                     f"{' '.join(e['forms'])}" for e in data["blueprint"]],
    }


def packet_key(packet: str | os.PathLike[str], key_path: str | os.PathLike[str] | None) -> Path:
    """Where the key of ``packet`` goes (default: PACKET.key.json beside it); never inside it."""
    out = Path(packet)
    key_file = Path(key_path) if key_path else out.parent / f"{out.name}.key.json"
    if out.resolve() in key_file.resolve().parents:
        raise PanelError(f"{key_file}: the key must be written outside the packet {out}")
    return key_file


def build_packet(run_dir: str | os.PathLike[str], packet: str | os.PathLike[str], *,
                 key_path: str | os.PathLike[str] | None = None, raters: int = 5, seed: int = 0,
                 pairs: Sequence[tuple[str, str]] | None = None, max_items: int = 24,
                 audio: bool = True,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Write the packet (forms, blind scores, audio) and the key (outside it); return a summary.

    ``progress(done, total)`` is called after each candidate is rendered.
    """
    root, out = Path(run_dir), Path(packet)
    key_file = packet_key(out, key_path)
    if raters < 1:
        raise PanelError(f"--raters must be at least 1, not {raters}")
    if out.exists() and any(out.iterdir()):
        raise PanelError(f"{out}: packet directory exists and is not empty")
    records = with_conditions(load_records(root))
    chosen_pairs = list(pairs) if pairs else default_pairs(variants_in(records))
    known = set(variants_in(records))
    for a, b in chosen_pairs:
        for c in (a, b):
            if c not in known:
                raise PanelError(f"condition {c!r} has no runs in {root} (have: {', '.join(sorted(known))})")
    rng = random.Random(seed)
    items = choose_items(root, records, chosen_pairs, rng, max_items)
    if not items:
        raise PanelError(f"{root}: no task has candidates with notes under both conditions of a pair")
    tmp = out.with_name(f".{out.name}.building")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        key, public = _materialise(root, tmp, items, rng, audio, progress)
        forms = []
        for r in range(1, raters + 1):
            order = [dict(it, candidates=rng.sample(it["candidates"], 2)) for it in rng.sample(public, len(public))]
            atomic_write(tmp / "forms" / f"rater-{r}.html", rating_form(f"R{r}", order))
            forms.append(f"forms/rater-{r}.html")
        atomic_write(tmp / "index.html", start_page(forms, len(public)))
        _flatten_times(tmp)
        key.update({"seed": seed, "raters": raters, "packet": str(out), "run_dir": str(root)})
        atomic_write(key_file, json.dumps(key, indent=2))  # the key first: a packet without it is lost
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"packet": str(out), "key": str(key_file), "items": len(items),
            "candidates": len(key["candidates"]), "raters": raters}


def _flatten_times(folder: Path) -> None:
    """Give every file and folder one timestamp and ordinary permissions (nothing to sort by)."""
    for path in sorted(folder.rglob("*"), reverse=True):
        path.chmod(0o755 if path.is_dir() else 0o644)
        os.utime(path, (FIXED_TIME, FIXED_TIME))
    os.utime(folder, (FIXED_TIME, FIXED_TIME))


def _materialise(root: Path, out: Path, items: Sequence[Item], rng: random.Random, audio: bool,
                 progress: Callable[[int, int], None] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    used: set[str] = set()
    media: dict[str, dict[str, Any]] = {}
    key: dict[str, Any] = {"format": "serialkit-panel-key", "candidates": {}, "items": {}}
    public: list[dict[str, Any]] = []
    for item in items:
        pairs = list(zip(item.conditions, item.records, strict=True))
        rng.shuffle(pairs)  # creation order (and so file times) must not follow the condition
        cids = []
        for condition, record in pairs:
            cid = _new_id(rng, used)
            media[cid] = _candidate_media(root, record, out / "candidates" / cid, cid, audio)
            if progress is not None:
                progress(len(media), 2 * len(items))
            key["candidates"][cid] = {"condition": condition, "task": record["task"],
                                      "family": record["family"], "run": record["run"],
                                      "proposer": record["proposer"], "model": record.get("model"),
                                      "key": record["key"], "dir": record.get("dir")}
            cids.append(cid)
        key["items"][item.id] = {"task": item.task, "pair": list(item.conditions),
                                 "conditions": [key["candidates"][c]["condition"] for c in cids],
                                 "candidates": cids}
        public.append({"id": item.id, "candidates": [{"id": c, **media[c]} for c in cids],
                       "brief": _task_brief(root, item.records[0])})
    return key, public


def _candidate_media(root: Path, record: dict[str, Any], folder: Path, cid: str,
                     audio: bool) -> dict[str, Any]:
    piece_path = root / str(record.get("dir", "")) / str(record["piece"])
    try:
        piece = Piece.from_dict(json.loads(piece_path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise PanelError(f"{piece_path}: cannot read candidate piece ({exc})") from exc
    blind = neutral_piece(piece, cid)
    folder.mkdir(parents=True, exist_ok=True)
    score = write_score(blind, folder / "score.musicxml")
    svgs = engrave_blind(score, folder / "score.svg", folder / "score.pdf")
    wav = write_audio(blind, folder / "audio.mid", folder / "audio.wav") if audio else False
    return {"pages": svgs, "midi": audio, "wav": wav}
