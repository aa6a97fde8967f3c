"""Where a chart's OCR text sits and what each box is: the geometry under the ``ocr`` baseline.

Pure functions over :class:`OcrBox` lists (recognised text lines with their bounding boxes). Box roles follow
rules 2 and 3 of :mod:`zuhyo.models.ocr_answer`:

- dropped: publisher boilerplate (``©``, ``Source:``, ``出典``, licence marks, share-button captions) and
  low-confidence reads (< 0.9: icons mistaken for digits);
- *values*: boxes that are one number (``37%``, ``1,413,640``, ``▲3.2``, ``5.2万人``), except *axis ticks* (four or
  more numbers in one column or row stepping evenly) and *years* (1900–2100, which are categories);
- *labels*: text boxes and years, except captions (wider than 45 % of the text extent, or more than 6 words)
  and axis titles (beyond an axis' tick labels: left of a y-axis column, below an x-axis row);
- each value belongs to its nearest label by :func:`aligned_distance`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

_NUMBER = re.compile(
    r"(?P<pre>[^\d\s]{0,3}?)\s?(?P<sign>[-−▲△+])?\s?(?P<num>\d{1,4}(?:[, ]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"\s?(?P<unit>[^\d]{0,10})"
)
"""A box that is one number: short prefix (¥, $, 約), sign, digits with , or space separators, short unit."""
_SUPERSCRIPTS = re.compile(r"[\^⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]")
_WIDE_TITLE_FRACTION = 0.45
_MAX_LABEL_WORDS = 6
_MIN_SCORE = 0.9
_MIN_TICKS = 4
"""Fewer evenly stepped numbers are too often data labels (52, 53, 54 in a bar chart) to call them an axis."""
_BOILERPLATE = re.compile(
    r"©|copyright|^source\b|^sources\b|^出典|^資料|^\(?注|^note\b|additional information|show source"
    r"|our world|in data$|research center|^cc[ -]?by|^cc0$",
    re.I,
)
"""Footers, licence and publisher marks (Statista, Our World in Data, Pew): never a chart's labels or values."""


@dataclass(frozen=True)
class OcrBox:
    """One recognised text line with its axis-aligned bounding box in image pixels."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    score: float = 1.0

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)

    @property
    def width(self) -> float:
        return max(self.x1 - self.x0, 1.0)


@dataclass(frozen=True)
class Classified:
    """Boxes split by role (rule 2 of the module docstring)."""

    values: tuple[tuple[OcrBox, float], ...]
    """Data values with their parsed number (axis ticks and years excluded)."""
    labels: tuple[OcrBox, ...]
    """Category and series labels (text and year boxes that are not captions)."""


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form every comparison uses."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def parse_number(text: str) -> float | None:
    """The number a box shows (``37%`` → 37, ``1 413 640`` → 1413640, ``▲3.2`` → -3.2), or None.

    Only boxes that are one number with at most a short prefix and unit count: ``Media 51``, ``Q2 2020`` and a
    merged tick row ``800 000 1 000 000`` are not numbers.
    """
    m = _NUMBER.fullmatch(number_text(text))
    if m is None or sum(ch.isalpha() for ch in m.group("pre")) > 1:
        return None
    value = float(m.group("num").replace(",", "").replace(" ", ""))
    return -value if m.group("sign") in ("-", "−", "▲", "△") else value


def number_text(text: str) -> str:
    """Normalised box text with superscripts dropped first (NFKC would turn ``m²`` into ``m2``, a digit)."""
    return normalize(_SUPERSCRIPTS.sub("", text))


def number_unit(text: str) -> str:
    """The unit written after a box's number (``5.2万人`` → ``万人``, ``37%`` → ``%``); empty if none."""
    m = _NUMBER.fullmatch(number_text(text))
    return m.group("unit").strip() if m else ""


def format_number(value: float) -> str:
    """``36.0`` → ``36``, ``5.45`` → ``5.45`` (no separators, no unit: numeric metrics parse it)."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def is_year(box: OcrBox) -> bool:
    """A 4-digit integer 1900–2100 (optionally 年/FY): a category on a time axis, not a data value."""
    t = normalize(box.text).replace(" ", "")
    return re.fullmatch(r"(?:fy)?(19\d\d|20\d\d|2100)(?:年度?|fy)?", t) is not None


def reading_order(boxes: Iterable[OcrBox]) -> list[OcrBox]:
    """Boxes sorted into lines (top to bottom, a box joins a line it overlaps vertically by half), left to right."""
    lines: list[list[OcrBox]] = []
    for b in sorted(boxes, key=lambda b: (b.cy, b.x0)):
        if lines and _vertical_overlap(lines[-1][-1], b) >= 0.5:
            lines[-1].append(b)
        else:
            lines.append([b])
    return [b for line in lines for b in sorted(line, key=lambda b: b.x0)]


def reading_order_text(boxes: Iterable[OcrBox]) -> str:
    """The OCR text as lines in reading order (boxes on one visual line joined by a space)."""
    lines: list[list[str]] = []
    prev: OcrBox | None = None
    for b in reading_order(boxes):
        if prev is not None and _vertical_overlap(prev, b) >= 0.5 and b.x0 >= prev.x0:
            lines[-1].append(b.text)
        else:
            lines.append([b.text])
        prev = b
    return "\n".join(" ".join(line) for line in lines)


def aligned_distance(a: OcrBox, b: OcrBox) -> float:
    """Distance that favours one row or one column (rule 3); the centre offset across the line breaks ties."""
    if _vertical_overlap(a, b) >= 0.5:
        return max(0.0, max(a.x0, b.x0) - min(a.x1, b.x1)) + abs(a.cy - b.cy)
    if a.x0 <= b.cx <= a.x1 or b.x0 <= a.cx <= b.x1:
        return max(0.0, max(a.y0, b.y0) - min(a.y1, b.y1)) + abs(a.cx - b.cx)
    return 2 * math.hypot(a.cx - b.cx, a.cy - b.cy)


def classify_boxes(boxes: Sequence[OcrBox]) -> Classified:
    """Split boxes into data values and labels (rule 2)."""
    kept = [b for b in boxes if b.score >= _MIN_SCORE and not _BOILERPLATE.search(normalize(b.text))]
    numeric = [(b, v) for b in kept if (v := parse_number(b.text)) is not None and not is_year(b)]
    y_axes, x_axes = _axis_ticks(numeric)
    ticks = {id(b) for axis in (*y_axes, *x_axes) for b in axis}
    extent = (max((b.x1 for b in kept), default=0.0) - min((b.x0 for b in kept), default=0.0)) or 1.0
    labels = tuple(
        b
        for b in kept
        if (is_year(b) or (parse_number(b.text) is None and re.search(r"[^\W\d_]", b.text)))
        and b.width <= _WIDE_TITLE_FRACTION * extent
        and len(b.text.split()) <= _MAX_LABEL_WORDS
        and not _is_axis_title(b, y_axes, x_axes)
    )
    return Classified(values=tuple((b, v) for b, v in numeric if id(b) not in ticks), labels=labels)


def _is_axis_title(box: OcrBox, y_axes: list[list[OcrBox]], x_axes: list[list[OcrBox]]) -> bool:
    """Text on the far side of an axis' tick labels: left of a y-axis column, below an x-axis row."""
    for col in y_axes:
        if box.x1 <= min(b.x0 for b in col) + 2 and min(b.y0 for b in col) <= box.cy <= max(b.y1 for b in col):
            return True
    for row in x_axes:
        if box.y0 >= max(b.y1 for b in row) - 0.5 * box.height and min(b.x0 for b in row) <= box.cx <= max(
            b.x1 for b in row
        ):
            return True
    return False


def owner_of(value_box: OcrBox, labels: Sequence[OcrBox]) -> OcrBox | None:
    """The label a value belongs to: the nearest by :func:`aligned_distance` (rule 3)."""
    return min(labels, key=lambda lab: aligned_distance(lab, value_box), default=None)


def _axis_ticks(numeric: Sequence[tuple[OcrBox, float]]) -> tuple[list[list[OcrBox]], list[list[OcrBox]]]:
    """Axis tick labels as (y-axis columns, x-axis rows): ≥4 numbers in a column or row stepping evenly."""
    found: tuple[list[list[OcrBox]], list[list[OcrBox]]] = ([], [])
    layouts: tuple[tuple[Callable[[OcrBox], float], Callable[[OcrBox], float]], ...] = (
        (lambda b: b.x1, lambda b: b.cy),  # y axis: right-aligned column, ordered top to bottom
        (lambda b: b.cy, lambda b: b.cx),  # x axis: one row, ordered left to right
    )
    for axes, (key, pos) in zip(found, layouts, strict=True):
        for group in _groups(numeric, key):
            if len(group) < _MIN_TICKS:
                continue
            vals = [v for _, v in sorted(group, key=lambda p: pos(p[0]))]
            steps = [b - a for a, b in zip(vals, vals[1:], strict=False)]
            if steps[0] != 0 and all(math.isclose(s, steps[0], rel_tol=1e-6, abs_tol=1e-9) for s in steps):
                axes.append([b for b, _ in group])
    return found


def _groups(
    numeric: Sequence[tuple[OcrBox, float]], key: Callable[[OcrBox], float]
) -> list[list[tuple[OcrBox, float]]]:
    """Cluster boxes whose ``key`` coordinate lies within half a text height of the cluster's first member."""
    clusters: list[list[tuple[OcrBox, float]]] = []
    for item in sorted(numeric, key=lambda p: key(p[0])):
        if clusters and abs(key(item[0]) - key(clusters[-1][0][0])) <= 0.5 * item[0].height:
            clusters[-1].append(item)
        else:
            clusters.append([item])
    return clusters


def _vertical_overlap(a: OcrBox, b: OcrBox) -> float:
    inter = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(0.0, inter) / min(a.height, b.height)
