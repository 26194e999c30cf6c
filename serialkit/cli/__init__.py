"""The ``serialkit`` command line: a thin click layer over the library."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from serialkit import __version__
from serialkit.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    color_option,
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


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class SerialkitGroup(click.Group):
    """The root group: the one place errors become exit codes.

    ``SerialkitError`` → its one-line message, exit 2; an operating-system error → one line naming
    the file, exit 2 (never a traceback, never read as a musical verdict); a closed pipe (``| head``)
    → quiet exit with the status the command had reached (``promise_exit``; 0 if none); Ctrl-C → exit 130 (outputs are written atomically, so nothing half-written).
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SerialkitError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:  # the reader went away: quiet, with the verdict already reached
            _quiet_stdout()
            ctx.exit(ctx.meta.get("serialkit.exit_status", EXIT_OK))
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
    """Console-script entry point (an interrupted ``eval run`` leaves through ``os._exit``)."""
    try:
        cli(prog_name="serialkit")
    except SystemExit:
        leave_at_once()
        raise
