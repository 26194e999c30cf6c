"""The ``serialkit`` command line: a thin click layer over the library."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from serialkit import __version__
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


class SerialkitGroup(click.Group):
    """A click group that maps every ``SerialkitError`` to a one-line message and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SerialkitError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=SerialkitGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="serialkit")
def cli() -> None:
    """Check, label, repair, generate and engrave twelve-tone music."""


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


_load_commands()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="serialkit")
