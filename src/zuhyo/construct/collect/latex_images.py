"""A LaTeX figure's graphic file as image bytes: PNG/JPEG as they are, PDF and EPS rasterised to PNG.

DomainCQA §4.1 works on figure images; arXiv figures are mostly vector PDF or EPS. PDF is rendered with
PyMuPDF (first page, at :data:`DPI`, the longest side capped at :data:`MAX_SIDE` pixels); EPS with
Ghostscript (``gs -dSAFER``, cropped to its bounding box, whose size is checked first) when ``gs`` is on PATH,
else the item fails saying so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from zuhyo.construct.collect.pdf_limits import HEADER_WINDOW, pdf_type_problem
from zuhyo.errors import ImageError
from zuhyo.images.store import sniff_image_type
from zuhyo.images.verify import DEFAULT_MAX_PIXELS

DPI = 200
MAX_SIDE = 3000
GS_TIMEOUT_S = 60
GRAPHIC_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".eps", ".ps",
                    ".PDF", ".PNG", ".JPG", ".JPEG", ".EPS", ".PS")


@dataclass
class GraphicImage:
    data: bytes
    source_format: str
    """``pdf``, ``eps``, ``png``, ``jpeg`` …: the file's format before any rasterising."""
    rasterised: bool
    pages: int = 1


def load_graphic(path: Path, max_bytes: int, max_pixels: int = DEFAULT_MAX_PIXELS) -> GraphicImage:
    """The image bytes for ``path``; raises :class:`ImageError` with the reason when there are none.

    The format is the content's (a PNG named ``.pdf`` is a PNG); a PDF whose page draws images declaring more than
    ``max_pixels`` in all is not rendered."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ImageError(f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")
    data = path.read_bytes()
    suffix = path.suffix.lower()
    if pdf_type_problem(data[:HEADER_WINDOW]) is None:
        return _pdf_to_png(data, max_pixels)
    if data.startswith(b"%!PS") or data.startswith(b"\xc5\xd0\xd3\xc6"):
        return GraphicImage(_eps_to_png(path, eps_resolution(data, max_pixels)), "eps", True)
    sniffed = sniff_image_type(data)
    return GraphicImage(data, sniffed[0].lstrip(".") if sniffed else suffix.lstrip(".") or "unknown", False)


def _pdf_to_png(data: bytes, max_pixels: int) -> GraphicImage:
    import pymupdf

    from zuhyo.construct.collect.pdf_limits import check_render, drawn_images
    from zuhyo.construct.collect.report import error_reason

    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as e:  # noqa: BLE001 - FileDataError, FzError*: one figure's error
        raise ImageError(f"not a readable PDF: {error_reason(e)}") from None
    with doc:
        if doc.needs_pass:
            raise ImageError("the PDF is encrypted")
        if doc.page_count < 1:
            raise ImageError("the PDF has no pages")
        try:
            page = doc[0]
            longest = max(page.rect.width, page.rect.height) or 1.0
            zoom = min(DPI / 72, MAX_SIDE / longest)
            r = page.rect  # the images the page draws are checked before rendering decodes any
            check_render((r.x0, r.y0, r.x1, r.y1), max(1, int(zoom * 72)), drawn_images(page), max_pixels)
            pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            return GraphicImage(pix.tobytes("png"), "pdf", True, doc.page_count)
        except ImageError:
            raise
        except Exception as e:  # noqa: BLE001 - FzError*: one figure's error
            raise ImageError(f"cannot render the PDF: {error_reason(e)}") from None


#: Ghostscript's address-space limit: its own decoding of a hostile EPS's images cannot take the machine.
GS_MAX_MEMORY = 2 * 1024**3
_BBOX = re.compile(rb"^%%BoundingBox:[ \t]*(-?[\d.]+)[ \t]+(-?[\d.]+)[ \t]+(-?[\d.]+)[ \t]+(-?[\d.]+)", re.M)


def eps_resolution(data: bytes, max_pixels: int) -> int:
    """The dpi to rasterise an EPS at: :data:`DPI`, lowered so the longest side is at most :data:`MAX_SIDE`
    pixels; :class:`ImageError` before Ghostscript runs when the ``%%BoundingBox`` the file declares (its header,
    or its trailer for ``(atend)``) would make over ``max_pixels`` even so, or when it declares none."""
    body = data[4:] if data.startswith(b"\xc5\xd0\xd3\xc6") else data  # a DOS EPS header: the PS follows it
    found = _BBOX.search(body[:65536]) or _BBOX.search(body[-65536:])
    if found is None:
        raise ImageError("the EPS declares no %%BoundingBox, so its size cannot be checked before rendering")
    llx, lly, urx, ury = (float(v) for v in found.groups())
    width_pt, height_pt = abs(urx - llx), abs(ury - lly)
    if width_pt < 1 or height_pt < 1:
        raise ImageError(f"the EPS's %%BoundingBox is empty ({width_pt:g} × {height_pt:g} pt)")
    dpi = max(1, min(DPI, int(MAX_SIDE * 72 / max(width_pt, height_pt))))
    pixels = (width_pt * dpi / 72) * (height_pt * dpi / 72)
    if pixels > max_pixels:
        raise ImageError(f"the EPS would render to {pixels:,.0f} pixels at {dpi} dpi, over the {max_pixels:,}-pixel "
                         "limit (--max-pixels)")
    return dpi


def _limit_memory() -> None:  # runs in the Ghostscript child before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (GS_MAX_MEMORY, GS_MAX_MEMORY))


def _eps_to_png(path: Path, dpi: int = DPI) -> bytes:
    gs = shutil.which("gs")
    if gs is None:
        raise ImageError("EPS figures need Ghostscript (gs) to rasterise, and gs is not installed")
    with tempfile.TemporaryDirectory(prefix="zuhyo-eps-") as tmp:
        out = Path(tmp) / "page.png"
        cmd = [gs, "-dSAFER", "-dBATCH", "-dNOPAUSE", "-dQUIET", "-dEPSCrop", "-sDEVICE=png16m",
               f"-r{dpi}", "-dFirstPage=1", "-dLastPage=1", f"-sOutputFile={out}", str(path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=GS_TIMEOUT_S, check=False,
                                  preexec_fn=_limit_memory)
        except subprocess.TimeoutExpired:
            raise ImageError(f"Ghostscript took over {GS_TIMEOUT_S} s on this EPS") from None
        if proc.returncode != 0 or not out.is_file():
            detail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
            raise ImageError(f"Ghostscript cannot rasterise this EPS: {detail[-1] if detail else 'no output'}")
        return out.read_bytes()
