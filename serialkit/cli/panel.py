"""``serialkit panel build|analyze``: blinded expert panels over a run directory."""

from __future__ import annotations

from pathlib import Path

import click

from serialkit.cli._common import echo_json, is_tty, json_option, output_option


@click.group("panel")
def panel_group() -> None:
    """Build blinded rating packets and analyse the ratings."""


@panel_group.command("build")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@output_option("PACKET directory (new, or empty).", required=True, directory=True, holds="a packet directory")
@click.option("--key", "key", type=click.Path(dir_okay=False), default=None,
              help="Where the key goes (outside the packet); default PACKET.key.json beside it.")
@click.option("--raters", type=int, default=5, show_default=True, help="Forms, one order per rater.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--pairs", default=None, metavar="A:B,...",
              help="Condition pairs (default: harness against each other variant).")
@click.option("--max-items", type=int, default=24, show_default=True)
@click.option("--no-audio", is_flag=True, help="Skip MIDI and WAV.")
@json_option("Print the summary as JSON.")
def build_cmd(run_dir: str, output: Path, key: str | None, raters: int, seed: int, pairs: str | None,
              max_items: int, no_audio: bool, as_json: bool) -> None:
    """Pair candidates of the same task across conditions, anonymise and render them blind."""
    from serialkit.panel.build import build_packet, packet_key, parse_pairs

    def show(done: int, total: int) -> None:
        click.echo(f"\rrendering candidates {done}/{total}", err=True, nl=done == total)

    from serialkit.io.files.outputs import ensure_output_dir, ensure_writable_file

    out = str(output)
    if output.is_dir():
        ensure_output_dir(output)
    else:
        ensure_writable_file(output)
    ensure_writable_file(packet_key(output, key))
    summary = build_packet(run_dir, out, key_path=key, raters=raters, seed=seed,
                           pairs=parse_pairs(pairs) if pairs else None, max_items=max_items,
                           audio=not no_audio, progress=show if is_tty() else None)
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"wrote {summary['packet']}: {summary['items']} items, {summary['candidates']} "
                   f"candidates, {summary['raters']} rater forms; key (keep it away from raters): "
                   f"{summary['key']}")


@panel_group.command("analyze")
@click.argument("ratings", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--key", "key", required=True, type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="The packet's key.json ('-': standard input, when RATINGS do not use it).")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@json_option("Print the analysis as JSON.")
def analyze_cmd(ratings: tuple[str, ...], key: str, seed: int, as_json: bool) -> None:
    """Preferences per criterion with bootstrap intervals, and Fleiss' kappa, from RATINGS CSVs
    ('-': standard input)."""
    from serialkit.panel.analyze import analyze, format_text, load_key, read_ratings

    if ratings.count("-") + (key == "-") > 1:
        raise click.UsageError("'-' (standard input) can be given once")
    if key == "-":
        from serialkit.io.dispatch import read_stdin_bytes
        from serialkit.panel.analyze import key_from_text

        loaded = key_from_text(read_stdin_bytes().decode("utf-8", "replace"), "-")
    else:
        loaded = load_key(key)
    result = analyze(read_ratings(ratings), loaded, seed=seed)
    if as_json:
        echo_json(result)
    else:
        click.echo(format_text(result))


def register(cli: click.Group) -> None:
    """Add ``panel`` to the CLI."""
    cli.add_command(panel_group)
