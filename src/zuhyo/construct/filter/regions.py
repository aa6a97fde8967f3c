"""The second look at a pair that passed the thumbnail verification: the two images at (up to) their own
resolution, aligned, and their difference judged as **regions by area** (issue 22: hard negatives).

A 128 px thumbnail cannot tell a chart from the same template with one table cell, one panel's bar or one
stretch of an area changed: the change is a pixel or two there. At the images' own resolution it is a compact
patch of tens to hundreds of pixels, while a true copy (resized, recompressed, padded, greyscale, re-rendered at
another DPI) differs in scattered pixels and one-pixel seams along re-rasterised edges. So, per pair
(:func:`largest_region`):

1. each image's content box (its uniform borders and a screenshot's chrome trimmed as for the thumbnail,
   :func:`zuhyo.construct.filter.alignment.figure_box`), shrunk (area means) so its long side is at most
   :attr:`RegionCheck.max_side` (:func:`content_pixels`, read again from the image's bytes: nothing of this size
   is kept per image); compared on colour, or on luma when either image is grey (a greyscale copy);
2. both on one grid, the size of the smaller (the coarser image sets the detail both can show); the window of
   the thumbnail verification as the start, refined by OpenCV's ECC (an affine: rotation, shift, scale) on a
   :attr:`RegionCheck.align_side` px version - a 1.5 degree rotation is 10 px at 800 px;
3. the difference of the two, both blurred by :attr:`RegionCheck.blur` px (a sub-pixel misalignment of an edge
   is then small), above :attr:`RegionCheck.level` - or above :attr:`RegionCheck.faint_level` where both images
   are faint around the pixel (a pale line, white text on a light box: no sharp edge to resample) yet show some
   structure there (not two flat areas of other shades: a palette drawn a shade lighter; nor in a pair with a
   JPEG, whose faint shades move); an opening by :attr:`RegionCheck.seam` px removes the one-pixel seams, a
   closing by :attr:`RegionCheck.join` px joins the strokes of one changed number into one region; the result
   is the pixels of the largest region (the title band and the content box's outer
   :attr:`RegionCheck.edge` left out: a retitled copy, a trim a pixel off) among those whose box is more than
   :attr:`RegionCheck.seam_width` px across (a long thin one is an edge slightly off), counted
   :attr:`RegionCheck.alone_weight` times when it holds :attr:`RegionCheck.alone_share` of all that differs
   (one changed digit is all of it; a copy's differences are spread over the image).

A pair of charts drawn in strokes (lines, markers: :attr:`RegionCheck.ink_share`) whose region is over the limit
is compared once more as ink alone, whatever its colours (:func:`_ink_of`): lines drawn again with another palette.
One that passes fails when ink of one lies where the other has none (:func:`_stray_ink`): if both images are
lossless and of one size, in a region over :attr:`RegionCheck.stray_limit` (a thin line of other data, which the
seam opening, step 3, takes out); otherwise (a JPEG, or drawn at another size: strokes moved by a pixel or two)
with no trace of the other's ink within :attr:`RegionCheck.stray_reach_resampled` px, in a region over
:attr:`RegionCheck.stray_limit_resampled` or in all over :attr:`RegionCheck.stray_share_resampled` of the ink:
pale lines or a few markers of another chart, which fade under the blur or make regions under the limit on a
small copy's grid.

A pair of images of other sizes (:attr:`RegionCheck.piece_size`) whose region is over the limit is looked at
again with each block of ``b``'s layout (:func:`_layout_blocks`, cut at its blank bands) aligned on its own
(:func:`_pieces`): a figure drawn again at another size, laid out with gaps in points (matplotlib's tight layout),
moves its panels, colour bar and title apart by other amounts than its axes scale. A large block is aligned by
ECC, started from the other image's block that it overlaps (box on box: a table's rows, started from the pair's
alignment, may stay a row off); a heading over them too small for ECC (a title) by its best shift, where that
shift correlates well and moves it apart from them (:attr:`RegionCheck.small_pieces`): a table drawn again at
another size keeps its rows' height in pixels while its title stays at the top. Blocks are found by colour where
the pair is (a colour bar's pale end on a cream page has the page's luma), and where the pair's alignment puts what
``a`` shows in a moved block, outside ``b``'s blocks, nothing is compared (:func:`_vacated`: the block is compared
where it moved to).

:func:`largest_region` above ``MAX_REGION`` (:mod:`zuhyo.construct.filter.near_duplicates`) means other data.

Speed: ECC and a comparison at full resolution for every pair cost ~100 ms a pair on the loaded 2-core machine,
and most pairs at a look-alike corpus's second look are other data. So with a ``limit`` the thumbnail's window
is compared first (a copy that it lines up passes without ECC); only the rest are refined, but for a pair of one
size drawn in strokes that the window lines up (:attr:`RegionCheck.other_strokes_lined_up`) while a share of
its ink lies far from any of the other's (:attr:`RegionCheck.other_strokes_share`): a chart of one template with
lines or markers of other data, which fails as it is. (A comparison
tolerant of any alignment within 2.5 % of the long side, to fail charts with other data without ECC, once sat
between the two: with ECC capped at 20 iterations it cost more than it saved on every corpus measured, and
decided no pair otherwise; bench/README.md, "sixth session".)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from zuhyo.construct.filter.alignment import THUMB, TITLE_BAND, figure_box, grey_plane
from zuhyo.images.verify import DEFAULT_MAX_PIXELS, PngPixels, decode_untrusted_fast

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np


@dataclass(frozen=True)
class RegionCheck:
    """The parameters of the second look (see the module doc); the defaults are the filter's."""

    max_side: int = 1024
    """Long side (px) of the content compared at most; larger images are shrunk to it."""
    align_side: int = 256
    """Long side of the versions the affine is refined on (ECC)."""
    finer_side: int = 384
    """Long side of the versions the affine is refined on once more (ECC, from the first refinement) when a region
    over the limit and at most :attr:`finer_up_to` is left: a pixel at 256 px is two to four at the grid's
    resolution, and the bold labels of a screenshot's tiles, a padded or cropped log-log chart, showed 56-256 px
    of edges so misaligned (bench/README.md, "twenty-second session"). 0 turns this off."""
    finer_up_to: int = 400
    """See :attr:`finer_side`. The finer alignment is taken where it leaves at most half the limit: it is for a
    misalignment, which it explains whole (the copies it found then showed 0 px), not for a difference it only
    shrinks to the limit (a table drawn again at another size against another's hard negative, 116 -> 40 px)."""
    ecc_iterations: int = 20
    """Iterations of ECC at most: on the tuning splits 20 instead of 40 decided every pair of the second look as
    before, and on 2,000 charts of the scale corpus all but one other pair (it no longer passed), in 80 % of the
    time (bench/README.md)."""
    blur: float = 1.0
    """Gaussian sigma (px) both images are blurred by before the difference."""
    level: int = 40
    """Luma difference (0-255) above which a pixel differs."""
    seam: int = 2
    """Side of the opening that removes thin differences (seams of re-rasterised edges)."""
    join: int = 7
    """Side of the closing that joins nearby differences (the strokes of one number) into one region."""
    seam_width: int = 3
    """A region whose box is at most this many px across (an axis line a pixel off along its length) is a seam,
    not counted."""
    title_band: float = TITLE_BAND
    """Fraction of the height at the top left out (where a chart's title sits)."""
    edge: float = 0.015
    """Fraction of each other side left out (where the trim of the uniform borders ends)."""
    glyph_change: float = 0.04
    """A pair of images whose content boxes differ in size, in the images' own pixels, by this much (or more)
    and imply text of a size this much (or more) different from what the alignment gives
    (:func:`largest_region`'s ``native``) has each region over the limit looked at again as text of one size in
    both (:func:`_moved_text`)."""
    text_fill: float = 0.75
    """A region whose differing pixels fill more than this share of its box is a solid patch - a bar or wedge of
    other data - never text (the strokes of labels at another scale fill 0.2-0.63 of theirs on the tuning
    split; a bar 25 % lower, 0.92)."""
    text_piece: int = 48
    """Side (px) of the pieces a region is looked at in as moved text (:func:`_moved_text`)."""
    text_apart: int = 5
    """A region over the limit that its pieces do not explain as moved text is looked at once more as the
    objects of ink in it at least this many px apart, each moved on its own, all of them left with at most the
    limit (0: never): the join (:attr:`join`) puts an axis's title, drawn rotated along the axis and centred on it,
    and the tick label beside it in one region, and drawn again at another size the two move apart. A word's
    letters and a number's digits lie closer: a number changed is one object (split into its digits, each moved on
    its own, a table's number of other digits passed). Ours."""
    glyph_most: float = 1.3
    """The largest scale (or its inverse) of one image's text against the other's looked at so: a figure drawn
    again at most 30 % larger or smaller."""
    glyph_reach: float = 0.12
    """How far from what it is anchored to (fraction of the long side) a label may be: with text of one size,
    it lies that far times the scale difference from where the alignment puts it."""
    local_above: int = 40
    """Without a limit, the region above which a region may be explained as moved text (the filter's
    ``MAX_REGION``)."""
    alone_share: float = 0.3
    """A region holding at least this share of all the pixels in which the pair differs (after the masks, before
    the seam opening) is a change on its own - one table cell, one bar - and counts :attr:`alone_weight` times
    its pixels: a copy's differences (resampled edges, recompressed or re-rendered text) are spread over the
    image. On both tuning splits the largest region of every copy with one of 10 px or more held at most 0.18 of
    its pair's differing pixels, and each hard negative's 0.38-0.69 (bench/README.md, "seventh session")."""
    faint_level: int = 20
    """Difference above which a pixel differs where both images are faint around it (:attr:`faint_contrast`,
    :attr:`faint_structure`; not with colours mapped, whose map leaves shades of its own): a pale series moved,
    white text on a light box changed - other data that never reaches :attr:`level`, where no sharp edge can be
    resampled or recompressed into a difference that large. On the hard corpus's seeds 0, 2, 6 and 7 it kept 3
    hard negatives of 7 from being merged and lost no copy (bench/README.md, "ninth session")."""
    faint_one_size: int = 16
    """:attr:`faint_level` (where that is on: under :attr:`level`) between two lossless images whose content boxes
    are of one size (within :attr:`glyph_change`, as a template drawn again with other data is): nothing was
    resampled between them, so a fainter difference is a change. White "65 %" changed to "51 %" on a pale blue
    tile of an infographic differs by 19 levels of luma (31 of red, blurred to 20-22) and was merged at 20; its
    copies at another size or as a JPEG keep :attr:`faint_level` (at 16 for every pair two copies drawn at another
    size were lost on the hard corpus's studied seeds; for pairs of one size no decision changed there;
    bench/README.md, "fifteenth session")."""
    faint_contrast: int = 40
    """Luma range (max - min over 7 x 7 px, blurred) at or below which both images are faint at a pixel."""
    faint_structure: int = 8
    """Luma range (as :attr:`faint_contrast`) from which there is structure at a pixel (a pale line, a glyph), not
    one flat shade in both images."""
    stray_limit: int = 40
    """Pixels of stray ink (:func:`_stray_ink`) above which a pair that would pass differs: ink of one image with
    none of the other near it, in one region. So between two lossless images of one size (within
    :attr:`glyph_change`) both drawn in strokes (:attr:`ink_share`): a line of other data, a pixel or two wide,
    is taken out with the seams (:attr:`seam`) and leaves no region, where its ink is where the other image has
    none (on the hard corpus's seed 11, 5 of 7 charts of many lines with one line changed were merged). A copy
    resized, recompressed or drawn at another resolution (its strokes move by a pixel or two) is looked at with
    :attr:`stray_limit_resampled`. 0 turns this off."""
    stray_reach: int = 2
    """How near (px, on the grid) ink of the other image explains a pixel of ink (:func:`_stray_ink`)."""
    stray_limit_resampled: int = 40
    """As :attr:`stray_limit`, for a pair with a JPEG or of other sizes (resampled: its strokes move by a pixel or
    two), with ink explained within :attr:`stray_reach_resampled` px; with a JPEG, ink on luma (its chroma washes
    a pale yellow line out). On the hard corpus's ten studied seeds and 2,000 charts of the scale corpus, of the
    pairs so resampled that passed the second look, both drawn in strokes, the 332 true copies had stray regions
    of at most 28 px and in all at most 4.6 % of the ink; the other charts 72 px and more (a copy in a JPEG
    against its original's hard negative), or on a small copy's grid 21-33 px (markers) with 7-38 % of the ink
    (bench/README.md, "sixteenth session"). 0 turns this off."""
    stray_text: bool = True
    """Whether, in a pair of lossless images drawn at other sizes (:attr:`glyph_change`), a region of stray ink
    over the limit is left out when it is marks that moved as text does (:func:`_ink_moved`: a legend's keys and
    labels, an axis label - kept at their size in points and set off from the axes by pads in points, so a chart
    drawn again at another size has them several pixels from where the alignment puts them, farther than the
    stray reach), or when its text reads the same in both (:func:`zuhyo.construct.filter.text_reading.reads_alike`,
    as :attr:`read_text`; skipped without the ``[ocr]`` extra). A line of other data is no mark and reads as no
    text. Our addition (bench/README.md, "twenty-seventh session")."""
    stray_reach_resampled: int = 6
    """As :attr:`stray_reach`, for a resampled pair (:attr:`stray_limit_resampled`)."""
    stray_share_resampled: float = 0.1
    """The share of ``b``'s ink that a resampled pair's stray ink may reach in all, in regions of any size: four
    markers of a scatter of other data, each a region of ~24 px on a small copy's grid."""
    other_strokes_lined_up: int = 1000
    """The largest region (px) at the thumbnail verification's alignment under which a pair of charts drawn in
    strokes, of one size (within :attr:`glyph_change`), is taken as lined up there (an alignment a few pixels off
    doubles a chart's text and axes into regions of thousands), so that its stray ink
    (:attr:`other_strokes_share`) can fail it before ECC. 0 turns this off."""
    other_strokes_reach: int = 12
    """How near (px, on the grid) ink of the other image explains a pixel of ink for :attr:`other_strokes_share`:
    more than the few pixels a copy's strokes are off at the thumbnails' alignment."""
    other_strokes_share: float = 0.06
    """The share of ``b``'s ink that stray ink (ink of one image with no trace of the other's within
    :attr:`other_strokes_reach` px) may reach in a pair of one size lined up at the thumbnails' alignment
    (:attr:`other_strokes_lined_up`), both drawn in strokes (:attr:`ink_share`), before the pair fails without
    being aligned again: lines and markers of other data in a chart of one template, whose axes, grid and text
    line up. Such look-alikes took most of the second looks' time on the scale corpus. On the hard corpus's
    fourteen studied seeds the lined-up pairs of one size that pass the second look had at most 0.0024 of such ink
    (a chart drawn again at another size, left out, up to 0.058: its text keeps its size while the axes scale);
    of 800 second looks drawn from the scale corpus's 2,000 charts, 589 of the 773 that fail had more than 0.06
    (bench/README.md, "twentieth session")."""
    rule_width: int = 1
    """Stray ink (:func:`_stray_ink`) no more than this many pixels across is looked at as marks moved however
    much of its box it fills: the edge of a legend's frame, drawn 0.8 pt wide (a solid patch, no text, fills its
    box too)."""
    stray_trace: int = 16
    """How far from its backgrounds a pixel of the other image needs to be to explain ink near it: any trace of
    ink (a faint grid line resampled may fall under the ink's level in one image only)."""
    least_shown: float = 0.5
    """The least share of ``b``'s content an alignment may put inside ``a``'s: below it (ECC run off the image, a
    window that shows little of the other) the pair differs everywhere, not nowhere - what falls outside is not
    compared, so two different charts once scored a region of 0 so."""
    ink_share: float = 0.3
    """A pair whose second look finds a region over the limit is looked at once more as ink alone
    (:func:`_ink_of`: where each image's colour is far from its backgrounds, whatever the colour) when in both
    images less than this share of the ink is left after an erosion by 3 px (:func:`_thin`: lines, markers,
    text - not bars, wedges or cells): lines drawn again with another palette, whose colours all differ where
    their strokes agree. 0 turns this off. On the hard corpus's seeds 6-9 it merged 6 copies of many lines and
    error bars in another palette that were lost, and no planted hard negative more (bench/README.md, "tenth
    session")."""
    layout_gap: float = 0.01
    """Width (fraction of the long side) of a band with no ink that cuts a chart's layout into blocks
    (:func:`_layout_blocks`). 0 turns the look at blocks (:func:`_pieces`) off."""
    piece_size: float = 0.01
    """A pair whose content boxes differ in size, in the images' own pixels, by at least this much (across or
    down) and whose region is over the limit is looked at again with each layout block aligned on its own
    (:func:`_pieces`): a chart drawn again at another size. Two images of one size (a template drawn with other
    data) never are."""
    piece_least: float = 0.04
    """The least share of the grid a layout block's box covers to be aligned on its own (a lone label or legend
    entry has too little to align on)."""
    piece_reach: float = 0.05
    """How far (fraction of the long side) a block's own alignment may move its centre from the pair's."""
    piece_shear: float = 0.05
    """The most a block's own alignment may turn or shear it against the pair's (the off-diagonal terms of the
    one's linear part times the other's inverse): a re-render moves and scales the blocks of its layout; a thin
    block (a colour bar) leaves ECC a shear of a few hundredths free."""
    small_pieces: bool = True
    """Whether the look at layout blocks (:func:`_pieces`) moves a heading too small for ECC (a title over the
    large blocks) by its best shift: a table drawn again at another figure size keeps its rows' height in pixels
    while its title stays at the top, so the grids (each content box resized to one size) stretch them apart.
    Blocks among or under the large ones are never moved so (an infographic's progress bars are data: with
    them, two infographics of other data were merged on the hard corpus's seed 15)."""
    piece_match: float = 0.8
    """The least correlation (normalised, of the best shift) for a small block to be moved (:attr:`small_pieces`)."""
    shift_reach: int = 4
    """How far (px on the grid) a piece of a region over the limit (as :attr:`text_piece`) may be moved, at its
    own scale, to be explained, in a pair of images of other sizes (:attr:`glyph_change`): a chart drawn again at
    another resolution has its glyphs and legend entries placed on other pixels. Both images lossless only (a
    JPEG moves edges by its blocks). 0 turns this off. 4, not 3: a map's colour bar drawn again at another figure
    size had its end a band 5 px thick off, and on the hard corpus's ten studied seeds 4 merged four more copies
    drawn at another size (a map, an infographic, a log-log chart, horizontal bars) and no other pair
    (bench/README.md, "fifteenth session")."""
    edge_piece: int = 16
    """The side (px on the grid) of the finer pieces a region over the limit is looked at in once more, in a pair
    of images of other sizes (as :attr:`shift_reach`): each piece moved by its best shift within
    :attr:`edge_reach`, all of them left with no more than the limit (:func:`_edges_moved`). A chart drawn again at
    another size snaps each edge of a bar to its own pixels, so a bar's two sides can be off by other amounts, and a
    piece as wide as the bar cannot move both. Only a region at least twice this across and down: a line of text
    (a table's changed cell, a column of its labels) is looked at as text, never in such pieces - moved piece by
    piece, a changed number was left with under the limit. 0 turns this off. Our addition (issue 22,
    twenty-eighth session)."""
    edge_reach: int = 1
    """How far (px on the grid) each piece of :attr:`edge_piece` may be moved: a snapped edge is off by a pixel (a
    bar's side two pixels off is a pixel off once the pair is aligned). At 2 a pie's hard negative - one slice a
    little larger, its edge turned by a degree - passed against a copy drawn again at another DPI: each piece moved
    on its own follows a line turned a little."""
    alone_weight: int = 2
    """How many times a region on its own (:attr:`alone_share`) counts its pixels: against the filter's limit of
    40, one of more than 20 px is other data."""
    table_cells: bool = True
    """Whether a pair of lossless images whose content boxes differ in size at all (a table drawn again 0.85-1.2
    times as wide and as high can come within :attr:`glyph_change`; a template drawn with other data keeps its
    box) that the looks above leave over the limit is compared once more as two ruled tables, cell by cell
    (:func:`zuhyo.construct.filter.table_cells.cell_difference`): a table drawn again at another size stretches
    its columns, not its text, so each cell's text moves by its own amount. It passes where the text of no cell
    differs in more than :attr:`zuhyo.construct.filter.table_cells.TableCheck.most` pixels (returned as its
    region), whatever ink the other looks found astray."""
    read_text: bool = True
    """Whether a pair of lossless images drawn at other sizes (:attr:`glyph_change`) that the looks above leave
    over the limit, by at most :attr:`read_up_to`, is looked at once more with each region over the limit read as
    text in both (:func:`zuhyo.construct.filter.text_reading.reads_alike`, RapidOCR: the ``[ocr]`` extra; without
    it this look is skipped): a region whose lines read alike in both is a label drawn again, not other data. Our
    addition (bench/README.md, "twenty-sixth session")."""
    read_up_to: int = 600
    """The largest region (as the looks count it) of a pair read as text (:attr:`read_text`): the labels of copies
    drawn again at another DPI left 68-158 px on the hard corpus's seeds; a bar of other height, hundreds to
    thousands, fails at its first reading (no text) but costs one."""
    tick_scale: bool = True
    """Whether a region read as text (:attr:`read_text`) that does not read alike is also explained as an axis's
    tick labels chosen anew on the same scale (:func:`zuhyo.construct.filter.text_reading.same_scale`): drawn
    again at another figure size, an axis labelled 0, 2, 4, 6 is labelled 0, 2.5, 5, 7.5 (the locator picks its
    step by the axis's length), and a small multiple's every panel so. Our addition (bench/README.md,
    "thirty-first session")."""


LOSSY_FORMATS = ("JPEG", "MPO", "WEBP")
"""Formats whose encoders may move faint shades (WebP counted so: it may be lossy)."""


def _rgb(data: bytes, max_side: int) -> tuple[np.ndarray, tuple[int, int], bool]:
    """(h, w, 3) uint8: the image composited on white (a JPEG decoded at a reduced scale near ``max_side``), the
    image's own (width, height), and whether its format is lossy (:data:`LOSSY_FORMATS`)."""
    import numpy as np

    im, size = decode_untrusted_fast(data, DEFAULT_MAX_PIXELS, not_image="not a readable image",
                                     draft_side=max_side)
    lossy = not isinstance(im, PngPixels) and im.format in LOSSY_FORMATS
    if isinstance(im, PngPixels):
        rgba = im.rgba
        if im.opaque:
            import cv2

            return np.asarray(cv2.cvtColor(rgba, cv2.COLOR_RGBA2RGB)), size, lossy
    elif im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = np.asarray(im.convert("RGBA"))
    else:
        return np.asarray(im if im.mode == "RGB" else im.convert("RGB")), size, lossy
    alpha = rgba[:, :, 3:4].astype(np.uint16)
    return np.minimum(rgba[:, :, :3] * alpha // 255 + (255 - alpha), 255).astype(np.uint8), size, lossy


@dataclass(frozen=True)
class Content:
    """An image's content box as the second look compares it (:func:`content`)."""

    pixels: np.ndarray
    """(h, w, 3) uint8 RGB, its long side at most :attr:`RegionCheck.max_side`."""
    native: tuple[float, float]
    """(width, height) of the box in the image's own pixels."""
    lossy: bool = False
    """The image's format is lossy (a JPEG): its faint shades are not to be trusted (:attr:`RegionCheck.faint_level`
    is not used for a pair with such an image)."""


def content_pixels(data: bytes, check: RegionCheck = RegionCheck()) -> np.ndarray:
    """(h, w, 3) uint8 RGB: the image's content box (the box the thumbnail shows), its long side at most
    ``check.max_side``."""
    return content(data, check).pixels


def content(data: bytes, check: RegionCheck = RegionCheck()) -> Content:
    """The image's content box (the box the thumbnail shows): its pixels, its long side at most
    ``check.max_side``, and its size in the image's own pixels."""
    import cv2
    import numpy as np

    px, (full_w, full_h), lossy = _rgb(data, check.max_side)
    h, w = px.shape[:2]
    top, bottom, left, right = figure_box(cv2.resize(px, (THUMB, THUMB), interpolation=cv2.INTER_AREA))
    sy, sx = h / THUMB, w / THUMB
    box = px[round(top * sy):max(round(bottom * sy), round(top * sy) + 1),
             round(left * sx):max(round(right * sx), round(left * sx) + 1)]
    box = np.ascontiguousarray(box)
    native = (box.shape[1] * full_w / w, box.shape[0] * full_h / h)  # a JPEG may be decoded at a reduced scale
    scale = check.max_side / max(box.shape[:2])
    if scale < 1:
        box = cv2.resize(box, (max(1, round(box.shape[1] * scale)), max(1, round(box.shape[0] * scale))),
                         interpolation=cv2.INTER_AREA)
    return Content(np.asarray(box), native, lossy)


def _grid_affine(affine: np.ndarray, width: int, height: int, thumb: int) -> np.ndarray:
    """The thumbnail verification's alignment (``affine``, 2x3 from ``b``'s ``thumb`` px thumbnail to ``a``'s,
    pixel centres) as a 2x3 affine from ``b``'s grid to ``a``'s, both ``width`` x ``height`` (both thumbnails
    cover [0, 1] of their content across and down)."""
    from zuhyo.construct.filter.alignment import rescaled_affine

    return rescaled_affine(affine, width / thumb, height / thumb)


@dataclass(frozen=True)
class _Grids:
    """Both images of a pair on one grid (:func:`_grids`), blurred once for every alignment tried.
    Blurred once per pair (not once per alignment tried) and compared with OpenCV's operations, not numpy's
    (whose reductions over a last axis of 3 are several times slower)."""

    ga: np.ndarray
    """``a``'s luma (``height`` x ``width``, uint8), for the alignment."""
    gb: np.ndarray
    """``b``'s luma."""
    ba: np.ndarray
    """``ga`` blurred by ``blur`` (blurred before it is warped: on one grid the affine is near a shift, so
    the two orders agree)."""
    bb: np.ndarray
    """``gb`` blurred by ``blur``."""
    ca: np.ndarray | None
    """``a``'s colour blurred by twice ``blur``, or ``None`` when compared on luma."""
    cb: np.ndarray | None
    """``b``'s colour blurred by twice ``blur``."""
    known: np.ndarray | None = None
    """(height x width uint8, 1 or 0) where ``a``'s pixels are known, or ``None`` for everywhere: with its
    colours mapped (:func:`_recoloured_like`), the pixels of colours the map could not fit."""
    ra: np.ndarray | None = None
    """``a``'s colour on the grid, not blurred (uint8), or ``None`` when compared on luma: where its layout's
    blocks are (:func:`_layout_blocks`)."""
    rb: np.ndarray | None = None
    """``b``'s colour on the grid, not blurred."""

    @functools.cached_property
    def contrast_b(self) -> np.ndarray:
        """``bb``'s :func:`_local_contrast`, once for every alignment tried."""
        return _local_contrast(self.bb)


def _grid_size(pa: np.ndarray, pb: np.ndarray) -> tuple[int, int]:
    """(width, height) of the grid both are compared on: ``pb``'s shape, its long side the smaller of the two."""
    lb_shape = pb.shape[:2]
    f = min(max(pa.shape[:2]), max(lb_shape)) / max(lb_shape)
    return max(16, round(lb_shape[1] * f)), max(16, round(lb_shape[0] * f))


def _grids(pa: np.ndarray, pb: np.ndarray, check: RegionCheck, grey: bool,
           known: np.ndarray | None = None) -> _Grids:
    """Both on the grid of the smaller (the coarser image sets the detail both can show); ``known`` (``pa``'s
    shape, uint8 1 or 0; see :attr:`_Grids.known`) on the grid too, a grid pixel known only where all of
    ``pa``'s under it are. ``pa`` and ``pb`` are RGB, or (compared on luma) one plane each."""
    import cv2
    import numpy as np

    size = _grid_size(pa, pb)
    # ITU-R 601 before the resize, as tuned on
    ga = cv2.resize(grey_plane(pa), size, interpolation=cv2.INTER_AREA)
    gb = cv2.resize(grey_plane(pb), size, interpolation=cv2.INTER_AREA)
    ca = cb = ra = rb = None
    if not grey:
        ra = np.asarray(cv2.resize(pa, size, interpolation=cv2.INTER_AREA))
        rb = np.asarray(cv2.resize(pb, size, interpolation=cv2.INTER_AREA))
        ca = cv2.GaussianBlur(_fine(ra), (0, 0), 2 * check.blur)
        cb = cv2.GaussianBlur(_fine(rb), (0, 0), 2 * check.blur)
    on_grid = None
    if known is not None:
        on_grid = (cv2.resize(known.astype(np.float32), size, interpolation=cv2.INTER_AREA) > 0.999).view(np.uint8)
    return _Grids(ga, gb, cv2.GaussianBlur(_fine(ga), (0, 0), check.blur),
                  cv2.GaussianBlur(_fine(gb), (0, 0), check.blur), ca, cb, on_grid, ra, rb)


def _fine(px: np.ndarray) -> np.ndarray:
    """``px`` as float32: blurred levels are compared unrounded (uint8 rounding moved regions near
    :attr:`RegionCheck.level` by tens of pixels on the tuning split)."""
    import numpy as np

    return px.astype(np.float32)


def _refined(g: _Grids, affine: np.ndarray, side: int, iterations: int) -> np.ndarray:
    """``affine`` refined by OpenCV's ECC on ``side`` px versions of both lumas (``iterations`` at most)."""
    refined = _ecc(g.gb, g.ga, affine, side, iterations)
    return affine if refined is None else refined  # no convergence (a flat image, say): the window as it is


def _ecc(template: np.ndarray, image: np.ndarray, affine: np.ndarray, side: int, iterations: int
         ) -> np.ndarray | None:
    """``affine`` (``template``'s pixels to ``image``'s, two lumas) refined by OpenCV's ECC on both shrunk by
    one factor so that ``template``'s long side is at most ``side`` (``iterations`` at most); ``None`` when ECC
    does not converge."""
    import cv2
    import numpy as np

    from zuhyo.construct.filter.alignment import rescaled_affine

    height, width = template.shape
    c = min(1.0, side / max(width, height))

    def small(px: np.ndarray) -> np.ndarray:
        h, w = px.shape
        size = (max(8, round(w * c)), max(8, round(h * c)))
        return np.asarray(cv2.GaussianBlur(cv2.resize(px, size, interpolation=cv2.INTER_AREA).astype(np.float32),
                                           (3, 3), 0))

    st, si = small(template), small(image)
    try:
        whole = np.full(si.shape, 255, dtype=np.uint8)  # the input's mask
        _, found = cv2.findTransformECC(st, si, rescaled_affine(affine, c), cv2.MOTION_AFFINE,
                                        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iterations, 1e-5), whole, 3)
        return rescaled_affine(found, 1 / c)
    except cv2.error:
        return None


Piece = tuple[tuple[int, int, int, int], "np.ndarray"]
"""A layout block of ``b``'s grid (x, y, w, h) and its own alignment (2x3, ``b``'s grid to ``a``'s)."""

Explained = Callable[[tuple[int, int, int, int], "np.ndarray"], bool]
"""Whether a region (its box x, y, w, h and its mask on the grid) is what a copy shows (:func:`_stray_ink`)."""


def _warp(a: np.ndarray, affine: np.ndarray, size: tuple[int, int], pieces: Sequence[Piece] = (),
          nearest: bool = False, border: int | None = None) -> np.ndarray:
    """``a`` warped onto ``b``'s grid (``size``) by ``affine``, and within each of ``pieces``' boxes by that
    piece's own alignment (:func:`_pieces`)."""
    import cv2
    import numpy as np

    flags = (cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR) | cv2.WARP_INVERSE_MAP
    mode, value = (cv2.BORDER_REPLICATE, 0) if border is None else (cv2.BORDER_CONSTANT, border)
    out = np.asarray(cv2.warpAffine(a, affine, size, flags=flags, borderMode=mode, borderValue=value))
    for (x, y, w, h), own in pieces:
        out[y:y + h, x:x + w] = cv2.warpAffine(a, _from_corner(own, x, y), (w, h), flags=flags, borderMode=mode,
                                               borderValue=value)
    return out


def _from_corner(affine: np.ndarray, x: float, y: float) -> np.ndarray:
    """(2x3 float64) ``affine`` taking as its pixel (0, 0) the pixel (``x``, ``y``) of the grid it maps from: a
    box's own alignment from the grid's (its inverse with ``-x``, ``-y``)."""
    import numpy as np

    out = np.asarray(affine, dtype=np.float64).copy()
    out[:, 2] += out[:, :2] @ np.array([x, y], dtype=np.float64)
    return out


def _region(g: _Grids, affine: np.ndarray, check: RegionCheck, text: tuple[float, float] | None = None,
            limit: int = 0, pieces: Sequence[Piece] = (), shift: int = 0, read: bool = False) -> int:
    """The largest compact region in which ``b`` differs from ``a`` warped by ``affine`` (see the module doc),
    within each of ``pieces`` by its own alignment. With ``text`` (the
    scale of ``a``'s text against ``b``'s under ``affine``, across and down) a region over ``limit`` that
    :func:`_moved_text` explains as the same text is not counted; with ``read``, nor is one that reads as the same
    text in both (:func:`zuhyo.construct.filter.text_reading.reads_alike`)."""
    import cv2
    import numpy as np

    height, width = g.gb.shape
    if _shown_share(affine, width, height) < check.least_shown:
        return height * width  # the alignment ran off ``a``: nothing it shows can vouch for the pair
    known = np.ones((height, width), np.uint8) if g.known is None else g.known
    inside = _shown(known, affine, pieces)

    def warped(a: np.ndarray) -> np.ndarray:
        return _warp(a, affine, (width, height), pieces)

    colour = None if g.ca is None or g.cb is None else (warped(g.ca), g.cb)
    over, _ = _over(warped(g.ba), g.bb, colour, check, faint=g.known is None, contrast_b=g.contrast_b)
    differs = _compared(over.view(np.uint8), inside, check)
    spread = cv2.countNonZero(differs)  # all the pair's differences, before the seams are taken out
    differs = cv2.morphologyEx(differs, cv2.MORPH_OPEN, np.ones((check.seam, check.seam), np.uint8))
    if not cv2.countNonZero(differs):
        return 0
    joined = cv2.morphologyEx(differs, cv2.MORPH_CLOSE, np.ones((check.join, check.join), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    pixels = np.bincount(labels[differs > 0], minlength=count)[1:]
    # A seam along a long edge (an axis line a pixel off at one end) is thin however many pixels it has; the
    # strokes of a changed number, thin too, make a box several pixels across in both directions.
    across = np.minimum(stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT])
    compact = across > check.seam_width
    if not compact.any():
        return 0
    # One changed cell is most of what differs; a copy's largest region is a small part of a spread of them.
    counted = np.where(pixels >= check.alone_share * spread, pixels * check.alone_weight, pixels)
    if text is None and not shift and not read:
        return int(counted[compact].max())
    reads_alike = _text_reader(g, affine, pieces, check.tick_scale)

    def region_of(k: int) -> np.ndarray:
        return np.asarray(cv2.bitwise_and(differs, (labels == k + 1).view(np.uint8)))

    for k in np.argsort(-pixels):
        if not compact[k]:
            continue
        if counted[k] <= limit:
            return int(counted[k])
        x, y, w, h = (int(v) for v in stats[k + 1, :4])
        # a solid patch (a bar of another height) is not strokes; a band no thicker than a shift is an edge moved
        if pixels[k] > check.text_fill * w * h and not (shift and min(w, h) <= shift + 1):
            if read and reads_alike((x, y, w, h), region_of(k)):
                continue
            return int(counted[k])
        # A long region (the labels along an axis: their places scale with the axes, their glyphs do not) is
        # looked at piece by piece, each about its own centre.
        parts = _tiles((x, y, w, h), check.text_piece)
        own = _piece_at(pieces, affine, x + w / 2, y + h / 2)
        mine = region_of(k)
        moved = all((text is not None and _moved_text(g, own, part, text, check, limit, mine))
                    or (shift and _moved_text(g, own, part, (1.0, 1.0), check, limit, mine, reach=shift))
                    for part in parts)
        if not moved and text is not None and check.text_apart > 0:
            # labels that the join put in one region each move on their own: an axis's title beside a tick label
            moved = _apart_moved(g, own, (x, y, w, h), mine, text, check, limit)
        if not moved and shift and check.edge_piece and min(w, h) >= 2 * check.edge_piece:
            moved = _edges_moved(g, own, (x, y, w, h), mine, check, limit)
        if not moved:
            if read and reads_alike((x, y, w, h), mine):
                continue
            return int(counted[k])
    return 0


def _edges_moved(g: _Grids, affine: np.ndarray, box: tuple[int, int, int, int], region: np.ndarray,
                  check: RegionCheck, limit: int) -> bool:
    """Whether the :attr:`RegionCheck.edge_piece` px pieces of a region (``box``, ``region`` its mask), each
    ``a``'s moved by its best shift within :attr:`RegionCheck.edge_reach` px (:func:`_moved_off` at one scale),
    leave no more than ``limit`` pixels differing in all: the edges of a bar snapped to other pixels, each by its
    own amount."""
    return _parts_moved(g, affine, _tiles(box, check.edge_piece), (1.0, 1.0), check, region, limit,
                        reach=check.edge_reach)


def _parts_moved(g: _Grids, affine: np.ndarray, parts: Sequence[tuple[int, int, int, int]],
                 text: tuple[float, float], check: RegionCheck, region: np.ndarray, limit: int, reach: int = 0
                 ) -> bool:
    """Whether ``parts`` (boxes on the grid), each ``a``'s moved on its own (:func:`_moved_off` at ``text``'s
    scale, within ``reach``), leave no more than ``limit`` pixels differing in all."""
    left = 0
    for part in parts:
        left += _moved_off(g, affine, part, text, check, region, reach)
        if left > limit:
            return False
    return True


def _apart_moved(g: _Grids, affine: np.ndarray, box: tuple[int, int, int, int], region: np.ndarray,
                 text: tuple[float, float], check: RegionCheck, limit: int) -> bool:
    """Whether the parts of a region (``box``, ``region`` its mask) at least :attr:`RegionCheck.text_apart` px
    apart (:func:`_apart`), two or more and none of them a solid patch (:attr:`RegionCheck.text_fill`), each
    ``a``'s text at ``text``'s scale moved on its own (:func:`_parts_moved`), leave no more than ``limit`` pixels
    differing in all."""
    import cv2
    import numpy as np

    x, y, w, h = box
    ink = (g.gb[y:y + h, x:x + w] < 255 - check.level).view(np.uint8)  # b's ink: luma ``level`` under white
    parts = _apart(ink, region[y:y + h, x:x + w], check.text_apart)
    if len(parts) < 2:
        return False
    if any(cv2.countNonZero(ink[py:py + ph, px:px + pw]) > check.text_fill * pw * ph for px, py, pw, ph in parts):
        return False  # a solid patch (a bar's end) is not a label, however it moves
    return _parts_moved(g, affine, [(x + px, y + py, pw, ph) for px, py, pw, ph in parts], text, check, region,
                        limit)


def _apart(ink: np.ndarray, region: np.ndarray, gap: int) -> list[tuple[int, int, int, int]]:
    """The boxes (x, y, w, h) of the objects of ``ink`` (a mask, 1 or 0) that lie at least ``gap`` px apart and
    hold some of ``region`` (a mask of its size): separate labels, where a word's letters and a number's digits
    are one object."""
    import cv2
    import numpy as np

    near = cv2.dilate(ink, np.ones((gap, gap), np.uint8))
    _, labels, stats, _ = cv2.connectedComponentsWithStats(near, connectivity=8)
    held = np.unique(labels[region > 0])
    half = gap // 2
    return [(int(sx) + half, int(sy) + half, max(1, int(sw) - 2 * half), max(1, int(sh) - 2 * half))
            for k, (sx, sy, sw, sh, _) in enumerate(stats) if k > 0 and k in held]


def _tiles(box: tuple[int, int, int, int], piece: int) -> list[tuple[int, int, int, int]]:
    """``box`` (x, y, w, h) cut into ``piece`` px squares, row by row (those at its right and bottom smaller)."""
    x, y, w, h = box
    return [(px, py, min(piece, x + w - px), min(piece, y + h - py))
            for py in range(y, y + h, piece) for px in range(x, x + w, piece)]


def _text_reader(g: _Grids, affine: np.ndarray, pieces: Sequence[Piece], ticks: bool) -> Explained:
    """Whether a region (its box and mask on the grid) reads as the same text in both images
    (:func:`zuhyo.construct.filter.text_reading.reads_alike`), or with ``ticks`` as one axis's tick labels on the
    same scale (:func:`zuhyo.construct.filter.text_reading.same_scale`), ``a``'s luma warped by ``affine`` and
    ``pieces`` once, when the first region is read."""
    lumas: list[np.ndarray] = []

    def reads(box: tuple[int, int, int, int], region: np.ndarray) -> bool:
        from zuhyo.construct.filter.text_reading import reads_alike, same_scale

        if not lumas:
            height, width = g.gb.shape
            lumas.append(_warp(g.ga, affine, (width, height), pieces))
        return (reads_alike(lumas[0], g.gb, box, region)
                or (ticks and same_scale(lumas[0], g.gb, box, region)))

    return reads


def _shown(known: np.ndarray, affine: np.ndarray, pieces: Sequence[Piece] = ()) -> np.ndarray:
    """``known`` (a's grid, uint8 1 or 0) warped onto ``b``'s grid by ``affine`` and ``pieces`` (nearest, 0 off
    ``a``), less where a moved block was (:func:`_vacated`): where what ``a`` shows can be compared."""
    import cv2

    height, width = known.shape
    inside = _warp(known, affine, (width, height), pieces, nearest=True, border=0)
    if pieces:
        inside = cv2.bitwise_and(inside, cv2.bitwise_not(_vacated(pieces, affine, width, height)))
    return inside


def _vacated(pieces: Sequence[Piece], affine: np.ndarray, width: int, height: int) -> np.ndarray:
    """(height x width uint8, 255 or 0) where, outside ``pieces``' boxes, ``affine`` shows what ``a`` has within a
    piece's own counterpart (its box under its own alignment): a block that moved apart, whose content the pair's
    alignment puts where ``b``'s block is not - a colour bar's end over the page."""
    import cv2
    import numpy as np

    moved = np.zeros((height, width), np.uint8)
    for (x, y, w, h), own in pieces:
        right, bottom = x + w - 1, y + h - 1  # the last pixels' centres: the polygon is filled with its edges
        corners = np.asarray(own, dtype=np.float64) @ np.array([[x, right, right, x], [y, y, bottom, bottom],
                                                                [1.0, 1.0, 1.0, 1.0]])
        cv2.fillConvexPoly(moved, np.rint(corners.T).astype(np.int32), 255)
    out = np.asarray(cv2.warpAffine(moved, affine, (width, height), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=0))
    for (x, y, w, h), _ in pieces:
        out[y:y + h, x:x + w] = 0
    return out


def _local_contrast(px: np.ndarray) -> np.ndarray:
    """Range (max - min) of ``px`` (a blurred luma) over 7 x 7 px around each pixel: where it is faint
    (:func:`_over`)."""
    import cv2
    import numpy as np

    square = np.ones((7, 7), np.uint8)
    return np.asarray(cv2.subtract(cv2.dilate(px, square), cv2.erode(px, square)))


def _over(wa: np.ndarray, bb: np.ndarray, colour: tuple[np.ndarray, np.ndarray] | None, check: RegionCheck,
          faint: bool, contrast_b: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Where ``bb`` differs from ``wa`` (luma, ``a`` warped onto ``b``'s grid; with ``colour``, the two images'
    colours too): above :attr:`RegionCheck.level`, or with ``faint`` above :attr:`RegionCheck.faint_level` where
    both are faint around the pixel (see :attr:`RegionCheck.faint_level`); and where above the level alone.
    ``contrast_b``: ``bb``'s :func:`_local_contrast` where already found (it does not change with the
    alignment)."""
    import cv2
    import numpy as np

    diff = cv2.absdiff(wa, bb)
    if colour is not None:
        # Colour too (a colour map can give two values one luma), blurred by twice as much: JPEG keeps colour at
        # half the resolution, so a copy's colours bleed across edges by a pixel or two.
        r, gr, bl = cv2.split(cv2.absdiff(*colour))
        diff = cv2.max(diff, cv2.max(cv2.max(r, gr), bl))
    strong = np.asarray(diff > check.level)
    over = strong.copy()
    if faint and check.faint_level < check.level:
        # Where neither image has a sharp edge nearby, a smaller difference is a change, not resampling. Not with
        # colours mapped (``faint`` false): a map fitted on bins leaves shades of its own.
        contrast = cv2.max(_local_contrast(wa), _local_contrast(bb) if contrast_b is None else contrast_b)
        # ... and some faint structure there (a line, a glyph): two flat areas of other shades are a palette
        # drawn a shade lighter, not other data
        structure = (contrast <= check.faint_contrast) & (contrast >= check.faint_structure)
        over |= (diff > check.faint_level) & structure
    return over, strong


def _piece_at(pieces: Sequence[Piece], affine: np.ndarray, x: float, y: float) -> np.ndarray:
    """The alignment at (``x``, ``y``) on ``b``'s grid: that of the piece whose box holds it, else ``affine``."""
    for (px, py, pw, ph), own in pieces:
        if px <= x < px + pw and py <= y < py + ph:
            return own
    return affine


def _layout_blocks(grey: np.ndarray, check: RegionCheck, colour: np.ndarray | None = None
                   ) -> list[tuple[int, int, int, int]]:
    """Boxes (x, y, w, h) of the blocks of a chart's layout on ``grey`` (a luma grid), cut apart again and again
    at the widest band across or down with no ink (more than 24 levels from the commonest luma along the edge;
    with ``colour``, the grid's colour, in some channel from the commonest colour) at least
    :attr:`RegionCheck.layout_gap` of the long side wide - a recursive XY cut (Nagy and Seth, 1984): the title,
    each panel with its labels, a colour bar, a legend beside the axes. By colour, a colour bar's pale end on a
    cream page (of about the page's luma) is part of the bar's block."""
    import numpy as np

    height, width = grey.shape
    px = grey[:, :, None] if colour is None else colour
    rim = np.concatenate([px[0], px[-1], px[:, 0], px[:, -1]])
    page = np.unique(rim, axis=0, return_counts=True)  # the page round the panels, not a large face
    background = page[0][np.argmax(page[1])].astype(np.int16)
    ink = (np.abs(px.astype(np.int16) - background) > 24).any(axis=2)
    gap = max(2, round(check.layout_gap * max(height, width)))
    blocks: list[tuple[int, int, int, int]] = []

    def widest_blank(used: np.ndarray) -> tuple[int, int]:
        """(start, length) of the widest run of False in ``used`` (True at both ends)."""
        edges = np.flatnonzero(np.diff(used.astype(np.int8)))  # the last index before each change
        starts, ends = edges[0::2] + 1, edges[1::2] + 1  # True -> False, then False -> True, in turn
        if not len(starts):
            return 0, 0
        k = int(np.argmax(ends - starts))
        return int(starts[k]), int(ends[k] - starts[k])

    def cut(x0: int, y0: int, x1: int, y1: int, depth: int) -> None:
        part = ink[y0:y1, x0:x1]
        rows, cols = np.asarray(part.any(axis=1)), np.asarray(part.any(axis=0))
        if not rows.any():
            return
        ys, xs = np.flatnonzero(rows), np.flatnonzero(cols)
        y0, y1, x0, x1 = y0 + int(ys[0]), y0 + int(ys[-1]) + 1, x0 + int(xs[0]), x0 + int(xs[-1]) + 1
        if depth < 8:
            across = widest_blank(rows[ys[0]:ys[-1] + 1])
            down = widest_blank(cols[xs[0]:xs[-1] + 1])
            if max(across[1], down[1]) >= gap:
                if across[1] >= down[1]:
                    cut(x0, y0, x1, y0 + across[0], depth + 1)
                    cut(x0, y0 + across[0], x1, y1, depth + 1)
                else:
                    cut(x0, y0, x0 + down[0], y1, depth + 1)
                    cut(x0 + down[0], y0, x1, y1, depth + 1)
                return
        blocks.append((x0, y0, x1 - x0, y1 - y0))

    cut(0, 0, width, height, 0)
    return blocks


def _pieces(g: _Grids, affine: np.ndarray, check: RegionCheck) -> list[Piece]:
    """``b``'s layout blocks (:func:`_layout_blocks`), each with its own alignment. A block of at least
    :attr:`RegionCheck.piece_least` of its grid: ``affine`` refined by ECC on the block alone, kept where it moves
    the block's centre by at most :attr:`RegionCheck.piece_reach` of the long side, scales it by at most
    :attr:`RegionCheck.glyph_most` and turns or shears it by at most :attr:`RegionCheck.piece_shear` against
    ``affine``; ECC starts from the other image's block it overlaps (:func:`_counterpart`), box on box, where
    there is one. With :attr:`RegionCheck.small_pieces`, a smaller one over all the large blocks (a title: too
    little for ECC): ``affine`` moved by the best shift within that reach (template matching), kept where it
    correlates by :attr:`RegionCheck.piece_match` or more and lies more than :attr:`RegionCheck.shift_reach` px
    from where each large block's own alignment puts it. None unless a large block and another are so aligned.
    A chart drawn again at another figure size moves its colour bar, legend, title and panels apart from one
    another: no one affine lines them all up."""
    import cv2
    import numpy as np

    height, width = g.gb.shape
    least = check.piece_least * width * height  # a large block's area, in either image
    blocks = [(x, y, w, h) for x, y, w, h in _layout_blocks(g.gb, check, g.rb) if min(w, h) >= 8]
    large = [w * h >= least for _, _, w, h in blocks]
    if sum(large) < (1 if check.small_pieces else 2) or len(blocks) < 2:  # most charts: a title over one panel
        return []
    reach = check.piece_reach * max(width, height)
    whole = affine.astype(np.float64)
    # A heading over the large blocks (a title: anchored to the figure's top, not to the axes) moved by its best
    # shift where it correlates well (and, below, has moved apart from every large block's alignment by more than
    # a re-render's snapping, RegionCheck.shift_reach); not the small blocks among or under the large ones (an
    # infographic's progress bars: data). By correlation: a squared difference prefers a blank window to the same
    # text a pixel off. Found first: with one large block and no heading so found, no ECC is needed.
    moved_heads: list[Piece] = []
    if check.small_pieces:
        top = min(y for (_, y, _, _), ecc in zip(blocks, large, strict=True) if ecc)
        r = int(np.ceil(reach))
        for x, y, w, h in (box for box, ecc in zip(blocks, large, strict=True) if not ecc and box[1] + box[3] <= top):
            search = cv2.warpAffine(g.ga, _from_corner(whole, x - r, y - r), (w + 2 * r, h + 2 * r),
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
            match = cv2.matchTemplate(search, np.ascontiguousarray(g.gb[y:y + h, x:x + w]), cv2.TM_CCOEFF_NORMED)
            _, best, _, (dx, dy) = cv2.minMaxLoc(match)
            if best >= check.piece_match:
                moved_heads.append(((x, y, w, h), _from_corner(whole, dx - r, dy - r)))
    if sum(large) < 2 and not moved_heads:
        return []
    out: list[Piece] = []
    a_blocks = [(x, y, w, h) for x, y, w, h in _layout_blocks(g.ga, check, g.ra) if w * h >= least]
    for (x, y, w, h), ecc in zip(blocks, large, strict=True):
        if not ecc:
            continue
        start = _from_corner(whole, x, y)
        if (box := _counterpart((x, y, w, h), a_blocks, whole, check)) is not None:
            # the other image's block of this layout, box on box: a table's rows, lined up from the pair's
            # alignment, may stay a row off (its title moved apart from them)
            ax, ay, aw, ah = box
            start = np.array([[aw / w, 0.0, ax], [0.0, ah / h, ay]])
        found = _ecc(np.ascontiguousarray(g.gb[y:y + h, x:x + w]), g.ga, start.astype(np.float32),
                     check.align_side, check.ecc_iterations)
        if found is None:
            continue
        own = _from_corner(found, -x, -y)  # back to b's grid
        centre = np.array([x + w / 2, y + h / 2, 1.0])
        moved = float(np.hypot(*(own @ centre - whole @ centre)))
        relative = own[:, :2] @ np.linalg.inv(whole[:, :2])  # the block's own against the pair's
        scaled = all(1 / check.glyph_most <= relative[k, k] <= check.glyph_most for k in (0, 1))
        if moved <= reach and scaled and max(abs(relative[0, 1]), abs(relative[1, 0])) <= check.piece_shear:
            out.append(((x, y, w, h), own.astype(np.float32)))
    aligned = len(out)
    for (x, y, w, h), own in moved_heads:
        centre = np.array([x + w / 2, y + h / 2, 1.0])
        if aligned and min(float(np.hypot(*(own @ centre - other.astype(np.float64) @ centre)))
                           for _, other in out[:aligned]) > check.shift_reach:
            out.append(((x, y, w, h), own.astype(np.float32)))
    # One block aligned on its own, nothing else, is the pair aligned again without its title: nothing moved apart
    return out if aligned and len(out) >= 2 else []


def _counterpart(box: tuple[int, int, int, int], blocks: Sequence[tuple[int, int, int, int]], affine: np.ndarray,
                 check: RegionCheck) -> tuple[int, int, int, int] | None:
    """Of ``a``'s layout blocks, the one ``b``'s ``box`` most overlaps under ``affine`` (by intersection over
    union, at least a half), its sides within :attr:`RegionCheck.glyph_most` of the box's; ``None`` if none."""
    import numpy as np

    x, y, w, h = box
    corners = np.asarray(affine, dtype=np.float64) @ np.array([[x, x + w], [y, y + h], [1.0, 1.0]])
    (mx0, mx1), (my0, my1) = np.sort(corners[0]), np.sort(corners[1])
    best, chosen = 0.5, None
    for bx, by, bw, bh in blocks:
        if not all(1 / check.glyph_most <= r <= check.glyph_most for r in (bw / w, bh / h)):
            continue
        ix = max(0.0, min(mx1, bx + bw) - max(mx0, bx))
        iy = max(0.0, min(my1, by + bh) - max(my0, by))
        union = (mx1 - mx0) * (my1 - my0) + bw * bh - ix * iy
        if union > 0 and ix * iy / union > best:
            best, chosen = ix * iy / union, (bx, by, bw, bh)
    return chosen


def _compared(mask: np.ndarray, inside: np.ndarray, check: RegionCheck) -> np.ndarray:
    """``mask`` (uint8, on the grid) where it is compared: well inside what the alignment shows of ``a``
    (``inside`` eroded by 5 px), below the title band, and off the content box's own edge (an axis label cut by
    the trim a pixel off, the end of a crop)."""
    import cv2
    import numpy as np

    height, width = mask.shape
    out = np.asarray(cv2.bitwise_and(mask, cv2.erode(inside, np.ones((5, 5), np.uint8))))
    out[:round(check.title_band * height)] = 0
    ey, ex = round(check.edge * height), round(check.edge * width)
    out[height - ey:] = 0
    out[:, :ex] = 0
    out[:, width - ex:] = 0
    return out


def _shown_share(affine: np.ndarray, width: int, height: int, samples: int = 16) -> float:
    """The share of ``b``'s grid (``width`` x ``height``) that ``affine`` (``b``'s grid to ``a``'s, the same size)
    puts inside ``a``'s, on a ``samples`` x ``samples`` lattice of points."""
    import numpy as np

    xs, ys = np.meshgrid(np.linspace(0, width - 1, samples), np.linspace(0, height - 1, samples))
    x = affine[0, 0] * xs + affine[0, 1] * ys + affine[0, 2]
    y = affine[1, 0] * xs + affine[1, 1] * ys + affine[1, 2]
    return float(((x >= 0) & (x <= width - 1) & (y >= 0) & (y <= height - 1)).mean())


def _text_reach(text: tuple[float, float], check: RegionCheck, width: int, height: int, reach: int = 0) -> int:
    """How far (px on a grid of ``width`` x ``height``) text at ``text``'s scale may lie from where the pair's
    alignment puts it: what that scale moves a label anchored within :attr:`RegionCheck.glyph_reach` of it, and
    at least ``reach``."""
    import math

    moved = max(abs(text[0] - 1), abs(text[1] - 1)) * check.glyph_reach * max(width, height)
    return max(int(math.ceil(moved)) + 1, reach)


def _scaled_about(text: tuple[float, float], cx: float, cy: float) -> np.ndarray:
    """(3 x 3) a scaling by ``text`` (across, down) about (``cx``, ``cy``)."""
    import numpy as np

    return np.array([[text[0], 0.0, cx - text[0] * cx], [0.0, text[1], cy - text[1] * cy], [0.0, 0.0, 1.0]])


def _moved_text(g: _Grids, affine: np.ndarray, box: tuple[int, int, int, int], text: tuple[float, float],
                check: RegionCheck, limit: int, region: np.ndarray, reach: int = 0) -> bool:
    """Whether the part of ``b`` in ``box`` is ``a``'s drawn with its text at another scale, leaving no more than
    ``limit`` pixels differing (:func:`_moved_off`)."""
    return _moved_off(g, affine, box, text, check, region, reach) <= limit


def _moved_off(g: _Grids, affine: np.ndarray, box: tuple[int, int, int, int], text: tuple[float, float],
               check: RegionCheck, region: np.ndarray, reach: int = 0) -> int:
    """How many pixels of the part of ``b`` in ``box`` (x, y, w, h on the grid) differ from ``a``'s drawn with its
    text at another scale: ``a`` scaled by ``text`` about the box's centre (a re-render at another figure size
    keeps the text's size in points while the axes scale) and shifted by at most what that scale moves a label
    anchored within :attr:`RegionCheck.glyph_reach` of it (and at least ``reach`` px), the best shift found by
    template matching; counted in the box after the seam opening, by the full level, or by the second look's faint
    rule (:func:`_over`) near ``region``'s own pixels (its mask on the grid). Few for the same text; a changed
    number is other glyphs at any scale and shift, a bar of another height is not text of another size, a pale
    line of other data differs by the faint rule wherever it is moved."""
    import cv2
    import numpy as np

    height, width = g.gb.shape
    x, y, w, h = box
    t, pad = _text_reach(text, check, width, height, reach), 3
    tx0, ty0 = max(0, x - pad), max(0, y - pad)
    tx1, ty1 = min(width, x + w + pad), min(height, y + h + pad)
    sx0, sy0 = tx0 - t, ty0 - t
    size = (tx1 - tx0 + 2 * t, ty1 - ty0 + 2 * t)
    cx, cy = x + w / 2, y + h / 2
    # u (the search window's pixel) -> b's grid (shifted by the window's corner) -> scaled about the box's
    # centre by the text's scale -> a's grid by the alignment
    shift = np.array([[1.0, 0.0, sx0], [0.0, 1.0, sy0], [0.0, 0.0, 1.0]])
    local = (np.vstack([affine, [0.0, 0.0, 1.0]]) @ _scaled_about(text, cx, cy) @ shift)[:2]
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP

    def window(a: np.ndarray) -> np.ndarray:
        return np.asarray(cv2.warpAffine(a, local, size, flags=flags, borderMode=cv2.BORDER_REPLICATE))

    search, template = window(g.ba), np.ascontiguousarray(g.bb[ty0:ty1, tx0:tx1])
    found = cv2.matchTemplate(search, np.ascontiguousarray(template), cv2.TM_SQDIFF)
    _, _, (dx, dy), _ = cv2.minMaxLoc(found)
    th, tw = template.shape
    colour = None
    if g.ca is not None and g.cb is not None:
        colour = (window(g.ca)[dy:dy + th, dx:dx + tw], g.cb[ty0:ty1, tx0:tx1])
    over, strong = _over(np.ascontiguousarray(search[dy:dy + th, dx:dx + tw]), template, colour, check,
                         faint=g.known is None)
    # What differs by the full level counts wherever it is; a faint difference only on the region's own pixels:
    # the faint grid behind a label, which the pair's alignment lined up, is off by the text's move.
    seam = np.ones((check.seam, check.seam), np.uint8)
    inner = np.s_[y - ty0:y - ty0 + h, x - tx0:x - tx0 + w]
    near = cv2.dilate(region[y:y + h, x:x + w], np.ones((3, 3), np.uint8))
    differs = cv2.bitwise_or(cv2.morphologyEx(strong[inner].view(np.uint8), cv2.MORPH_OPEN, seam),
                             cv2.bitwise_and(cv2.morphologyEx(over[inner].view(np.uint8), cv2.MORPH_OPEN, seam), near))
    return int(cv2.countNonZero(differs))


def _recoloured_like(pa: np.ndarray, pb: np.ndarray, affine: np.ndarray, size: tuple[int, int]
                     ) -> tuple[np.ndarray, np.ndarray | None]:
    """``pa`` with its colours mapped to those ``pb`` shows in their place, both on the grid of ``size`` with
    ``affine`` from ``pb``'s to ``pa``'s (:func:`zuhyo.construct.filter.alignment.colour_map`), and where it is
    known (uint8, ``pa``'s shape): not where its colour has no place in the map - the blends of antialiased
    text, grid lines and edges over each area's colour, which a map fitted on areas of one colour cannot
    recolour (on the tuning splits they made the regions of copies drawn with another colour map), nor where it
    blends two areas in a third colour's bin (:func:`_not_blend`); ``pa`` as it is (everywhere known: ``None``)
    when the map does not move most of its ink."""
    import cv2

    from zuhyo.construct.filter.alignment import _colour_bins, colour_map, palette_changed, recolourable, recoloured

    ra = cv2.resize(pa, size, interpolation=cv2.INTER_AREA)
    rb = cv2.resize(pb, size, interpolation=cv2.INTER_AREA)
    window = cv2.warpAffine(ra, affine, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                            borderMode=cv2.BORDER_REPLICATE)
    bins = _colour_bins(window)
    table = colour_map(window, rb, bins=bins)
    if not palette_changed(window, table, bins=bins):
        return pa, None
    own = _colour_bins(pa)
    return recoloured(pa, table, own), cv2.bitwise_and(recolourable(pa, table, own), _not_blend(own))


def _not_blend(bins: np.ndarray) -> np.ndarray:
    """(h, w) uint8, 0 where a pixel of colour ``bins`` (:func:`zuhyo.construct.filter.alignment._colour_bins`)
    blends two areas of other colours within 2 px (its 3x3 neighbourhood not of one bin; an area: a pixel whose
    3x3 neighbourhood is), in a bin of neither: an antialiased edge between a block and the page whose shade falls
    in a third colour's bin (a mid grey's edge on white in a paler block's), which a colour map gives that
    colour - a line around the block where the other image has none (hard corpus: infographics drawn in greys
    and in another colour map, regions of ~5,000 px). 1 elsewhere: a line's or a glyph's pixels by one area (the
    page) stay."""
    import cv2
    import numpy as np

    kernel = np.ones((3, 3), np.uint8)
    area = cv2.erode(bins, kernel) == cv2.dilate(bins, kernel)
    near = np.ones((5, 5), np.uint8)
    none = np.uint16(np.iinfo(np.uint16).max)
    lowest = cv2.erode(np.where(area, bins, none).astype(np.uint16), near)
    highest = cv2.dilate(np.where(area, bins, 0).astype(np.uint16), near)
    blend = ~area & (lowest != none) & (lowest != highest) & (bins != lowest) & (bins != highest)
    return np.asarray(~blend).view(np.uint8)


def largest_region(pa: np.ndarray, pb: np.ndarray, thumb_affine: np.ndarray, thumb: int,
                   check: RegionCheck = RegionCheck(), grey: bool = False, limit: int | None = None,
                   recolour: bool = False, native: tuple[tuple[float, float], tuple[float, float]] | None = None,
                   faint: bool = True) -> int:
    """Pixels of the largest region in which ``pb`` (:func:`content_pixels`) differs from the part of ``pa``
    that the thumbnail verification found it shows (``thumb_affine``, 2x3 from ``pb``'s ``thumb`` px thumbnail to
    ``pa``'s: :func:`zuhyo.construct.filter.alignment.directed_scores`); see the module doc.
    Compared on colour (the largest channel difference: a colour map can give two values one luma), or with
    ``grey`` on luma (a greyscale copy).

    With ``limit`` (the most a copy may show) the refinement by ECC, most of the cost, is skipped when the
    thumbnail's alignment alone leaves no region over ``limit`` (that region is returned), and for a pair of one
    size in strokes that this alignment lines up with stray ink over :attr:`RegionCheck.other_strokes_share` (its
    region at this alignment, over ``limit``, is returned).

    A region over the limit left by the refinement, up to :attr:`RegionCheck.finer_up_to`, is looked at once more
    aligned on finer versions (:attr:`RegionCheck.finer_side`), taken where that leaves at most half the limit.

    With ``recolour`` (the thumbnails matched only so: a copy drawn with another palette or colour map) ``pa``'s
    colours are first mapped to those ``pb`` shows in their place, the map fitted on both on one grid
    (:func:`zuhyo.construct.filter.alignment.colour_map`).

    With ``native`` (both content boxes' (width, height) in their images' own pixels, :attr:`Content.native`) a
    pair whose text would be of one size in points, were it drawn at one resolution, has each region over the
    limit looked at again as that text moved (:func:`_moved_text`): a chart re-rendered at another figure size.
    The scale of ``a``'s text against ``b``'s is then ``b``'s native width over ``a``'s times what the alignment
    scales ``b`` by (each image's own pixels to the grid, and the grid to ``a``'s).

    Without ``faint`` (a pair with a lossy image, :attr:`Content.lossy`: JPEG moves faint shades by 20 levels and
    more) a pixel differs above :attr:`RegionCheck.level` only; between two lossless images of one size (``native``
    within :attr:`RegionCheck.glyph_change`), a faint one above :attr:`RegionCheck.faint_one_size`.

    A pair (not ``grey``) whose region is over the limit (``limit``, or :attr:`RegionCheck.local_above` without
    one) and whose images are both drawn in strokes (:attr:`RegionCheck.ink_share`) is looked at again as their
    ink alone (:func:`_ink_of`, on luma): the smaller of the two regions counts. A pair that passes fails with stray
    ink (:func:`_strays_over`: for both images lossless, ``faint``, and of one size, ``native`` within
    :attr:`RegionCheck.glyph_change`, over :attr:`RegionCheck.stray_limit`; for others by the resampled limits;
    at the refined alignment, the thumbnail's alone being a pixel or two off at this resolution, and with the
    layout's blocks on their own for a pair of other sizes): then the stray ink's pixels (at least ``limit`` + 1)
    are returned."""
    # Of one size (a template drawn with other data), or drawn again at another size; unknown without ``native``.
    one_size = native is not None and _size_change(native) < check.glyph_change
    resized = native is not None and not one_size
    if not faint:
        check = replace(check, faint_level=check.level)
    elif check.faint_level < check.level and one_size:
        check = replace(check, faint_level=min(check.faint_level, check.faint_one_size))  # the faint rule is on
    width, height = _grid_size(pa, pb)
    affine = _grid_affine(thumb_affine, width, height, thumb)
    known = None
    as_drawn = pa
    if recolour:
        pa, known = _recoloured_like(pa, pb, affine, (width, height))
    g = _grids(pa, pb, check, grey, known)
    bound = check.local_above if limit is None else limit
    # Stray ink: lossless, of one size, a line of other data a pixel or two wide is taken out with the seams below,
    # and its ink is where the other has none; resampled (a JPEG, or drawn at another size), strokes move by a pixel
    # or two, where another chart's lines and markers lie tens of pixels apart.
    resampled = not (faint and one_size)
    strays = (check.stray_limit_resampled if resampled else check.stray_limit) > 0
    # With a JPEG, ink on luma: its chroma, halved and coarsely quantised, washes a pale line's colour out (a yellow
    # line on white left no trace of itself in a low-quality copy)
    inks = functools.cache(lambda: _strokes(as_drawn, pb, check, grey or not faint))  # once for either alignment
    if limit is not None:
        first = _region(g, affine, check)
        if first <= limit:
            if not strays or (drawn := inks()) is None or not _strays_over(drawn, affine, check, resampled):
                return first
            # the thumbnail's alignment may be a pixel or two off at this resolution: aligned again, below
        elif (one_size and first <= check.other_strokes_lined_up and (drawn := inks()) is not None
              and _other_strokes(drawn, affine, check)):
            return first  # lined up, and yet lines or markers of one lie far from any of the other's: other data
    refined = _refined(g, affine, check.align_side, check.ecc_iterations)
    text = _text_scale(refined, native, check)
    # Drawn again at another resolution: glyphs and legend entries snapped to other pixels. Not with a JPEG: its
    # blocks move a glyph's edges too, and a resized JPEG copy of one chart came within a shift of a look-alike.
    shift = check.shift_reach if faint and resized else 0
    found = _region(g, refined, check, text=text, limit=bound, shift=shift)
    if check.finer_side > 0 and bound < found <= check.finer_up_to:
        # the first refinement a pixel or two off at this resolution: refined once more, on finer versions
        finer = _ecc(g.gb, g.ga, refined, check.finer_side, check.ecc_iterations)
        if finer is not None:
            finer_text = _text_scale(finer, native, check)
            again = _region(g, finer, check, text=finer_text, limit=bound, shift=shift)
            if again <= bound // 2:
                found, refined, text = again, finer, finer_text
    pieces: list[Piece] = []
    if found > bound and check.layout_gap > 0 and native is not None and _size_change(native) >= check.piece_size:
        # drawn again at another size: its colour bar, legend or panels moved apart from one another
        pieces = _pieces(g, refined, check)
        if pieces:
            found = min(found, _region(g, refined, check, text=text, limit=bound, pieces=pieces, shift=shift))
    if found > bound and not grey and check.ink_share > 0:
        # Lines and markers drawn with another palette: no areas to fit a colour map on (and pale lines match in
        # the thumbnail as they are, so the pair is not even recoloured). Their strokes are where they were;
        # other data moves them. Aligned as the images were (ECC on two sparse masks can run off the image).
        import cv2
        import numpy as np

        ink_a, areas_a = _ink_and_areas(as_drawn, check)
        ink_b, areas_b = _ink_and_areas(pb, check) if _thin(ink_a, check) else (None, None)
        if ink_b is not None and areas_b is not None and _thin(ink_b, check):
            at_level = replace(check, faint_level=check.level)
            inked = _grids(np.asarray(cv2.bitwise_not(ink_a)), np.asarray(cv2.bitwise_not(ink_b)), check, grey=True)
            alone = _region(inked, refined, at_level, text=text, limit=bound, pieces=pieces)
            if alone <= bound and (cv2.countNonZero(areas_a) or cv2.countNonZero(areas_b)):
                # bars covering more of the chart than its face are one of its backgrounds: a bar of other height
                # moves no ink, only where one background meets the other
                areas = _grids(np.asarray(cv2.bitwise_not(areas_a)), np.asarray(cv2.bitwise_not(areas_b)), check,
                               grey=True)
                alone = max(alone, _region(areas, refined, at_level, limit=bound, pieces=pieces))
            found = min(found, alone)
    if found > bound and faint and check.table_cells and native is not None and _size_change(native) > 0:
        from zuhyo.construct.filter.table_cells import TableCheck, cell_difference

        cells = cell_difference(as_drawn, pb)
        if cells is not None and cells <= TableCheck.most:
            return cells  # one table typeset again: its cells' text moved, each by its own amount
    if found > bound and faint and resized and check.read_text and found <= check.read_up_to:
        if _can_read():  # drawn again: its labels hinted anew, each region of them read in both
            found = min(found, _region(g, refined, check, text=text, limit=bound, pieces=pieces, shift=shift,
                                       read=True))
    if found <= bound and strays and (drawn := inks()) is not None:
        # an axis label read is the same text (a line of other data reads as none; the moved-text test on shades,
        # blind to thin strokes, would take one moved onto another line for text)
        read_alike = _text_reader(g, refined, pieces, check.tick_scale)
        resampled_check = replace(check, stray_reach=check.stray_reach_resampled)  # resized: resampled

        def explained(box: tuple[int, int, int, int], region: np.ndarray) -> bool:
            # a legend's keys, a label: drawn at their size in points, set off from the axes by pads in points
            return ((text is not None
                     and _ink_moved(drawn, refined, box, region, text, resampled_check, bound, pieces, shift))
                    or (_can_read() and read_alike(box, region)))

        strays_moved = explained if faint and resized and check.stray_text else None
        stray = _strays_over(drawn, refined, check, resampled, pieces, strays_moved)
        if stray and resized and not pieces and check.layout_gap > 0:
            # drawn again at another size: its title may have moved apart from the axes (see the pieces above)
            pieces = _pieces(g, refined, check)
            stray = _strays_over(drawn, refined, check, resampled, pieces, strays_moved) if pieces else stray
        if stray:
            return max(stray, bound + 1)
    return found


def _can_read() -> bool:
    """Whether text can be read (:mod:`zuhyo.construct.filter.text_reading`: the ``[ocr]`` extra)."""
    from zuhyo.construct.filter.chart_features import ocr_available

    return ocr_available()


def _ink_and_areas(px: np.ndarray, check: RegionCheck) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`_ink_of` of ``px``, (h, w) uint8 255 off its ink where it is nearer its commonest colour than the
    colour commonest along its edge, when the two are not one: bars covering more of a chart than its face)."""
    import numpy as np

    far, second = _backgrounds(px, check.level)
    ink = _ink_of(far, check)
    return ink, np.asarray((second & (ink == 0)).view(np.uint8) * 255)


def _ink_of(far: np.ndarray, check: RegionCheck) -> np.ndarray:
    """(h, w) uint8, 255 where an image shows ink, from its :func:`_off_background` ``far``: a colour more than
    :attr:`RegionCheck.level` (in its largest channel) from each of its background colours - by the bins of
    :func:`zuhyo.construct.filter.alignment.colour_map`, the commonest (a page, an axes' face) and the commonest
    along its edge (the page round a face); a bar's colour is ink - and from every blend of the two (an area's
    antialiased edge, :func:`_off_blend`), and at least half as far as the farthest within 1 px: a stroke's width
    at half its contrast, the same for a pale line and a dark one (at a fixed level a dark line's antialiased
    fringe is ink, a pale one's is not)."""
    import cv2
    import numpy as np

    peak = cv2.dilate(far, np.ones((3, 3), np.uint8))
    return np.asarray(((far > check.level) & (far.astype(np.int16) * 2 >= peak)).view(np.uint8) * 255)


def _off_background(px: np.ndarray, level: int) -> np.ndarray:
    """(h, w) uint8: how far each pixel of ``px`` is (largest channel) from the nearest of its background colours
    (:func:`_ink_of`), or, beside areas within ``level`` of both, from a blend of the two (:func:`_off_blend`)."""
    return _backgrounds(px, level)[0]


def _backgrounds(px: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`_off_background` of ``px`` and ``level``, (h, w) bool where a pixel is nearer the commonest colour
    than the colour commonest along the image's edge, when the two are not one)."""
    import cv2
    import numpy as np

    from zuhyo.construct.filter.alignment import COLOUR_BINS, _colour_bins

    bins = _colour_bins(px)
    rim = np.concatenate([bins[0], bins[-1], bins[:, 0], bins[:, -1]])
    edge = int(np.argmax(np.bincount(rim)))
    commonest = int(np.argmax(np.bincount(bins.ravel(), minlength=COLOUR_BINS ** 3)))
    far: np.ndarray = np.full(px.shape[:2], 255, dtype=np.uint8)
    second = np.zeros(px.shape[:2], dtype=bool)
    colours, offs = [], []
    for b in dict.fromkeys((edge, commonest)):
        colour = np.round(cv2.mean(px, mask=(bins == b).view(np.uint8))[:3]).astype(np.uint8)
        colours.append(colour)
        # a Scalar (a tuple, in every OpenCV version), not an image of that colour made to subtract; the stubs
        # know arrays only
        scalar = (*colour.tolist(), 0)
        r, g, bl = cv2.split(cv2.absdiff(px, scalar))  # type: ignore[call-overload]
        off = np.asarray(cv2.max(cv2.max(r, g), bl))
        offs.append(off)
        if b != edge:
            second = off < far
        far = np.asarray(cv2.min(far, off))
    if len(colours) == 2:
        # beside an area of each colour (5 px across at least: a bar, a face; not a glyph's stroke of about its
        # colour), within 2 px
        near = [cv2.dilate(cv2.erode((off <= level).view(np.uint8), np.ones((5, 5), np.uint8)),
                           np.ones((9, 9), np.uint8)) for off in offs]
        _off_blend(px, far, colours[0], colours[1], cv2.bitwise_and(near[0], near[1]))
    return far, second


def _off_blend(px: np.ndarray, far: np.ndarray, first: np.ndarray, second: np.ndarray, beside: np.ndarray) -> None:
    """``far`` (:func:`_off_background`) lowered, in place, where ``beside`` (within 2 px of an area, 5 px across
    at least, of each of the two background colours, ``first`` and ``second``), to each pixel's distance (largest
    channel) from the blend of the two nearest it (in Euclidean terms): an area's antialiased edge on a face - bars
    covering more of a chart than its face are one of its backgrounds - is no stroke. Its blends fall on the grid's
    pixels as its edges do, other ones in a chart drawn again at another size, where they were a line of other data
    (issue 22's twenty-eighth session: bars drawn again at another size failed on them as stray ink). Only beside
    both: the areas of a chart in greys between a cream face and its darkest grey are blends of the two too, and
    were no ink at all (a stacked area of other height then passed the look at ink alone). Beside areas, not
    pixels: grey text's core is near a dark grey of bars, and its antialiased fringe, a blend of it and the page,
    was no ink in the original and ink in its copy padded with a border of another colour (the copy then failed on
    stray ink)."""
    import numpy as np

    start, span = first.astype(np.float32), second.astype(np.float32) - first.astype(np.float32)
    length = float(span @ span)
    if length == 0:
        return
    ys, xs = np.nonzero(far * beside)  # a background pixel is 0 already
    p = px[ys, xs, :3].astype(np.float32) - start
    t = np.clip((p @ span) / length, 0.0, 1.0)
    off = np.abs(p - t[:, None] * span).max(axis=1)
    far[ys, xs] = np.minimum(far[ys, xs], np.round(off).astype(np.uint8))


@dataclass(frozen=True)
class _Strokes:
    """Both images' ink on the pair's grid (:func:`_strokes`), for :func:`_stray_ink` at any alignment."""

    ink_a: np.ndarray
    """(height x width uint8, 1 or 0) ``a``'s ink (:func:`_ink_of`), not yet warped."""
    ink_b: np.ndarray
    """``b``'s ink."""
    trace_a: np.ndarray
    """Where ``a`` shows any trace of ink (:attr:`RegionCheck.stray_trace`): a faint grid line resampled may fall
    under the ink's level in one image only."""
    trace_b: np.ndarray
    """Where ``b`` does."""


def _strokes(pa: np.ndarray, pb: np.ndarray, check: RegionCheck, grey: bool = False) -> _Strokes | None:
    """Both images' ink on the grid of the pair (found there, not resized: a one-pixel line resampled would fall
    under any level), or ``None`` when either is not drawn in strokes (:func:`_thin`: areas - cells, wedges,
    regions - whose shades may cross the ink's level in a copy). With ``grey`` both are looked at on their luma
    (a pale yellow line is ink on white, its greyscale copy's is not)."""
    import cv2
    import numpy as np

    size = _grid_size(pa, pb)
    if grey:
        pa, pb = (np.asarray(cv2.cvtColor(cv2.cvtColor(px, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)) for px in (pa, pb))
    far_a = _off_background(np.asarray(cv2.resize(pa, size, interpolation=cv2.INTER_AREA)), check.level)
    drawn_a = _ink_of(far_a, check)
    if not _thin(drawn_a, check):
        return None
    far_b = _off_background(np.asarray(cv2.resize(pb, size, interpolation=cv2.INTER_AREA)), check.level)
    drawn_b = _ink_of(far_b, check)
    if not _thin(drawn_b, check):
        return None
    return _Strokes((drawn_a > 0).view(np.uint8), (drawn_b > 0).view(np.uint8),
                    (far_a > check.stray_trace).view(np.uint8), (far_b > check.stray_trace).view(np.uint8))


def _stray_ink(strokes: _Strokes, affine: np.ndarray, check: RegionCheck, pieces: Sequence[Piece] = (),
               explained: Explained | None = None, limit: int = 0) -> tuple[int, int]:
    """(pixels of the largest region, pixels in all) of ink of one image with no trace of ink of the other within
    :attr:`RegionCheck.stray_reach` px (regions: strokes joined by :attr:`RegionCheck.join` px), ``a``'s warped
    by ``affine`` (and within each of ``pieces`` by its own alignment) onto ``b``'s grid (as :func:`_region`, the
    title band and the edge left out): a line of other data, where it was and where it is now. Regions over
    ``limit`` that ``explained`` (their box and mask) takes for what a copy shows are left out, the largest first,
    up to the first it does not."""
    import cv2
    import numpy as np

    height, width = strokes.ink_b.shape
    size = (width, height)

    def warped(mask: np.ndarray) -> np.ndarray:
        return _warp(mask, affine, size, pieces, nearest=True, border=0)

    reach = np.ones((2 * check.stray_reach + 1, 2 * check.stray_reach + 1), np.uint8)
    ink_a = warped(strokes.ink_a)
    # a's trace widened before it is warped: a line a pixel wide, warped at a scale over 1 pixel by pixel, can fall
    # between the grid's pixels
    near_a = warped(cv2.dilate(strokes.trace_a, reach))
    # not within reach of where a's image ends: no trace of its ink can be seen beyond it
    inside = cv2.erode(_shown(np.ones_like(strokes.ink_b), affine, pieces), reach)
    lost = cv2.subtract(ink_a, cv2.dilate(strokes.trace_b, reach))  # 1 where a has ink and b none near (0 or 1)
    found = cv2.subtract(strokes.ink_b, near_a)
    stray = _compared(cv2.bitwise_or(lost, found), inside, check)
    total = cv2.countNonZero(stray)
    if not total:
        return 0, 0
    joined = cv2.morphologyEx(stray, cv2.MORPH_CLOSE, np.ones((check.join, check.join), np.uint8))
    if explained is None:
        count, labels = cv2.connectedComponents(joined, connectivity=8)
        return int(np.bincount(labels[stray > 0], minlength=count)[1:].max()), int(total)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    pixels = np.bincount(labels[stray > 0], minlength=count)[1:]
    for k in np.argsort(-pixels):
        x, y, w, h = (int(v) for v in stats[k + 1, :4])
        # a solid patch is no text (as _region); a rule a pixel or so across fills its box too
        if pixels[k] <= limit or (pixels[k] > check.text_fill * w * h and min(w, h) > check.rule_width):
            break
        if not explained((x, y, w, h), np.asarray(cv2.bitwise_and(stray, (labels == k + 1).view(np.uint8)))):
            break
        total -= int(pixels[k])
        pixels[k] = 0
    return int(pixels.max()), int(total)


def _strays_over(strokes: _Strokes, affine: np.ndarray, check: RegionCheck, resampled: bool,
                 pieces: Sequence[Piece] = (), explained: Explained | None = None) -> int:
    """0 when the pair's stray ink (:func:`_stray_ink`) is within what a copy shows, else the pixels that are not
    (at least 1): for two lossless images of one size, a region over :attr:`RegionCheck.stray_limit`; for a
    ``resampled`` pair (a JPEG, or of other sizes), with ink explained within
    :attr:`RegionCheck.stray_reach_resampled` px, a region over :attr:`RegionCheck.stray_limit_resampled` or in
    all more than :attr:`RegionCheck.stray_share_resampled` of ``b``'s ink. Regions over the limit that
    ``explained`` takes for a copy's (text drawn again: :attr:`RegionCheck.stray_text`) are left out."""
    if not resampled:
        largest, _ = _stray_ink(strokes, affine, check, pieces, explained, check.stray_limit)
        return largest if largest > check.stray_limit else 0
    import cv2

    largest, total = _stray_ink(strokes, affine, replace(check, stray_reach=check.stray_reach_resampled), pieces,
                                explained, check.stray_limit_resampled)
    if largest > check.stray_limit_resampled:
        return largest
    return total if total > check.stray_share_resampled * cv2.countNonZero(strokes.ink_b) else 0


def _ink_moved(strokes: _Strokes, affine: np.ndarray, box: tuple[int, int, int, int], region: np.ndarray,
               text: tuple[float, float], check: RegionCheck, limit: int, pieces: Sequence[Piece] = (),
               reach: int = 0) -> bool:
    """Whether ``region`` (stray ink: its mask on the grid, within ``box``, x, y, w, h) is marks drawn at their
    size in points that moved as text does (a legend's keys and labels, an axis label: set off from the axes by
    pads in points), as :func:`_moved_text` explains shades, on the images' ink (a legend's key is a line two
    pixels wide, which the regions' seams take out). Marks are ink wholly within the box widened by as far as a
    mark anchored within :attr:`RegionCheck.glyph_reach` may move at that scale (at least ``reach`` px). The
    region must lie on marks of either image (a line of data runs on beyond the box, a grid line across it), and
    each image's marks on it, ``a``'s scaled by ``text``, moved by the shift that best matches them to the other's
    marks (by at most that far), may leave no more than ``limit`` pixels in all with no mark of the other's within
    :attr:`RegionCheck.stray_reach`."""
    import cv2
    import numpy as np

    height, width = strokes.ink_b.shape
    x, y, w, h = box
    t = _text_reach(text, check, width, height, reach)
    tx0, ty0 = max(0, x - t), max(0, y - t)
    tx1, ty1 = min(width, x + w + t), min(height, y + h + t)
    th, tw = ty1 - ty0, tx1 - tx0
    cx, cy = x + w / 2, y + h / 2
    own = np.vstack([_piece_at(pieces, affine, cx, cy), [0.0, 0.0, 1.0]])

    def shown(mask: np.ndarray, local: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        return np.asarray(cv2.warpAffine(mask, local[:2], size, flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                                         borderMode=cv2.BORDER_CONSTANT, borderValue=0))

    def marks(ink: np.ndarray, margin: int = 0) -> np.ndarray:
        # pieces of ink within the widened box (``margin`` px inside ``ink``'s edges): not lines running through
        _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        x0, y0 = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
        x1, y1 = x0 + stats[:, cv2.CC_STAT_WIDTH], y0 + stats[:, cv2.CC_STAT_HEIGHT]
        inner = (x0 > margin) & (y0 > margin) & (x1 < ink.shape[1] - margin) & (y1 < ink.shape[0] - margin)
        inner[0] = False
        return np.asarray(inner[labels].view(np.uint8))

    def on(mask: np.ndarray, where: np.ndarray) -> np.ndarray:
        # the pieces of ``mask`` that touch ``where``
        count, labels = cv2.connectedComponents(mask, connectivity=8)
        hit = np.zeros(count, dtype=bool)
        hit[np.unique(labels[(where > 0) & (mask > 0)])] = True
        hit[0] = False
        return np.asarray(hit[labels].view(np.uint8))

    def corner(dx: float, dy: float) -> np.ndarray:
        return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])

    scale = _scaled_about(text, cx, cy)
    inside = np.ascontiguousarray(region[ty0:ty1, tx0:tx1])
    # at the pair's alignment: the region must lie on marks of either image
    here_a = marks(shown(strokes.ink_a, own @ corner(tx0, ty0), (tw, th)))
    b_wide = shown(strokes.ink_b, corner(tx0 - t, ty0 - t), (tw + 2 * t, th + 2 * t))  # b's grid, widened
    marks_b = marks(b_wide, t)
    mine_b = on(np.ascontiguousarray(marks_b[t:t + th, t:t + tw]), inside)
    # a's ink with its text at b's size: b's grid -> scaled about the box's centre -> a's grid
    a_wide = shown(strokes.ink_a, own @ scale @ corner(tx0 - t, ty0 - t), (tw + 2 * t, th + 2 * t))
    near = np.ones((2 * check.stray_reach + 1, 2 * check.stray_reach + 1), np.uint8)
    soft = (5, 5)

    def best(image: np.ndarray, template: np.ndarray) -> tuple[int, int]:
        # matched blurred a little: strokes drawn again fall a pixel apart
        found = cv2.matchTemplate(cv2.GaussianBlur(image.astype(np.float32), soft, 0),
                                  cv2.GaussianBlur(template.astype(np.float32), soft, 0), cv2.TM_CCORR_NORMED)
        at = cv2.minMaxLoc(found)[3]
        return int(at[0]), int(at[1])

    # all of the box moved as one (a legend in its frame, with what lies around it)
    ink_b = np.ascontiguousarray(b_wide[t:t + th, t:t + tw])
    if cv2.countNonZero(ink_b):
        dx, dy = best(a_wide, ink_b)
        trace_a = shown(strokes.trace_a, own @ scale @ corner(tx0 - t, ty0 - t), (tw + 2 * t, th + 2 * t))
        trace_b = shown(strokes.trace_b, corner(tx0 - t, ty0 - t), (tw + 2 * t, th + 2 * t))
        lost = cv2.subtract(np.ascontiguousarray(a_wide[dy:dy + th, dx:dx + tw]),
                            cv2.dilate(trace_b, near)[t:t + th, t:t + tw])
        if cv2.countNonZero(lost) + cv2.countNonZero(
                cv2.subtract(ink_b, cv2.dilate(trace_a, near)[dy:dy + th, dx:dx + tw])) <= limit:
            return True
    # or each image's marks on the region, each moved on its own (keys and labels among lines that stay)
    on_marks = cv2.dilate(cv2.bitwise_or(here_a, mine_b), np.ones((3, 3), np.uint8))
    astray = cv2.subtract((inside > 0).view(np.uint8), on_marks)
    if cv2.countNonZero(astray) > limit:
        return False
    marks_a = marks(a_wide, t)
    grown = cv2.dilate(inside, np.ones((2 * t // 3 + 1, 2 * t // 3 + 1), np.uint8))  # the scale moves a's marks
    mine_a = on(np.ascontiguousarray(marks_a[t:t + th, t:t + tw]), grown)
    left = 0
    for mine, theirs in ((mine_a, marks_b), (mine_b, marks_a)):
        if cv2.countNonZero(mine):
            dx, dy = best(theirs, mine)
            left += cv2.countNonZero(cv2.subtract(mine, cv2.dilate(theirs, near)[dy:dy + th, dx:dx + tw]))
    return left <= limit


def _other_strokes(strokes: _Strokes, affine: np.ndarray, check: RegionCheck) -> bool:
    """Whether the pair's stray ink (:func:`_stray_ink`, ink explained within :attr:`RegionCheck.other_strokes_reach`
    px) at ``affine`` is more than :attr:`RegionCheck.other_strokes_share` of ``b``'s ink."""
    import cv2

    _, total = _stray_ink(strokes, affine, replace(check, stray_reach=check.other_strokes_reach))
    return total > check.other_strokes_share * cv2.countNonZero(strokes.ink_b)


def _thin(ink: np.ndarray, check: RegionCheck) -> bool:
    """Whether most of ``ink`` (:func:`_ink_of`) is strokes (lines, markers, text) rather than areas: what is left of
    it after an erosion by 3 px is under :attr:`RegionCheck.ink_share` of it."""
    import cv2
    import numpy as np

    total = cv2.countNonZero(ink)
    return total > 0 and cv2.countNonZero(cv2.erode(ink, np.ones((3, 3), np.uint8))) < check.ink_share * total


def _size_change(native: tuple[tuple[float, float], tuple[float, float]]) -> float:
    """How much ``b``'s content box differs in size from ``a``'s (both (width, height) in their images' own
    pixels): the larger of ``b``'s width over ``a``'s and height over height, less 1, in absolute value."""
    (wa, ha), (wb, hb) = native
    return max(abs(wb / wa - 1), abs(hb / ha - 1))


def _text_scale(affine: np.ndarray, native: tuple[tuple[float, float], tuple[float, float]] | None,
                check: RegionCheck) -> tuple[float, float] | None:
    """(across, down): how much larger ``a``'s text shows than ``b``'s under ``affine`` (``b``'s grid to
    ``a``'s, both one size) were both drawn with text of one size in their own pixels: a's grid pixel is
    ``native_a / grid`` of a's pixels, b's ``native_b / grid``; ``affine`` shrinks a's content by its scale.
    ``None`` - no look as text - without ``native``, for two images of one size (two drawn with one template have
    text of one size: their alignment's scale is the data's), and for a scale within
    :attr:`RegionCheck.glyph_change` of 1 or beyond what a re-render explains (:attr:`RegionCheck.glyph_most`)."""
    import math

    if native is None:
        return None
    (wa, ha), (wb, hb) = native
    if _size_change(native) < check.glyph_change:
        return None
    kx = math.hypot(float(affine[0, 0]), float(affine[1, 0]))
    ky = math.hypot(float(affine[0, 1]), float(affine[1, 1]))
    # a glyph g px wide in either image: g / wa of a's width, g / wb of b's; on the grid b's is g * W / wb,
    # a's warped g * W / (wa * kx)
    scale = wb / (wa * kx), hb / (ha * ky)
    change = max(abs(scale[0] - 1), abs(scale[1] - 1))
    inside = all(1 / check.glyph_most <= v <= check.glyph_most for v in scale)
    return scale if change >= check.glyph_change and inside else None
