"""The near-duplicate verification, vectorised over pairs of thumbnails: align one thumbnail to the window of the
other it was (possibly) cropped from, then compare their colours.

For each pair and each direction (``b`` aligned into ``a`` and ``a`` into ``b``), in numpy over a whole batch:

1. **Alignment** (:func:`best_windows`): the window of ``a`` that ``b`` shows - a crop of up to ``max_crop`` of
   each side, any offset - from the row and column mean profiles (title band left out of the column profile):
   the normalised correlation of ``b``'s profile with every window of ``a``'s, on a one-pixel grid, then refined
   on a quarter-pixel grid around the best. The scale difference disappears in the thumbnail.
2. **Warp** (:func:`warp`): ``a``'s window resampled (bilinear, separable) onto ``b``'s pixel grid.
3. **Comparison** (:func:`directed_scores`): a pixel of ``b`` *differs* when its colour lies outside the range of
   the aligned pixels within ``tolerance`` of it by more than ``residual_level`` (so a blurred or slightly shifted
   edge still matches, a moved bar or wedge does not). Two numbers come out: the **score**, 1 minus the share of
   ``b``'s ink (pixels off its background; at least ``min_ink`` of the body) that differs, and the **solid
   difference**, the number of pixels whose whole 3x3 neighbourhood differs by more than the lower
   ``solid_level``. Recompression and resampling differ in scattered pixels and one-pixel seams along edges, never
   in a solid patch; two charts with other data - a pie whose wedge boundary moved a few degrees between two
   greys, a bar a few pixels taller - do, however small the share of ink that is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from zuhyo.build.filter.near_duplicates import TITLE_BAND, luma

if TYPE_CHECKING:
    import numpy as np


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


@dataclass(frozen=True)
class Prepared:
    """Per-image quantities every comparison of the image reuses (computed once, not once per pair)."""

    col_profile: np.ndarray
    """(n, side) float64: column means of the luma below the title band."""
    row_profile: np.ndarray
    """(n, side) float64: row means of the luma."""
    background: np.ndarray
    """(n, 3) int16: the body's median colour."""
    ink: np.ndarray
    """(n,) int64: body pixels off the background by more than the residual level."""


def prepare(thumbs: np.ndarray, cmp: Comparison = Comparison(), batch: int = 512) -> Prepared:
    """:class:`Prepared` for ``thumbs`` (n x side x side x 3 uint8; a memory map is read in batches)."""
    import numpy as np

    n, side = len(thumbs), thumbs.shape[1]
    top = round(cmp.title_band * side)
    cols, rows = np.empty((n, side)), np.empty((n, side))
    bg, ink = np.empty((n, 3), dtype=np.int16), np.empty(n, dtype=np.int64)
    for s in range(0, n, batch):
        t = np.asarray(thumbs[s:s + batch])
        g = luma(t.astype(np.float32))
        cols[s:s + batch] = g[:, top:].mean(axis=1)
        rows[s:s + batch] = g.mean(axis=2)
        body = t[:, top:].astype(np.int16)
        med = np.median(body.reshape(len(t), -1, 3), axis=1).astype(np.int16)
        bg[s:s + batch] = med
        ink[s:s + batch] = (np.abs(body - med[:, None, None, :]).max(axis=3) > cmp.residual_level).sum(axis=(1, 2))
    return Prepared(cols, rows, bg, ink)


def best_windows(pa: np.ndarray, pb: np.ndarray, max_crop: float) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the window (start, length; pixel centres) of profile ``pa`` that best matches all of ``pb``
    resampled to it (normalised correlation), for windows losing up to ``max_crop`` of the side: a one-pixel
    grid, then quarter-pixel steps within 0.75 px of the best."""
    import numpy as np

    count, n = pa.shape
    t = np.linspace(0.0, 1.0, n)
    rb = pb - pb.mean(axis=1, keepdims=True)
    rb_norm = np.linalg.norm(rb, axis=1)
    longest, shortest, latest = n - 1.0, (n - 1) * (1 - max_crop), (n - 1) * max_crop
    rows = np.arange(count)[:, None, None]

    def correlation(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        pos = np.clip(starts[:, :, None] + lengths[:, :, None] * t, 0, n - 1)
        i0 = np.minimum(pos.astype(np.int64), n - 2)
        f = pos - i0
        w = pa[rows, i0] * (1 - f) + pa[rows, i0 + 1] * f
        w -= w.mean(axis=2, keepdims=True)
        den = np.linalg.norm(w, axis=2) * rb_norm[:, None]
        num = np.einsum("bkn,bn->bk", w, rb)
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)

    ls, ss = np.meshgrid(np.arange(longest, shortest - 1e-9, -1.0), np.arange(0.0, latest + 1e-9, 1.0),
                         indexing="ij")
    ok = ss + ls <= n - 1
    ls, ss = ls[ok], ss[ok]
    k = np.argmax(correlation(np.broadcast_to(ss, (count, len(ss))), np.broadcast_to(ls, (count, len(ls)))), axis=1)
    steps = np.arange(-0.75, 0.76, 0.25)
    dl, ds = (g.ravel() for g in np.meshgrid(steps, steps, indexing="ij"))
    lengths = np.clip(ls[k][:, None] + dl, shortest, longest)
    starts = np.minimum(np.clip(ss[k][:, None] + ds, 0.0, latest), n - 1 - lengths)
    k = np.argmax(correlation(starts, lengths), axis=1)
    r = np.arange(count)
    return starts[r, k], lengths[r, k]


def warp(a: np.ndarray, x0: np.ndarray, w: np.ndarray, y0: np.ndarray, h: np.ndarray) -> np.ndarray:
    """(B, side, side, 3) float32: each ``a`` (uint8) resampled bilinearly so that pixel centres 0..side-1 map to
    ``x0..x0+w`` across and ``y0..y0+h`` down."""
    import numpy as np

    count, side = a.shape[0], a.shape[1]
    t = np.arange(side) / (side - 1)

    def axis(origin: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = np.clip(origin[:, None] + length[:, None] * t, 0, side - 1)
        i = np.minimum(p.astype(np.int64), side - 2)
        return i, (p - i).astype(np.float32)

    xi, xf = axis(x0, w)
    yi, yf = axis(y0, h)
    b = np.arange(count)[:, None]
    rows = a[b, yi].astype(np.float32) * (1 - yf)[:, :, None, None] + a[b, yi + 1] * yf[:, :, None, None]
    return (np.take_along_axis(rows, xi[:, None, :, None], axis=2) * (1 - xf)[:, None, :, None]
            + np.take_along_axis(rows, xi[:, None, :, None] + 1, axis=2) * xf[:, None, :, None])


def directed_scores(thumbs: np.ndarray, prep: Prepared, ia: np.ndarray, ib: np.ndarray,
                    cmp: Comparison = Comparison()) -> tuple[np.ndarray, np.ndarray]:
    """(score, solid difference) of each ``thumbs[ib]`` aligned into the window of ``thumbs[ia]`` it shows."""
    import numpy as np

    side = thumbs.shape[1]
    top = round(cmp.title_band * side)
    ta, tb = np.asarray(thumbs[ia]), np.asarray(thumbs[ib])
    x0, w = best_windows(prep.col_profile[ia], prep.col_profile[ib], cmp.max_crop)
    y0, h = best_windows(prep.row_profile[ia], prep.row_profile[ib], cmp.max_crop)
    r = cmp.tolerance
    window = np.rint(warp(ta, x0, w, y0, h)).astype(np.int16)
    padded = np.pad(window, ((0, 0), (r, r), (r, r), (0, 0)), mode="edge")
    fb = tb.astype(np.int16)
    lo, hi = np.full_like(fb, 255), np.zeros_like(fb)
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            shifted = padded[:, dy:dy + side, dx:dx + side]
            np.minimum(lo, shifted, out=lo)
            np.maximum(hi, shifted, out=hi)
    outside = np.maximum(np.maximum(lo - fb, fb - hi), 0).max(axis=3)[:, top:]
    differs = (outside > cmp.residual_level).sum(axis=(1, 2))
    floor = cmp.min_ink * outside.shape[1] * outside.shape[2]
    score = 1.0 - differs / np.maximum(prep.ink[ib], floor)
    weak = outside > cmp.solid_level
    solid = weak[:, 1:-1, 1:-1].copy()
    for dy in range(3):
        for dx in range(3):
            solid &= weak[:, dy:dy + weak.shape[1] - 2, dx:dx + weak.shape[2] - 2]
    return score, solid.sum(axis=(1, 2))
