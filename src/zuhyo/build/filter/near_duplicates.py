"""Near-duplicate figures: a cheap perceptual descriptor for candidates, then a verification that tells two charts
of the same kind apart.

A plain perceptual hash cannot do this alone: charts of one kind and style hash alike (imagehash pHash over all
pairs at Hamming 10 finds the planted duplicates of a 20k chart corpus with precision 0.0006, issue 10
"Performance"). So, per image (one decode, :func:`image_features`):

* a 128x128 colour thumbnail of the whole image (the verification input; colour matters: two pies of one palette
  differ in hue where their grey levels agree), the 64-bit DCT perceptual hash of it (the algorithm of
  ``imagehash.phash``, as :mod:`zuhyo.images.phash` uses), and
* a descriptor: the thumbnail's body (the title band at the top left out, so a retitled copy still matches)
  blurred to 16x16 and normalised to zero mean and unit length.

Candidates (:func:`candidate_pairs`) are each image's nearest neighbours in descriptor space, found with a k-d
tree over a PCA projection (``scipy.spatial.cKDTree``: n log n, never all pairs), within a distance bound.
Each candidate pair is verified (:func:`verify_pair`) by aligning one thumbnail to the other for a crop of up to
:data:`MAX_CROP` per axis (row and column mean profiles give the crop window in quarter-pixel steps; the scale
difference disappears in the thumbnail) and counting the share of the chart's ink that differs after alignment
(:func:`_aligned_score`): a copy that was resized, recompressed, cropped or retitled scores near 1, a chart of
the same kind with other data does not. Pairs that pass join clusters by union-find.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zuhyo.images.verify import DEFAULT_MAX_PIXELS, decode_untrusted, on_white

if TYPE_CHECKING:
    import numpy as np

THUMB = 128
"""Side of the square grayscale thumbnail every comparison works on."""
DESC = 16
"""Side of the blurred descriptor grid."""
TITLE_BAND = 0.14
"""Fraction of the height at the top left out of descriptor and verification (where a chart's title sits)."""
MAX_CROP = 0.10
"""Largest fraction of a side the alignment allows one copy to have lost to a crop (issue 10: 2-8 %)."""
RESIDUAL_LEVEL = 48
"""Colour difference (0-255) above which an aligned pixel counts as different."""
TOLERANCE = 1
"""Pixels of misalignment the comparison forgives: a pixel matches when its colour lies within the range of the
aligned image's pixels this close to it (so a blurred edge matches a sharp one)."""
MIN_INK = 0.02
"""The differing pixels are counted against the chart's ink (pixels off the background), at least this share of
the body: a few differing pixels weigh as much in a sparse line chart as in a page of bars."""
DEFAULT_NEIGHBOURS = 6
DEFAULT_MAX_DESCRIPTOR_DISTANCE = 0.9
DEFAULT_MIN_SCORE = 0.93
_PCA_DIMS = 32


@dataclass(frozen=True)
class ImageFeatures:
    """What the filter needs of one image: its size and format, and the near-duplicate features."""

    width: int
    height: int
    format: str
    phash: int
    thumb: bytes
    """THUMB x THUMB uint8 grayscale, row-major."""


def image_features(data: bytes, max_pixels: int = DEFAULT_MAX_PIXELS) -> ImageFeatures:
    """Decode once; size, format, the 64-bit pHash and the thumbnail. Raises :class:`ImageError` when unreadable."""
    import numpy as np
    from PIL import Image

    # A JPEG is decoded at a reduced scale (draft mode): 4-8x faster, plenty for a thumbnail.
    im, (width, height) = decode_untrusted(data, max_pixels, not_image="not a readable image",
                                           draft_side=THUMB * 2)
    fmt = str(im.format)
    rgb = np.asarray(on_white(im).convert("RGB").resize((THUMB, THUMB), Image.Resampling.BOX), dtype=np.uint8)
    return ImageFeatures(width=width, height=height, format=fmt, phash=dct_hash(luma(rgb)), thumb=rgb.tobytes())


def luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma of uint8 RGB (``...x3``), as float32."""
    import numpy as np

    return np.asarray(rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32), dtype=np.float32)


def dct_hash(thumb: np.ndarray) -> int:
    """imagehash's pHash on a thumbnail: DCT of a 32x32 image, the top-left 8x8 against their median, 64 bits."""
    import numpy as np
    from PIL import Image
    from scipy.fft import dct

    small = np.asarray(Image.fromarray(thumb).resize((32, 32), Image.Resampling.BOX), dtype=np.float64)
    coeffs = dct(dct(small, axis=0, norm="ortho"), axis=1, norm="ortho")[:8, :8]
    bits = (coeffs > np.median(coeffs)).ravel()
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


def thumbs_array(features: Sequence[ImageFeatures]) -> np.ndarray:
    import numpy as np

    return np.frombuffer(b"".join(f.thumb for f in features), dtype=np.uint8).reshape(-1, THUMB, THUMB, 3)


def descriptors(thumbs: np.ndarray) -> np.ndarray:
    """(n, DESC*DESC) float32: each thumbnail's body, blurred to DESC x DESC, zero mean, unit length."""
    import numpy as np
    from PIL import Image

    top = round(TITLE_BAND * THUMB)
    out = np.empty((len(thumbs), DESC * DESC), dtype=np.float32)
    for i, t in enumerate(thumbs):
        body = Image.fromarray(t[top:]).convert("L").resize((DESC, DESC), Image.Resampling.BILINEAR, reducing_gap=None)
        out[i] = np.asarray(body, dtype=np.float32).ravel()
    out -= out.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    out /= np.where(norms > 0, norms, 1.0)
    return out


def candidate_pairs(desc: np.ndarray, neighbours: int = DEFAULT_NEIGHBOURS,
                    max_distance: float = DEFAULT_MAX_DESCRIPTOR_DISTANCE) -> np.ndarray:
    """(m, 2) index pairs i < j: each image's ``neighbours`` nearest others within ``max_distance`` (Euclidean on
    unit descriptors), searched in a k-d tree over a PCA projection of the descriptors."""
    import numpy as np
    from scipy.spatial import cKDTree

    n = len(desc)
    if n < 2:
        return np.empty((0, 2), dtype=np.int64)
    centred = desc - desc.mean(axis=0)
    sample = centred[np.linspace(0, n - 1, min(n, 4000)).astype(np.int64)]
    _, _, vt = np.linalg.svd(sample, full_matrices=False)
    reduced = np.ascontiguousarray(centred @ vt[:_PCA_DIMS].T)
    tree = cKDTree(reduced)
    k = min(neighbours + 1, n)
    dist, idx = tree.query(reduced, k=k, distance_upper_bound=max_distance)
    rows = np.repeat(np.arange(n), k)
    cols = idx.ravel()
    ok = (cols < n) & (cols != rows)
    a, b = rows[ok], cols[ok]
    pairs = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
    return np.unique(pairs, axis=0) if len(pairs) else pairs


def _profile_window(pa: np.ndarray, pb: np.ndarray) -> tuple[float, float]:
    """The window (start, length; quarter-pixel steps) of profile ``pa`` that best matches all of ``pb`` resampled
    to it (normalised correlation): ``pb`` may be ``pa`` cropped by up to MAX_CROP."""
    import numpy as np

    n = len(pa)
    lengths = np.arange(n - 1, (n - 1) * (1 - MAX_CROP) - 0.25, -0.25)
    starts = np.arange(0, (n - 1) * MAX_CROP + 0.25, 0.25)
    ls, ss = np.meshgrid(lengths, starts, indexing="ij")
    ok = (ss + ls) <= n - 1
    ls, ss = ls[ok], ss[ok]
    t = np.linspace(0.0, 1.0, n)
    positions = ss[:, None] + ls[:, None] * t[None, :]
    windows = np.interp(positions.ravel(), np.arange(n), pa).reshape(positions.shape)
    windows -= windows.mean(axis=1, keepdims=True)
    rb = pb - pb.mean()
    denom = np.linalg.norm(windows, axis=1) * np.linalg.norm(rb)
    c = np.where(denom > 0, windows @ rb / np.where(denom > 0, denom, 1.0), 0.0)
    k = int(np.argmax(c))
    return float(ss[k]), float(ls[k])


def _aligned_score(a: np.ndarray, b: np.ndarray) -> float:
    """How well ``b`` matches the window of ``a`` it was (possibly) cropped from, title band left out: 1 minus the
    share of ``b``'s ink whose colour falls outside the range of the aligned pixels within TOLERANCE of it by
    more than RESIDUAL_LEVEL (a blurred or slightly shifted edge still matches; a moved bar or wedge does not)."""
    import numpy as np
    from PIL import Image

    ga, gb = luma(a), luma(b)
    top = round(TITLE_BAND * THUMB)
    x0, w = _profile_window(ga[top:].mean(axis=0), gb[top:].mean(axis=0))
    y0, h = _profile_window(ga.mean(axis=1), gb.mean(axis=1))
    # Pixel centres 0..n-1 of ``b`` map to x0..x0+w of ``a``: the window's edges lie half a (scaled) pixel out.
    sx, sy = w / (THUMB - 1), h / (THUMB - 1)
    extent = (x0 - sx / 2 + 0.5, y0 - sy / 2 + 0.5, x0 + w + sx / 2 + 0.5, y0 + h + sy / 2 + 0.5)
    window = Image.fromarray(a).transform((THUMB, THUMB), Image.Transform.EXTENT, extent,
                                          Image.Resampling.BILINEAR)
    r = TOLERANCE
    wa = np.pad(np.asarray(window, dtype=np.int16).transpose(2, 0, 1), ((0, 0), (r, r), (r, r)), mode="edge")
    fb = b.astype(np.int16).transpose(2, 0, 1)
    lo, hi = fb.copy(), fb.copy()
    lo[:] = 255
    hi[:] = 0
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            shifted = wa[:, dy:dy + THUMB, dx:dx + THUMB]
            np.minimum(lo, shifted, out=lo)
            np.maximum(hi, shifted, out=hi)
    outside = np.maximum(np.maximum(lo - fb, fb - hi), 0)
    differs = np.maximum(np.maximum(outside[0], outside[1]), outside[2])[top:] > RESIDUAL_LEVEL
    body = fb[:, top:]
    background = np.median(body.reshape(3, -1), axis=1).astype(np.int16)[:, None, None]
    ink = np.abs(body - background).max(axis=0) > RESIDUAL_LEVEL
    return 1.0 - float(differs.sum()) / max(float(ink.sum()), MIN_INK * ink.size)


def verify_pair(a: np.ndarray, b: np.ndarray) -> float:
    """How surely ``a`` and ``b`` (THUMB x THUMB uint8) show one image: the better of aligning either to the
    other (at most 1; see :func:`_aligned_score`)."""
    return max(_aligned_score(a, b), _aligned_score(b, a))


@dataclass(frozen=True)
class PairEvidence:
    i: int
    j: int
    descriptor_distance: float
    score: float


def _verify_chunk(item: tuple[list[tuple[int, int]], dict[int, np.ndarray]]) -> list[float]:
    """Runs in executor workers: the verification scores of one chunk of pairs (thumbnails travel with it)."""
    pairs, thumbs = item
    return [verify_pair(thumbs[i], thumbs[j]) for i, j in pairs]


def verified_pairs(thumbs: np.ndarray, desc: np.ndarray, pairs: np.ndarray,
                   min_score: float = DEFAULT_MIN_SCORE, executor: str | None = None,
                   chunk: int = 256) -> list[PairEvidence]:
    """The candidate pairs whose verification score reaches ``min_score``; with ``executor`` the pairs are
    scored in chunks through :func:`zuhyo.build.executor.map_items`."""
    import numpy as np

    todo = [(int(i), int(j)) for i, j in pairs.tolist()]
    if executor is None or len(todo) <= chunk:
        scores = [verify_pair(thumbs[i], thumbs[j]) for i, j in todo]
    else:
        from zuhyo.build.executor import ItemError, map_items

        items = []
        for start in range(0, len(todo), chunk):
            part = todo[start:start + chunk]
            items.append((part, {k: thumbs[k] for pair in part for k in pair}))
        scores = []
        for result in map_items(_verify_chunk, items, executor=executor):
            if isinstance(result, ItemError):
                raise RuntimeError(f"near-duplicate verification failed: {result.error}")
            scores.extend(result)
    return [PairEvidence(i, j, float(np.linalg.norm(desc[i] - desc[j])), round(score, 4))
            for (i, j), score in zip(todo, scores, strict=True) if score >= min_score]


def clusters(n: int, pairs: Sequence[PairEvidence]) -> list[list[int]]:
    """Groups (two or more) of indices joined by verified ``pairs``, each sorted, ordered by first index.

    Groups are stars: taking pairs from the highest score down, an image joins a group only through a pair with
    the group's first member (or two lone images form one), never through a chain of members - with charts that
    look alike, chains would join a whole kind (a~b, b~c, c~d, ...) where each link alone is plausible.
    """
    root = list(range(n))
    size = [1] * n
    for p in sorted(pairs, key=lambda q: (-q.score, q.i, q.j)):
        ri, rj = root[p.i], root[p.j]
        if ri == rj:
            continue
        if size[rj] == 1 and p.i == ri:
            hub, leaf = ri, p.j
        elif size[ri] == 1 and p.j == rj:
            hub, leaf = rj, p.i
        else:
            continue
        root[leaf] = hub
        size[hub] += 1
    groups: dict[int, list[int]] = {}
    for x in range(n):
        groups.setdefault(root[x], []).append(x)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: g[0])
