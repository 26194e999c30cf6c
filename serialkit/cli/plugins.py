"""``serialkit plugins``: what is loaded and from where."""

from __future__ import annotations

import os
from typing import Any

import click

from serialkit.cli._common import EXIT_BAD_INPUT, echo_json


def plugins_report() -> dict[str, Any]:
    """Loaded plugins, what each registered, and plugins found but skipped."""
    from serialkit.plugins import ENV_VAR, KINDS, plugin_infos, skipped_plugins, survey

    registries = {}
    errors: list[str] = []
    for kind in KINDS:
        registries[kind], problems = survey(kind)
        errors.extend(str(p) for p in problems)
    plugins = []
    for info in plugin_infos():
        registered = {
            kind: [
                {k: v for k, v in e.to_dict().items() if k != "plugin"}
                for e in registries[kind].by_plugin(info.name)
            ]
            for kind in KINDS
        }
        plugins.append(
            {**info.to_dict(), "registered": {k: v for k, v in registered.items() if v}}
        )
    return {
        "load_plugins": os.environ.get(ENV_VAR),
        "plugins": plugins,
        "skipped": skipped_plugins(),
        "errors": errors,
    }


def _entry_text(entry: dict[str, Any]) -> str:
    meta = entry["meta"]
    extra = []
    if "extensions" in meta:
        extra.append(" ".join(meta["extensions"]))
    if "rank" in meta:
        extra.append(f"rank {meta['rank']}")
    if meta.get("strict_only"):
        extra.append("strict only")
    text = str(entry["name"]) + (f" ({', '.join(extra)})" if extra else "")
    if entry.get("description"):
        text += f" — {entry['description']}"
    return text


def _print_report(report: dict[str, Any]) -> None:
    env = report["load_plugins"]
    if env is not None:
        click.echo(f"SERIALKIT_LOAD_PLUGINS={env!r}: only these outside plugins load")
    for plugin in report["plugins"]:
        origin = "built-in" if plugin["builtin"] else plugin["module"]
        dist = f"{plugin['dist']} {plugin['version'] or ''}".strip() if plugin["dist"] else "no dist"
        click.echo(f"{click.style(plugin['name'], bold=True)}  {origin} ({dist})")
        if not plugin["registered"]:
            click.echo("  (registers nothing)")
        for kind, entries in plugin["registered"].items():
            label = kind.replace("_", " ")
            for i, entry in enumerate(entries):
                click.echo(f"  {label if i == 0 else '':<13} {_entry_text(entry)}")
    for skipped in report["skipped"]:
        click.echo(f"skipped: {skipped['name']} ({skipped['reason']})")
    for error in report["errors"]:
        click.echo(f"error: {error}", err=True)


@click.group("plugins", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the listing as JSON.")
@click.pass_context
def plugins_group(ctx: click.Context, as_json: bool) -> None:
    """List loaded plugins, where each comes from and what it registered.

    SERIALKIT_LOAD_PLUGINS=name,name limits which outside plugins load (empty: none).
    """
    if ctx.invoked_subcommand is not None:
        return
    report = plugins_report()
    if as_json:
        echo_json(report)
    else:
        _print_report(report)
    if report["errors"]:
        ctx.exit(EXIT_BAD_INPUT)


def register(cli: Any) -> None:
    """Add ``serialkit plugins`` to the CLI."""
    cli.add_command(plugins_group)
