"""CLI: ``serialkit row show|forms|matrix|identify|combinatoriality|search``."""

from __future__ import annotations

from typing import Any

import click

from serialkit.cli._common import EXIT_FAIL, echo_json
from serialkit.core import catalog
from serialkit.core.row_data import (
    catalog_entry,
    combinatoriality_data,
    forms_data,
    invariants_data,
    matrix_data,
    pc_names,
    show_data,
)
from serialkit.core.rows import FORM_TYPES, Convention, Row

_ROW_HELP = (
    "ROW is 12 pitch classes as numbers (0-11, T/E for 10/11) or note names (C# Db F♯ B♭ Cx "
    "Ebb Fis Es H), quoted or not, or a catalog name such as webern-op21."
)


def _options(func: Any) -> Any:
    func = click.option("--flats", is_flag=True, help="Spell pitch classes with flats.")(func)
    func = click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)
    func = click.option(
        "--convention",
        type=click.Choice(["relative", "absolute"]),
        default="relative",
        show_default=True,
        help="relative: P0 is the row as given; absolute: Pn and In begin on pitch class n.",
    )(func)
    return click.argument("spec", nargs=-1, required=True, metavar="ROW")(func)


def _row(spec: tuple[str, ...]) -> Row:
    return Row.parse(" ".join(spec))


def _line(pcs: tuple[int, ...] | list[int], flats: bool) -> str:
    return " ".join(f"{name:<2}" for name in pc_names(pcs, flats))


def _echo_header(row: Row, convention: Convention, flats: bool) -> None:
    entry = catalog_entry(row)
    if entry is not None:
        click.echo(f"{entry.name}: {entry.title}  [{entry.collection}]")
    click.echo(f"row        {_line(row.pcs, flats)}".rstrip())
    click.echo(f"pcs        {' '.join(str(p) for p in row.pcs)}")
    click.echo(f"intervals  {' '.join(str(i) for i in row.intervals())}")
    distinct = len(row.distinct_forms())
    symmetric = " (symmetric)" if distinct < 48 else ""
    click.echo(
        f"all-interval: {'yes' if row.is_all_interval() else 'no'} · distinct forms: "
        f"{distinct} of 48{symmetric} · combinatorial: {', '.join(row.combinatorial_types())}"
    )
    for match in catalog.identify(row, convention):
        if entry is None or match.entry is not entry:
            labels = " = ".join(f.label for f in match.forms)
            click.echo(f"catalogued as {labels} of {match.entry.name}: {match.entry.title}")


def _echo_forms(row: Row, convention: Convention, flats: bool, distinct: bool = False) -> None:
    records = forms_data(row, convention, flats)
    aliases = sum(1 for r in records if r["canonical"] != r["label"])
    click.echo(f"\nforms ({convention} convention; {aliases} labels marked '= X' name the same")
    click.echo("pitch classes as the canonical label X)")
    for record in records:
        is_alias = record["canonical"] != record["label"]
        if distinct and is_alias:
            continue
        line = " ".join(f"{name:<2}" for name in record["names"])
        if is_alias:
            mark = f"  = {record['canonical']}"
        elif record["aliases"]:
            mark = f"  (also {', '.join(record['aliases'])})"
        else:
            mark = ""
        click.echo(f"{record['label']:<5}{line}{mark}".rstrip())


def _echo_matrix(row: Row, convention: Convention, flats: bool) -> None:
    data = matrix_data(row, convention, flats)
    click.echo(f"\nmatrix ({convention}: P forms left to right, R right to left, I top down, RI bottom up)")
    click.echo(("     " + "".join(f"{label:<5}" for label in data["columns_i"])).rstrip())
    for p, names, r in zip(data["rows_p"], data["names"], data["rows_r"], strict=True):
        click.echo(f"{p:<5}" + "".join(f"{name:<5}" for name in names) + r)
    click.echo(("     " + "".join(f"{label:<5}" for label in data["columns_ri"])).rstrip())


def _echo_combinatoriality(row: Row, convention: Convention, flats: bool) -> None:
    data = combinatoriality_data(row, convention, flats)
    click.echo(f"hexachords  {' '.join(data['hexachords'][0])} | {' '.join(data['hexachords'][1])}")
    for kind in FORM_TYPES:
        partners = data["partners"][kind]
        click.echo(f"{kind + '-combinatorial':<17}{', '.join(partners) if partners else 'no'}")
    if data["all_combinatorial"]:
        click.echo("all-combinatorial (P, I, R and RI)")
    elif data["semi_combinatorial"]:
        click.echo("semi-combinatorial")
    click.echo(f"(partners of P0, {convention} convention: their first hexachords complete P0's)")


def register(cli: click.Group) -> None:
    """Add ``serialkit row`` and its subcommands."""

    @cli.group(name="row", help=f"Show, transform, label and identify twelve-tone rows. {_ROW_HELP}")
    def row_group() -> None:
        """Tone rows."""

    @row_group.command(name="show")
    @_options
    def show(spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool) -> None:
        """Print a row, its 48 forms (aliases marked) and its matrix."""
        row = _row(spec)
        if as_json:
            echo_json(show_data(row, convention, flats))
            return
        _echo_header(row, convention, flats)
        _echo_forms(row, convention, flats)
        _echo_matrix(row, convention, flats)

    @row_group.command(name="forms")
    @_options
    @click.option("--distinct", is_flag=True, help="Only one label per distinct form.")
    def forms(
        spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool, distinct: bool
    ) -> None:
        """Print the 48 forms of a row, marking labels that are aliases of another."""
        row = _row(spec)
        records = forms_data(row, convention, flats)
        if as_json:
            if distinct:
                records = [r for r in records if r["canonical"] == r["label"]]
            echo_json({"pcs": list(row.pcs), "convention": convention, "forms": records})
            return
        _echo_forms(row, convention, flats, distinct)

    @row_group.command(name="matrix")
    @_options
    def matrix(spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool) -> None:
        """Print the 12×12 matrix with P, R, I and RI labels."""
        row = _row(spec)
        if as_json:
            echo_json({"pcs": list(row.pcs), "convention": convention,
                       "matrix": matrix_data(row, convention, flats)})
            return
        _echo_matrix(row, convention, flats)

    @row_group.command(name="combinatoriality")
    @_options
    def combinatoriality(
        spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool
    ) -> None:
        """Print the hexachordal combinatoriality of a row (P, I, R, RI partners of P0)."""
        row = _row(spec)
        if as_json:
            data = combinatoriality_data(row, convention, flats)
            echo_json({"pcs": list(row.pcs), "convention": convention, **data})
            return
        _echo_combinatoriality(row, convention, flats)

    @row_group.command(name="invariants")
    @_options
    @click.option("--size", type=click.IntRange(1, 12), default=3, show_default=True,
                  help="Segment size (consecutive pitch classes).")
    @click.option("--of", "of", default="P0", show_default=True, help="The form whose segments to follow.")
    def invariants(
        spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool, size: int,
        of: str,
    ) -> None:
        """List, for each distinct form, the segments of --of whose content it keeps together."""
        row = _row(spec)
        records = invariants_data(row, convention, size, of, flats)
        if as_json:
            echo_json({"pcs": list(row.pcs), "convention": convention, "size": size, "of": of,
                       "forms": records})
            return
        click.echo(f"segments of {size} consecutive pitch classes of {of} kept together by each form")
        for record in records:
            if record["segments"]:
                parts = ", ".join(
                    f"{{{' '.join(seg['names'])}}} {seg['start']}->{seg['start_in_form']}"
                    for seg in record["segments"]
                )
                click.echo(f"{record['label']:<5}{len(record['segments']):>2}  {parts}")

    @row_group.command(name="identify")
    @_options
    def identify(spec: tuple[str, ...], convention: Convention, as_json: bool, flats: bool) -> None:
        """Name the catalogued rows (and their forms) that a pitch-class sequence is; exit 1 if none."""
        row = _row(spec)
        matches = catalog.identify(row, convention)
        if as_json:
            echo_json({"pcs": list(row.pcs), "names": pc_names(row.pcs, flats),
                       "convention": convention, "matches": [m.to_dict() for m in matches]})
        else:
            click.echo(f"{_line(row.pcs, flats).rstrip()}")
            if not matches:
                click.echo("is not a form of any catalogued row")
            for match in matches:
                labels = " = ".join(f.label for f in match.forms)
                click.echo(f"  {labels:<12} of {match.entry.name}: {match.entry.title}")
        if not matches:
            raise SystemExit(EXIT_FAIL)

    @row_group.command(name="search")
    @click.argument("text", nargs=-1)
    @click.option("--collection", type=click.Choice(["music21", "repertoire"]), default=None)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    def search(text: tuple[str, ...], collection: str | None, as_json: bool) -> None:
        """List catalogued rows whose name, composer or work contains every word; exit 1 if none."""
        found = catalog.search(" ".join(text), collection)
        if as_json:
            echo_json([e.to_dict() for e in found])
        else:
            for entry in found:
                click.echo(f"{entry.name:<40} {_line(entry.row.pcs, False)}  {entry.title}")
        if not found:
            if not as_json:
                click.echo("no catalogued row matches", err=True)
            raise SystemExit(EXIT_FAIL)

