"""The ``serialkit`` command line: a thin click layer over the library."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from serialkit import __version__
from serialkit.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    color_option,
    guard_stdout,
    leave_at_once,
    no_color_env,
)
from serialkit.core.errors import SerialkitError

# Built-in command modules; each defines ``register(cli)``. Plugins add more through the
# ``register_commands`` hook.
COMMAND_MODULES: tuple[str, ...] = (
    "serialkit.cli.row",
    "serialkit.cli.check",
    "serialkit.cli.plugins",
    "serialkit.cli.render",
    "serialkit.cli.eval",
    "serialkit.cli.panel",
    "serialkit.cli.convert",
    "serialkit.cli.annotate",
    "serialkit.cli.repair",
    "serialkit.cli.generate",
)


class UsageLine(click.ClickException):
    """A usage error shown as one line, ``error: MESSAGE (see serialkit CMD --help)``, exit 2."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, exc: click.UsageError, command_path: str) -> None:
        message = exc.format_message().rstrip(".")
        if message[:2].istitle():  # click's "Missing option …" reads as the project's "missing option …"
            message = message[0].lower() + message[1:]
        super().__init__(f"{message} (see {command_path} --help)")

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)


def _command_path(root: click.Context, args: list[str]) -> str:
    """The command a command line names (``serialkit eval report``), for a usage error that
    click raised before that command had a context."""
    path, command = [root.command_path], root.command
    for word in args:
        if not isinstance(command, click.Group):
            break
        sub = command.get_command(root, word) if not word.startswith("-") else None
        if sub is None:
            continue
        path.append(word)
        command = sub
    return " ".join(path)


class SerialkitGroup(click.Group):
    """The root group: the one place errors become exit codes.

    ``SerialkitError`` → its one-line message, exit 2; a usage error (click's, or a command's own
    ``click.UsageError``) → one line, exit 2; an operating-system error → one line naming the file,
    exit 2 (never a traceback, never read as a musical verdict); Ctrl-C → exit 130 (outputs are
    written atomically, so nothing half-written). A closed pipe (``| head``) is handled by
    :func:`main`: the command runs on to its verdict and exits with it.
    """

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        words = list(args)
        try:
            ctx = super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise UsageLine(exc, exc.ctx.command_path if exc.ctx else info_name or "serialkit") from None
        ctx.meta["serialkit.args"] = words
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            path = exc.ctx.command_path if exc.ctx else _command_path(ctx, ctx.meta.get("serialkit.args", []))
            raise UsageLine(exc, path) from None
        except SerialkitError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"error: {where}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:  # Ctrl-C outside a command's own handling: 130, as shells say
            click.echo("\ninterrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=SerialkitGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="serialkit")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Check, label, repair, generate and engrave twelve-tone music.

    Every command takes --color/--no-color; NO_COLOR=1 in the environment turns colour off.
    Shell completion: eval "$(_SERIALKIT_COMPLETE=bash_source serialkit)" (zsh_source, fish_source).
    """
    if ctx.color is None and no_color_env():
        ctx.color = False


def _add_color_option(command: click.Command) -> None:
    if not any(p.name == "color" for p in command.params):
        command.params.append(color_option())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_color_option(sub)


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(cli)
    try:
        from serialkit.plugins import load_commands

        load_commands(cli)
    except SerialkitError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    _add_color_option(cli)


_load_commands()


def main() -> None:
    """Console-script entry point (an interrupted ``eval run`` leaves through ``os._exit``).

    Standard output is guarded: when its reader goes away (``| head``, ``| true``) the command runs
    on with its output discarded and exits with its own verdict (1 for a failing score, 2 for bad
    input), never 0 for a closed pipe and never a traceback.
    """
    guard_stdout()
    try:
        cli(prog_name="serialkit")
    except SystemExit:
        leave_at_once()
        raise
