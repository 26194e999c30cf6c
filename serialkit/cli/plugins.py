"""``serialkit plugins``: what is loaded and from where; ``plugins musescore``: labels for MuseScore."""

from __future__ import annotations

import os
from pathlib import Path
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


@plugins_group.command("musescore")
@click.argument("score", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--row", default=None, help="The row (names, integers or catalogue name); "
              "default $SERIALKIT_ROW, else identify it.")
@click.option("--convention", type=click.Choice(["relative", "absolute"]), default=None,
              help="Labelling convention (default relative).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON here instead of standard output.")
def musescore_command(score: Path, row: str | None, convention: str | None,
                      output: Path | None) -> None:
    """Per-note labels and colours of SCORE keyed by (staff, voice, tick, pitch) as JSON.

    The MuseScore plugin runs this on the score it exported; it always prints JSON, with
    "ok": false and the error message on bad input (exit 2).
    """
    from serialkit.core.errors import SerialkitError
    from serialkit.plugins.musescore import musescore_payload

    try:
        payload = musescore_payload(score, row=row, convention=convention)
        code = 0
    except SerialkitError as exc:
        payload, code = {"ok": False, "error": str(exc)}, exc.exit_code
    if output is not None:
        import json

        from serialkit.io.atomic import atomic_write

        atomic_write(output, json.dumps(payload, indent=1, ensure_ascii=False))
    else:
        echo_json(payload)
    if code:
        raise SystemExit(code)


def register(cli: Any) -> None:
    """Add ``serialkit plugins`` to the CLI."""
    cli.add_command(plugins_group)
