"""The run directory: an append-only JSONL of run records, crash-safe and resumable.

Each record is appended with one ``write`` of a whole line on an ``O_APPEND`` descriptor, then
flushed and fsync'ed, so a kill leaves at most one torn last line. Reading ignores a torn last
line; :meth:`RunStore.repair` truncates it before new records are appended.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from serialkit.core.errors import RunDirError

RECORDS = "runs.jsonl"
ERRORS = "errors.jsonl"
MANIFEST = "manifest.json"
STATUS = "status.json"
RUNS_DIR = "runs"
ERROR_TRANSCRIPTS = "errors"  # RUN_DIR/errors/<run>.transcript.jsonl: what an errored run sent and got
LOCK = ".lock"
TMP_PREFIX = ".tmp-"


def run_key(task: str, variant: str, run: int, proposer: str, model: str | None) -> str:
    """The identity of one run: task, variant, run index, proposer and model."""
    return f"{task}|{variant}|{run}|{proposer}|{model or '-'}"


def slug(key: str) -> str:
    """A file-name-safe form of a run key."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key.replace("|", "__"))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_held: dict[str, list[int]] = {}  # run directories this process has locked: real path -> [fd, depth]
_held_lock = threading.Lock()


@contextlib.contextmanager
def lock_run_dir(root: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``RUN_DIR/.lock`` exclusively (``flock``) for the ``with`` block: one runner per run
    directory. A second runner is refused at once naming the holder's pid; readers (``eval status``,
    ``eval report``) take no lock. The kernel drops the lock when the holder dies, even by SIGKILL.
    Re-entrant within a process (the CLI holds it around ``--force`` clearing and the run)."""
    path = Path(root) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    real = str(path.resolve())
    with _held_lock:
        if real in _held:
            _held[real][1] += 1
            entry = _held[real]
        else:
            entry = [_acquire(path), 1]
            _held[real] = entry
    try:
        yield
    finally:
        with _held_lock:
            entry[1] -= 1
            if entry[1] == 0:
                del _held[real]
                with contextlib.suppress(OSError):
                    path.unlink()  # while still held; a runner that opened it before re-checks below
                os.close(entry[0])


def _acquire(path: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunDirError(f"{path}: cannot lock ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            finally:
                os.close(fd)
            raise RunDirError(f"{path.parent}: another eval run (pid {pid}) is using this directory") from None
        except OSError as exc:
            os.close(fd)
            raise RunDirError(f"{path}: cannot lock ({exc.strerror})") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # locked a file its holder had just removed: lock the current one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class RunStore:
    """Records of finished runs in ``RUN_DIR/runs.jsonl`` and their output folders in ``RUN_DIR/runs``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.path = self.root / RECORDS
        self.runs = self.root / RUNS_DIR

    # reading -----------------------------------------------------------------
    def _lines(self) -> Iterator[tuple[int, bytes, bool]]:
        """(byte offset, line bytes, complete?) for every line of the records file."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        offset = 0
        while offset < len(data):
            end = data.find(b"\n", offset)
            if end < 0:
                yield offset, data[offset:], False
                return
            yield offset, data[offset:end], True
            offset = end + 1

    def records(self) -> list[dict[str, Any]]:
        """Finished runs, first record per key; a torn last line is ignored."""
        seen: set[str] = set()
        out: list[dict[str, Any]] = []
        for number, (_, line, complete) in enumerate(self._lines(), start=1):
            if not line.strip():
                continue
            if not complete:
                continue  # torn by a kill (every record ends with a newline); repaired on resume
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise RunDirError(f"{self.path}:{number}: not a JSON record ({exc})") from exc
            if not isinstance(record, dict) or "key" not in record:
                raise RunDirError(f"{self.path}:{number}: record has no 'key'")
            if record["key"] in seen:
                continue
            seen.add(record["key"])
            out.append(record)
        return out

    def errored(self) -> list[dict[str, Any]]:
        """The last error of each run that errored and has not finished since (``errors.jsonl``)."""
        path = self.root / ERRORS
        if not path.exists():
            return []
        done = self.done()
        last: dict[str, dict[str, Any]] = {}
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # a torn line of the error log loses nothing
            if isinstance(record, dict) and isinstance(record.get("key"), str) and record["key"] not in done:
                last[record["key"]] = record
        return list(last.values())

    def done(self) -> set[str]:
        """Keys of finished runs."""
        return {r["key"] for r in self.records()}

    # writing -----------------------------------------------------------------
    def repair(self) -> int:
        """Truncate a torn (unterminated) last line; return the number of bytes removed."""
        torn = [(offset, line) for offset, line, complete in self._lines() if not complete]
        if not torn:
            return 0
        offset, line = torn[-1]
        with open(self.path, "r+b") as fh:
            fh.truncate(offset)
            fh.flush()
            os.fsync(fh.fileno())
        return len(line)

    def clean_tmp(self) -> None:
        """Remove output folders that a killed run left half-written."""
        if not self.runs.is_dir():
            return
        for child in self.runs.iterdir():
            if child.name.startswith(TMP_PREFIX):
                shutil.rmtree(child, ignore_errors=True)

    def append(self, record: dict[str, Any]) -> None:
        """Append one finished run as a single write of a full line, then fsync."""
        self._append(self.path, record)

    def append_error(self, record: dict[str, Any]) -> None:
        """Log a failed attempt to ``errors.jsonl`` (failed runs are retried on resume)."""
        self._append(self.root / ERRORS, record)

    def _append(self, path: Path, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            if written != len(line):  # pragma: no cover - regular files write whole buffers
                raise RunDirError(f"{path}: short write ({written} of {len(line)} bytes)")
            os.fsync(fd)
        finally:
            os.close(fd)

    def keep_transcript(self, key: str, tmp: Path, result: dict[str, Any]) -> dict[str, Any]:
        """An errored attempt's ``transcript.jsonl`` moved out of its private folder (removed
        later) to ``RUN_DIR/errors/<run>.transcript.jsonl``; the error text names that file."""
        source = tmp / "transcript.jsonl"
        if not source.is_file():
            return result
        target = self.root / ERROR_TRANSCRIPTS / f"{slug(key)}.transcript.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        out = {**result, "transcript": str(target.relative_to(self.root))}
        old, new = str(source), str(target)
        out["error"] = str(result["error"]).replace(old, new)
        endpoint = result.get("endpoint")
        if isinstance(endpoint, dict) and isinstance(endpoint.get("message"), str):
            out["endpoint"] = {**endpoint, "message": endpoint["message"].replace(old, new)}
        return out

    def tmp_dir(self, key: str, token: str) -> Path:
        """A private folder for one attempt at a run."""
        path = self.runs / f"{TMP_PREFIX}{slug(key)}-{token}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def commit_dir(self, key: str, tmp: Path) -> str:
        """Move an attempt's folder to its final place; return its path relative to the run dir."""
        final = self.runs / slug(key)
        if final.exists():
            shutil.rmtree(final)  # left by an attempt whose record was never written
        os.replace(tmp, final)
        _fsync_dir(self.runs)  # the rename is durable before the record that points to it
        return str(final.relative_to(self.root))

    def read_manifest(self) -> dict[str, Any] | None:
        """The manifest written when the run directory was created, if any."""
        path = self.root / MANIFEST
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{path}: not valid JSON ({exc})") from exc
        return data if isinstance(data, dict) else None

    def read_status(self) -> dict[str, Any] | None:
        """The runner's last ``status.json`` (None when absent or unreadable: it is rewritten often)."""
        path = self.root / STATUS
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return data if isinstance(data, dict) else None


def load_records(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The finished runs of a run directory: none when every run so far errored (its
    ``errors.jsonl`` or manifest is there); an error when it is no run directory at all."""
    store = RunStore(run_dir)
    if not store.path.exists():
        if (store.root / ERRORS).exists() or (store.root / MANIFEST).exists():
            return []
        raise RunDirError(f"{store.root}: no {store.path.name} here; is this a run directory?")
    return store.records()
