"""What a PDF may cost before mupdf decodes anything: file type by content, declared image sizes, render sizes.

A PDF is a few bytes of instructions that can ask for gigabytes: an image XObject declaring 12,000 × 12,000 pixels
in a 1 KB file (mupdf pads the missing data), a figure made of stripes each under any limit and together far over
it, a page of 200,000 points rendered at 200 dpi. So every size is read from the PDF's dictionaries and checked
against the pixel limit **before** any pixel is decoded:

- :func:`pdf_type_problem`: the file is a PDF by its content (``%PDF-`` in the first 1,024 bytes, as readers
  accept it), not by its name; a PNG renamed ``.pdf`` is an error saying what it looks like;
- :func:`image_placements`: where each image XObject is placed, from the page's content stream (mupdf's image
  reporter), without decoding it (PyMuPDF's ``get_image_rects`` decodes and hashes every image of the page);
- :func:`check_image` and :func:`check_render`: the declared size of an image (and its soft mask), and the size
  of a region rendered from the page (its pixels at the dpi, and the declared pixels of the images drawn in it).
"""

from __future__ import annotations

from typing import Any

from zuhyo.errors import ImageError
from zuhyo.images.verify import describe_non_image

Box = tuple[float, float, float, float]
#: Readers accept a PDF header anywhere in the first 1,024 bytes.
HEADER_WINDOW = 1024


def pdf_type_problem(head: bytes) -> str | None:
    """Why bytes starting with ``head`` are not a PDF (what they look like instead), or None for a PDF."""
    if b"%PDF-" in head[:HEADER_WINDOW]:
        return None
    if not head:
        return "empty file (0 bytes)"
    from zuhyo.images.store import sniff_image_type

    sniffed = sniff_image_type(head)
    what = f"looks like a {sniffed[0].lstrip('.').upper()} image" if sniffed is not None else describe_non_image(head)
    return f"not a PDF (no %PDF- header in its first {HEADER_WINDOW:,} bytes): {what}"


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def declared_size(doc: Any, xref: int) -> tuple[int, int] | None:
    """The ``/Width`` and ``/Height`` an image XObject declares (None when it declares no whole numbers)."""
    dims = []
    for key in ("Width", "Height"):
        kind, value = doc.xref_get_key(xref, key)
        if kind != "int":
            return None
        dims.append(int(value))
    return dims[0], dims[1]


def check_image(doc: Any, xref: int, smask: int, max_pixels: int) -> None:
    """Raise :class:`ImageError` when the image ``xref`` (or its soft mask) declares more than ``max_pixels``."""
    for what, ref in (("image", xref), ("soft mask", smask)):
        if not ref:
            continue
        size = declared_size(doc, ref)
        if size is not None and size[0] * size[1] > max_pixels:
            raise ImageError(f"the {what} (xref {ref}) declares {size[0]:,}×{size[1]:,} = {size[0] * size[1]:,} "
                             f"pixels, over the {max_pixels:,}-pixel limit; not decoded")


def drawn_images(page: Any) -> list[tuple[Box, int]]:
    """(bbox, declared pixels) of every image the page draws, inline and in forms too, without decoding any."""
    out = []
    for info in page.get_image_info():  # no hashes: nothing decoded
        x0, y0, x1, y1 = info["bbox"]
        out.append(((float(x0), float(y0), float(x1), float(y1)), int(info["width"]) * int(info["height"])))
    return out


def check_render(clip: Box, dpi: int, images: list[tuple[Box, int]], max_pixels: int) -> None:
    """Raise :class:`ImageError` when rendering ``clip`` at ``dpi`` makes or decodes more than ``max_pixels``."""
    w, h = (clip[2] - clip[0]) * dpi / 72, (clip[3] - clip[1]) * dpi / 72
    if w * h > max_pixels:
        raise ImageError(f"the region renders as {w:,.0f}×{h:,.0f} = {w * h:,.0f} pixels at {dpi} dpi, over the "
                         f"{max_pixels:,}-pixel limit; not rendered")
    drawn = sum(n for box, n in images if _overlaps(box, clip))
    if drawn > max_pixels:
        raise ImageError(f"the images drawn in the region declare {drawn:,} pixels in all, over the {max_pixels:,}-"
                         "pixel limit; not rendered")


def image_placements(page: Any, max_pixels: int) -> tuple[list[tuple[int, int, Box]], list[tuple[str, str]]]:
    """(xref, smask, bbox) of every placement of every image XObject of the page, and (locator, reason) for the
    images left out because they declare more than ``max_pixels`` (those are never decoded).

    The placements come from the page's content stream by image name (mupdf's image reporter, which decodes
    nothing). Where that is not available, or a name stands for several images (forms with their own resources),
    PyMuPDF's ``get_image_rects`` is used, which decodes every image of the page: only when all of them together
    are within the limit.
    """
    import pymupdf

    number = page.number + 1
    images = page.get_images(full=True)
    errors: list[tuple[str, str]] = []
    usable = []
    for info in images:
        xref, smask = int(info[0]), int(info[1])
        try:
            check_image(page.parent, xref, smask, max_pixels)
        except ImageError as e:
            errors.append((f"page{number}/image-xref{xref}", str(e)))
            continue
        usable.append(info)
    by_name: dict[str, list[Box]] = {}
    reporter = getattr(pymupdf, "JM_image_reporter", None)
    if reporter is not None:
        for name, quad in reporter(page._pdf_page()):
            r = pymupdf.Quad(quad).rect
            by_name.setdefault(str(name), []).append((float(r.x0), float(r.y0), float(r.x1), float(r.y1)))
    names = [str(info[7]) for info in images]
    out: list[tuple[int, int, Box]] = []
    total = sum(n for _, n in drawn_images(page))
    for info in usable:
        xref, smask, name = int(info[0]), int(info[1]), str(info[7])
        if reporter is not None and names.count(name) == 1:
            out += [(xref, smask, b) for b in by_name.get(name, [])]
        elif total <= max_pixels:
            out += [(xref, smask, (float(r.x0), float(r.y0), float(r.x1), float(r.y1)))
                    for r in page.get_image_rects(xref)]
        else:
            errors.append((f"page{number}/image-xref{xref}", "its placements cannot be told apart without "
                           f"decoding every image of the page ({total:,} pixels declared in all, over the "
                           f"{max_pixels:,}-pixel limit)"))
    return out, errors
