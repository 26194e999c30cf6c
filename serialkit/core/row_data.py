"""Everything ``serialkit row`` shows, as JSON-ready data: forms, matrix, combinatoriality, invariants."""

from __future__ import annotations

from typing import Any

from serialkit.core import catalog
from serialkit.core.rows import FORM_TYPES, Convention, Row, pc_name

__all__ = ["catalog_entry", "combinatoriality_data", "forms_data", "invariants_data", "matrix_data",
           "pc_names", "show_data"]


def catalog_entry(row: Row) -> catalog.CatalogEntry | None:
    """The catalogue entry a named row comes from (None for an unnamed row)."""
    return catalog.get(row.name) if row.name else None


def pc_names(pcs: tuple[int, ...] | list[int], flats: bool = False) -> list[str]:
    """Note names of pitch classes (sharps, or flats with ``flats``)."""
    return [pc_name(p, flats) for p in pcs]


def forms_data(row: Row, convention: Convention, flats: bool = False) -> list[dict[str, Any]]:
    """The 48 forms as JSON records: label, pcs, names, canonical label and aliases."""
    records = []
    for form, pcs in row.forms(convention).items():
        labels = row.label_of(pcs, convention)
        records.append(
            {
                "label": form.label,
                "pcs": list(pcs),
                "names": pc_names(pcs, flats),
                "canonical": labels[0].label,
                "aliases": [label.label for label in labels if label != form],
            }
        )
    return records


def matrix_data(row: Row, convention: Convention, flats: bool = False) -> dict[str, Any]:
    """The matrix as JSON: grid of pcs and names, with P/R labels per row and I/RI per column."""
    grid = row.matrix()
    p, r, i, ri = row.matrix_labels(convention)
    return {
        "pcs": grid,
        "names": [pc_names(line, flats) for line in grid],
        "rows_p": [f.label for f in p],
        "rows_r": [f.label for f in r],
        "columns_i": [f.label for f in i],
        "columns_ri": [f.label for f in ri],
    }


def combinatoriality_data(row: Row, convention: Convention, flats: bool = False) -> dict[str, Any]:
    """Hexachordal combinatoriality of P0 as JSON."""
    first, second = row.hexachords()
    partners = row.combinatorial_partners("P0", convention)
    by_type = {t: [f.label for f in partners if f.type == t] for t in FORM_TYPES}
    kinds = [t for t in FORM_TYPES if by_type[t]]
    nontrivial = [t for t in ("P", "I", "RI") if by_type[t]]
    return {
        "hexachords": [pc_names(row.pcs[:6], flats), pc_names(row.pcs[6:], flats)],
        "hexachord_pcs": [sorted(first), sorted(second)],
        "partners": by_type,
        "types": kinds,
        "all_combinatorial": row.is_all_combinatorial(),
        "semi_combinatorial": len(nontrivial) == 1,
    }


def invariants_data(
    row: Row, convention: Convention, size: int, of: str = "P0", flats: bool = False
) -> list[dict[str, Any]]:
    """Invariant segments between ``of`` and each distinct form, as JSON records."""
    source = row.form(of, convention)
    records = []
    for label in row.distinct_forms(convention):
        found = row.invariant_segments(label, size, convention, of)
        records.append({
            "label": label.label,
            "segments": [
                {"start": i, "start_in_form": j, "pcs": list(source[i : i + size]),
                 "names": pc_names(source[i : i + size], flats)}
                for i, j, _ in found
            ],
        })
    return records


def show_data(row: Row, convention: Convention, flats: bool = False) -> dict[str, Any]:
    """Everything ``row show`` prints, as JSON."""
    entry = catalog_entry(row)
    return {
        "name": row.name,
        "catalog": entry.to_dict() if entry else None,
        "pcs": list(row.pcs),
        "names": pc_names(row.pcs, flats),
        "convention": convention,
        "intervals": list(row.intervals()),
        "all_interval": row.is_all_interval(),
        "distinct_forms": len(row.distinct_forms(convention)),
        "symmetric": row.is_symmetric(),
        "forms": forms_data(row, convention, flats),
        "matrix": matrix_data(row, convention, flats),
        "combinatoriality": combinatoriality_data(row, convention, flats),
        "identified": [m.to_dict() for m in catalog.identify(row, convention)],
    }
