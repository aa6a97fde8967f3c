"""Whether a region in which two aligned charts differ reads as the same text in both: the glyphs of a chart drawn
again at another resolution or figure size are hinted anew and snapped to other pixels, so its labels differ from
the original's pixel by pixel as much as a changed number does (bench/README.md, "nineteenth" and "twentieth
session"), yet read the same. A changed number, year or category reads otherwise; a bar, line or marker of other
data is no text at all.

Our method (neither paper defines near-duplicate verification): the region's neighbourhood is cut from both images
on the second look's grid (:mod:`zuhyo.construct.filter.regions`), enlarged and read by RapidOCR (its detection
and recognition models, shipped with the ``rapidocr`` package: the ``[ocr]`` extra). The region is explained when
the text lines that touch it read alike in both images, each line confidently, and they cover most of the
region's pixels. Only where :attr:`zuhyo.construct.filter.regions.RegionCheck.read_text` asks for it: a pair of
lossless images of other sizes that every other look leaves over the limit.

A region that does not read alike may be an axis labelled anew (:func:`same_scale`, where
:attr:`zuhyo.construct.filter.regions.RegionCheck.tick_scale` asks for it): drawn again at another figure size, a
chart's axis is labelled 0, 2.5, 5, 7.5 where the original's is labelled 0, 2, 4, 6 (matplotlib's locator picks
its step by the axis's length in inches), each panel of a small multiple so. Its labels are numbers in equal steps,
evenly placed along one line, and the two images place every value within a few pixels of each other: one axis
on one scale. Other data changes no label but moves its axis's scale, or is no number at all."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class TextCheck:
    """The parameters of reading a region (the defaults are the filter's)."""

    margin_across: int = 60
    """Pixels (on the grid) kept either side of the region: a label's whole line, which the region may cover in
    part (two glyphs of a word hinted otherwise)."""
    margin_down: int = 12
    """Pixels kept above and below the region."""
    enlargements: tuple[float, ...] = (2.0, 2.5, 3.0, 4.0)
    """How much the cut is enlarged before it is read, tried in turn: chart text is 8-15 px high on the grid, the
    recogniser reads lines 48 px high, and at these sizes it takes one small kanji for another at one scale and
    not at the next (売上高 read as 壳上高 in one image of a pair at 2x, alike at 3x). Only lines that differ in
    such characters alone are read again at the next enlargement."""
    least_confidence: float = 0.7
    """The least confidence of every line touching the region, in either image (a short Japanese word of 8 px
    glyphs reads at 0.75-0.85, what the recogniser makes of a marker or a line's end at 0.5-0.65)."""
    least_cover: float = 0.8
    """The least share of the region's pixels that those lines' boxes cover, in either image: a bar's edge or a
    marker beside a label that reads alike is not text."""
    tallest: int = 40
    """The tallest box (px on the grid) read as a line of text; a taller one is the detector taking a whole panel
    or patch for text."""
    tick_reach: int = 200
    """Pixels (on the grid) along a row or a column from a region read for the other tick labels of its axis
    (:func:`same_scale`): at least three of an axis's labels, which lie 20-80 px apart. Across the row
    :attr:`tick_row_margin`, across the column :attr:`tick_column_margin`."""
    tick_row_margin: int = 24
    """Pixels (on the grid) kept above and below a region read as a row of tick labels: with 12 the recogniser read
    two close labels as one line (5.07.5) now and then."""
    tick_column_margin: int = 40
    """Pixels (on the grid) kept either side of a region read as a column of tick labels: they are set flush right,
    of other widths (0 and 100)."""
    tick_enlargement: float = 2.0
    """How much that cut is enlarged before it is read: digits are read surely at 2x."""
    tick_tolerance: float = 3.0
    """Pixels (on the grid) by which a label's place may be off its axis's line through the values' places, and
    by which (with :attr:`tick_share`) the place of a value on one image's axis may differ from its place on the
    other's (:func:`same_scale`): a label's box is found to a pixel or two."""
    tick_share: float = 0.03
    """The share of the axis's length (the span of the values' places) added to :attr:`tick_tolerance` when the
    two axes are compared: the boxes' error grows with how far a line through them is drawn. Another scale (an
    axis to 80 where the other goes to 100) moves a value by a fifth of it."""


@lru_cache(maxsize=1)
def _reader() -> Any:
    """One RapidOCR engine per process (a worker builds its own on first use), on one thread (the filter runs a
    worker per core), not upscaling what it is given (its default reads a 30 px cut at 736 px)."""
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False, "Det.limit_type": "max",
                            "Det.limit_side_len": 2000, "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                            "EngineConfig.onnxruntime.inter_op_num_threads": 1})


def _read(grey: np.ndarray) -> list[tuple[str, np.ndarray, float]]:
    """The text lines of ``grey`` (uint8): each line's text (NFKC, without spaces), its box's corners (4 x 2 int32)
    and its confidence."""
    import cv2
    import numpy as np

    found = _reader()(np.asarray(cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB)))
    if found.txts is None or found.boxes is None:
        return []
    return [(unicodedata.normalize("NFKC", str(text)).replace(" ", ""),  # 10¹ read as 10¹ or 101
             np.rint(np.asarray(quad, dtype=np.float64)).astype(np.int32), float(score))
            for text, quad, score in zip(found.txts, found.boxes, found.scores, strict=True)]


def _cut(a: np.ndarray, cut_box: tuple[int, int, int, int], enlarge: float, mask: bool = False) -> np.ndarray:
    """The part ``cut_box`` (top, bottom, left, right) of ``a`` (a luma on the grid, uint8) enlarged ``enlarge``
    times (cubic); with ``mask``, of a region's mask (nonzero where it is): 0 or 1, nearest."""
    import cv2
    import numpy as np

    top, bottom, left, right = cut_box
    size = (round((right - left) * enlarge), round((bottom - top) * enlarge))
    if mask:
        return np.asarray(cv2.resize((np.asarray(a[top:bottom, left:right]) > 0).view(np.uint8), size,
                                     interpolation=cv2.INTER_NEAREST))
    return np.asarray(cv2.resize(np.ascontiguousarray(a[top:bottom, left:right]), size,
                                 interpolation=cv2.INTER_CUBIC))


def _lines(grey: np.ndarray, region: np.ndarray, check: TextCheck, enlarge: float
           ) -> tuple[list[str], float, float] | None:
    """The text lines of ``grey`` (a cut enlarged ``enlarge`` times, uint8) whose boxes touch ``region`` (the
    cut's mask, 0 or 1), their least confidence and the share of ``region`` their boxes cover; ``None`` when a box
    is too tall to be a line of text."""
    import cv2
    import numpy as np

    covered: np.ndarray = np.zeros(grey.shape, np.uint8)
    texts, confidence = [], 1.0
    for text, corners, score in _read(grey):
        line = np.zeros(grey.shape, np.uint8)
        cv2.fillConvexPoly(line, corners, 1)
        if not cv2.countNonZero(cv2.bitwise_and(line, region)):
            continue
        if np.ptp(corners[:, 1]) > check.tallest * enlarge:
            return None
        texts.append(text)
        confidence = min(confidence, score)
        covered = np.asarray(cv2.bitwise_or(covered, line))
    total = cv2.countNonZero(region)
    return sorted(texts), confidence, cv2.countNonZero(cv2.bitwise_and(covered, region)) / max(1, total)


def reads_alike(wa: np.ndarray, gb: np.ndarray, box: tuple[int, int, int, int], region: np.ndarray,
                check: TextCheck = TextCheck()) -> bool:
    """Whether the part of ``gb`` (``b``'s luma on the grid, uint8) around ``box`` (x, y, w, h) reads as the same
    text as ``wa`` (``a``'s luma warped onto that grid) there: at one of :attr:`TextCheck.enlargements`, the lines
    touching ``region`` (the grid's mask of the differing pixels, nonzero where they are) are the same in both,
    each read confidently, and cover most of ``region``'s pixels in both. Not where at one either image has no
    such lines there (a bar, a marker: no text to read)."""

    x, y, w, h = box
    height, width = gb.shape
    top, bottom = max(0, y - check.margin_down), min(height, y + h + check.margin_down)
    left, right = max(0, x - check.margin_across), min(width, x + w + check.margin_across)
    for enlarge in check.enlargements:
        mask = _cut(region, (top, bottom, left, right), enlarge, mask=True)
        read = []
        for grey in (wa, gb):
            cut = _cut(grey, (top, bottom, left, right), enlarge)
            lines = _lines(cut, mask, check, enlarge)
            if lines is None:
                return False
            texts, confidence, cover = lines
            if not texts or confidence < check.least_confidence or cover < check.least_cover:
                return False  # no text there to read
            read.append(texts)
        if read[0] == read[1]:
            return True
        if _latin(read[0]) != _latin(read[1]):
            return False  # digits and Latin letters are read surely at 2x: a number or word of other data
    return False


def _latin(texts: list[str]) -> list[str]:
    """``texts`` with all but their ASCII characters left out: what the recogniser reads surely at any of the
    enlargements, where it takes one small kanji for another at one and not at the next."""
    return ["".join(c for c in text if c.isascii()) for text in texts]


_NUMBER = re.compile(r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")


_DECIMAL_COMMA = re.compile(r"[-−]?\d+,\d{1,2}%?")


def _value(text: str) -> float | None:
    """The number a tick label shows (``-2.5``, ``1,000``, ``20%``; ``7,5`` as 7.5: the recogniser reads a small
    point as a comma now and then), or ``None``."""
    if _DECIMAL_COMMA.fullmatch(text):
        text = text.replace(",", ".")
    elif not _NUMBER.fullmatch(text):
        return None
    return float(text.replace("−", "-").replace(",", "").rstrip("%"))


def same_scale(wa: np.ndarray, gb: np.ndarray, box: tuple[int, int, int, int], region: np.ndarray,
               check: TextCheck = TextCheck()) -> bool:
    """Whether a region (``box``, x, y, w, h, and ``region``, the grid's mask of the differing pixels) is an axis's
    tick labels chosen anew on the same scale: where a chart drawn again at another figure size has its axis
    labelled 0, 2.5, 5, 7.5 and its original 0, 2, 4, 6 (the locator picks the step by the axis's length).

    Read in both images (``b``'s luma ``gb``, ``a``'s warped onto its grid ``wa``) in a band along a row (then a
    column) of :attr:`TextCheck.tick_reach` either way, the text lines touching the region are numbers only,
    confidently read, covering most of the region (either image's); with the other numbers in line with them, each
    image has at least three values on its axis in equal steps, evenly placed (:func:`_axis_run`), and the two
    place every value of either within :attr:`TextCheck.tick_tolerance` and :attr:`TextCheck.tick_share` of the
    axis's length of each other: one axis, labelled otherwise. Data drawn otherwise moves its axis's scale (the
    values' places differ) or is no number at all (a bar, a line); a table's row or column of numbers with one
    changed is in no equal steps."""
    import cv2
    import numpy as np

    x, y, w, h = box
    height, width = gb.shape
    r, enlarge = check.tick_reach, check.tick_enlargement
    for along in (0, 1):  # a row of labels (an x axis: places across), a column (a y axis: places down)
        # Read in a band along the axis, not a square round the region: a fraction of the pixels to read. A column's
        # labels are set flush right, of other widths.
        if along == 0:
            top, bottom = max(0, y - check.tick_row_margin), min(height, y + h + check.tick_row_margin)
            left, right = max(0, x - r), min(width, x + w + r)
        else:
            top, bottom = max(0, y - r), min(height, y + h + r)
            left, right = max(0, x - check.tick_column_margin), min(width, x + w + check.tick_column_margin)
        cut_box = (top, bottom, left, right)
        mask = _cut(region, cut_box, enlarge, mask=True)
        covered: np.ndarray = np.zeros(mask.shape, np.uint8)  # by either image's numbers: a label of each differs
        axes, touching_boxes = [], []
        for grey in (wa, gb):
            read = _numbers(_cut(grey, cut_box, enlarge), mask, cut_box, (width, height), check)
            if read is None:
                break
            numbers, touching, lines = read
            covered = np.asarray(cv2.bitwise_or(covered, lines))
            axes.append(numbers)
            touching_boxes.extend(touching)
        else:
            if not touching_boxes or cv2.countNonZero(cv2.bitwise_and(covered, mask)) < (check.least_cover
                                                                                        * cv2.countNonZero(mask)):
                continue
            if _one_scale(axes, touching_boxes, along, (x + w / 2, y + h / 2)[along], check):
                return True
    return False


Box = tuple[float, float, float, float]
"""x0, x1, y0, y1 (px on the grid)."""


def _numbers(cut: np.ndarray, mask: np.ndarray, cut_box: tuple[int, int, int, int], grid: tuple[int, int],
             check: TextCheck) -> tuple[list[tuple[float, Box]], list[Box], np.ndarray] | None:
    """The numbers read in ``cut`` (a band of the grid, ``cut_box`` top, bottom, left, right, enlarged by
    :attr:`TextCheck.tick_enlargement`; ``mask`` the region in it, ``grid`` the grid's width and height): each
    value and its box on the grid, the boxes of those touching the region and the cut's mask of those; ``None``
    when something other than a number, confidently read, touches the region or a box is too tall for text."""
    import cv2
    import numpy as np

    top, bottom, left, right = cut_box
    enlarge = check.tick_enlargement
    numbers: list[tuple[float, Box]] = []
    touching: list[Box] = []
    covered: np.ndarray = np.zeros(mask.shape, np.uint8)
    for text, corners, score in _read(cut):
        line = np.zeros(mask.shape, np.uint8)
        cv2.fillConvexPoly(line, corners, 1)
        touches = cv2.countNonZero(cv2.bitwise_and(line, mask)) > 0
        value = _value(text)
        if value is None or score < check.least_confidence:
            if touches:
                return None  # the region is (also) something other than a number
            continue
        x0, y0 = corners.min(axis=0) / enlarge
        x1, y1 = corners.max(axis=0) / enlarge
        if y1 - y0 > check.tallest:
            return None
        if not touches and ((left and x0 < 1) or (top and y0 < 1) or (right < grid[0] and x1 > right - left - 1)
                            or (bottom < grid[1] and y1 > bottom - top - 1)):
            continue  # cut off by the cut's edge: its centre is not its label's
        box = (left + float(x0), left + float(x1), top + float(y0), top + float(y1))
        numbers.append((value, box))
        if touches:
            touching.append(box)
            covered = np.asarray(cv2.bitwise_or(covered, line))
    return numbers, touching, covered


def _one_scale(axes: list[list[tuple[float, Box]]], touching: list[Box], along: int, centre: float,
               check: TextCheck) -> bool:
    """Whether both images' numbers (``axes``) in line with those the region ``touching`` (either image's) make
    one axis's ticks each (:func:`_axis_run`; from the label nearest the region's ``centre`` where the region
    touches none of an image's), ``along`` 0 a row (places across), 1 a column (places down), and the two place
    every value of either within :attr:`TextCheck.tick_tolerance` and :attr:`TextCheck.tick_share` of the axis's
    length of each other."""
    import numpy as np

    lo = min(t[2 - 2 * along] for t in touching)  # their span the other way
    hi = max(t[3 - 2 * along] for t in touching)
    fits = []
    for numbers in axes:
        inline = sorted(((b[2 * along] + b[2 * along + 1]) / 2, v, b in touching)
                        for v, b in numbers if b[2 - 2 * along] <= hi and b[3 - 2 * along] >= lo)
        if inline and not any(t for _, _, t in inline):  # the region is the other's label: from the nearest
            nearest = min(range(len(inline)), key=lambda k: abs(inline[k][0] - centre))
            inline[nearest] = (*inline[nearest][:2], True)
        run = _axis_run(inline, check.tick_tolerance)
        if run is None:
            return False
        fits.append(run)
    (sa, oa, va), (sb, ob, vb) = fits
    both = np.concatenate([va, vb])
    span = np.ptp(sb * both + ob)  # the places the values take on the axis
    return bool(np.abs((sa - sb) * both + (oa - ob)).max() <= check.tick_tolerance + check.tick_share * span)


def _axis_run(inline: list[tuple[float, float, bool]], tolerance: float, least: int = 3
              ) -> tuple[float, float, np.ndarray] | None:
    """Of labels in one line (place, value, whether the region touches it; by place), the longest run that holds
    every touched one and is one axis's ticks: values in equal steps, one way along the line, evenly placed (a
    line through them within ``tolerance`` px), apart - not with the next panel's axis, nor a table's column of
    numbers. Its line (slope and offset of the place against the value) and values, when it has at least
    ``least`` labels; else ``None``."""
    import numpy as np

    touched = [k for k, (_, _, t) in enumerate(inline) if t]
    if not touched:
        return None

    def fit(lo: int, hi: int) -> tuple[float, float, np.ndarray] | None:
        places = np.array([q for q, _, _ in inline[lo:hi + 1]])
        values = np.array([v for _, v, _ in inline[lo:hi + 1]])
        steps = np.diff(values)
        if not ((steps > 0).all() or (steps < 0).all()) or (np.diff(places) <= 2 * tolerance).any():
            return None
        if np.abs(steps - steps[0]).max() > 1e-6 * np.abs(values).max():
            return None  # ticks step by one amount
        slope, offset = np.polyfit(values, places, 1)
        if np.abs(slope * values + offset - places).max() > tolerance:
            return None
        return float(slope), float(offset), values

    best = None
    for lo in range(touched[0], -1, -1):  # the longest such run (a dozen labels at most: every one is tried)
        for hi in range(touched[-1], len(inline)):
            if hi - lo + 1 >= max(least, 0 if best is None else len(best[2]) + 1) and (found := fit(lo, hi)):
                best = found
    return best
