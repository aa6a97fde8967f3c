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
lossless images of other sizes that every other look leaves over the limit."""

from __future__ import annotations

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


@lru_cache(maxsize=1)
def _reader() -> Any:
    """One RapidOCR engine per process (a worker builds its own on first use), on one thread (the filter runs a
    worker per core), not upscaling what it is given (its default reads a 30 px cut at 736 px)."""
    from rapidocr import RapidOCR

    return RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False, "Det.limit_type": "max",
                            "Det.limit_side_len": 2000, "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                            "EngineConfig.onnxruntime.inter_op_num_threads": 1})


def _lines(grey: np.ndarray, region: np.ndarray, check: TextCheck, enlarge: float
           ) -> tuple[list[str], float, float] | None:
    """The text lines of ``grey`` (a cut enlarged ``enlarge`` times, uint8) whose boxes touch ``region`` (the
    cut's mask, 0 or 1), their least confidence and the share of ``region`` their boxes cover; ``None`` when a box
    is too tall to be a line of text."""
    import cv2
    import numpy as np

    found = _reader()(np.asarray(cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB)))
    if found.txts is None or found.boxes is None:
        return [], 0.0, 0.0
    covered: np.ndarray = np.zeros(grey.shape, np.uint8)
    texts, confidence = [], 1.0
    for text, quad, score in zip(found.txts, found.boxes, found.scores, strict=True):
        corners = np.rint(np.asarray(quad, dtype=np.float64)).astype(np.int32)
        line = np.zeros(grey.shape, np.uint8)
        cv2.fillConvexPoly(line, corners, 1)
        if not cv2.countNonZero(cv2.bitwise_and(line, region)):
            continue
        if np.ptp(corners[:, 1]) > check.tallest * enlarge:
            return None
        texts.append(unicodedata.normalize("NFKC", str(text)).replace(" ", ""))  # 10¹ read as 10¹ or 101
        confidence = min(confidence, float(score))
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
    import cv2
    import numpy as np

    x, y, w, h = box
    height, width = gb.shape
    top, bottom = max(0, y - check.margin_down), min(height, y + h + check.margin_down)
    left, right = max(0, x - check.margin_across), min(width, x + w + check.margin_across)
    for enlarge in check.enlargements:
        size = (round((right - left) * enlarge), round((bottom - top) * enlarge))
        mask = cv2.resize((np.asarray(region[top:bottom, left:right]) > 0).view(np.uint8), size,
                          interpolation=cv2.INTER_NEAREST)
        read = []
        for grey in (wa, gb):
            cut = cv2.resize(np.ascontiguousarray(grey[top:bottom, left:right]), size,
                             interpolation=cv2.INTER_CUBIC)
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
