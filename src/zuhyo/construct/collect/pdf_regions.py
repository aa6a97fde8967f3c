"""Figure candidates on the pages of a PDF: embedded images and vector figure regions, each with its caption.

The analysis behind ``zuhyo collect pdf`` (HakushoBench §3.1 collects every chart and table image of a white
paper with its caption; DomainCQA §4.1 every figure of a paper). Uses PyMuPDF (imported by the caller):

- **embedded images**: every placement of every image XObject (``page.get_images`` and where the content
  stream places them, :func:`pdf_limits.image_placements`: nothing decoded to find them).
  Placements that touch or overlap are one figure made of fragments (a diagram sliced into strips) and are
  rendered from the page as one region; a lone image is extracted at its own resolution with its soft mask
  (transparency) applied and flattened on white, as it shows on the page;
- **vector figure regions**: ``page.cluster_drawings`` over the page's drawings, *less* the page furniture
  (drawings repeated at the same place on several pages: running headers, page bands). A vector region is a
  candidate only with a caption line near it (otherwise it is a text box, banner or decoration); one that
  encloses an embedded image is that image's frame;
- **captions**: text blocks whose first line is a caption line (:func:`caption_lines.parse_caption`:
  ``■第１-３-１図／…``, ``図表1-1-2-1 …``, ``Figure 3: …``, ``Table 1. …``), given one-to-one to the nearest
  candidate above or below them (or around them).

What is not a candidate is *skipped with a reason* (tiny images such as icons and QR codes, blank or uniform
images such as empty banners, small vector bits, uncaptioned vector boxes, frames), never dropped silently.
Telling a chart from a portrait is the filter stage's job; here every plausible candidate is kept.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from zuhyo.construct.collect.caption_lines import Caption, parse_caption, parse_source_line
from zuhyo.construct.collect.pdf_limits import check_image, check_render, drawn_images, image_placements
from zuhyo.construct.collect.report import error_reason
from zuhyo.images.verify import DEFAULT_MAX_PIXELS

#: Placed images (or merged fragments) with a side shorter than this (PDF points, 1/72 inch) are icons/bullets.
DEFAULT_MIN_SIDE_PT = 50.0
#: Images with fewer pixels than this on a side are icons, whatever their placed size.
MIN_SIDE_PX = 32
#: Vector regions with a side shorter than this are rules, bullets or decorations.
MIN_VECTOR_SIDE_PT = 36.0
#: How far (points) a caption may be from its figure.
MAX_CAPTION_GAP_PT = 50.0
#: An image whose per-channel standard deviation is below this (0-255) is blank: one colour all over.
BLANK_STDDEV = 2.0
#: Placements this close (points) are fragments of one figure.
FRAGMENT_GAP_PT = 2.0
DEFAULT_DPI = 200
# A line starting a note (not a source line's continuation).
_NOTE = ("※", "注", "（注", "(注", "Note")

Box = tuple[float, float, float, float]


class PdfCaption(BaseModel):
    caption: Caption
    text: str
    """The whole caption text (the block's lines joined)."""
    bbox: Box


class Candidate(BaseModel):
    """One figure candidate on a page."""

    page: int
    """1-based page number."""
    kind: Literal["image", "fragments", "vector"]
    bbox: Box
    """The region on the page, in PDF points (x0, y0, x1, y1, origin top left)."""
    xrefs: list[int] = []
    """The image XObjects (for ``image`` and ``fragments``)."""
    smask: int = 0
    caption: PdfCaption | None = None
    source: str | None = None
    """The source line printed with the figure (``資料：…``, ``（出典）…``, ``Source: …``), its text."""
    png: bytes = Field(default=b"", exclude=True, repr=False)
    """The image (PNG), once made."""
    how: str = ""
    """How the PNG was made: extracted (with its soft mask) or rendered from the page."""

    @property
    def locator(self) -> str:
        x0, y0, x1, y1 = (round(v) for v in self.bbox)
        return f"page{self.page}/{self.kind}@{x0},{y0},{x1},{y1}"


class Skipped(BaseModel):
    """Something on a page that is not a figure candidate, and why."""

    page: int
    kind: Literal["image", "fragments", "vector"]
    bbox: Box
    reason: str
    xrefs: list[int] = []


class PageResult(BaseModel):
    candidates: list[Candidate] = []
    skipped: list[Skipped] = []
    captions: list[PdfCaption] = []
    errors: list[tuple[str, str]] = []
    """(candidate locator, reason) for candidates whose pixels could not be made."""


def _box(r: Any) -> Box:
    return (float(r.x0), float(r.y0), float(r.x1), float(r.y1))


def _size(b: Box) -> tuple[float, float]:
    return b[2] - b[0], b[3] - b[1]


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _touch(a: Box, b: Box, gap: float) -> bool:
    return a[0] - gap <= b[2] and b[0] - gap <= a[2] and a[1] - gap <= b[3] and b[1] - gap <= a[3]


def _area(b: Box) -> float:
    w, h = _size(b)
    return max(w, 0.0) * max(h, 0.0)


def _overlap(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _drawing_key(d: dict[str, Any]) -> tuple[int, int, int, int]:
    r = d["rect"]
    return (round(r.x0), round(r.y0), round(r.x1), round(r.y1))


def furniture_keys(drawings: list[list[dict[str, Any]]]) -> set[tuple[int, int, int, int]]:
    """Rectangles of drawings (``page.get_drawings()`` of each page) repeated at the same place on two or more
    pages: running headers, page bands."""
    pages: Counter[tuple[int, int, int, int]] = Counter()
    for page_drawings in drawings:
        pages.update({_drawing_key(d) for d in page_drawings})
    return {k for k, n in pages.items() if n >= 2}


def text_blocks(page: Any) -> list[dict[str, Any]]:
    """The page's text blocks (``get_text("dict")`` without image data)."""
    import pymupdf

    blocks: list[dict[str, Any]] = page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT)["blocks"]
    return [b for b in blocks if b.get("type") == 0]


def page_captions(blocks: list[dict[str, Any]]) -> list[PdfCaption]:
    """Text blocks whose first line is a caption line; later lines of the block continue the title."""
    out = []
    for block in blocks:
        lines = ["".join(span["text"] for span in line["spans"]).strip() for line in block["lines"]]
        lines = [line for line in lines if line]
        if not lines:
            continue
        cap = parse_caption(lines[0])
        if cap is None:
            continue
        text = lines[0]
        for line in lines[1:]:
            text += (" " if text[-1:].isascii() and line[:1].isascii() else "") + line
        if len(lines) > 1:
            cap = parse_caption(text) or cap
        x0, y0, x1, y1 = block["bbox"]
        out.append(PdfCaption(caption=cap, text=text, bbox=(float(x0), float(y0), float(x1), float(y1))))
    return out


def _image_groups(page: Any, placed: list[tuple[int, int, Box]]) -> list[tuple[Box, list[tuple[int, int, Box]]]]:
    """Placements (xref, smask, bbox) on the page grouped into touching clusters, each with its union box."""
    page_box = _box(page.rect)
    placements = [p for p in placed if _area(p[2]) > 0 and _overlap(p[2], page_box) > 0]
    groups: list[list[tuple[int, int, Box]]] = []
    for p in placements:
        joined = [g for g in groups if any(_touch(p[2], q[2], FRAGMENT_GAP_PT) for q in g)]
        merged = [p] + [q for g in joined for q in g]
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted(((_union([q[2] for q in g]), sorted(g, key=lambda q: (q[2][1], q[2][0]))) for g in groups),
                  key=lambda t: (t[0][1], t[0][0]))


def analyse_page(page: Any, page_drawings: list[dict[str, Any]], furniture: set[tuple[int, int, int, int]], *,
                 min_side_pt: float = DEFAULT_MIN_SIDE_PT, dpi: int = DEFAULT_DPI,
                 max_pixels: int = DEFAULT_MAX_PIXELS) -> PageResult:
    """The figure candidates of one page (with their PNG made) and what was skipped there, and why.

    ``page_drawings`` is ``page.get_drawings()``, ``furniture`` what :func:`furniture_keys` found over the
    document's pages. Nothing over ``max_pixels`` is decoded or rendered (:mod:`pdf_limits`): such an image or
    region is one of the page's errors.
    """
    number = page.number + 1
    blocks = text_blocks(page)
    result = PageResult(captions=page_captions(blocks))
    placed, result.errors = image_placements(page, max_pixels)
    limits = _Limits(dpi, max_pixels, drawn_images(page))
    drawings = [d for d in page_drawings if _drawing_key(d) not in furniture]
    lines = [_box_of(line["bbox"]) for block in blocks for line in block["lines"]]
    images: list[Candidate] = []
    for box, group in _image_groups(page, placed):
        xrefs = [q[0] for q in group]
        kind: Literal["image", "fragments"] = "image" if len(group) == 1 else "fragments"
        if kind == "fragments":
            box = _extend(box, drawings, lines)
        cand = Candidate(page=number, kind=kind, bbox=box, xrefs=xrefs, smask=group[0][1])
        if not _make_png(page, cand, limits, result):
            continue
        if is_blank(cand.png):
            result.skipped.append(Skipped(page=number, kind=kind, bbox=box, xrefs=xrefs, reason=(
                "blank image (one colour all over, e.g. an empty banner or background)")))
            continue
        w, h = _size(box)
        if max(w, h) < min_side_pt:
            result.skipped.append(Skipped(page=number, kind=kind, bbox=box, xrefs=xrefs, reason=(
                f"tiny image ({w:.0f}×{h:.0f} pt on the page, under {min_side_pt:.0f} pt): an icon, logo, "
                "bullet or code")))
            continue
        if min(w, h) < min_side_pt:
            result.skipped.append(Skipped(page=number, kind=kind, bbox=box, xrefs=xrefs, reason=(
                f"thin strip ({w:.0f}×{h:.0f} pt on the page, under {min_side_pt:.0f} pt across): a banner, "
                "rule or separator")))
            continue
        if kind == "image":
            px = page.parent.xref_get_key(xrefs[0], "Width"), page.parent.xref_get_key(xrefs[0], "Height")
            dims = [int(v[1]) for v in px if v[0] == "int"]
            if dims and min(dims) < MIN_SIDE_PX:
                result.skipped.append(Skipped(page=number, kind=kind, bbox=box, xrefs=xrefs, reason=(
                    f"tiny image ({'×'.join(map(str, dims))} px, under {MIN_SIDE_PX} px): an icon or bullet")))
                continue
        images.append(cand)
    vectors: list[Candidate] = []
    for r in page.cluster_drawings(drawings=drawings) if drawings else []:
        box = _box(r)
        w, h = _size(box)
        if min(w, h) < MIN_VECTOR_SIDE_PT:
            result.skipped.append(Skipped(page=number, kind="vector", bbox=box, reason=(
                f"small vector region ({w:.0f}×{h:.0f} pt, under {MIN_VECTOR_SIDE_PT:.0f} pt): a rule, bullet "
                "or decoration")))
            continue
        inner = [c for c in images if _overlap(c.bbox, box) >= 0.5 * _area(c.bbox)]
        if inner:
            result.skipped.append(Skipped(page=number, kind="vector", bbox=box, reason=(
                f"frame around the embedded image(s) at {', '.join(c.locator for c in inner)}; the image is "
                "the candidate")))
            continue
        vectors.append(Candidate(page=number, kind="vector", bbox=box))
    _assign_captions(images + vectors, result.captions)
    _assign_sources(images + vectors, source_lines(blocks))
    for v in vectors:
        if v.caption is None:
            result.skipped.append(Skipped(page=number, kind="vector", bbox=v.bbox, reason=(
                "vector region with no caption line near it: a text box, banner or decoration")))
    result.candidates = sorted(images + [v for v in vectors if v.caption is not None],
                               key=lambda c: (c.bbox[1], c.bbox[0]))
    for c in [c for c in result.candidates if c.kind == "vector"]:
        if c.caption is not None:
            c.bbox = _trim_caption(c.bbox, c.caption.bbox)
        if not _make_png(page, c, limits, result):
            result.candidates.remove(c)
    return result


@dataclass(frozen=True)
class _Limits:
    dpi: int
    max_pixels: int
    drawn: list[tuple[Box, int]]
    """(bbox, declared pixels) of the images the page draws (:func:`pdf_limits.drawn_images`)."""


def _make_png(page: Any, cand: Candidate, limits: _Limits, result: PageResult) -> bool:
    try:
        cand.png, cand.how = image_png(page, cand, limits.dpi, limits.max_pixels, limits.drawn)
    except Exception as e:  # noqa: BLE001 - mupdf's FzError* are no RuntimeError; Pillow's DecompressionBombError
        result.errors.append((cand.locator, f"cannot make the image: {error_reason(e)}"))
        return False
    return True


def _box_of(bbox: Any) -> Box:
    x0, y0, x1, y1 = bbox
    return (float(x0), float(y0), float(x1), float(y1))


def _extend(box: Box, drawings: list[dict[str, Any]], lines: list[Box]) -> Box:
    """``box`` grown by the drawings and text lines that overlap it and are not larger than it (labels and
    call-outs laid over a figure made of fragments; a frame around it is larger and stays out)."""
    parts = [_box(d["rect"]) for d in drawings] + lines
    grown = box
    for part in parts:
        if _overlap(part, box) > 0 and _area(part) <= _area(box):
            grown = _union([grown, part])
    return grown


def source_lines(blocks: list[dict[str, Any]]) -> list[tuple[str, Box]]:
    """(source text, bbox) for each source line of the page, with its continuation lines joined on (the lines
    right under it, starting at or a little right of it, whatever text block they fell into)."""
    lines = [(text, _box_of(line["bbox"])) for block in blocks for line in block["lines"]
             if (text := "".join(span["text"] for span in line["spans"]).strip())]
    out = []
    for text, box in lines:
        source = parse_source_line(text)
        if source is None:
            continue
        last = box
        while True:
            below = [(t, b) for t, b in lines if b[1] > last[1] + 1 and -3 <= b[1] - last[3] <= 4
                     and box[0] - 2 <= b[0] <= box[0] + 40]
            if not below:
                break
            more, more_box = min(below, key=lambda tb: tb[1][1])
            if parse_source_line(more) is not None or parse_caption(more) is not None or more.startswith(_NOTE):
                break
            source += (" " if source[-1:].isascii() and more[:1].isascii() else "") + more
            last = more_box
            box = _union([box, more_box])
        out.append((source, box))
    return out


def _assign_sources(candidates: list[Candidate], sources: list[tuple[str, Box]]) -> None:
    """Each source line to the nearest captioned candidate it lies in or under (HakushoBench's source line)."""
    pairs = []
    for i, c in enumerate(candidates):
        if c.caption is None:
            continue
        for j, (_, box) in enumerate(sources):
            g = _gap(c.bbox, box)
            if g is not None and box[1] >= c.bbox[1] and g <= MAX_CAPTION_GAP_PT:
                pairs.append((g, i, j))
    used_c: set[int] = set()
    used_s: set[int] = set()
    for _, i, j in sorted(pairs):
        if i not in used_c and j not in used_s:
            candidates[i].source = sources[j][0]
            used_c.add(i)
            used_s.add(j)


def _gap(region: Box, cap: Box) -> float | None:
    """Distance from a caption to a region: 0 inside it, else the vertical gap; None when beside it."""
    if _overlap(region, cap) >= 0.5 * _area(cap):
        return 0.0
    if min(region[2], cap[2]) - max(region[0], cap[0]) <= 0:
        return None
    return max(cap[1] - region[3], region[1] - cap[3], 0.0)


def _assign_captions(candidates: list[Candidate], captions: list[PdfCaption]) -> None:
    """Each caption to its nearest candidate, one to one, nearest pairs first."""
    pairs = []
    for i, c in enumerate(candidates):
        for j, cap in enumerate(captions):
            g = _gap(c.bbox, cap.bbox)
            if g is not None and g <= MAX_CAPTION_GAP_PT:
                pairs.append((g, i, j))
    used_c: set[int] = set()
    used_k: set[int] = set()
    for _, i, j in sorted(pairs):
        if i not in used_c and j not in used_k:
            candidates[i].caption = captions[j]
            used_c.add(i)
            used_k.add(j)


def _trim_caption(region: Box, cap: Box) -> Box:
    """A vector region less the caption printed at its top or bottom edge (the caption is stored as text)."""
    if _overlap(region, cap) < 0.5 * _area(cap):
        return region
    x0, y0, x1, y1 = region
    if (cap[1] + cap[3]) / 2 < (y0 + y1) / 2:
        y0 = max(y0, cap[3])
    else:
        y1 = min(y1, cap[1])
    return (x0, y0, x1, y1) if y1 - y0 > 1 else region


def image_png(page: Any, cand: Candidate, dpi: int = DEFAULT_DPI, max_pixels: int = DEFAULT_MAX_PIXELS,
              drawn: list[tuple[Box, int]] | None = None) -> tuple[bytes, str]:
    """PNG bytes of a candidate and how they were made.

    A lone image comes at its own resolution, colour converted to RGB, its soft mask applied and flattened on
    white (as the page shows it); fragments, vector regions and images that cannot be decoded on their own are
    rendered from the page at ``dpi``. Raises :class:`ImageError` when the image declares, or the rendering would
    make or decode (``drawn``: the page's images, :func:`pdf_limits.drawn_images`), more than ``max_pixels``.
    """
    import pymupdf
    from PIL import Image

    if cand.kind == "image":
        check_image(page.parent, cand.xrefs[0], cand.smask, max_pixels)  # before decoding anything
        try:
            pix = pymupdf.Pixmap(page.parent, cand.xrefs[0])
            masked = False
            if cand.smask:  # the alpha channel PyMuPDF adds here is opaque: apply the soft mask ourselves
                pix = pymupdf.Pixmap(pix, 0) if pix.alpha else pix
            if pix.colorspace is not None and pix.colorspace.n != 3:
                pix = pymupdf.Pixmap(pymupdf.csRGB, pix)
            if cand.smask:
                mask = pymupdf.Pixmap(page.parent, cand.smask)
                if (mask.width, mask.height) != (pix.width, pix.height):
                    raise ValueError("soft mask size differs from the image's")
                pix = pymupdf.Pixmap(pix, mask)
                masked = True
            if pix.colorspace is not None and pix.n - pix.alpha == 3:
                im = Image.frombytes("RGBA" if pix.alpha else "RGB", (pix.width, pix.height), pix.samples)
                how = "extracted"
                if im.mode == "RGBA":
                    bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
                    bg.alpha_composite(im)
                    im = bg.convert("RGB")
                    how = "extracted, soft mask applied on white" if masked else how
                buf = io.BytesIO()
                im.save(buf, "PNG")
                return buf.getvalue(), how
        except Exception:  # noqa: BLE001 - an image mupdf cannot decode alone (FzError*): render it from the page
            pass
    check_render(cand.bbox, dpi, drawn if drawn is not None else drawn_images(page), max_pixels)
    pix = page.get_pixmap(clip=pymupdf.Rect(*cand.bbox), dpi=dpi, alpha=False)
    return pix.tobytes("png"), f"rendered from the page at {dpi} dpi"


def is_blank(png: bytes) -> bool:
    """True when every channel of the image is (nearly) one value."""
    from PIL import Image, ImageStat

    with Image.open(io.BytesIO(png)) as im:
        return max(ImageStat.Stat(im.convert("RGB")).stddev) < BLANK_STDDEV
