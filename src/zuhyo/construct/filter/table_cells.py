"""A ruled table drawn again at another size, compared cell by cell (issue 22).

A table typeset again at another figure size keeps its text's size in pixels while its columns stretch and its
rows move: each cell's number moves by its own amount, so no alignment of the whole (nor of the layout's blocks,
:func:`zuhyo.construct.filter.regions._pieces`) lines the two up, and the second look finds thousands of pixels of
difference where nothing changed. On the hard corpus a table drawn again at another size was lost on most seeds
(bench/README.md, "twenty-fifth session").

:func:`cell_difference` reads both images as a grid of ruled lines: rows where a dark run spans an eighth of the
width (opened with a line that long), columns likewise, the images' own edges where text lies beyond the outermost
rule (a table cut off at the figure's edge); what lies off the background between the rules (text, or the bars and
lines of a chart with gridlines) is what each cell holds. An image is read as a table only where at least half
its cells hold something and at most :attr:`TableCheck.crossing_share` of those reach a rule at either side: a
chart's lines cross its gridlines, and a thin line of other data would be taken out of the difference with the
seams. Two tables with the same number of rows and columns are compared cell
by cell: what each cell holds (rules taken out) cropped to its bounding box, the two crops laid on one
another at the best shift within :attr:`TableCheck.shift` px, blurred, and the pixels differing by more than
:attr:`TableCheck.level` counted after a 2 px opening (a seam of antialiasing is not a stroke); the cell that
differs most is what counts (a copy's few pixels of antialiasing are spread over its cells, one changed number is
all in one). The text's size is
not changed: a table drawn at another resolution, whose glyphs are hinted anew, is not this case, and two tables
whose text differs in size are left to the second look as they were.

Text in the title band (the top :attr:`TableCheck.title_band` of the height) is left out, as the second look
leaves it out: a copy may carry another title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from zuhyo.construct.filter.alignment import TITLE_BAND, grey_plane


@dataclass(frozen=True)
class TableCheck:
    """The parameters of :func:`cell_difference`."""

    ink: int = 128
    """Luma below which a pixel is ink (what rules are read from)."""
    off_background: int = 48
    """How far (in any channel, 0-255) from the image's commonest colour a pixel holds something: a cell's text,
    or the pale bar or coloured line of a chart read through its gridlines."""
    rule_length: float = 0.125
    """The least length of a rule, as a share of the image's width (rows) or height (columns)."""
    least_lines: int = 3
    """The fewest rules each way for an image to be read as a ruled table."""
    rule_width: int = 3
    """The thickest (px) a rule may be: a thicker run is a filled area (a bar, a wedge), and the image is not read
    as a ruled table."""
    text_share: float = 0.5
    """The least share of the cells holding text in each image for the two to be read as tables (a grid of empty
    cells is a chart's gridlines, and would agree whatever its data)."""
    crossing_share: float = 0.3
    """The largest share of the cells holding something whose content reaches their rules at the left or right
    (within :attr:`margin`) for an image to be read as a table: a chart's lines and bars cross its gridlines and axes,
    where a thin line of other data is taken out of the difference with the seams; a table's text keeps off its
    rules (a row label cut off at the figure's edge does not)."""
    margin: int = 2
    """Pixels left out inside each cell's rules (their antialiased edge)."""
    shift: int = 2
    """How far (px) one cell's text may be moved onto the other's after their boxes are laid one on the other."""
    level: int = 40
    """Luma difference (0-255, both blurred by 1 px) above which a pixel differs."""
    title_band: float = TITLE_BAND
    """Fraction of the height at the top left out (where a table's title sits)."""
    most: int = 15
    """The most pixels in which the text of two tables may differ in any one cell for them to show one table: on
    the hard corpus's studied seeds a table drawn again at another size differs in 0-8, a copy against its
    original's hard negative (one number changed) in 125 or more; a matplotlib table with one digit changed
    (9,691 -> 9,694) at eight other figure sizes in 27-39, its copies in 0-8 (bench/README.md, "twenty-fifth
    session")."""


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True in ``flags``."""
    import numpy as np

    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist(), strict=True))


def _ruled(px: np.ndarray, grey: np.ndarray, check: TableCheck
           ) -> tuple[np.ndarray, list[tuple[int, int]], list[tuple[int, int]]]:
    """(what the cells hold (uint8: anything off the background, rules taken out, the title band blank), row
    rules, column rules) of ``px`` (RGB or luma) and its luma ``grey``; each rule as (first, last) pixel across it,
    the image's edges added where something lies beyond the outermost rule. A rule thicker than
    :attr:`TableCheck.rule_width` (a filled area) leaves no rules, and the cells are not read."""
    import cv2
    import numpy as np

    height, width = grey.shape
    ink = (grey < check.ink).astype(np.uint8)
    across = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, max(15, round(width * check.rule_length))), np.uint8))
    down = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((max(15, round(height * check.rule_length)), 1), np.uint8))
    rows, columns = _runs(np.asarray(across.any(axis=1))), _runs(np.asarray(down.any(axis=0)))
    if any(last - first >= check.rule_width for first, last in rows + columns):
        return ink, [], []  # a filled area, not a rule: no table (what the cells hold is not read)
    # Not only dark text: a pale bar or a coloured line in a chart's gridlines is what its cells hold, and differs
    # where the data differ.
    colour = px.reshape(height, width, -1).astype(np.int16)
    background = np.median(colour.reshape(-1, colour.shape[2]), axis=0)
    marked = (np.abs(colour - background).max(axis=2) > check.off_background).astype(np.uint8)
    text = (marked | ink) & ~((across > 0) | (down > 0))
    text[:round(check.title_band * height)] = 0
    for rules, along, size in ((rows, np.asarray(text.any(axis=1)), height),
                               (columns, np.asarray(text.any(axis=0)), width)):
        if rules:
            # beyond the rule's own antialiased edge
            if along[:max(0, rules[0][0] - check.margin)].any():
                rules.insert(0, (-1, -1))
            if along[rules[-1][1] + 1 + check.margin:].any():
                rules.append((size, size))
    return text, rows, columns


def _cell_text(grey: np.ndarray, text: np.ndarray, box: tuple[int, int, int, int]
               ) -> tuple[np.ndarray | None, bool]:
    """(The luma of the text's bounding box within ``box`` (x0, y0, x1, y1), or None where the cell is blank;
    whether it reaches the box's left or right edge, as a chart's lines and bars cross its gridlines and a table's
    text, padded in its cell, does not cross its rules)."""
    import numpy as np

    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        return None, False
    ink = text[y0:y1, x0:x1]
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return None, False
    edge = cols[0] == 0 or cols[-1] == ink.shape[1] - 1  # a row's text may fill its height, not its width
    return grey[y0 + rows[0]:y0 + rows[-1] + 1, x0 + cols[0]:x0 + cols[-1] + 1], bool(edge)


def _cells(grey: np.ndarray, text: np.ndarray, rows: list[tuple[int, int]], columns: list[tuple[int, int]],
           check: TableCheck) -> list[np.ndarray | None] | None:
    """What each cell between the rules holds (:func:`_cell_text`), row by row, or None where the image is not read
    as a table: fewer than :attr:`TableCheck.text_share` of its cells hold something, or more than
    :attr:`TableCheck.crossing_share` of those reach a rule at either side (gridlines, not a table)."""
    m = check.margin
    cells = [_cell_text(grey, text, (columns[c][1] + 1 + m, rows[r][1] + 1 + m, columns[c + 1][0] - m,
                                     rows[r + 1][0] - m))
             for r in range(len(rows) - 1) for c in range(len(columns) - 1)]
    held = [edge for crop, edge in cells if crop is not None]
    if len(held) < check.text_share * len(cells) or sum(held) > check.crossing_share * len(held):
        return None
    return [crop for crop, _ in cells]


def _text_difference(a: np.ndarray, b: np.ndarray, check: TableCheck) -> int:
    """Pixels in which two crops of text differ at their best shift (see the module doc)."""
    import cv2
    import numpy as np

    pad = check.shift + 1
    height, width = max(a.shape[0], b.shape[0]) + 2 * pad, max(a.shape[1], b.shape[1]) + 2 * pad

    def laid(crop: np.ndarray) -> np.ndarray:
        out = np.full((height, width), 255, np.uint8)
        out[pad:pad + crop.shape[0], pad:pad + crop.shape[1]] = crop
        return np.asarray(cv2.GaussianBlur(out, (0, 0), 1.0), dtype=np.int16)

    la, lb = laid(a), laid(b)
    best = height * width
    for dy in range(-check.shift, check.shift + 1):
        for dx in range(-check.shift, check.shift + 1):
            moved = np.roll(la, (dy, dx), axis=(0, 1))
            differs = (np.abs(moved - lb) > check.level).astype(np.uint8)
            differs = cv2.morphologyEx(differs, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
            best = min(best, int(cv2.countNonZero(differs)))
    return best


def cell_difference(pa: np.ndarray, pb: np.ndarray, check: TableCheck = TableCheck()) -> int | None:
    """Pixels in which the text of two ruled tables differs in the cell where it differs most (a cell blank in one
    image and not in the other counts its text's box), or None where either image is not a ruled table
    (:attr:`TableCheck.least_lines`) or the two have other numbers of rows or columns. ``pa`` and ``pb`` are
    content boxes (:func:`zuhyo.construct.filter.regions.content_pixels`), RGB or luma, at their own scale."""
    ga = grey_plane(pa)
    ta, rows_a, cols_a = _ruled(pa, ga, check)
    if min(len(rows_a), len(cols_a)) < check.least_lines:
        return None  # not a table: the other image need not be read
    gb = grey_plane(pb)
    tb, rows_b, cols_b = _ruled(pb, gb, check)
    if len(rows_a) != len(rows_b) or len(cols_a) != len(cols_b):
        return None
    cells_a, cells_b = _cells(ga, ta, rows_a, cols_a, check), _cells(gb, tb, rows_b, cols_b, check)
    if cells_a is None or cells_b is None:
        return None
    worst = 0
    for a, b in zip(cells_a, cells_b, strict=True):
        if a is None or b is None:  # text in one cell only: all of it differs
            worst = max(worst, 0 if a is None and b is None else (a if b is None else b).size)  # type: ignore[union-attr]
        else:
            worst = max(worst, _text_difference(a, b, check))
    return worst
