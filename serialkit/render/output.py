"""Turn decorated SVG pages into files: SVG, PNG (one per page), multi-page PDF."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path

from serialkit.core.errors import ScoreWriteError
from serialkit.io.files.atomic import atomic_write

FORMATS = ("svg", "png", "pdf", "html")


def output_format(path: str | Path, fmt: str | None = None) -> str:
    """The output format: ``fmt`` when given, else the one named by the path's extension."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise ScoreWriteError(f"unknown output format {fmt!r}; use svg, png, pdf or html")
        return fmt
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise ScoreWriteError(
            f"{path}: unknown output format {ext or '(none)'!r}; use .svg, .png, .pdf or .html"
        )
    return ext


def page_paths(path: str | Path, count: int) -> list[Path]:
    """One path per page: the path itself for one page, else ``stem-1.ext``, ``stem-2.ext``..."""
    p = Path(path)
    if count == 1:
        return [p]
    return [p.with_name(f"{p.stem}-{i}{p.suffix}") for i in range(1, count + 1)]


def svg_to_png(svg: str, where: str) -> bytes:
    """Rasterise one SVG page to PNG on a white background."""
    import cairosvg

    try:
        data = cairosvg.svg2png(bytestring=svg.encode("utf-8"), background_color="white")
    except Exception as exc:  # cairosvg raises many types
        raise ScoreWriteError(f"{where}: cannot rasterise the SVG ({exc})") from exc
    if not isinstance(data, bytes):
        raise ScoreWriteError(f"{where}: cairosvg returned no PNG data")
    return data


def svgs_to_pdf(pages: Sequence[str], where: str) -> bytes:
    """One PDF with one page per SVG page (cairosvg drawing onto a shared cairo surface)."""
    import cairocffi
    import cairosvg.parser
    import cairosvg.surface

    buffer = io.BytesIO()
    shared: list[cairocffi.PDFSurface] = []

    class _PageSurface(cairosvg.surface.PDFSurface):  # type: ignore[misc]
        def _create_surface(self, width: float, height: float) -> tuple[object, float, float]:
            if not shared:
                shared.append(cairocffi.PDFSurface(buffer, width, height))
            else:
                shared[0].set_size(width, height)
            return shared[0], width, height

    try:
        for svg in pages:
            tree = cairosvg.parser.Tree(bytestring=svg.encode("utf-8"))
            surface = _PageSurface(tree, None, 96)
            surface.context.show_page()
        if shared:
            shared[0].finish()
    except Exception as exc:  # cairo and cairosvg raise many types
        raise ScoreWriteError(f"{where}: cannot write PDF ({exc})") from exc
    return buffer.getvalue()


#: Characters encoded at a time by ``utf8``.
_CHUNK = 4096


def utf8(text: str) -> bytes:
    """``text`` as ``atomic_write`` writes it to a text file (UTF-8, the platform's line ends),
    quick for a text of one-byte characters but a few: verovio's pages hold two (a dash and a
    no-break space in their page numbers) that make each page a string of two-byte characters,
    encoded a character at a time. Encoded a slice at a time, the slices without them are ASCII
    strings, and their encoding a copy."""
    if os.linesep != "\n":
        text = text.replace("\n", os.linesep)
    if text.isascii():
        return text.encode("utf-8")
    try:
        return b"".join([text[i:i + _CHUNK].encode("utf-8") for i in range(0, len(text), _CHUNK)])
    except UnicodeEncodeError:  # a lone surrogate: the error encoding the text whole gives
        return text.encode("utf-8")


def write_pages(pages: Sequence[str], out_path: str | Path, fmt: str) -> list[Path]:
    """Write the pages in the given format; return the files written (all or none)."""
    where = str(out_path)
    blobs: list[tuple[Path, str | bytes]]
    if fmt == "svg":
        blobs = [(path, utf8(svg)) for path, svg in zip(page_paths(out_path, len(pages)), pages, strict=True)]
    elif fmt == "png":
        blobs = [
            (path, svg_to_png(svg, where))
            for path, svg in zip(page_paths(out_path, len(pages)), pages, strict=True)
        ]
    elif fmt == "pdf":
        blobs = [(Path(out_path), svgs_to_pdf(pages, where))]
    else:
        raise ScoreWriteError(f"{where}: write_pages cannot write {fmt}")
    written: list[Path] = []
    try:
        for path, data in blobs:
            atomic_write(path, data)
            written.append(path)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written
