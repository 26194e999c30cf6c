"""The CLI's one vocabulary: shared options, JSON output, exit codes, colour and pipe habits.

Every command takes its options from here, so the same name means the same thing everywhere:

``-o/--output``   where the command writes (a file, in a directory that exists; a directory when it
                  writes several files, made one level deep when missing; an existing directory,
                  or one written with a trailing slash (``-o new/``), given for one score gets it
                  under its own name, as for several)
``--json``        print JSON on standard output (a flag, never a file)
``--report FILE`` also write the JSON report to FILE (``-`` is standard output)
``--force``       write over an existing, non-empty output directory
``-j/--jobs N``   work in N processes
``--recursive``   look for scores in sub-folders of a folder given as input
``--proposer``, ``--model``, ``--base-url``, ``-O/--option KEY=VALUE``  proposer choice and options
``--color/--no-color``  colour on or off (default: on a terminal, unless ``NO_COLOR`` is set)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

F = TypeVar("F", bound=Callable[..., Any])


def check_row_option(spec: str | None) -> None:
    """A bad --row is one error naming the option, before any score is read."""
    if not spec:
        return
    from serialkit.core.errors import RowError
    from serialkit.core.rows import Row

    try:
        Row.parse(spec)
    except RowError as exc:
        raise RowError(f"--row {spec!r}: {exc}") from None


def read_task(spec: str) -> Any:
    """The task a TASK argument names: a task JSON file, a bundled task's name, or ``-``: the
    task JSON on standard input (read once, here), as ``-`` is standard input wherever a file is."""
    from serialkit.harness import load_task

    if spec != "-":
        return load_task(spec)
    from serialkit.harness.tasks import task_from_text
    from serialkit.io.dispatch import read_stdin_bytes

    return task_from_text(read_stdin_bytes(), "-")


def check_rules_option(spec: str | None) -> None:
    """A bad --rules is one error naming the option, before any score is read."""
    if spec:
        from serialkit.check.profiles import profile_for

        profile_for(spec)


def echo_json(data: Any) -> None:
    """Print JSON to stdout (sorted keys off, 2-space indent, UTF-8)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def echo_json_line(data: Any) -> None:
    """Print one JSON object on one line (JSON Lines, for one record per score)."""
    click.echo(json.dumps(data, ensure_ascii=False, default=str))


def json_text(data: Any) -> str:
    """The JSON text of a report file."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def write_report(path: Path, data: Any) -> None:
    """Write a JSON report to ``path`` atomically, or to standard output for ``-``."""
    if str(path) == "-":
        echo_json(data)
        return
    from serialkit.io.files.atomic import atomic_write

    atomic_write(path, json_text(data))


SCORE_FORMATS: dict[str, tuple[str, ...]] = {
    "musicxml": (".musicxml", ".xml"), "mxl": (".mxl",), "mei": (".mei",),
    "midi": (".mid", ".midi"), "json": (".json",),
}
"""What ``--to`` names in every command that writes a score, each with the extensions that name
it (the first is what ``--to`` writes): one vocabulary, a command offering those it can write."""


def format_of_suffix(suffix: str) -> str | None:
    """The ``--to`` name an output extension stands for (``.mxl`` → ``mxl``), or None."""
    return next((fmt for fmt, exts in SCORE_FORMATS.items() if suffix.lower() in exts), None)


def one_format(output: Path | None, to: str | None, suffixes: dict[str, tuple[str, ...]] = SCORE_FORMATS) -> None:
    """Refuse (usage error, exit 2) ``--to`` naming another format than the ``-o`` file's own
    extension (``-o x.musicxml --to mei``): ``--to`` only says what an -o name does not (one
    meaning of ``--to`` in every command). ``suffixes``: format → the extensions that name it."""
    if output is None or to is None or names_directory(output):
        return
    ext = output.suffix.lower()
    named = next((fmt for fmt, exts in suffixes.items() if ext in exts), None)
    if named is not None and named != to and (named, to) != ("mxl", "musicxml"):  # .mxl is MusicXML
        raise click.UsageError(f"-o {output} names {named} but --to says {to}: give one of them")


def one_standard_output(*, output: Path | None = None, report_path: Path | None = None,
                        as_json: bool = False) -> bool:
    """Refuse (usage error, exit 2) when more than one of ``-o -``, ``--report -`` and ``--json``
    would write to standard output: the two would be mixed into one unreadable stream. Returns
    True when one of them does."""
    used = [name for name, on in (("-o -", output is not None and str(output) == "-"),
                                  ("--report -", report_path is not None and str(report_path) == "-"),
                                  ("--json", as_json)) if on]
    if len(used) > 1:
        raise click.UsageError(f"only one of {', '.join(used[:-1])} and {used[-1]} can use standard output")
    return bool(used)


def is_tty() -> bool:
    """True when stderr is a terminal (progress bars only then)."""
    return sys.stderr.isatty()


def no_color_env() -> bool:
    """True when the ``NO_COLOR`` convention (https://no-color.org) asks for no colour."""
    return bool(os.environ.get("NO_COLOR"))


# --- shared options --------------------------------------------------------------------------

_FOLDERS = "serialkit.output_folders"
"""``ctx.meta`` key: the ``-o`` values written with a trailing slash (they name directories)."""


class _OutputPath(click.Path):
    """A ``-o`` path that remembers being written with a trailing slash (``-o new/``): pathlib
    drops the slash, but the user said "a directory", whether or not it exists yet."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        out = super().convert(value, param, ctx)
        if ctx is not None and isinstance(value, str) and value.endswith(("/", os.sep)):
            ctx.meta.setdefault(_FOLDERS, set()).add(Path(os.fsdecode(out)))
        return out


def names_directory(output: Path | None) -> bool:
    """True when ``-o`` names a directory: an existing one, or one written with a trailing slash
    (``-o new/``, made one level deep like ``mkdir`` when written into)."""
    if output is None or str(output) == "-":
        return False
    ctx = click.get_current_context(silent=True)
    return output.is_dir() or (ctx is not None and Path(output) in ctx.meta.get(_FOLDERS, ()))


def output_option(help: str, *, required: bool = False, directory: bool = False,
                  file_or_dir: bool = False, stdout: bool = False, holds: str = "a directory") -> Callable[[F], F]:
    """``-o/--output``: a file (``-``: standard output where ``stdout``), or a directory where the
    command writes several files (or one, where ``file_or_dir`` and the path names a directory:
    ``names_directory``). ``-o -`` for a directory is a usage error (``standard output cannot hold
    HOLDS``), never a folder named ``-``."""
    kind = _OutputPath(path_type=Path, dir_okay=directory or file_or_dir,
                       file_okay=not directory or file_or_dir, allow_dash=stdout)

    def no_dash(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
        if directory and not file_or_dir and value is not None and str(value) == "-":
            raise click.UsageError(f"-o -: standard output cannot hold {holds}", ctx)
        return value

    # No ``default=None`` here: click 8.3+ reads an explicit None default as a given value, so a
    # required -o would go missing silently (``eval report DIR --json`` without -o: a traceback).
    return click.option("-o", "--output", "output", type=kind, required=required, callback=no_dash,
                        metavar="DIR" if directory else "PATH", help=help)


def json_option(help: str = "Print JSON on standard output.") -> Callable[[F], F]:
    """``--json``: a flag, everywhere."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def report_option(help: str = "Also write the JSON report to FILE ('-': standard output).") -> Callable[[F], F]:
    """``--report FILE``: the JSON report as a file."""
    return click.option("--report", "report_path", metavar="FILE", default=None,
                        type=click.Path(dir_okay=False, path_type=Path, allow_dash=True), help=help)


def force_option(help: str = "Write over an existing, non-empty output directory.") -> Callable[[F], F]:
    """``--force``."""
    return click.option("--force", is_flag=True, help=help)


def jobs_option(default: int = 1, help: str = "Work in N processes.") -> Callable[[F], F]:
    """``-j/--jobs N``."""
    return click.option("-j", "--jobs", "jobs", type=click.IntRange(min=1), default=default,
                        show_default=True, metavar="N", help=help)


def recursive_option() -> Callable[[F], F]:
    """``-r/--recursive``."""
    return click.option("-r", "--recursive", is_flag=True,
                        help="Also read scores in sub-folders of a folder given as input.")


def proposer_options(proposer_default: str | None, proposer_help: str) -> Callable[[F], F]:
    """``--proposer``, ``--model``, ``--base-url`` and repeatable ``-O/--option KEY=VALUE``."""
    def deco(func: F) -> F:
        func = click.option(
            "-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
            help="Proposer option, repeatable; VALUE is JSON or a string, a dotted KEY sets one "
                 "entry (temperature=0.2, timeout=30, profile=paper-raw, rates.wrong_pc=0.01, "
                 "transcript=run/transcript.jsonl).")(func)
        func = click.option("--base-url", default=None, metavar="URL",
                            help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1.")(func)
        func = click.option("--model", default=None, help="Model name (remote proposers).")(func)
        func = click.option("--proposer", default=proposer_default, show_default=proposer_default is not None,
                            help=proposer_help)(func)
        return func
    return deco


def timeout_option() -> Callable[[F], F]:
    """``--timeout SECONDS``: seconds per model request (remote proposers), the same as ``-O timeout=S``."""
    return click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
                        help="Seconds per model request (offline proposers ignore it; same as -O timeout=SECONDS).")


def with_timeout(options: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    """Proposer ``options`` with ``--timeout`` put in; giving it both ways is a usage error."""
    if timeout is None:
        return options
    if "timeout" in options:
        raise click.UsageError("give --timeout or -O timeout=SECONDS, not both")
    return {**options, "timeout": timeout}


def _set_color(ctx: click.Context, _param: click.Parameter, value: bool | None) -> None:
    if value is not None:
        ctx.color = value


def color_option() -> click.Option:
    """``--color/--no-color`` (added to every command by the group)."""
    return click.Option(["--color/--no-color"], default=None, expose_value=False, is_eager=True,
                        callback=_set_color,
                        help="Colour on or off (default: on a terminal unless NO_COLOR is set).")


class _PipeGuard:
    """Standard output that outlives its reader: on a closed pipe, later output goes to
    ``/dev/null`` and the command goes on to its verdict (see :func:`guard_stdout`)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _closed_pipe(self) -> None:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def write(self, data: Any) -> int:
        try:
            return int(self._stream.write(data) or 0)
        except BrokenPipeError:
            self._closed_pipe()
            return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed_pipe()
            try:  # what was buffered for the reader now goes to /dev/null
                self._stream.flush()
            except OSError:
                pass

    @property
    def buffer(self) -> _PipeGuard:
        """The byte stream under it, guarded the same way (SVG, MusicXML, MIDI to ``-o -``)."""
        return _PipeGuard(self._stream.buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Guard standard output for the whole program (called once, by the console script).

    A reader that goes away early (``serialkit check folder | head -1``) must not decide the exit
    status: the command's writes after that are discarded, it finishes its work and exits with its
    verdict, with no traceback and no "Exception ignored" at exit."""
    if sys.stdout is not None and not isinstance(sys.stdout, _PipeGuard):
        sys.stdout = _PipeGuard(sys.stdout)


_exit_at_once: list[int] = []


def exit_at_once(code: int) -> NoReturn:
    """End the command with ``code`` and have the ``serialkit`` program leave at once
    (``os._exit`` after flushing its output, in :func:`serialkit.cli.main`), skipping the
    interpreter's shutdown. For an interrupted ``eval run`` whose records are all on disk: joining
    the worker pool at interpreter exit could wait for ever on a worker that cannot end. Inside a
    test's ``CliRunner`` it is an ordinary exit."""
    _exit_at_once.append(code)
    sys.exit(code)


def leave_at_once() -> None:
    """If the command asked for :func:`exit_at_once`: flush standard output and error, then
    ``os._exit`` with its code. Called by the console script only, never inside a library call."""
    if not _exit_at_once:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(_exit_at_once[-1])
