"""The near-duplicate verification: align one thumbnail to the window of the other it was (possibly) cropped from,
then compare their colours.

For each pair and each direction (``b`` aligned into ``a`` and ``a`` into ``b``):

1. **Alignment** (:func:`best_windows`, vectorised over a batch of pairs): the window of ``a`` that ``b`` shows -
   a crop of up to ``max_crop`` of each side, any offset - from the row and column mean profiles (title band left
   out of the column profile): the normalised correlation of ``b``'s profile with ``a``'s profile resampled to
   every window whose ends lie on the pixel grid (one matrix product for the whole batch: resampling is linear,
   the same for every pair), then a parabola through the best window and its neighbours, along each end, for the
   sub-pixel position. The scale difference disappears in the thumbnail.
2. **Warp**: ``a``'s window resampled (bilinear, OpenCV ``warpAffine``) onto ``b``'s pixel grid. When the
   verification bound is given and the window scores just under it (:attr:`Comparison.refine_from`), the window
   is refined as an affine by OpenCV's ECC on 64 px lumas (:func:`refine_affine`): profiles are a weak aligner
   when the copy has content added at a side (a screenshot's browser chrome and scroll bar). A pair that fails
   both ways is compared on the whole of each thumbnail as well (:func:`whole_scores`, asked by
   :func:`zuhyo.construct.filter.near_duplicates.scored_directions`): the profiles of a few lines across the axes
   say little, and a crop through a title got a window too far off to be refined.
3. **Comparison** (:func:`compare`): a pixel of ``b`` *differs* when its colour lies outside the range of the
   aligned pixels within ``tolerance`` of it (a grey-level erosion and dilation) by more than ``residual_level``
   (so a blurred or slightly shifted edge still matches, a moved bar or wedge does not). Two numbers come out: the
   **score**, 1 minus the share of ``b``'s ink (pixels off its background; at least ``min_ink`` of the body) that
   differs, and the **solid difference**, the number of pixels whose whole 3x3 neighbourhood differs by more than
   the lower ``solid_level``. Recompression and resampling differ in scattered pixels and one-pixel seams along
   edges, never in a solid patch; two charts with other data - a pie whose wedge boundary moved a few degrees
   between two greys, a bar a few pixels taller - do, however small the share of ink that is.

Speed (bench/README.md): ~0.4 ms per pair on one core at 128 px, both directions, where the earlier pure-numpy
version (a search on a one-pixel then a quarter-pixel grid by gathering samples, a numpy warp and a 64 px
pre-check) took ~3.4 ms.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

THUMB = 128
"""Side of the square colour thumbnail every comparison works on."""
TITLE_BAND = 0.14
"""Fraction of the height at the top left out of descriptor and verification (where a chart's title sits)."""


def luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma of uint8 RGB (``...x3``), as float32."""
    import numpy as np

    return np.asarray(rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32), dtype=np.float32)


def grey_plane(px: np.ndarray) -> np.ndarray:
    """``px`` (RGB uint8, or already one plane) as one uint8 plane of ITU-R 601 luma, as Pillow's convert("L")."""
    import cv2
    import numpy as np

    return px if px.ndim == 2 else np.asarray(cv2.cvtColor(px, cv2.COLOR_RGB2GRAY))


@dataclass(frozen=True)
class Comparison:
    """The parameters of the verification (see the module doc); the defaults are the filter's."""

    title_band: float = TITLE_BAND
    """Fraction of the height at the top left out of the comparison (where a chart's title sits)."""
    max_crop: float = 0.10
    """Largest fraction of a side one copy may have lost to a crop (issue 10: 2-8 %)."""
    residual_level: int = 48
    """Colour difference (0-255) above which an aligned pixel counts as different for the score."""
    solid_level: int = 24
    """Colour difference above which a pixel counts towards a solid difference (3x3 all different)."""
    tolerance: int = 1
    """Pixels of misalignment forgiven: a pixel matches the range of the aligned pixels this close to it."""
    min_ink: float = 0.02
    """The differing pixels are counted against the ink, at least this share of the body."""
    grey_chroma: int = 16
    """Channel spread (0-255) above which a pixel has colour (see :attr:`grey_share`)."""
    grey_share: float = 0.002
    """An image is grey when at most this share of its pixels has colour; a pair with a grey image is compared on
    luma, so a copy converted to greyscale matches its colour original."""
    refine_from: float = 0.6
    """A pair whose profile window scores from this up to the verification bound is aligned again by ECC
    (:func:`refine_affine`): the profiles of a copy with content added at a side (a screenshot's browser chrome
    and scroll bar) can correlate best with a wrong window. On the hard corpus's tuning split, every planted copy
    lost at the thumbnail scored 0.67-0.78 (bench/README.md)."""
    refine_side: int = 64
    """Side (px) of the thumbnails' lumas ECC refines on (at 128 px it took 1.5x as long for the same copies)."""
    refine_iterations: int = 30
    """ECC's iterations at most."""
    recolour_strokes: bool = True
    """Whether a pair whose colour map, fitted inside areas (:func:`colour_map`), moves no palette is compared with
    one fitted on every pixel: a line chart or a scatter drawn again with another palette has no areas but its
    strokes and markers, and scored 0.2-0.75 with its colours as they are (bench/README.md, "thirty-first
    session"). Ours."""
    recolour_support: int = 8
    """Pixels (inside one colour's areas) a colour of ``a`` needs for :func:`colour_map` to map it."""
    palette_chroma: int = 40
    """Channel spread (0-255) above which a pixel is coloured ink for :func:`palette_changed`: a palette's colours
    (pastels from 50 up), not black text, grey axes or a cream or beige background (25-30)."""
    palette_least: float = 0.002
    """Share of the pixels the coloured ink must exceed for :func:`palette_changed` to judge by it (a scatter's
    markers are 0.6-1.7 % of a thumbnail)."""
    palette_areas: float = 0.02
    """Share of the pixels the coloured ink in shades the map has colours for must reach for
    :func:`palette_changed` to judge the coloured ink by those shades alone (areas: bars, wedges, cells). A
    scatter's few markers in a resized JPEG copy (62 px of a thumbnail in mapped shades) have their colours moved
    by its chroma's blur, not by a palette."""
    palette_moved: float = 0.4
    """Share of the ink (or of the coloured ink) whose colours a map must move by more than the residual level for
    :func:`palette_changed` to call it another palette or colour map (:func:`compare` with ``recolour``). One
    cell, region or wedge of other data moves a few per cent; viridis drawn again in cividis keeps its yellows and
    moves 45-50 % of the coloured ink (bench/README.md, "twenty-second session": 0.5 lost such maps)."""
    palette_hint_moved: float = 0.5
    """The same share for :func:`palette_moves`, the hint that a pair verified as it is was drawn with another
    palette (its second look then maps the colours): at 0.4 a rotated line chart was mapped and lost."""
    recolour_solid: int = 20
    """Pixels of solid difference over which a pair verified as it is is also compared with its colours mapped
    (:func:`directed_scores`) where :func:`palette_moves` sees no palette moved: as it is, the tone test fails it
    (``near_duplicates.SOLID_NO_LOOK``), and a map that keeps some shades (viridis drawn again in cividis keeps
    its yellows) moves less of the ink than the hint asks."""
    palette_contrast: float = 0.25
    """Share of its distance from the page the ink must keep under a colour map for :func:`palette_changed` to
    call the map a palette: one that sends the marks to the page's colour makes another chart's marks vanish
    rather than draws them again (:func:`_contrast_kept`)."""
    grey_map_solid: int = 20
    """Pixels of solid difference over which a pair with a grey image, verified as it is, whose palette moves has
    its colours mapped (:func:`directed_scores`): a chart drawn again in greys differs in tone (thousands of
    pixels), a greyscale copy, compared on luma, hardly at all."""


@dataclass(frozen=True)
class Prepared:
    """Per-image quantities every comparison of the image reuses (computed once per image, in the workers that
    decode it: :func:`zuhyo.construct.filter.near_duplicates.image_features`)."""

    col_profile: np.ndarray
    """(n, side) float32: column means of the luma below the title band."""
    row_profile: np.ndarray
    """(n, side) float32: row means of the luma."""
    ink: np.ndarray
    """(n,) int64: body pixels off the background (the body's median colour) by more than the residual level."""
    grey: np.ndarray
    """(n,) bool: the image has (almost) no colour - a pair with a grey image is compared on luma alone."""

    def take(self, index: np.ndarray) -> Prepared:
        """The rows ``index``, in that order."""
        return Prepared(self.col_profile[index], self.row_profile[index], self.ink[index], self.grey[index])


def prepare(thumbs: np.ndarray, cmp: Comparison = Comparison(), batch: int = 512) -> Prepared:
    """:class:`Prepared` for ``thumbs`` (n x side x side x 3 uint8; a memory map is read in batches)."""
    import numpy as np

    n, side = len(thumbs), thumbs.shape[1]
    top = round(cmp.title_band * side)
    cols, rows = np.empty((n, side), dtype=np.float32), np.empty((n, side), dtype=np.float32)
    ink = np.empty(n, dtype=np.int64)
    grey = np.empty(n, dtype=bool)
    for s in range(0, n, batch):
        t = np.asarray(thumbs[s:s + batch])
        g = luma(t.astype(np.float32))
        cols[s:s + batch] = g[:, top:].mean(axis=1)
        rows[s:s + batch] = g.mean(axis=2)
        body = t[:, top:].astype(np.int16)
        med = np.median(body.reshape(len(t), -1, 3), axis=1).astype(np.int16)  # the background colour
        off = np.abs(body - med[:, None, None, :])
        # the largest channel difference, as two elementwise maxima: numpy's reduction over a last axis of 3 is
        # several times slower
        most = np.maximum(np.maximum(off[..., 0], off[..., 1]), off[..., 2])
        ink[s:s + batch] = (most > cmp.residual_level).sum(axis=(1, 2))
        c = t.astype(np.int16)
        chroma = np.maximum(np.maximum(np.abs(c[..., 0] - c[..., 1]), np.abs(c[..., 1] - c[..., 2])),
                            np.abs(c[..., 0] - c[..., 2]))
        grey[s:s + batch] = (chroma > cmp.grey_chroma).mean(axis=(1, 2)) <= cmp.grey_share
    return Prepared(cols, rows, ink, grey)


@dataclass(frozen=True)
class _WindowGrid:
    starts: np.ndarray
    """(K,) window starts (pixel centres, whole pixels)."""
    ends: np.ndarray
    """(K,) window ends."""
    resample: np.ndarray
    """(side, K * side) float32: a profile times this is the profile resampled to every window, side samples each."""
    index: np.ndarray
    """(starts, ends) -> window number, -1 where the window loses more than max_crop: ``index[s, (side-1) - e]``."""


@functools.lru_cache(maxsize=8)
def _window_grid(side: int, max_crop: float) -> _WindowGrid:
    """The windows whose ends lie on whole pixels and lose at most ``max_crop`` of the side (memoised: the same
    for every pair of thumbnails of one side)."""
    import numpy as np

    latest = int(np.floor((side - 1) * max_crop + 1e-9))
    shortest = (side - 1) * (1 - max_crop)
    s, e = np.meshgrid(np.arange(latest + 1.0), (side - 1) - np.arange(latest + 1.0), indexing="ij")
    valid = e - s >= shortest - 1e-9
    index = np.full(s.shape, -1, dtype=np.int64)
    index[valid] = np.arange(int(valid.sum()))
    starts, ends = s[valid], e[valid]
    t = np.arange(side) / (side - 1)
    resample = np.zeros((side, len(starts) * side), dtype=np.float32)
    for k, (a, b) in enumerate(zip(starts, ends, strict=True)):
        pos = a + (b - a) * t
        i0 = np.minimum(pos.astype(np.int64), side - 2)
        f = pos - i0
        cols = k * side + np.arange(side)
        resample[i0, cols] += 1 - f
        resample[i0 + 1, cols] += f
    for arr in (starts, ends, resample, index):
        arr.setflags(write=False)
    return _WindowGrid(starts, ends, resample, index)


def best_windows(pa: np.ndarray, pb: np.ndarray, max_crop: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the window (start, length; pixel centres) of profile ``pa`` that best matches all of ``pb``
    resampled to it (normalised correlation), for windows losing up to ``max_crop`` of the side: every window with
    whole-pixel ends, then a parabola through the best and its two neighbours along each end (at most half a
    pixel either way)."""
    import numpy as np

    count, n = pa.shape
    grid = _window_grid(n, max_crop)
    k_all = len(grid.starts)
    windows = (np.asarray(pa, dtype=np.float32) @ grid.resample).reshape(count, k_all, n)
    rb = np.asarray(pb, dtype=np.float32)
    rb = rb - rb.mean(axis=1, keepdims=True)
    num = np.einsum("bkn,bn->bk", windows, rb)  # rb has zero mean: no need to centre the windows here
    mean = windows.mean(axis=2)
    var = np.maximum(np.einsum("bkn,bkn->bk", windows, windows) - n * mean * mean, 0.0)
    den = np.sqrt(var) * np.linalg.norm(rb, axis=1)[:, None]
    corr = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    best = np.argmax(corr, axis=1)
    rows = np.arange(count)
    si = grid.starts[best].astype(np.int64)
    ej = ((n - 1) - grid.ends[best]).astype(np.int64)
    peak = corr[rows, best]

    def offset(lower: tuple[int, int], upper: tuple[int, int]) -> np.ndarray:
        """Sub-pixel offset of the peak from the parabola through (lower, best, upper) neighbours."""
        values = []
        ok = np.ones(count, dtype=bool)
        for di, dj in (lower, upper):
            i, j = si + di, ej + dj
            inside = (i >= 0) & (j >= 0) & (i < grid.index.shape[0]) & (j < grid.index.shape[1])
            k = np.where(inside, grid.index[np.clip(i, 0, grid.index.shape[0] - 1),
                                            np.clip(j, 0, grid.index.shape[1] - 1)], -1)
            ok &= k >= 0
            values.append(corr[rows, np.maximum(k, 0)])
        lo, hi = values
        curvature = lo - 2 * peak + hi
        ok &= curvature < 0
        shift = 0.5 * (lo - hi) / np.where(ok, curvature, -1.0)
        return np.where(ok, np.clip(shift, -0.5, 0.5), 0.0)

    start = grid.starts[best] + offset((-1, 0), (1, 0))
    end = grid.ends[best] + offset((0, 1), (0, -1))  # index column j grows as the end moves left
    return start, end - start


def window_affine(windows: np.ndarray, side: int) -> np.ndarray:
    """(m, 2, 3) float32: per window ``x0, w, y0, h`` (rows of :func:`directed_windows`, pixel centres of a
    ``side`` px thumbnail) the affine from the shown thumbnail's pixel grid to the window's."""
    import numpy as np

    windows = np.asarray(windows, dtype=np.float64).reshape(-1, 4)
    out = np.zeros((len(windows), 2, 3), dtype=np.float32)
    out[:, 0, 0] = windows[:, 1] / (side - 1)
    out[:, 0, 2] = windows[:, 0]
    out[:, 1, 1] = windows[:, 3] / (side - 1)
    out[:, 1, 2] = windows[:, 2]
    return out


def whole_affine(side: int) -> np.ndarray:
    """(2, 3) float32: :func:`window_affine` of the whole of a ``side`` px thumbnail (the identity)."""
    import numpy as np

    return window_affine(np.array([0.0, side - 1, 0.0, side - 1]), side)[0]


def rescaled_affine(affine: np.ndarray, cx: float, cy: float | None = None) -> np.ndarray:
    """``affine`` (2x3, grid to grid) on both grids scaled by ``cx`` across and ``cy`` down (default ``cx``;
    pixel centres: u' = (u + 0.5) c - 0.5)."""
    import numpy as np

    cy = cx if cy is None else cy
    s = np.array([[cx, 0.0, 0.5 * cx - 0.5], [0.0, cy, 0.5 * cy - 0.5], [0.0, 0.0, 1.0]])
    full = np.vstack([np.asarray(affine, dtype=np.float64), [0.0, 0.0, 1.0]])
    return np.asarray((s @ full @ np.linalg.inv(s))[:2], dtype=np.float32)


def refine_affine(ta: np.ndarray, tb: np.ndarray, affine: np.ndarray, cmp: Comparison = Comparison()) -> np.ndarray:
    """``affine`` (2x3, ``tb``'s grid to ``ta``'s, both side x side x 3 uint8) refined by OpenCV's ECC (an affine)
    on :attr:`Comparison.refine_side` px lumas; as it was when ECC does not converge."""
    import cv2
    import numpy as np

    side = ta.shape[0]
    c = cmp.refine_side / side
    size = (cmp.refine_side, cmp.refine_side)

    def small(t: np.ndarray) -> np.ndarray:
        grey = cv2.resize(cv2.cvtColor(np.ascontiguousarray(t), cv2.COLOR_RGB2GRAY), size,
                          interpolation=cv2.INTER_AREA)
        return np.asarray(cv2.GaussianBlur(grey.astype(np.float32), (3, 3), 0))

    try:
        _, found = cv2.findTransformECC(small(tb), small(ta), rescaled_affine(affine, c), cv2.MOTION_AFFINE,
                                        (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, cmp.refine_iterations,
                                         1e-4), np.full(size[::-1], 255, dtype=np.uint8), 1)
    except cv2.error:  # no convergence (a flat image, say)
        return np.asarray(affine, dtype=np.float32)
    return rescaled_affine(found, 1 / c)


def warped(ta: np.ndarray, affine: np.ndarray) -> np.ndarray:
    """``ta`` (side x side x channels uint8) resampled (bilinear) onto the other thumbnail's grid by ``affine``
    (2x3, that grid's pixel centres to ``ta``'s)."""
    import cv2
    import numpy as np

    side = ta.shape[0]
    return np.asarray(cv2.warpAffine(np.ascontiguousarray(ta), np.asarray(affine, dtype=np.float64), (side, side),
                                     flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                     borderMode=cv2.BORDER_REPLICATE))


def unexplained_ink(ta: np.ndarray, tb: np.ndarray, affine: np.ndarray, level: int, reach: int,
                    turns: Sequence[float] = (0.0,), enough: int | None = None,
                    title_band: float = TITLE_BAND) -> tuple[int, int]:
    """(of ``ta``'s, of ``tb``'s): pixels of ink of each thumbnail (side x side x 3 uint8; ``ta`` warped onto
    ``tb``'s grid by ``affine`` as :func:`warped` does, then turned about the grid's centre by each of ``turns``,
    degrees) that the other leaves unexplained, at the turn where the lesser of the two is least - the first
    where it is at most ``enough``, when given. Ink is a pixel ``level`` luma levels under the brightest of its
    7x7 neighbourhood; ink at half the level, or a colour edge (the range of any channel over 3x3) of ``level``,
    within ``reach`` pixels explains the other's. The ``title_band`` and the rim of what both show (2 pixels) are
    left out."""
    import math

    import cv2
    import numpy as np

    side = tb.shape[0]
    around, edge = np.ones((7, 7), dtype=np.uint8), np.ones((3, 3), dtype=np.uint8)
    near, rim = np.ones((2 * reach + 1, 2 * reach + 1), dtype=np.uint8), np.ones((5, 5), dtype=np.uint8)

    def ink_and_explains(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
        dark = cv2.subtract(cv2.dilate(grey, around), grey)
        colour_edge = cv2.subtract(cv2.dilate(rgb, edge), cv2.erode(rgb, edge)).max(axis=2)
        explains = ((dark > level // 2) | (colour_edge > level)).astype(np.uint8)
        return dark > level, cv2.dilate(explains, near) > 0

    ink_b, explained_by_b = ink_and_explains(np.ascontiguousarray(tb))
    best: tuple[int, int] | None = None
    base = np.asarray(affine, dtype=np.float64)
    centre = np.array([(side - 1) / 2, (side - 1) / 2])
    whole = np.full((side, side), 255, dtype=np.uint8)
    for degrees in turns:
        cos, sin = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
        turn = np.array([[cos, -sin], [sin, cos]])
        # the grid's point x is taken from ta where the affine takes the point turned about the centre
        turned = np.hstack([base[:, :2] @ turn, (base[:, :2] @ (centre - turn @ centre) + base[:, 2])[:, None]])
        shown = cv2.warpAffine(whole, turned, (side, side), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP,
                               borderValue=0)
        inside = cv2.erode(shown, rim) > 0
        inside[:round(title_band * side)] = False
        ink_a, explained_by_a = ink_and_explains(warped(ta, turned))
        counts = (int(np.count_nonzero(ink_a & ~explained_by_b & inside)),
                  int(np.count_nonzero(ink_b & ~explained_by_a & inside)))
        if best is None or min(counts) < min(best):
            best = counts
        if enough is not None and min(best) <= enough:
            break
    assert best is not None, "no turns"
    return best


COLOUR_BINS = 16
"""Levels per channel of the colours :func:`colour_map` maps (16 x 16 x 16 bins; a power of 2)."""


COARSE_BINS = 8
"""Levels per channel of the coarser colours :func:`colour_map` falls back on, and at which
:func:`palette_changed` finds a chart's background (its commonest colour)."""


def _colour_bins(rgb: np.ndarray) -> np.ndarray:
    """(h, w) uint16: the bin of each pixel of ``rgb`` (h x w x 3 or more channels, uint8)."""
    import cv2
    import numpy as np

    shift = (256 // COLOUR_BINS).bit_length() - 1
    # channel planes through OpenCV, then 2-D shifts: numpy's arithmetic over a last axis of 3 is several times slower
    r, g, b = (np.asarray(plane, dtype=np.uint8) >> shift for plane in cv2.split(np.ascontiguousarray(rgb))[:3])
    return np.asarray((r.astype(np.uint16) << 2 * (8 - shift)) | (g.astype(np.uint16) << (8 - shift)) | b)


def colour_map(window: np.ndarray, tb: np.ndarray, cmp: Comparison = Comparison(), areas: bool = True,
               bins: np.ndarray | None = None) -> np.ndarray:
    """(COLOUR_BINS**3, 3) float32: per colour bin of ``window`` (``a`` aligned onto ``tb``'s grid, both
    h x w x 3 or 4 uint8), the mean colour of ``tb`` where ``window`` shows that bin inside an area of it (its
    3x3 neighbourhood in the bin too; with ``areas`` false, anywhere) - the palette or colour map ``tb`` was drawn
    with in place of ``a``'s. A bin with fewer than :attr:`Comparison.recolour_support` such pixels takes the
    mean over its bin at :data:`COARSE_BINS` levels a channel (small markers, thin lines: few pixels each of a few
    shades); NaN where that has too few too (left as it is). Two shades of a continuous colour map that share a
    coarse bin (a heatmap's neighbouring cells) may be drawn in two far colours by another map. ``bins``:
    ``window``'s :func:`_colour_bins` where already found."""
    import cv2
    import numpy as np

    bins = _colour_bins(window) if bins is None else bins
    planes = cv2.split(np.ascontiguousarray(tb))[:3]
    count, totals = _colour_sums(bins, planes, _inside_areas(bins) if areas else None)
    return _map_of(count, totals, cmp)


def _inside_areas(bins: np.ndarray) -> np.ndarray:
    """Where ``bins`` (h x w) is inside an area of one bin: its 3x3 neighbourhood in the bin too."""
    import cv2
    import numpy as np

    kernel = np.ones((3, 3), np.uint8)
    return np.asarray(cv2.erode(bins, kernel) == cv2.dilate(bins, kernel))


def _colour_sums(bins: np.ndarray, planes: Sequence[np.ndarray], where: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per colour bin (of ``bins``, h x w), its pixels and the sums of ``planes`` (``tb``'s three channels) over
    them, where ``where`` (every pixel when ``None``)."""
    import numpy as np

    if where is None:
        return _binned_sums(bins.ravel().astype(np.intp), planes, COLOUR_BINS ** 3)
    inside, _ = _colour_sums_apart(bins, planes, where)
    return inside


def _colour_sums_apart(bins: np.ndarray, planes: Sequence[np.ndarray], where: np.ndarray
                       ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """:func:`_colour_sums` where ``where`` and where not, in one pass over the pixels (the second map of
    :func:`palette_map` sums the rest)."""
    import numpy as np

    size = COLOUR_BINS ** 3
    key = (bins.astype(np.intp) << 1) | np.asarray(where, dtype=bool).view(np.uint8)
    count, totals = _binned_sums(key.ravel(), planes, 2 * size)
    return (count[1::2], totals[1::2]), (count[0::2], totals[0::2])


def _binned_sums(key: np.ndarray, planes: Sequence[np.ndarray], size: int) -> tuple[np.ndarray, np.ndarray]:
    """(count, sums): per ``key`` (intp, one per pixel, under ``size``), its pixels and the sums of the three
    ``planes`` (uint8) over them, as float64 - exact: every sum is an integer under 2**53. Two channels are summed
    in one weighted count, packed as ``r + low g`` with ``low`` over any one channel's sum, where that stays
    under 2**53 (images of up to ~2**18 pixels)."""
    import numpy as np

    r, g, b = (np.asarray(plane).ravel() for plane in planes[:3])
    count = np.bincount(key, minlength=size).astype(np.float64)
    low = float(1 << (255 * key.size).bit_length())
    if low * low > 2.0 ** 53:
        return count, np.stack([np.bincount(key, weights=v, minlength=size) for v in (r, g, b)], axis=1)
    packed = np.bincount(key, weights=g * low + r, minlength=size)
    high = np.floor(packed / low)  # exact: a division by a power of two
    totals = np.empty((size, 3), dtype=np.float64)
    totals[:, 0], totals[:, 1] = packed - high * low, high
    totals[:, 2] = np.bincount(key, weights=b, minlength=size)
    return count, totals


def _map_of(count: np.ndarray, totals: np.ndarray, cmp: Comparison) -> np.ndarray:
    """:func:`colour_map`'s table from its bins' pixels and channel sums (:func:`_colour_sums`)."""
    import numpy as np

    size = COLOUR_BINS ** 3
    up = _coarse_of(COLOUR_BINS, COARSE_BINS)
    coarse_count = np.bincount(up, weights=count, minlength=COARSE_BINS ** 3)[up]
    coarse_totals = np.stack([np.bincount(up, weights=totals[:, c], minlength=COARSE_BINS ** 3)[up]
                              for c in range(3)], axis=1)
    fine = count >= cmp.recolour_support
    count, totals = np.where(fine, count, coarse_count), np.where(fine[:, None], totals, coarse_totals)
    out = np.full((size, 3), np.nan, dtype=np.float32)
    enough = count >= cmp.recolour_support
    out[enough] = totals[enough] / count[enough, None]
    return out


def _palette_ink(window: np.ndarray, bins: np.ndarray, cmp: Comparison, count: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`palette_changed` weighs whatever the map: per colour bin of ``window`` (``bins``) its pixels
    (``count`` where already found), whether it is the background, and its coloured pixels (chroma over
    :attr:`Comparison.palette_chroma`)."""
    import cv2
    import numpy as np

    if count is None:
        count = np.bincount(bins.ravel(), minlength=COLOUR_BINS ** 3)
    # The background: the commonest colour at 8 levels a channel (a light axes' face and the white page round it
    # are one; at the map's finer levels the bars of a bar chart can outnumber either).
    up = _coarse_of(COLOUR_BINS, COARSE_BINS)
    background = up == int(np.argmax(np.bincount(up, weights=count, minlength=COARSE_BINS ** 3)))
    r, g, b = cv2.split(np.ascontiguousarray(window))[:3]  # OpenCV: numpy's reductions over 3 channels are slow
    chroma = cv2.subtract(cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b))
    return count, background, np.bincount(bins[chroma > cmp.palette_chroma], minlength=COLOUR_BINS ** 3)


def palette_changed(window: np.ndarray, table: np.ndarray, cmp: Comparison = Comparison(),
                    bins: np.ndarray | None = None, share: float | None = None,
                    ink: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> bool:
    """Whether ``table`` (:func:`colour_map` of ``window``) moves the colours of a ``share`` of ``window``'s ink
    (its pixels off the most common bin), or of its coloured ink (chroma over :attr:`Comparison.palette_chroma`),
    by more than :attr:`Comparison.residual_level` (``share``: :attr:`Comparison.palette_moved` unless given): a
    copy drawn with another palette or colour map. A chart with one cell, region or wedge of other data moves one
    colour, not that much of the ink, so it is not compared as recoloured. The coloured ink is a chart's palette
    without its black text, grey axes and tinted backgrounds: a scatter's markers or a single red series drawn
    again in blue are most of that, if not of all the ink. ``bins``: ``window``'s :func:`_colour_bins` where
    already found; ``ink``: its :func:`_palette_ink` where already found."""
    import numpy as np

    bins = _colour_bins(window) if bins is None else bins
    count, background, coloured = _palette_ink(window, bins, cmp) if ink is None else ink
    mapped = ~np.isnan(table[:, 0])
    if _contrast_kept(count, background, mapped, table) < cmp.palette_contrast:
        return False
    moved = np.zeros(len(table), dtype=bool)  # of the bins mapped only: a few dozen of the COLOUR_BINS**3
    moved[mapped] = np.abs(table[mapped] - _bin_centres()[mapped]).max(axis=1) > cmp.residual_level
    count, coloured = count.copy(), coloured.copy()  # zeroed below
    # Where most of the coloured ink, and enough of it (Comparison.palette_areas), is in shades the map has
    # colours for (areas: bars, wedges, cells), those shades alone: a bar's anti-aliased edges are shades of
    # their own, too few for the map, and would outweigh a series left in nearly its colour (three bars of which
    # two moved). Thin lines are mostly such blends, and the few shades mapped are no palette.
    if coloured[mapped].sum() >= max(0.5 * coloured.sum(), cmp.palette_areas * bins.size):
        coloured = coloured * mapped
    least = (0, cmp.palette_least * bins.size)  # a few coloured pixels (JPEG's chroma noise) are no palette
    share = cmp.palette_moved if share is None else share
    for weights, fewest in zip((count, coloured), least, strict=True):
        weights[background] = 0
        if weights.sum() > max(0, fewest) and weights[moved].sum() >= share * weights.sum():
            return True
    return False


def _contrast_kept(count: np.ndarray, background: np.ndarray, mapped: np.ndarray, table: np.ndarray) -> float:
    """How far ``table`` keeps the ink (``count`` per bin off the ``background`` bins, where ``mapped``: the bins
    it has a colour for) from the page: the ink's mean distance (largest channel difference) from the colour the
    map gives the background, over its mean distance from the background's own colour. Another palette or colour
    map draws the marks in other colours, some paler, some darker (0.56-1.08 on the hard corpus's colour-map
    copies, a heatmap in Greys among them); a map that sends them all to the page is another chart's blank face
    (a heatmap's cells mapped to a pale log-log chart's cream: 0.04-0.06)."""
    import numpy as np

    page, ink = background & mapped, mapped & ~background
    if not count[page].any() or not count[ink].any():
        return 1.0
    weights = count[page, None] / count[page].sum()
    face, own_face = (table[page] * weights).sum(axis=0), (_bin_centres()[page] * weights).sum(axis=0)
    drawn = (count[ink] * np.abs(table[ink] - face).max(axis=1)).sum()
    own = (count[ink] * np.abs(_bin_centres()[ink] - own_face).max(axis=1)).sum()
    return float(drawn / own) if own > 0 else 1.0


@functools.cache
def _coarse_of(fine: int, coarse: int) -> np.ndarray:
    """(fine**3,) intp: the bin at ``coarse`` levels a channel of each bin at ``fine`` levels."""
    import numpy as np

    r, g, b = np.unravel_index(np.arange(fine ** 3), (fine, fine, fine))
    k = fine // coarse
    out = np.asarray((r // k) * coarse * coarse + (g // k) * coarse + b // k, dtype=np.intp)
    out.setflags(write=False)
    return out


@functools.cache
def _bin_centres() -> np.ndarray:
    """(COLOUR_BINS**3, 3) float64: each colour bin's centre colour."""
    import numpy as np

    step = 256 // COLOUR_BINS
    idx = np.arange(COLOUR_BINS ** 3)
    centre = np.stack([idx // COLOUR_BINS ** 2, idx // COLOUR_BINS % COLOUR_BINS, idx % COLOUR_BINS], axis=1)
    return np.asarray(centre * step + step / 2, dtype=np.float64)


def palette_moves(ta: np.ndarray, tb: np.ndarray, affine: np.ndarray, cmp: Comparison = Comparison()) -> bool:
    """Whether ``tb`` shows ``ta`` (warped by ``affine``, as :func:`compare`) drawn with another palette, judged
    from all their pixels (:func:`colour_map` without ``areas``): marks a pixel or two across on a thumbnail - a
    scatter's markers - have no area to fit a map on there, but their colours' means still move. Only a hint
    for the second look, which fits the map on areas at its resolution."""
    window = warped(ta, affine)
    bins = _colour_bins(window)
    table = colour_map(window, tb, cmp, areas=False, bins=bins)
    return palette_changed(window, table, cmp, bins=bins, share=cmp.palette_hint_moved)


def recoloured(px: np.ndarray, table: np.ndarray, bins: np.ndarray | None = None) -> np.ndarray:
    """``px`` (h x w x 3 or 4 uint8) with each pixel's colour replaced by ``table``'s for its bin
    (:func:`colour_map`), where the table has one; ``bins``: ``px``'s :func:`_colour_bins` where already found."""
    import cv2
    import numpy as np

    bins = _colour_bins(px) if bins is None else bins
    known = (~np.isnan(table[:, 0]))[bins].view(np.uint8)
    lookup = np.clip(np.rint(np.nan_to_num(table)), 0, 255).astype(np.uint8)
    # plane by plane through OpenCV: numpy's gathers and masks over a last axis of 3 are several times slower
    planes = list(cv2.split(np.ascontiguousarray(px)))
    for c in range(3):
        planes[c] = cv2.copyTo(np.take(np.ascontiguousarray(lookup[:, c]), bins), known, planes[c])
    return np.asarray(cv2.merge(planes))


def palette_map(window: np.ndarray, tb: np.ndarray, cmp: Comparison = Comparison(),
                bins: np.ndarray | None = None) -> np.ndarray | None:
    """The colour map (:func:`colour_map`) of ``window`` (``a`` aligned onto ``tb``'s grid) to ``tb`` that moves a
    palette (:func:`palette_changed`): fitted inside areas, else (:attr:`Comparison.recolour_strokes`) on every
    pixel; ``None`` when neither does. ``bins``: ``window``'s :func:`_colour_bins` where already found."""
    import cv2
    import numpy as np

    bins = _colour_bins(window) if bins is None else bins
    planes = cv2.split(np.ascontiguousarray(tb))[:3]
    (count, totals), (rest_count, rest_totals) = _colour_sums_apart(bins, planes, _inside_areas(bins))
    table = _map_of(count, totals, cmp)
    ink = _palette_ink(window, bins, cmp, (count + rest_count).astype(np.int64))  # once for either map
    if palette_changed(window, table, cmp, bins=bins, ink=ink):
        return table
    if not cmp.recolour_strokes:
        return None
    # Lines and markers drawn with another palette: no areas to fit the map on, their strokes are most of the ink
    # (a red and a blue line drawn again in blue and orange). Fitted on every pixel, the map moves their palette.
    table = _map_of(count + rest_count, totals + rest_totals, cmp)
    return table if palette_changed(window, table, cmp, bins=bins, ink=ink) else None


def recoloured_onto(ta: np.ndarray, tb: np.ndarray, affine: np.ndarray, cmp: Comparison = Comparison()) -> np.ndarray:
    """``ta`` (side x side x 3 uint8) with its colours mapped to those ``tb`` shows in their place
    (:func:`palette_map` of ``ta`` warped onto ``tb``'s grid by ``affine``, as :func:`compare` with ``recolour``
    maps them; the map fitted inside areas where neither moves a palette), on ``ta``'s own grid: a copy drawn with
    another palette or colour map, drawn back in the other's."""
    window = warped(ta, affine)
    bins = _colour_bins(window)
    table = palette_map(window, tb, cmp, bins)
    return recoloured(ta, colour_map(window, tb, cmp, bins=bins) if table is None else table)


def recolourable(px: np.ndarray, table: np.ndarray, bins: np.ndarray | None = None) -> np.ndarray:
    """(h, w) uint8, 1 where ``table`` (:func:`colour_map`) has a colour for the bin of ``px``'s pixel (h x w x 3
    or 4 uint8): what :func:`recoloured` maps; 0 where it leaves the pixel as it is."""
    import numpy as np

    return np.asarray(~np.isnan(table[_colour_bins(px) if bins is None else bins, 0])).view(np.uint8)


def compare(ta: np.ndarray, tb: np.ndarray, affine: np.ndarray, ink_b: int, cmp: Comparison = Comparison(),
            grey: bool = False, recolour: bool = False) -> tuple[float, int]:
    """(score, solid difference) of ``tb`` against ``ta`` warped onto its grid by ``affine`` (2x3, ``tb``'s pixel
    centres to ``ta``'s: :func:`window_affine` of a window, or refined; both side x side x 3 uint8),
    ``ink_b`` being ``tb``'s :attr:`Prepared.ink`; with ``grey`` both are compared on their luma; with
    ``recolour`` ``a``'s colours are first mapped to those ``b`` shows in their place (:func:`colour_map`: a copy
    drawn with another palette or colour map: :func:`palette_map`; when no map moves enough of ``a``'s ink the
    pair scores 0 with the whole grid as its solid difference)."""
    import cv2
    import numpy as np

    side = ta.shape[0]
    top = round(cmp.title_band * side)
    kernel = np.ones((2 * cmp.tolerance + 1, 2 * cmp.tolerance + 1), dtype=np.uint8)
    # Four channels: OpenCV's vectorised paths are several times faster for them than for three.
    if grey:  # ITU-R 601 luma, as Pillow's convert("L") makes a greyscale copy
        a4 = cv2.cvtColor(cv2.cvtColor(np.ascontiguousarray(ta), cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGBA)
        b4 = cv2.cvtColor(cv2.cvtColor(np.ascontiguousarray(tb), cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGBA)
    else:
        a4 = cv2.cvtColor(np.ascontiguousarray(ta), cv2.COLOR_RGB2RGBA)
        b4 = cv2.cvtColor(np.ascontiguousarray(tb), cv2.COLOR_RGB2RGBA)
    window = warped(a4, affine)
    if recolour:
        bins = _colour_bins(window)  # once for the map, the test and the recolouring
        table = palette_map(window, b4, cmp, bins)
        if table is None:
            return 0.0, int(window.shape[0] * window.shape[1])
        window = recoloured(window, table, bins)
    lowest, highest = cv2.erode(window, kernel), cv2.dilate(window, kernel)
    outside = cv2.max(cv2.subtract(lowest, b4), cv2.subtract(b4, highest))[top:]  # saturating: 0 inside the range
    body = cv2.max(cv2.max(outside[:, :, 0], outside[:, :, 1]), outside[:, :, 2])
    differs = int(np.count_nonzero(body > cmp.residual_level))
    floor = cmp.min_ink * body.shape[0] * body.shape[1]
    score = 1.0 - differs / max(float(ink_b), floor)
    weak = (body > cmp.solid_level).view(np.uint8)
    solid = int(np.count_nonzero(cv2.erode(weak, np.ones((3, 3), dtype=np.uint8))[1:-1, 1:-1]))
    return score, solid


def directed_windows(prep: Prepared, ia: np.ndarray, ib: np.ndarray, cmp: Comparison = Comparison()) -> np.ndarray:
    """(m, 4): per pair, the window ``x0, w, y0, h`` (pixel centres) of ``thumbs[ia]`` that ``thumbs[ib]``
    shows (:func:`best_windows` on the profiles)."""
    import numpy as np

    x0, w = best_windows(prep.col_profile[ia], prep.col_profile[ib], cmp.max_crop)
    y0, h = best_windows(prep.row_profile[ia], prep.row_profile[ib], cmp.max_crop)
    return np.stack([x0, w, y0, h], axis=1)


def directed_scores(thumbs: np.ndarray, prep: Prepared, ia: np.ndarray, ib: np.ndarray,
                    cmp: Comparison = Comparison(), windows: np.ndarray | None = None,
                    refine_below: float | None = None, defer_hint: bool = False
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(score, solid difference, affine, recoloured) of each ``thumbs[ib]`` aligned into the window of
    ``thumbs[ia]`` it shows (``prep`` indexed like ``thumbs``; ``windows`` from :func:`directed_windows` when
    already found). With ``refine_below`` (the verification bound) a pair scoring from
    :attr:`Comparison.refine_from` up to it is aligned again (:func:`refine_affine`), and a pair still under it is
    compared again with ``a``'s colours mapped to ``b``'s (:func:`compare` with ``recolour``) in its window and in
    the whole image; each keeps the better. A colour pair verified as it is counts as recoloured too when it also
    verifies so, or its palette moves (:func:`palette_moves`). ``affine`` (m, 2, 3) is the alignment scored,
    ``recoloured`` (m,) whether the colours were mapped (the second look maps them too). With ``defer_hint``
    ``recoloured`` is int8, -1 where only :func:`palette_moves` would tell (a colour pair verified as it is whose
    solid difference decides without it): the caller asks it for the direction it keeps (the same result, a
    hint fewer for each pair whose both directions verify)."""
    import numpy as np

    if windows is None:
        windows = directed_windows(prep, ia, ib, cmp)
    affines = window_affine(windows, thumbs.shape[1])
    side = thumbs.shape[1]
    whole = whole_affine(side)
    scores, solids = np.zeros(len(ia)), np.zeros(len(ia), dtype=np.int64)
    mapped = np.zeros(len(ia), dtype=np.int8)
    for q, (a, b) in enumerate(zip(ia.tolist(), ib.tolist(), strict=True)):
        grey = bool(prep.grey[a] or prep.grey[b])
        scores[q], solids[q] = compare(thumbs[a], thumbs[b], affines[q], int(prep.ink[b]), cmp, grey=grey)
        if refine_below is None:
            continue
        if scores[q] >= refine_below:
            # Verified as it is, but drawn with another palette (a scatter's small markers in other colours agree
            # on the thumbnail, not at the second look): the second look maps the colours too. A grey pair is
            # never so marked.
            floor = cmp.grey_map_solid if grey else 0
            decides = floor < solids[q] <= cmp.recolour_solid  # whether the colours are mapped below
            moves = False
            if decides or not (grey or defer_hint):
                moves = palette_moves(thumbs[a], thumbs[b], affines[q], cmp)
            if not grey:
                mapped[q] = moves if decides or not defer_hint else -1  # -1: the caller asks if it keeps this one
            if (moves or solids[q] > cmp.recolour_solid) and solids[q] > floor:
                # ... and its solid difference is of the colours mapped: the bars of a chart drawn again in other
                # colours, or in greys, agree in shape, not in tone (the tone test would fail them). A grey pair
                # (a greyscale copy agrees in tone on luma) only when its tones differ as they are. A solid
                # difference the tone test fails is tried so even where the palette hardly moves by the hint.
                _, solid = compare(thumbs[a], thumbs[b], affines[q], int(prep.ink[b]), cmp, recolour=True)
                if solid < solids[q]:
                    solids[q], mapped[q] = solid, True
            continue
        if scores[q] >= cmp.refine_from:
            refined = refine_affine(thumbs[a], thumbs[b], affines[q], cmp)
            score, solid = compare(thumbs[a], thumbs[b], refined, int(prep.ink[b]), cmp, grey=grey)
            if score > scores[q]:
                scores[q], solids[q], affines[q] = score, solid, refined
        if scores[q] < refine_below:  # grey pairs too: a colour map drawn again in greys is not a greyscale copy
            score, solid = compare(thumbs[a], thumbs[b], affines[q], int(prep.ink[b]), cmp, recolour=True)
            moved = solid != side * side  # else the map moved no palette (palette_changed) and scored nothing
            # The profiles are of luma, which another palette changes: they can pick a wrong window (a pie's wedges
            # in pastels), so a pair that nearly verifies so is tried on the whole image too; and so is any pair of
            # a grey image and a colour one whose palette moved: a colour map's luma need not even keep the grey
            # one's order (Greys darkens as plasma brightens), and its window can be anywhere.
            # (not where the window is the whole image: the same comparison again)
            if not np.array_equal(affines[q], whole) and ((score >= cmp.refine_from and solid > 0) or (
                    moved and prep.grey[a] != prep.grey[b] and not np.allclose(affines[q], whole))):
                whole_score, whole_solid = compare(thumbs[a], thumbs[b], whole, int(prep.ink[b]), cmp, recolour=True)
                if whole_score > score:
                    score, solid, affines[q] = whole_score, whole_solid, whole
            if score >= refine_below:
                scores[q], solids[q], mapped[q] = score, solid, True
    return scores, solids, affines, (mapped if defer_hint else mapped.astype(bool))


def whole_scores(thumbs: np.ndarray, prep: Prepared, ia: np.ndarray, ib: np.ndarray,
                 cmp: Comparison = Comparison()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, solid difference, affine) of each ``thumbs[ib]`` compared with all of ``thumbs[ia]`` as it is (the
    identity alignment; colours as they are, on luma where either is grey): the content boxes, trimmed of their
    borders, may show the same where the profiles pick a wrong window (:func:`directed_scores`)."""
    import numpy as np

    side = thumbs.shape[1]
    whole = whole_affine(side)
    scores, solids = np.zeros(len(ia)), np.zeros(len(ia), dtype=np.int64)
    for q, (a, b) in enumerate(zip(ia.tolist(), ib.tolist(), strict=True)):
        scores[q], solids[q] = compare(thumbs[a], thumbs[b], whole, int(prep.ink[b]), cmp,
                                       grey=bool(prep.grey[a] or prep.grey[b]))
    return scores, solids, np.repeat(whole[None], len(ia), axis=0)


def content_box(thumb: np.ndarray, floor: int = 8, contrast: int = 32, outliers: float = 0.01, ends: float = 0.04,
                least: float = 0.3, rim: float = 0.03, rim_margin: int = 2) -> tuple[int, int, int, int]:
    """(top, bottom, left, right), end exclusive: ``thumb`` (h x w x channels uint8) without its uniform borders.

    A row (column) is uniform when its ink - each pixel's largest channel difference from the line's mean colour,
    less ``floor`` (recompression's noise), summed over the line (its ``ends`` at either end left out) and
    counted in units of ``contrast`` - is at most ``outliers`` of the line's length. Leading and trailing uniform
    rows, then columns, are cut, and again until nothing changes (padding of one colour around a figure's own
    white margin: once the padding's columns are gone, the margin's rows are uniform). So a copy padded, framed or
    given a tinted margin is trimmed to the same content as its original, which is trimmed too. Nothing is cut
    when less than ``least`` of a side would remain (a blank image). A thin frame line is left out by ``ends``; a
    thick frame of one colour around a padding of another is not trimmed (each layer's lines cross the other's).

    First, when two opposite edges of the image both have a rim - lines that are not uniform, at most ``rim`` of
    the side deep, then at least ``rim_margin`` uniform ones - every rim is cut: a rotation fills a copy's corners
    with wedges of a colour of its own (white) along the edges, a pixel or three deep in a thumbnail, so its outer
    lines are two-coloured, and on a tinted page nothing was cut - the copy showed its whole image where its
    original showed its figure (every rotated copy of a chart on a grey or cream page that the hard corpus's
    studied seeds lost; bench/README.md, "twenty-first session"). A rim on one side alone is the figure's own: a
    title a crop cut through.

    Ink summed, not pixels counted: shrinking spreads a thin line over one thumbnail pixel or two depending on
    where it falls, and keeps its sum. A line's faint end one pixel wide in a PNG chart was within the outliers a
    count allowed and two pixels wide in its resized JPEG copy was not, so the two were cut to other boxes (83 of
    the scale corpus's 100 copies; bench/README.md, "fourteenth session")."""
    import numpy as np

    h, w = thumb.shape[:2]
    # Each channel as its own contiguous float32 plane (alpha too: a transparent border is uniform in all four
    # channels): numpy's reductions over a last axis of 3 or 4 are several times slower than plane by plane.
    planes = [np.ascontiguousarray(thumb[:, :, c], dtype=np.float32) for c in range(thumb.shape[2])]
    top, bottom, left, right = 0, h, 0, w

    def uniform(box: tuple[int, int, int, int], axis: int) -> np.ndarray:
        # The lines' ends are left out of the test: a thin frame of another colour across them (the columns of
        # a frame in a row of the padding inside it) would keep every line from being uniform.
        t, b, lft, r = box
        length = (r - lft) if axis == 1 else (b - t)
        cut = int(length * ends)
        far: np.ndarray | None = None
        for plane in planes:
            region = plane[t:b, lft:r]
            inner = region[:, cut:length - cut] if axis == 1 else region[cut:length - cut]
            off = np.abs(inner - inner.mean(axis=axis, keepdims=True))
            far = off if far is None else np.maximum(far, off)
        assert far is not None
        ink = np.maximum(far - floor, 0).sum(axis=axis) / contrast
        return np.asarray(ink <= outliers * (length - 2 * cut))

    def span(flags: np.ndarray) -> tuple[int, int]:
        inner = np.flatnonzero(~flags)
        return (0, len(flags)) if len(inner) == 0 else (int(inner[0]), int(inner[-1]) + 1)

    def past_rim(lines: np.ndarray) -> int:
        # how many of the lines (uniform or not, from this end) are a rim - not uniform, then a uniform margin
        outer = np.flatnonzero(lines[:int(rim * len(lines)) + 1])
        if not len(outer) or lines[0] or len(lines) - outer[0] < rim_margin \
                or not lines[outer[0]:outer[0] + rim_margin].all():
            return 0
        return int(outer[0])

    rows = None  # the whole image's row flags, when found for the rims: the first pass below starts from them
    if rim > 0:
        # A rotation about the centre fills wedges along opposite edges alike (the top's from one corner, the
        # bottom's from the other; on the short sides they may be under a pixel): a rim on one side alone is the
        # figure's own (a title a crop cut through).
        rows, cols = uniform((0, h, 0, w), 1), uniform((0, h, 0, w), 0)
        rims = (past_rim(rows), past_rim(rows[::-1]), past_rim(cols), past_rim(cols[::-1]))
        if (rims[0] and rims[1]) or (rims[2] and rims[3]):
            top, bottom, left, right = rims[0], h - rims[1], rims[2], w - rims[3]
            rows = None
    for _ in range(4):
        before = (top, bottom, left, right)
        a, b = span(uniform((top, bottom, left, right), 1) if rows is None else rows)
        rows = None
        top, bottom = top + a, top + b
        a, b = span(uniform((top, bottom, left, right), 0))
        left, right = left + a, left + b
        if (top, bottom, left, right) == before:
            break
    if bottom - top < least * h or right - left < least * w:
        return 0, h, 0, w
    return top, bottom, left, right


def page_box(thumb: np.ndarray, level: int = 12, inset: float = 0.04, touch: float = 0.015, ring: float = 0.8,
             least: float = 0.25, colours: int = 3) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right), end exclusive: the page ``thumb`` (h x w x 3 uint8, opaque) shows inside a
    program's chrome (a screenshot's tab and address bars, its scroll bar), or ``None`` when it shows none.

    A page is the largest 4-connected region of one colour (within ``level`` per channel of one of the
    ``colours`` commonest colours, quantised to 16 levels; each covering at least a tenth of the image; the mask
    opened by 3 px, so a strip of chrome under an address bar of the page's colour, blurred to a pixel in the
    thumbnail, does not join the bar to the page) that

    * covers at least ``least`` of the image,
    * stops short of the image's edge by at least ``inset`` on one side or two that meet (the chrome: bars on
      top, one at the side) and reaches within ``touch`` of it on at least two (a window's thin frame) - a chart's
      own panel of one colour (the grey face of a ggplot-style axes) is inset on three or four sides, by the
      labels around it, and a band of the chart's own (a panel between its header and its axis labels) on two
      opposite sides,
    * and runs along at least ``ring`` of its bounding box's edge (a chart on a page keeps a margin of the page's
      colour all round; a wedge or a band of one colour does not).

    Every region of a colour that is large enough is tried, largest first: a chart's white face inside its axes
    may be larger than the margin of the page round it.

    :func:`content_box` cannot take such chrome off: its lines are not uniform (tabs, an address bar). Measured
    on both tuning splits of the hard corpus (bench/README.md): all 14 screenshots and none of the other 1,186
    images show a page (on two held-out splits 16 of 20 and none of 1,580); on four more (seeds 6-9) 33 of 40
    before the opening and the regions tried in turn, 40 of 40 after, and none of their other 3,160 images, of
    the scale corpus's 2,000, of issue 10's corpus's 1,500 or of 30 real ChartQA charts (one, a panel between its
    header and labels, until the rule on opposite sides); ~0.64 ms on a 128 px thumbnail."""
    import cv2
    import numpy as np

    h, w = thumb.shape[:2]
    rgb = np.ascontiguousarray(thumb[:, :, :3])
    code = (((rgb[:, :, 0] >> 4).astype(np.uint16) << 8) | ((rgb[:, :, 1] >> 4).astype(np.uint16) << 4)
            | (rgb[:, :, 2] >> 4))
    counts = np.bincount(code.ravel(), minlength=4096)
    commonest = np.argpartition(counts, -colours)[-colours:]
    for mode in commonest[np.argsort(counts[commonest])[::-1]]:
        if counts[mode] < 0.1 * h * w:
            break
        colour = np.array(cv2.mean(rgb, mask=(code == mode).astype(np.uint8))[:3])
        mask = cv2.inRange(rgb, np.clip(colour - level, 0, 255).astype(np.uint8),
                           np.clip(colour + level, 0, 255).astype(np.uint8))
        # Opened by 3 px: at 128 px a thin strip of chrome (under an address bar of the page's colour) blurs away
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        found, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        # Every region of the colour large enough, largest first: a chart's own face (the white inside its axes)
        # may be larger than the margin of the page around it.
        for k in 1 + np.argsort(-stats[1:, cv2.CC_STAT_AREA], kind="stable"):
            x, y, bw, bh, area = (int(v) for v in stats[k])
            if area < least * h * w:
                break
            insets = (y / h, x / w, (h - y - bh) / h, (w - x - bw) / w)  # top, left, bottom, right
            chrome = [v >= inset for v in insets]
            # Chrome on one side or two that meet (bars on top, one at the side); a region inset on opposite
            # sides is a band of the chart's own (a panel between its header and its axis labels).
            if (not 1 <= sum(chrome) <= 2 or (chrome[0] and chrome[2]) or (chrome[1] and chrome[3])
                    or sum(v <= touch for v in insets) < 2):
                continue
            region = labels[y:y + bh, x:x + bw] == k
            if np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]]).mean() >= ring:
                return y, y + bh, x, x + bw
    return None


def figure_box(thumb: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right), end exclusive: the figure ``thumb`` (h x w x channels uint8) shows - inside the
    page a screenshot shows (:func:`page_box`; opaque images only), its :func:`content_box`. Both the
    thumbnail and the second look's content (:func:`zuhyo.construct.filter.regions.content`) are cut to it."""
    page = page_box(thumb) if thumb.shape[2] == 3 else None
    if page is None:
        return content_box(thumb)
    top, bottom, left, right = page
    t, b, lft, r = content_box(thumb[top:bottom, left:right])
    return top + t, top + b, left + lft, left + r
